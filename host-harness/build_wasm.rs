// Builds workspace packages as `wasm32-wasip2` components from a build script, shared by
// the harness (the reasons component it embeds) and the tests (their fixtures) through
// `include!`. The nested cargo gets its own target directory, so it never waits on the
// lock of the build that runs it, and none of the outer build's flags or wrappers.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Builds `package` in release and returns the path of its component.
fn build_component(package: &str, artifact: &str) -> PathBuf {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let workspace = manifest_dir.parent().unwrap();
    let out_dir = PathBuf::from(std::env::var_os("OUT_DIR").unwrap());
    let target_dir = out_dir.join("wasm-target");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args(["build", "--release", "--target", "wasm32-wasip2", "-p", package])
        .arg("--target-dir")
        .arg(&target_dir)
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .env_remove("RUSTFLAGS")
        .env_remove("RUSTC_WORKSPACE_WRAPPER")
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .expect("cargo runs");
    assert!(
        status.success(),
        "building `{package}` for wasm32-wasip2 failed (is the target installed? `rustup target add wasm32-wasip2`)"
    );
    for watched in ["guest", "wit", "tests/fixtures", "Cargo.toml", "Cargo.lock"] {
        rerun_if_changed(&workspace.join(watched));
    }
    target_dir.join("wasm32-wasip2/release").join(artifact)
}

fn rerun_if_changed(path: &Path) {
    println!("cargo:rerun-if-changed={}", path.display());
}
