//! Writing a file whole or not at all: a file beside it, renamed over it, so that a
//! reader (or a crash) never meets half of one.

use anyhow::{Context, bail};
use std::fs::{Metadata, Permissions};
use std::io::Read;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::Path;

/// Writes `bytes` to `path` whole, with `permissions`.
pub fn write_whole(path: &Path, bytes: &[u8], permissions: Permissions) -> anyhow::Result<()> {
    write(path, bytes, permissions, None)
}

/// Writes `bytes` to `path` whole, with the mode and the group owner of `like` (the file
/// it replaces), so that the new file is open to no one the old one was not.
pub fn write_like(path: &Path, bytes: &[u8], like: &Metadata) -> anyhow::Result<()> {
    write(path, bytes, like.permissions(), Some(like.gid()))
}

fn write(
    path: &Path,
    bytes: &[u8],
    permissions: Permissions,
    group: Option<u32>,
) -> anyhow::Result<()> {
    let folder = match path.parent() {
        Some(folder) if !folder.as_os_str().is_empty() => folder,
        _ => Path::new("."),
    };
    let mut file = tempfile::NamedTempFile::new_in(folder)
        .with_context(|| format!("cannot write into {}", folder.display()))?;
    std::io::Write::write_all(&mut file, bytes)
        .with_context(|| format!("cannot write {}", path.display()))?;
    if let Some(group) = group {
        std::os::unix::fs::fchown(file.as_file(), None, Some(group)).with_context(|| {
            format!(
                "cannot give the new {} its group owner ({group})",
                path.display()
            )
        })?;
    }
    // After the group: changing owners may clear the set-id bits a mode holds.
    file.as_file().set_permissions(permissions)?;
    file.persist(path)
        .with_context(|| format!("cannot replace {}", path.display()))?;
    Ok(())
}

/// The most bytes a file read whole may hold.
const MOST: u64 = 16 << 20;

/// The text of the regular file `path`, of at most 16 MiB: a FIFO, a device or a
/// directory is refused before it is read (a FIFO would block for ever, `/dev/zero`
/// fill memory).
pub fn read_text(path: &Path) -> anyhow::Result<String> {
    // Opened without blocking, so that a FIFO put in its place is seen, not waited on.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if !file.metadata()?.is_file() {
        bail!("{} is not a regular file", path.display());
    }
    let mut bytes = Vec::new();
    file.take(MOST + 1)
        .read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {}", path.display()))?;
    if bytes.len() as u64 > MOST {
        bail!(
            "{} is over {} MiB: not a config",
            path.display(),
            MOST >> 20
        );
    }
    String::from_utf8(bytes).with_context(|| format!("{} is not UTF-8 text", path.display()))
}
