//! What npm's launcher adds to starting `reasons`: `reasons --version`, run as the binary
//! itself and through the launcher (laid out as npm installs it: the `reasons` package
//! and this platform's `@reasons-mcp/…` package beside it in `node_modules`), one after
//! the other in each round of one run: `cargo bench -p reasons --bench launcher`.

use reasons_test_support::mcp::reasons;
use std::path::Path;
use std::process::Command;
use timing::{alternately_for, ms, rounds, summary};

#[path = "support/timing.rs"]
mod timing;

/// Runs `command` to its end, as a client's start does; it must succeed.
fn run(command: &mut Command) {
    let status = command.status().unwrap();
    assert!(status.success(), "{command:?}: {status}");
}

fn main() {
    let binary = reasons();
    let dir = tempfile::tempdir().unwrap();
    let modules = dir.path().join("node_modules");
    let platform = modules.join("@reasons-mcp/linux-x64");
    let launcher = modules.join("reasons/bin");
    std::fs::create_dir_all(&platform).unwrap();
    std::fs::create_dir_all(&launcher).unwrap();
    std::fs::copy(&binary, platform.join("reasons")).unwrap();
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../packaging/npm/reasons/bin/reasons.js");
    std::fs::copy(script, launcher.join("reasons.js")).unwrap();
    let through = launcher.join("reasons.js");
    // Each start is tens of milliseconds: a tenth of the round trips' rounds is plenty.
    let starts = (rounds() / 10).max(5);
    let quiet = |mut command: Command| {
        command.arg("--version").stdout(std::process::Stdio::null());
        command
    };
    let mut samples = alternately_for(
        starts,
        5,
        vec![
            Box::new(|| run(&mut quiet(Command::new(&binary)))),
            Box::new(|| run(&mut quiet(Command::new(&through)))),
        ],
    );
    let (direct, launched) = samples.split_at_mut(1);
    let (direct, _) = summary(&mut direct[0]);
    let (launched, _) = summary(&mut launched[0]);
    println!("starts: {starts} each, in turn");
    println!(
        "reasons --version       binary {:>7.2} ms   through npm's launcher {:>7.2} ms   added {:>+7.2} ms ({:.1}x)",
        ms(direct),
        ms(launched),
        ms(launched) - ms(direct),
        launched.as_secs_f64() / direct.as_secs_f64()
    );
}
