"""Writes, beside the release archives in a folder, SHA256SUMS (one line per archive, as
`sha256sum --check` reads) and `reasons.rb`, the Homebrew formula for the macOS and Linux
archives there: `./package` runs it on the archives it built, the release workflow on
every platform's.

    python3 packaging/release.py FOLDER VERSION
"""

import hashlib
import sys
from pathlib import Path

REPOSITORY = "https://github.com/reasons-dev/reasons"

# Homebrew's blocks for each target triple an archive is built for.
BREW = {
    "aarch64-apple-darwin": ("on_macos", "on_arm"),
    "x86_64-apple-darwin": ("on_macos", "on_intel"),
    "aarch64-unknown-linux-gnu": ("on_linux", "on_arm"),
    "x86_64-unknown-linux-gnu": ("on_linux", "on_intel"),
}


def main(folder: Path, version: str) -> None:
    prefix = f"reasons-{version}-"
    archives = sorted(
        path for path in folder.iterdir() if path.name.startswith(prefix) and path.suffix in (".gz", ".zip")
    )
    if not archives:
        sys.exit(f"release.py: no archive named {prefix}* in {folder}")
    sums = {path.name: hashlib.sha256(path.read_bytes()).hexdigest() for path in archives}
    (folder / "SHA256SUMS").write_text("".join(f"{digest}  {name}\n" for name, digest in sums.items()))
    (folder / "reasons.rb").write_text(formula(version, sums, prefix))


def formula(version: str, sums: dict, prefix: str) -> str:
    blocks = {}
    for name, digest in sums.items():
        target = name[len(prefix) :].removesuffix(".tar.gz")
        if target not in BREW:
            continue
        system, cpu = BREW[target]
        url = f"{REPOSITORY}/releases/download/v{version}/{name}"
        blocks.setdefault(system, []).append(
            f'    {cpu} do\n      url "{url}"\n      sha256 "{digest}"\n    end\n'
        )
    systems = "".join(f"  {system} do\n{''.join(cpus)}  end\n" for system, cpus in sorted(blocks.items()))
    return f'''class Reasons < Formula
  desc "Model's reason beside every tool call at the permission prompt, never at the MCP server"
  homepage "{REPOSITORY}"
  version "{version}"
  license "Apache-2.0 WITH LLVM-exception"
{systems}
  def install
    bin.install "reasons"
  end

  test do
    assert_match version.to_s, shell_output("#{{bin}}/reasons --version")
  end
end
'''


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2])
