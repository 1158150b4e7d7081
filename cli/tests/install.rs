//! Installing `reasons` as a user does: `cargo install --locked --path cli` into
//! a folder of its own, then the installed binary run from there, with the component it
//! carries inside it.

use std::path::Path;
use std::process::Command;

#[test]
fn cargo_install_gives_a_binary_that_runs_on_its_own() {
    let root = tempfile::tempdir().unwrap();
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    // Its own target folder (kept, so that a second run is quick), so that it never
    // waits on the lock of the build running this test.
    let status = Command::new(cargo)
        .current_dir(workspace)
        .args(["install", "--locked", "--path", "cli", "--root"])
        .arg(root.path())
        .env("CARGO_TARGET_DIR", workspace.join("target/install-check"))
        .env_remove("RUSTFLAGS")
        .env_remove("CARGO_ENCODED_RUSTFLAGS")
        .status()
        .unwrap();
    assert!(status.success(), "cargo install failed");
    let installed = root.path().join("bin/reasons");
    // Run from elsewhere, with nothing of the checkout in reach but what it carries.
    let elsewhere = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| {
        let output = Command::new(&installed)
            .args(args)
            .current_dir(elsewhere.path())
            .env("REASONS_CACHE_DIR", elsewhere.path().join("cache"))
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        String::from_utf8(output.stdout).unwrap()
    };
    let version = run(&["--version"]);
    assert!(
        version.starts_with(&format!("reasons {}", env!("CARGO_PKG_VERSION")))
            && version.contains("component reasons.wasm")
            && version.contains("WIT agent:tools@0.1.1"),
        "{version}"
    );
    let demo = run(&["demo"]);
    assert!(
        demo.contains("decision: asked the human: approved"),
        "{demo}"
    );
    assert!(
        demo.contains(r#"the tool received: {"path":"notes.md""#),
        "{demo}"
    );
}
