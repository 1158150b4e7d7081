//! The peers a user would pick instead of `reasons`, installed at pinned versions the
//! first time the benchmark runs (kept beside the build, in `target/peers`), and started
//! on the paths each serves.

use reasons_test_support::mcp::Listening;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The Rust `mcp-proxy` (joshrotenberg's, tower): an HTTP front over stdio backends.
const RUST_PROXY: &str = "0.6.0";
/// The Python `mcp-proxy` (sparfenyuk's): Streamable HTTP in front of a stdio server.
const PYTHON_PROXY: &str = "0.13.0";
/// Civic's passthrough (`@civic/passthrough-mcp-server`): stdio or HTTP in front of an
/// HTTP server.
const CIVIC: &str = "0.12.1";

/// Where the peers live: beside the build, kept between runs.
fn home() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/peers")
}

/// Runs `command`, failing with what it said when it fails.
fn run(mut command: Command, what: &str) {
    eprintln!("installing {what}");
    let output = command.output().unwrap_or_else(|e| panic!("{what}: {e}"));
    assert!(
        output.status.success(),
        "{what} failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The Rust `mcp-proxy`'s binary, built from crates.io with its lock file, none of its
/// optional features (authentication, metrics, telemetry: none of them is on a
/// comparable path).
pub fn rust_proxy() -> PathBuf {
    let root = home().join(format!("mcp-proxy-{RUST_PROXY}"));
    let binary = root.join("bin/mcp-proxy");
    if !binary.exists() {
        let mut cargo = Command::new(env!("CARGO"));
        cargo.args(["install", "mcp-proxy", "--locked", "--no-default-features"]);
        cargo.args(["--version", RUST_PROXY, "--root"]).arg(&root);
        run(cargo, "the Rust mcp-proxy (cargo install, a few minutes)");
    }
    binary
}

/// The Python `mcp-proxy`'s command, in a virtual environment of its own.
pub fn python_proxy() -> PathBuf {
    let venv = home().join(format!("python-mcp-proxy-{PYTHON_PROXY}"));
    let binary = venv.join("bin/mcp-proxy");
    if !binary.exists() {
        let mut python = Command::new("python3");
        python.args(["-m", "venv"]).arg(&venv);
        run(python, "a virtual environment for the Python mcp-proxy");
        let mut pip = Command::new(venv.join("bin/pip"));
        pip.args(["install", "--quiet", &format!("mcp-proxy=={PYTHON_PROXY}")]);
        run(pip, "the Python mcp-proxy (pip)");
    }
    binary
}

/// Civic's passthrough's command line (its `cli.js` runs only under its own path).
pub fn civic() -> Vec<String> {
    let folder = home().join(format!("civic-{CIVIC}"));
    let cli = folder.join("node_modules/@civic/passthrough-mcp-server/dist/cli.js");
    if !cli.exists() {
        std::fs::create_dir_all(&folder).unwrap();
        let manifest = format!(
            r#"{{"private":true,"dependencies":{{"@civic/passthrough-mcp-server":"{CIVIC}"}}}}"#
        );
        std::fs::write(folder.join("package.json"), manifest).unwrap();
        let mut npm = Command::new("npm");
        npm.args(["install", "--silent", "--no-audit", "--no-fund"])
            .current_dir(&folder);
        run(npm, "Civic's passthrough (npm)");
    }
    vec!["node".into(), cli.display().to_string()]
}

/// The Rust `mcp-proxy` serving `backend` at `/` under the name `own` (its tools are
/// named `own/<tool>`), logging errors only: `backend` is the TOML of the backend's
/// transport ([`stdio_backend`], [`http_backend`]).
pub fn rust_front(binary: &Path, backend: &str, dir: &Path) -> Listening {
    Listening::on_port(
        |port| {
            // A file of its own: the proxy watches its config and reloads what changes.
            let config = dir.join(format!("mcp-proxy-{port}.toml"));
            let toml = format!(
                "[proxy]\nname = \"bench\"\nseparator = \"/\"\n[proxy.listen]\nhost = \"127.0.0.1\"\nport = {port}\n\n\
                 [observability]\naudit = false\nlog_level = \"error\"\n\n\
                 [[backends]]\nname = \"own\"\n{backend}"
            );
            std::fs::write(&config, toml).unwrap();
            let mut command = Command::new(binary);
            command.arg("--config").arg(&config).stderr(Stdio::null());
            command
        },
        "/",
    )
}

/// A Rust `mcp-proxy` backend: `server`, started over stdio.
pub fn stdio_backend(server: &[String]) -> String {
    let args: Vec<String> = server[1..].iter().map(|arg| format!("{arg:?}")).collect();
    format!(
        "transport = \"stdio\"\ncommand = {:?}\nargs = [{}]\n",
        server[0],
        args.join(", ")
    )
}

/// A Rust `mcp-proxy` backend: the Streamable HTTP server at `url`.
pub fn http_backend(url: &str) -> String {
    format!("transport = \"http\"\nurl = {url:?}\n")
}

/// The Python `mcp-proxy` serving `server` (over stdio) over Streamable HTTP at `/mcp`.
pub fn python_front(binary: &Path, server: &[String]) -> Listening {
    Listening::on_port(
        |port| {
            let mut command = Command::new(binary);
            command.args(["--host", "127.0.0.1", "--port", &port.to_string()]);
            command.args(["--log-level", "WARNING", "--pass-environment", "--"]);
            command.args(server);
            command
        },
        "/mcp",
    )
}

/// Civic's passthrough over HTTP (`/mcp`) in front of the HTTP server at `url`.
pub fn civic_front(civic: &[String], url: &str) -> Listening {
    Listening::on_port(
        |port| {
            let mut command = civic_to(civic, url);
            command.env("PORT", port.to_string());
            command
        },
        "/mcp",
    )
}

/// Civic's passthrough's command, its target the HTTP server at `url` (the target's URL
/// and its path given apart, as it takes them).
pub fn civic_to(civic: &[String], url: &str) -> Command {
    let (origin, path) = url
        .rsplit_once('/')
        .expect("a URL with a path to the server's endpoint");
    let mut command = Command::new(&civic[0]);
    command
        .args(&civic[1..])
        .env("TARGET_SERVER_URL", origin)
        .env("TARGET_SERVER_MCP_PATH", format!("/{path}"));
    command
}
