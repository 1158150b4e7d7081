//! Builds workspace packages as `wasm32-wasip2` components from a build script: the
//! harness's (the reasons component it embeds) and the tests' (their fixtures). The
//! nested cargo gets its own target directory, so it never waits on the lock of the
//! build that runs it, and none of the outer build's flags or wrappers.

use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "wasm32-wasip2";

/// Builds `package` in release and returns the path of its component, `artifact`.
pub fn build_component(package: &str, artifact: &str) -> PathBuf {
    ensure_target();
    // This crate sits at the workspace's root, whichever package's build script calls it.
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let target_dir = out_dir.join("wasm-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--release", "--target", TARGET, "-p", package])
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("cargo runs");
    assert!(status.success(), "building `{package}` for {TARGET} failed");
    for watched in [
        "transform",
        "guest",
        "wit",
        "tests/fixtures",
        "Cargo.toml",
        "Cargo.lock",
    ] {
        rerun_if_changed(&workspace.join(watched));
    }
    target_dir.join(TARGET).join("release").join(artifact)
}

/// Adds the wasm target to the toolchain building this when it lacks it: a fresh
/// machine's rustup does not add a toolchain file's targets to an installed toolchain.
fn ensure_target() {
    let rustc = std::env::var_os("RUSTC").unwrap_or_else(|| "rustc".into());
    let sysroot = Command::new(rustc)
        .args(["--print", "sysroot"])
        .output()
        .expect("rustc runs");
    let sysroot = PathBuf::from(String::from_utf8_lossy(&sysroot.stdout).trim());
    if sysroot.join("lib/rustlib").join(TARGET).exists() {
        return;
    }
    println!(
        "cargo:warning=adding the {TARGET} target to this toolchain (rustup target add {TARGET})"
    );
    let added = Command::new("rustup")
        .args(["target", "add", TARGET])
        .status();
    assert!(
        added.is_ok_and(|status| status.success()),
        "the {TARGET} target is missing and `rustup target add {TARGET}` failed: add it by hand"
    );
}

fn rerun_if_changed(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}
