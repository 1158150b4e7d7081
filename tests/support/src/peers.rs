//! Third-party peers the tests run (npm packages, Python packages), pinned in a folder
//! under `tests/` (`package-lock.json`, `requirements.txt`) and installed there on first
//! use. A tool that cannot be installed fails the test loudly; nothing is skipped.
//!

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// `tests/<folder>`, with its npm packages and its Python venv installed.
pub fn installed(folder: &str) -> PathBuf {
    static DONE: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    let mut done = DONE
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    if let Some(dir) = done.get(folder) {
        return dir.clone();
    }
    // This crate is `tests/support`.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("..")
        .join(folder)
        .canonicalize()
        .unwrap_or_else(|error| panic!("tests/{folder}: {error}"));
    if dir.join("package.json").exists() && !dir.join("node_modules/.package-lock.json").exists() {
        run(Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund"])
            .current_dir(&dir));
    }
    if dir.join("requirements.txt").exists() && !dir.join(".venv/installed").exists() {
        run(Command::new("python3")
            .args(["-m", "venv", ".venv"])
            .current_dir(&dir));
        run(Command::new(".venv/bin/pip")
            .args(["install", "--quiet", "-r", "requirements.txt"])
            .current_dir(&dir));
        std::fs::write(dir.join(".venv/installed"), "").expect("the venv is writable");
    }
    done.insert(folder.to_string(), dir.clone());
    dir
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    assert!(status.success(), "{command:?} failed: {status}");
}

/// Runs `command` to its end, as `Command::output` does, but kills it and panics if it
/// has not ended within `limit`: a stuck peer fails its test instead of hanging the run.
pub fn output_within(command: &mut Command, limit: Duration) -> Output {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot run {command:?}: {error}"));
    let drain = |mut from: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = from.read_to_end(&mut bytes);
            bytes
        })
    };
    let stdout = drain(Box::new(child.stdout.take().expect("piped")));
    let stderr = drain(Box::new(child.stderr.take().expect("piped")));
    let until = Instant::now() + limit;
    let status = loop {
        match child.try_wait().expect("the child can be waited for") {
            Some(status) => break status,
            None if Instant::now() < until => std::thread::sleep(Duration::from_millis(20)),
            None => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{command:?} did not finish within {limit:?}");
            }
        }
    };
    Output {
        status,
        stdout: stdout.join().expect("stdout was read"),
        stderr: stderr.join().expect("stderr was read"),
    }
}
