//! `reasons wrap` and `unwrap` where configs meet the world: Claude Code's scopes, a file
//! the client re-serialised, repeated keys, remote entries with keys of their own, URLs
//! holding secrets, files that are not files, and launchers that drop `--`. The oracle is
//! the file read with serde_json, and the servers started as the file says.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn refused(output: &Output) -> String {
    assert!(
        !output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stdout)
    );
    String::from_utf8_lossy(&output.stderr).into_owned()
}

fn read(file: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap()
}

/// Where wrap keeps what `file` was.
fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.file_name().unwrap().to_os_string();
    name.push(".reasons-backup");
    file.with_file_name(name)
}

/// The server an entry starts, as a client starts it: its command and arguments, an
/// absent `args` being none.
fn started(entry: &Value) -> Vec<String> {
    started_by(entry, "command")
}

/// [`started`], for a client that names the command `command` (Goose's `cmd`).
fn started_by(entry: &Value, command: &str) -> Vec<String> {
    let mut line = vec![entry[command].as_str().unwrap().to_string()];
    line.extend(
        entry["args"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|arg| arg.as_str().unwrap().to_string()),
    );
    line
}

/// The process an entry starts, as a client starts it: its command line and `env`.
fn command_of(entry: &Value) -> Command {
    let line = started(entry);
    let mut command = Command::new(&line[0]);
    command.args(&line[1..]);
    for (name, value) in entry["env"].as_object().into_iter().flatten() {
        command.env(name, value.as_str().unwrap());
    }
    command
}

/// Whether `entry` starts `reasons mcp` in front of `server`.
fn behind_reasons(entry: &Value, server: &[&str]) -> bool {
    let line = started(entry);
    line[0] == reasons() && line[1] == "mcp" && line[2] == "--" && line[3..] == *server
}

#[test]
fn claude_code_s_every_scope_is_wrapped_and_unwrapped() {
    // The invariant: every server Claude Code starts runs behind reasons mcp, its user
    // scope (top-level `mcpServers`, empty here), each project's local scope
    // (`projects.<path>.mcpServers`, where `claude mcp add` puts a server) and the
    // project scope (`.mcp.json` in the project's folder).
    let home = tempfile::tempdir().unwrap();
    let claude = home.path().join(".claude.json");
    let user = json!({
        "numStartups": 3,
        "mcpServers": {},
        "projects": {
            "/home/me/app": {"allowedTools": [], "mcpServers": {"local": {"type": "stdio", "command": "npx", "args": ["-y", "srv"], "env": {}}}},
            "/home/me/other": {"allowedTools": []}
        }
    });
    std::fs::write(&claude, serde_json::to_string_pretty(&user).unwrap()).unwrap();
    let project = home.path().join(".mcp.json");
    std::fs::write(
        &project,
        r#"{"mcpServers": {"shared": {"command": "uvx", "args": ["tool"]}}}"#,
    )
    .unwrap();
    let report = ok(&reasons_in(
        home.path(),
        &["wrap", "--client", "claude-code"],
    ));
    assert!(
        report.contains("local (project /home/me/app): now runs behind reasons mcp"),
        "{report}"
    );
    assert!(
        report.contains("shared: now runs behind reasons mcp"),
        "{report}"
    );
    let wrapped = read(&claude);
    let local = &wrapped["projects"]["/home/me/app"]["mcpServers"]["local"];
    assert!(behind_reasons(local, &["npx", "-y", "srv"]), "{local}");
    assert_eq!(local["type"], "stdio");
    assert!(behind_reasons(
        &read(&project)["mcpServers"]["shared"],
        &["uvx", "tool"]
    ));
    ok(&reasons_in(
        home.path(),
        &["unwrap", "--client", "claude-code"],
    ));
    assert_eq!(read(&claude), user);
    assert_eq!(
        read(&project),
        json!({"mcpServers": {"shared": {"command": "uvx", "args": ["tool"]}}})
    );
}

/// `value` written as a client or a formatter writes it back.
fn reserialised(value: &Value, how: &str) -> String {
    match how {
        "two spaces" => serde_json::to_string_pretty(value).unwrap(),
        "compact" => serde_json::to_string(value).unwrap(),
        // Indented with tabs, as a formatter indents: the strings' own spaces are theirs.
        _ => serde_json::to_string_pretty(value)
            .unwrap()
            .lines()
            .map(|line| {
                let text = line.trim_start_matches(' ');
                let depth = (line.len() - text.len()) / 2;
                format!("{}{text}\n", "\t".repeat(depth))
            })
            .collect(),
    }
}

#[test]
fn unwrap_survives_the_client_re_serialising_the_file_and_keeps_its_edits() {
    // Claude Code rewrites ~/.claude.json on every start (JSON.stringify); after that,
    // and after a server added since, unwrap still gives every server back as it ran,
    // and keeps the new one.
    let original = json!({"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@scope/files", "/home/me"], "env": {"A": "1"}},
        "bare": {"command": "my-server"},
        "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}, "disabled": true}
    }});
    for how in ["two spaces", "compact", "tabs"] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, serde_json::to_string_pretty(&original).unwrap()).unwrap();
        ok(&reasons_in(
            dir.path(),
            &["wrap", "--config", file.to_str().unwrap()],
        ));
        let mut wrapped = read(&file);
        assert_eq!(wrapped["mcpServers"]["remote"]["disabled"], true, "{how}");
        wrapped["mcpServers"]["added"] = json!({"command": "later"});
        std::fs::write(&file, reserialised(&wrapped, how)).unwrap();
        let report = ok(&reasons_in(
            dir.path(),
            &["unwrap", "--config", file.to_str().unwrap()],
        ));
        assert!(
            report.contains("files: runs as it did before"),
            "{how}: {report}"
        );
        let mut expected = original.clone();
        expected["mcpServers"]["added"] = json!({"command": "later"});
        let mut after = read(&file);
        // No `args` and an empty list start the same server.
        if after["mcpServers"]["bare"]["args"] == json!([]) {
            after["mcpServers"]["bare"]
                .as_object_mut()
                .unwrap()
                .remove("args");
        }
        assert_eq!(after, expected, "{how}");
    }
}

#[test]
fn wrap_add_a_server_wrap_again_and_unwrap_gives_both_back() {
    // The backup is the first wrap's: it is no longer what the file was made from, and
    // unwrap undoes each entry instead, the new server kept.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let config = file.to_str().unwrap();
    std::fs::write(&file, r#"{"mcpServers": {"one": {"command": "a"}}}"#).unwrap();
    ok(&reasons_in(dir.path(), &["wrap", "--config", config]));
    let mut value = read(&file);
    value["mcpServers"]["two"] = json!({"command": "b"});
    std::fs::write(&file, serde_json::to_string(&value).unwrap()).unwrap();
    ok(&reasons_in(dir.path(), &["wrap", "--config", config]));
    ok(&reasons_in(dir.path(), &["unwrap", "--config", config]));
    let servers = &read(&file)["mcpServers"];
    assert_eq!(servers.as_object().unwrap().len(), 2, "{servers}");
    for (name, command) in [("one", "a"), ("two", "b")] {
        assert_eq!(started(&servers[name]), [command], "{servers}");
    }
}

#[test]
fn a_key_given_twice_is_refused_and_nothing_changes() {
    // Clients keep a repeated key's last value; an edit that read the first would run
    // what nobody wrote, or drop a header. Refused, at every level, naming the key.
    for (text, key) in [
        (
            r#"{"mcpServers": {"s": {"command": "node", "args": ["a.js"], "args": ["server.js"]}}}"#,
            "args",
        ),
        (
            r#"{"mcpServers": {"s": {"url": "https://h/mcp", "headers": {}, "headers": {"Authorization": "Bearer x"}}}}"#,
            "headers",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "a"}, "s": {"command": "b"}}}"#,
            "s",
        ),
        (
            r#"{"mcpServers": {"s": {"command": "a"}}, "mcpServers": {"t": {"command": "b"}}}"#,
            "mcpServers",
        ),
    ] {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("mcp.json");
        std::fs::write(&file, text).unwrap();
        let stderr = refused(&reasons_in(
            dir.path(),
            &["wrap", "--config", file.to_str().unwrap()],
        ));
        assert!(
            stderr.contains(&format!("{key:?} more than once")),
            "{text}: {stderr}"
        );
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
}

#[test]
fn a_server_that_cannot_be_wrapped_leaves_the_whole_file_as_it_was() {
    // A server wrap cannot put behind the proxy (here, one with neither a command nor a
    // URL) would be left running as it was while wrap said the client's servers were
    // wrapped: wrap names it, says why, exits non-zero and touches nothing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let text = r#"{"mcpServers": {"ok": {"command": "a"}, "odd": {"transport": "websocket"}}}"#;
    std::fs::write(&file, text).unwrap();
    let stderr = refused(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    assert!(
        stderr.contains("odd: no `command` string and no `url`"),
        "{stderr}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!dir.path().join("mcp.json.reasons-backup").exists());
}

#[test]
fn a_legacy_http_sse_server_works_after_wrap_as_it_did_before() {
    // A `type: "sse"` server (2024-11-05's HTTP+SSE transport) is wrapped like any
    // remote one, and `reasons mcp --url` falls back to that transport: the wrapped
    // entry, started as the config says, lists the server's tools with the reason added
    // and the server never receives the reason.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sse.log");
    let server = sse_server(&log);
    let file = dir.path().join("mcp.json");
    let config = json!({"mcpServers": {"old": {"type": "sse", "url": server.url}}});
    std::fs::write(&file, config.to_string()).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let entry = &read(&file)["mcpServers"]["old"];
    let mut session = Session::start_command(command_of(entry));
    let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
    assert_eq!(
        answer["result"]["serverInfo"]["name"], "own-sse",
        "{answer}"
    );
    session.send(INITIALIZED);
    let listed: Value =
        serde_json::from_str(&session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#))
            .unwrap();
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 2, "{listed}");
    let record = tools.iter().find(|tool| tool["name"] == "record").unwrap();
    assert!(
        record["inputSchema"]["properties"]["reason"].is_object(),
        "{record}"
    );
    let called: Value = serde_json::from_str(&session.ask(
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record","arguments":{"text":"hi","reason":"SECRET"}}}"#,
    ))
    .unwrap();
    assert_eq!(
        called["result"]["content"][0]["text"], r#"{"text":"hi"}"#,
        "{called}"
    );
    let received = std::fs::read_to_string(&log).unwrap();
    assert!(
        received.contains("tools/call") && !received.contains("SECRET"),
        "{received}"
    );
}

#[test]
fn a_url_s_secret_never_reaches_the_proxy_s_arguments() {
    // A URL holding a token (`?api_key=`) goes to the proxy through its environment: the
    // wrapped server, started as the config says, serves, and its /proc/PID/cmdline,
    // which every local user can read, holds no secret.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let file = dir.path().join("mcp.json");
    let url = format!("{}?api_key=s3cret-token", server.url);
    let config = json!({"mcpServers": {"remote": {"url": url, "headers": {"Authorization": "Bearer s3cret-header"}}}});
    std::fs::write(&file, config.to_string()).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let entry = &read(&file)["mcpServers"]["remote"];
    let mut proxy = Session::start_command(command_of(entry));
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", proxy.pid())).unwrap();
    let cmdline = String::from_utf8_lossy(&cmdline);
    assert!(!cmdline.contains("s3cret"), "{cmdline}");
    let answer = proxy.ask(INITIALIZE);
    assert!(answer.contains("http-echo"), "{answer}");
    proxy.finish();
    let requests = http_received(&log);
    assert!(!requests.is_empty());
    assert_eq!(
        requests[0]["headers"]["authorization"],
        "Bearer s3cret-header"
    );
}

#[test]
fn only_a_regular_file_of_a_config_s_size_is_read() {
    // A FIFO would block wrap for ever, /dev/zero fill its memory, a directory is no
    // config: each is refused at once, naming why.
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let huge = dir.path().join("huge.json");
    let file = std::fs::File::create(&huge).unwrap();
    // Sparse: a byte over the 1 GiB a config may be, on no disk.
    file.set_len((1 << 30) + 1).unwrap();
    let dangling = dir.path().join("dangling.json");
    std::os::unix::fs::symlink(dir.path().join("gone.json"), &dangling).unwrap();
    for (path, says) in [
        (dangling, "cannot read"),
        (fifo, "not a regular file"),
        (PathBuf::from("/dev/zero"), "not a regular file"),
        (dir.path().to_path_buf(), "not a regular file"),
        (huge, "over 1 GiB"),
    ] {
        let stderr = refused(&reasons_in(
            dir.path(),
            &["wrap", "--config", path.to_str().unwrap()],
        ));
        assert!(stderr.contains(says), "{}: {stderr}", path.display());
    }
}

#[test]
fn a_config_nested_past_what_parsers_recurse_is_refused_and_left_as_it_was() {
    // 20,000 levels of arrays in a server's entry, in each format a client keeps: wrap,
    // unwrap and doctor each refuse it with an error naming the file and its depth, in a
    // few lines, and exit; none overflows its stack (a signal), none writes a byte.
    const LEVELS: usize = 20_000;
    let nest = format!("{}{}", "[".repeat(LEVELS), "]".repeat(LEVELS));
    let configs = [
        (
            "claude-code",
            ".claude.json",
            format!(r#"{{"mcpServers": {{"s": {{"command": "a", "env": {{"X": {nest}}}}}}}}}"#),
        ),
        (
            "codex",
            ".codex/config.toml",
            format!("[mcp_servers.s]\ncommand = \"a\"\nx = {nest}\n"),
        ),
        (
            "goose",
            ".config/goose/config.yaml",
            format!("extensions:\n  s:\n    cmd: a\n    x: {nest}\n"),
        ),
    ];
    for (client, place, text) in configs {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &text).unwrap();
        for command in ["wrap", "unwrap", "doctor"] {
            let output = reasons_in(home.path(), &[command, "--client", client]);
            assert_eq!(
                output.status.code(),
                Some(1),
                "{client} {command}: {output:?}"
            );
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(stderr.contains(place), "{client} {command}: {stderr}");
            assert!(
                ["levels deep", "recurs"]
                    .iter()
                    .any(|why| stderr.contains(why)),
                "{client} {command}: {stderr}"
            );
            assert!(
                stderr.len() < 1000,
                "{client} {command}: {} bytes",
                stderr.len()
            );
            assert_eq!(
                std::fs::read_to_string(&file).unwrap(),
                text,
                "{client} {command}"
            );
            assert!(!backup_of(&file).exists(), "{client} {command}");
        }
    }
}

#[test]
fn a_claude_json_of_tens_of_mib_is_wrapped_and_unwrapped_byte_for_byte() {
    // Claude Code keeps each project's history in ~/.claude.json, which grows to tens of
    // MiB: its servers are wrapped, the history kept whole, and unwrap gives every byte back.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".claude.json");
    let history = "a prompt the person typed, ".repeat(2 << 20);
    let text = format!(
        r#"{{"numStartups": 7, "projects": {{"/work": {{"history": [{{"display": "{history}"}}]}}}}, "mcpServers": {{"docs": {{"command": "npx", "args": ["-y", "mcp-docs"]}}}}}}"#
    );
    assert!(text.len() > 50 << 20, "{} bytes", text.len());
    std::fs::write(&file, &text).unwrap();
    let report = ok(&reasons_in(
        home.path(),
        &["wrap", "--client", "claude-code"],
    ));
    assert!(
        report.contains("docs: now runs behind reasons mcp"),
        "{report}"
    );
    let wrapped = read(&file);
    assert!(behind_reasons(
        &wrapped["mcpServers"]["docs"],
        &["npx", "-y", "mcp-docs"]
    ));
    assert_eq!(
        wrapped["projects"]["/work"]["history"][0]["display"],
        Value::String(history)
    );
    ok(&reasons_in(
        home.path(),
        &["unwrap", "--client", "claude-code"],
    ));
    assert!(std::fs::read_to_string(&file).unwrap() == text);
}

/// A config in each format, laid out as people and clients write them: arguments over
/// lines, inline with spaces, none; a remote server with an `env` and `args` of its own
/// (in JSON spelt `"key": value, `: a remote entry is rebuilt from its keys, and comes
/// back in that spelling).
const LAID_OUT: [(&str, &str, &str); 3] = [
    (
        "claude-code",
        ".claude.json",
        "{\n  \"mcpServers\": {\n    \"lines\": {\n      \"command\": \"npx\",\n      \"args\": [\n        \"-y\",\n        \"pkg\"\n      ]\n    },\n    \"spaced\": {\"command\": \"a\", \"args\": [ \"b\" ]},\n    \"bare\": {\"command\": \"z\"},\n    \"remote\": {\"type\": \"http\", \"url\": \"https://x.example/mcp\", \"env\": {\"A\": \"1\"}, \"args\": [\"x\"], \"timeout\": 5}\n  }\n}\n",
    ),
    (
        "codex",
        ".codex/config.toml",
        "# mine\n[mcp_servers.lines]\ncommand = \"npx\"\nargs = [\n  \"-y\",\n  \"pkg\",\n]\n\n[mcp_servers.pair]\ncommand = \"a\"\nargs = [\"b\", \"c\"]\n\n[mcp_servers.bare]\ncommand = \"z\"\n\n[mcp_servers.remote]\nurl = \"https://x.example/mcp\"\nenv = { A = \"1\" }\n",
    ),
    (
        "goose",
        ".config/goose/config.yaml",
        "extensions:\n  lines:\n    type: stdio\n    cmd: npx\n    args:\n      - -y\n      - pkg\n  flow:\n    type: stdio\n    cmd: a\n    args: [b, c]\n  bare:\n    type: stdio\n    cmd: z\n",
    ),
];

#[test]
fn unwrap_without_its_backup_gives_every_byte_back() {
    // The backup deleted (or the binary moved): unwrap reads only the entries, and the
    // file is byte for byte what it was before wrap.
    for (client, place, text) in LAID_OUT {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let report = ok(&reasons_in(home.path(), &["wrap", "--client", client]));
        assert_eq!(
            report.matches("now runs behind reasons mcp").count(),
            4 - usize::from(client == "goose"),
            "{client}: {report}"
        );
        std::fs::remove_file(backup_of(&file)).unwrap();
        ok(&reasons_in(home.path(), &["unwrap", "--client", client]));
        assert!(
            std::fs::read_to_string(&file).unwrap() == text,
            "{client}: {}",
            std::fs::read_to_string(&file).unwrap()
        );
    }
}

#[test]
fn a_remote_server_s_own_env_and_args_are_kept_aside_not_given_twice() {
    // The proxy's entry has an `env` and `args` of its own; the remote's are kept, with
    // its URL, in the proxy's environment (no key of wrap's own, which strict clients
    // refuse), and come back.
    let home = tempfile::tempdir().unwrap();
    let (_, place, text) = LAID_OUT[0];
    let file = home.path().join(place);
    std::fs::write(&file, text).unwrap();
    let report = ok(&reasons_in(
        home.path(),
        &["wrap", "--client", "claude-code"],
    ));
    assert!(
        report.contains("remote: now runs behind reasons mcp"),
        "{report}"
    );
    let remote = &read(&file)["mcpServers"]["remote"];
    let keys: Vec<&String> = remote.as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["command", "args", "env", "timeout"],
        "no key of wrap's own"
    );
    assert_eq!(remote["env"].as_object().unwrap().len(), 2);
    assert_eq!(remote["env"]["REASONS_URL"], "https://x.example/mcp");
    assert_eq!(remote["args"][0], "mcp");
    assert_eq!(remote["timeout"], 5);
    // What unwrap gives back is the entry as it was written, its own env and args too.
    let kept: Value =
        serde_json::from_str(remote["env"]["REASONS_UNWRAP"].as_str().unwrap()).unwrap();
    let written: Value = serde_json::from_str(text).unwrap();
    assert_eq!(kept, written["mcpServers"]["remote"]);
    assert_eq!(kept["env"], json!({"A": "1"}));
    std::fs::remove_file(backup_of(&file)).unwrap();
    ok(&reasons_in(
        home.path(),
        &["unwrap", "--client", "claude-code"],
    ));
    assert_eq!(read(&file), serde_json::from_str::<Value>(text).unwrap());
}

#[test]
fn an_entry_is_known_as_wrapped_by_what_wrap_writes() {
    // A program whose name only begins with `reasons` is some other program: wrapped as
    // any is. And a proxy command wrap would not know again is refused.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mcp.json");
    std::fs::write(
        &file,
        r#"{"mcpServers": {"lint": {"command": "reasons-lint", "args": ["mcp", "x"]}}}"#,
    )
    .unwrap();
    let config = file.to_str().unwrap();
    let report = ok(&reasons_in(home.path(), &["wrap", "--config", config]));
    assert!(
        report.contains("lint: now runs behind reasons mcp"),
        "{report}"
    );
    assert!(behind_reasons(
        &read(&file)["mcpServers"]["lint"],
        &["reasons-lint", "mcp", "x"]
    ));
    let again = ok(&reasons_in(home.path(), &["wrap", "--config", config]));
    assert!(
        again.contains("lint: already runs behind reasons mcp"),
        "{again}"
    );
    let before = std::fs::read(&file).unwrap();
    let stderr = refused(&reasons_in(
        home.path(),
        &["unwrap", "--config", config, "--reasons", "/usr/bin/proxy"],
    ));
    // clap refuses a flag unwrap does not take; wrap's own refusal follows.
    assert!(stderr.contains("--reasons"), "{stderr}");
    let stderr = refused(&reasons_in(
        home.path(),
        &["wrap", "--config", config, "--reasons", "/usr/bin/proxy"],
    ));
    assert!(stderr.contains("a program named `reasons`"), "{stderr}");
    assert_eq!(std::fs::read(&file).unwrap(), before);
}

#[test]
fn the_proxy_is_written_by_an_absolute_path_a_desktop_client_finds() {
    // `reasons` on the shell's PATH (a link to this binary, as `cargo install` leaves
    // one): the config names that path, not a bare `reasons` a GUI client's PATH lacks.
    let home = tempfile::tempdir().unwrap();
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(reasons(), bin.join("reasons")).unwrap();
    let file = home.path().join("mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"s": {"command": "a"}}}"#).unwrap();
    let output = Command::new(reasons())
        .args(["wrap", "--config", file.to_str().unwrap()])
        .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
        .output()
        .unwrap();
    ok(&output);
    let written = read(&file)["mcpServers"]["s"]["command"].clone();
    assert_eq!(written, json!(bin.join("reasons").to_str().unwrap()));
}

#[test]
fn a_read_only_config_is_refused_with_why_and_left_as_it_was() {
    // The replacing rename would not care for the mode; wrap does.
    use std::os::unix::fs::PermissionsExt;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mcp.json");
    let text = r#"{"mcpServers": {"s": {"command": "a"}}}"#;
    std::fs::write(&file, text).unwrap();
    let config = file.to_str().unwrap();
    let backup = home.path().join("mcp.json.reasons-backup");
    let read_only = std::fs::Permissions::from_mode(0o444);
    std::fs::set_permissions(&file, read_only.clone()).unwrap();
    let stderr = refused(&reasons_in(home.path(), &["wrap", "--config", config]));
    assert!(stderr.contains("is read-only (mode 444)"), "{stderr}");
    assert!(stderr.contains("chmod u+w"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!backup.exists());
    // Wrapped while it could be written, then made read-only: unwrap leaves it too.
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    ok(&reasons_in(home.path(), &["wrap", "--config", config]));
    std::fs::remove_file(&backup).unwrap();
    let wrapped = std::fs::read_to_string(&file).unwrap();
    std::fs::set_permissions(&file, read_only).unwrap();
    let stderr = refused(&reasons_in(home.path(), &["unwrap", "--config", config]));
    assert!(stderr.contains("is read-only (mode 444)"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), wrapped);
    assert!(!backup.exists());
}

#[test]
fn run_as_root_on_a_user_s_config_the_files_stay_the_user_s() {
    // sudo, or a provisioning script: the config and its backup keep their owners, so
    // the user can still read their own file.
    use std::os::unix::fs::MetadataExt;
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"s": {"command": "a"}}}"#).unwrap();
    let user = (4242, 4343);
    if std::os::unix::fs::chown(&file, Some(user.0), Some(user.1)).is_err() {
        // Only root can give a file away; as anyone else there is no such file to meet.
        assert_ne!(rustix::process::geteuid().as_raw(), 0);
        return;
    }
    ok(&reasons_in(
        home.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    for path in [file.clone(), home.path().join("mcp.json.reasons-backup")] {
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!((after.uid(), after.gid()), user, "{}", path.display());
    }
}

#[test]
fn the_new_file_keeps_the_old_one_s_mode_and_group() {
    // A config readable by one group only stays so: nothing is wider than before.
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, r#"{"mcpServers": {"s": {"command": "a"}}}"#).unwrap();
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o640)).unwrap();
    // The group of another process's files, when the tests may give one (as root).
    let group = std::fs::metadata("/etc/passwd").unwrap().gid();
    let given = std::os::unix::fs::chown(&file, None, Some(group + 1)).is_ok();
    let before = std::fs::metadata(&file).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    for path in [file.clone(), dir.path().join("mcp.json.reasons-backup")] {
        let after = std::fs::metadata(&path).unwrap();
        assert_eq!(after.mode() & 0o7777, 0o640, "{}", path.display());
        assert_eq!(
            after.gid(),
            before.gid(),
            "{} (another group given: {given})",
            path.display()
        );
    }
}

#[test]
fn reasons_mcp_takes_the_server_command_without_the_dashes_launchers_drop() {
    // `claude mcp add x -- reasons mcp npx …` hands reasons `mcp npx …`: the first
    // argument that is not an option starts the server's command, its own options with it.
    let mut line = vec![reasons(), "mcp".to_string()];
    line.extend(own_server());
    let mut session = Session::start(&line);
    let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "own", "{answer}");
    let mut flagged = vec![
        reasons(),
        "mcp".into(),
        "--stats".into(),
        "node".into(),
        "-e".into(),
    ];
    flagged.push("process.stdin.on('data', () => {}); console.log(JSON.stringify({jsonrpc: '2.0', id: 1, result: {protocolVersion: '2025-06-18', capabilities: {}, serverInfo: {name: 'inline', version: '1'}}}))".into());
    let mut session = Session::start(&flagged);
    let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
    assert_eq!(answer["result"]["serverInfo"]["name"], "inline", "{answer}");
}

#[test]
fn json_with_comments_is_edited_in_place_comments_and_trailing_commas_kept() {
    // VS Code's mcp.json allows comments and trailing commas: wrap edits around them,
    // unwrap gives the file back byte for byte, and each step reads as JSON with comments.
    let text = "{\n  // my servers, https://example.com/docs\n  \"servers\": {\n    \"s\": {\"command\": \"srv\", /* its folder */ \"args\": [\"/home/me\",],},\n    \"t\": {\"command\": \"other\"}, // the second\n  },\n}\n";
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, text).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let wrapped = std::fs::read_to_string(&file).unwrap();
    for comment in [
        "// my servers, https://example.com/docs",
        "/* its folder */",
        "// the second",
    ] {
        assert!(wrapped.contains(comment), "{wrapped}");
    }
    let value = jsonc(&wrapped);
    assert!(
        behind_reasons(&value["servers"]["s"], &["srv", "/home/me"]),
        "{wrapped}"
    );
    assert!(
        behind_reasons(&value["servers"]["t"], &["other"]),
        "{wrapped}"
    );
    std::fs::remove_file(dir.path().join("mcp.json.reasons-backup")).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["unwrap", "--config", file.to_str().unwrap()],
    ));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

/// `text` read as JSON with comments is read: comments and trailing commas dropped, by a
/// reader of the test's own.
fn jsonc(text: &str) -> Value {
    let mut plain = String::new();
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        match (in_string, c, chars.peek()) {
            (true, '\\', _) => {
                plain.push(c);
                plain.extend(chars.next());
            }
            (_, '"', _) => {
                in_string = !in_string;
                plain.push(c);
            }
            (false, '/', Some('/')) => {
                while chars.peek().is_some_and(|next| *next != '\n') {
                    chars.next();
                }
            }
            (false, '/', Some('*')) => {
                chars.next();
                while let Some(c) = chars.next() {
                    if c == '*' && chars.peek() == Some(&'/') {
                        chars.next();
                        break;
                    }
                }
            }
            _ => plain.push(c),
        }
    }
    let trailing = without_trailing_commas(&plain);
    serde_json::from_str(&trailing).unwrap_or_else(|error| panic!("{error}: {trailing}"))
}

/// `text` without a comma that only whitespace separates from a closing bracket.
fn without_trailing_commas(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::new();
    for (at, c) in text.char_indices() {
        if c == ',' {
            let next = bytes[at + 1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                continue;
            }
        }
        out.push(c);
    }
    out
}

const CODEX: &str = r#"# Codex's settings, with its servers
model = "o3"

[mcp_servers.docs]
command = "npx"   # fetched each time
args = ["-y", "mcp-docs"]
env = { "API_KEY" = "k" }

[mcp_servers.bare]
command = "tool"

[mcp_servers.remote]
url = "https://example.com/mcp"
http_headers = { "Authorization" = "Bearer t0ken" }
startup_timeout_sec = 20
"#;

/// `text` read as TOML by the `toml` crate, which wrap does not use.
fn toml_value(text: &str) -> Value {
    let value: toml::Value = toml::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"));
    serde_json::to_value(value).unwrap()
}

#[test]
fn codex_s_toml_is_wrapped_in_place_and_unwrapped_whole() {
    // Codex CLI (`~/.codex/config.toml`, `[mcp_servers.NAME]`): each server behind the
    // proxy, its comments and every other setting kept, the remote one's URL and header
    // through the environment and its own keys kept; unwrap gives back every value.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".codex/config.toml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, CODEX).unwrap();
    let report = ok(&reasons_in(home.path(), &["wrap", "--client", "codex"]));
    assert!(
        report.contains("docs: now runs behind reasons mcp"),
        "{report}"
    );
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(
        text.contains("# Codex's settings, with its servers"),
        "{text}"
    );
    assert!(text.contains("# fetched each time"), "{text}");
    let wrapped = toml_value(&text);
    let servers = &wrapped["mcp_servers"];
    assert!(
        behind_reasons(&servers["docs"], &["npx", "-y", "mcp-docs"]),
        "{text}"
    );
    assert_eq!(servers["docs"]["env"], json!({"API_KEY": "k"}));
    assert!(behind_reasons(&servers["bare"], &["tool"]), "{text}");
    let remote = &servers["remote"];
    assert_eq!(
        remote["args"],
        json!([
            "mcp",
            "--url-env",
            "REASONS_URL",
            "--header-env",
            "Authorization=REASONS_HEADER_0"
        ])
    );
    assert_eq!(remote["env"]["REASONS_URL"], "https://example.com/mcp");
    assert_eq!(remote["env"]["REASONS_HEADER_0"], "Bearer t0ken");
    assert_eq!(remote["startup_timeout_sec"], 20);
    assert_eq!(wrapped["model"], "o3");
    // From the entries themselves, with no backup to lean on.
    std::fs::remove_file(home.path().join(".codex/config.toml.reasons-backup")).unwrap();
    ok(&reasons_in(home.path(), &["unwrap", "--client", "codex"]));
    let unwrapped = std::fs::read_to_string(&file).unwrap();
    assert_eq!(toml_value(&unwrapped), toml_value(CODEX), "{unwrapped}");
    assert!(unwrapped.contains("# fetched each time"), "{unwrapped}");
    // And after the file went through another TOML writer while wrapped.
    ok(&reasons_in(home.path(), &["wrap", "--client", "codex"]));
    let value: toml::Value = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::write(&file, toml::to_string(&value).unwrap()).unwrap();
    ok(&reasons_in(home.path(), &["unwrap", "--client", "codex"]));
    assert_eq!(
        toml_value(&std::fs::read_to_string(&file).unwrap()),
        toml_value(CODEX)
    );
}

#[test]
fn codex_s_headers_read_from_the_environment_are_read_so_behind_the_proxy() {
    // Codex reads a remote's token from a variable it names (`bearer_token_env_var`,
    // `env_http_headers`) and starts a stdio server with a bare environment: the wrapped
    // entry forwards those variables by name (`env_vars`) and the proxy reads them as
    // Codex did. Started as Codex starts it, the server gets both headers; the config
    // and the proxy's arguments hold neither secret; unwrap gives back every value.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let file = dir.path().join("config.toml");
    let original = format!(
        "[mcp_servers.remote]\nurl = \"{}\"\nbearer_token_env_var = \"MY_TOKEN\"\n\
         env_http_headers = {{ \"X-Team\" = \"MY_TEAM\" }}\n",
        server.url
    );
    std::fs::write(&file, &original).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let text = std::fs::read_to_string(&file).unwrap();
    let entry = &toml_value(&text)["mcp_servers"]["remote"];
    assert_eq!(entry["env_vars"], json!(["MY_TEAM", "MY_TOKEN"]), "{text}");
    assert!(entry.get("bearer_token_env_var").is_none(), "{text}");
    // Codex's start of a stdio server: its `env`, and the variables `env_vars` names.
    let mut command = command_of(entry);
    command
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap());
    for (name, value) in entry["env"].as_object().unwrap() {
        command.env(name, value.as_str().unwrap());
    }
    command
        .env("MY_TOKEN", "s3cret-token")
        .env("MY_TEAM", "blue");
    let mut proxy = Session::start_command(command);
    let cmdline = std::fs::read(format!("/proc/{}/cmdline", proxy.pid())).unwrap();
    assert!(!String::from_utf8_lossy(&cmdline).contains("s3cret"));
    let answer = proxy.ask(INITIALIZE);
    assert!(answer.contains("http-echo"), "{answer}");
    proxy.finish();
    let requests = http_received(&log);
    assert!(!requests.is_empty());
    assert_eq!(
        requests[0]["headers"]["authorization"],
        "Bearer s3cret-token"
    );
    assert_eq!(requests[0]["headers"]["x-team"], "blue");
    std::fs::remove_file(dir.path().join("config.toml.reasons-backup")).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["unwrap", "--config", file.to_str().unwrap()],
    ));
    let unwrapped = std::fs::read_to_string(&file).unwrap();
    assert_eq!(toml_value(&unwrapped), toml_value(&original), "{unwrapped}");
    // And after another TOML writer rewrote the wrapped file.
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let value: toml::Value = toml::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    std::fs::write(&file, toml::to_string(&value).unwrap()).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["unwrap", "--config", file.to_str().unwrap()],
    ));
    let rewritten = std::fs::read_to_string(&file).unwrap();
    assert_eq!(toml_value(&rewritten), toml_value(&original), "{rewritten}");
}

#[test]
fn a_server_named_like_a_flag_is_wrapped_with_its_audit_log_and_runs() {
    // `--name --x` would be read as two flags: the proxy refused to start. Each of wrap's
    // values is written in the argument of its flag (`--name=--x`).
    let dir = tempfile::tempdir().unwrap();
    let own = own_server();
    let original = json!({"mcpServers": {"--x": {"command": own[0], "args": own[1..]}}});
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, original.to_string()).unwrap();
    let logs = dir.path().join("audit");
    let config = file.to_str().unwrap();
    let wrap = [
        "wrap",
        "--audit",
        logs.to_str().unwrap(),
        "--config",
        config,
    ];
    ok(&reasons_in(dir.path(), &wrap));
    let line = started(&read(&file)["mcpServers"]["--x"]);
    let mut session = Session::start(&line);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let call = r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record","arguments":{"reason":"to see","text":"hi"}}}"#;
    session.ask(call);
    session.finish();
    let log = std::fs::read_to_string(logs.join("--x.jsonl")).unwrap();
    let records: Vec<Value> = log
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["server"], "--x");
}

#[test]
fn wrap_audit_gives_each_server_a_log_of_its_own_and_unwrap_undoes_it() {
    // `wrap --audit DIR`: each server's calls go to DIR/NAME.jsonl, each record naming
    // the server; unwrap takes the flags off again, JSON and TOML alike.
    let dir = tempfile::tempdir().unwrap();
    let logs = dir.path().join("audit");
    let own = own_server();
    let original = json!({"mcpServers": {"files": {"command": own[0], "args": own[1..]}, "bare": {"command": "x"}}});
    let file = dir.path().join("mcp.json");
    std::fs::write(&file, original.to_string()).unwrap();
    let audit = logs.to_str().unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--audit", audit, "--config", file.to_str().unwrap()],
    ));
    let entry = &read(&file)["mcpServers"]["files"];
    let line = started(entry);
    let log = std::fs::canonicalize(&logs).unwrap().join("files.jsonl");
    let flag = format!("--audit={}", log.display());
    assert_eq!(line[1..4], ["mcp", "--name=files", flag.as_str()]);
    let mut session = Session::start(&line);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    session.ask(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record","arguments":{"text":"hi","reason":"to see"}}}"#);
    session.finish();
    let records: Vec<Value> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["server"], "files");
    assert_eq!(records[0]["reason"], "to see");
    std::fs::remove_file(dir.path().join("mcp.json.reasons-backup")).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["unwrap", "--config", file.to_str().unwrap()],
    ));
    assert_eq!(read(&file), original);
    let codex = dir.path().join("config.toml");
    std::fs::write(&codex, CODEX).unwrap();
    ok(&reasons_in(
        dir.path(),
        &[
            "wrap",
            "--audit",
            audit,
            "--config",
            codex.to_str().unwrap(),
        ],
    ));
    assert!(
        std::fs::read_to_string(&codex)
            .unwrap()
            .contains("docs.jsonl")
    );
    std::fs::remove_file(dir.path().join("config.toml.reasons-backup")).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["unwrap", "--config", codex.to_str().unwrap()],
    ));
    assert_eq!(
        toml_value(&std::fs::read_to_string(&codex).unwrap()),
        toml_value(CODEX)
    );
}

const GOOSE: &str = r#"# Goose, with a server of each layout
GOOSE_PROVIDER: openai
extensions:
  developer:
    enabled: true
    name: developer
    type: builtin
  github:
    name: GitHub
    cmd: npx   # fetched each time
    args: [-y, "@modelcontextprotocol/server-github"]
    enabled: true
    envs: { "GITHUB_PERSONAL_ACCESS_TOKEN": "t0ken" }
    type: stdio
    timeout: 300
  files:
    cmd: "uvx"
    args:
      - mcp-files
      - /home/me
    type: stdio
  bare:
    cmd: tool
    type: stdio
"#;

const CONTINUE: &str = r#"name: my assistant
version: 1.0.0
schema: v1
mcpServers:
  - name: SQLite
    command: npx
    args:
      - "-y"
      - mcp-sqlite
      - /db.sqlite
  - name: Bare
    command: tool
"#;

/// `text` read as YAML by serde_yaml (libyaml's reading), which wrap does not use.
fn yaml_value(text: &str) -> Value {
    serde_yaml::from_str(text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

#[test]
fn goose_and_continue_yaml_are_wrapped_in_place_and_unwrapped_byte_for_byte() {
    // Goose's `extensions` and Continue's `mcpServers` list, in flow and block layouts,
    // with and without arguments: each stdio server behind the proxy, a builtin left as
    // it is, comments and every other line kept; unwrap from the entries alone gives the
    // file back byte for byte.
    for (client, place, text) in [
        ("goose", ".config/goose/config.yaml", GOOSE),
        ("continue", ".continue/config.yaml", CONTINUE),
    ] {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, text).unwrap();
        let report = ok(&reasons_in(home.path(), &["wrap", "--client", client]));
        if client == "goose" {
            assert!(
                report.contains("developer: left as it is: a `builtin` extension"),
                "{report}"
            );
        }
        let wrapped = std::fs::read_to_string(&file).unwrap();
        let value = yaml_value(&wrapped);
        let mut expected = yaml_value(text);
        match client {
            "goose" => {
                assert!(wrapped.contains("# fetched each time"), "{wrapped}");
                let servers = &value["extensions"];
                let started = |name: &str| {
                    let entry = &servers[name];
                    let mut line = vec![entry["cmd"].as_str().unwrap().to_string()];
                    line.extend(
                        entry["args"]
                            .as_array()
                            .into_iter()
                            .flatten()
                            .map(|a| a.as_str().unwrap().to_string()),
                    );
                    line
                };
                let behind = |name: &str, server: &[&str]| {
                    let line = started(name);
                    line[0] == reasons() && line[1..3] == ["mcp", "--"] && line[3..] == *server
                };
                assert!(
                    behind(
                        "github",
                        &["npx", "-y", "@modelcontextprotocol/server-github"]
                    ),
                    "{wrapped}"
                );
                assert!(
                    behind("files", &["uvx", "mcp-files", "/home/me"]),
                    "{wrapped}"
                );
                assert!(behind("bare", &["tool"]), "{wrapped}");
                for name in ["github", "files", "bare"] {
                    expected["extensions"][name]["cmd"] = servers[name]["cmd"].clone();
                    expected["extensions"][name]["args"] = servers[name]["args"].clone();
                }
            }
            _ => {
                let servers = value["mcpServers"].as_array().unwrap();
                assert_eq!(servers.len(), 2);
                assert_eq!(
                    servers[0]["args"],
                    json!(["mcp", "--", "npx", "-y", "mcp-sqlite", "/db.sqlite"])
                );
                assert_eq!(servers[1]["args"], json!(["mcp", "--", "tool"]));
                for at in 0..2 {
                    assert_eq!(servers[at]["command"], reasons());
                    expected["mcpServers"][at]["command"] = servers[at]["command"].clone();
                    expected["mcpServers"][at]["args"] = servers[at]["args"].clone();
                }
            }
        }
        // Nothing else changed: the builtin, every other key, the other settings.
        assert_eq!(value, expected, "{client}: {wrapped}");
        std::fs::remove_file(format!("{}.reasons-backup", file.display())).unwrap();
        ok(&reasons_in(home.path(), &["unwrap", "--client", client]));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{client}");
    }
}

#[test]
fn yaml_rewritten_by_another_writer_still_unwraps_and_what_wrap_cannot_edit_is_refused() {
    // Goose's config written back by a YAML library (every list in block layout, keys
    // reordered) unwraps value for value; a command given through an alias, which an edit
    // in place could not follow, is refused with nothing changed.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".config/goose/config.yaml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, GOOSE).unwrap();
    ok(&reasons_in(home.path(), &["wrap", "--client", "goose"]));
    let rewritten =
        serde_yaml::to_string(&yaml_value(&std::fs::read_to_string(&file).unwrap())).unwrap();
    std::fs::write(&file, &rewritten).unwrap();
    ok(&reasons_in(home.path(), &["unwrap", "--client", "goose"]));
    assert_eq!(
        yaml_value(&std::fs::read_to_string(&file).unwrap()),
        yaml_value(GOOSE)
    );
    // Continue's list written back in flow layout, on one line each.
    let continued = home.path().join(".continue/config.yaml");
    std::fs::create_dir_all(continued.parent().unwrap()).unwrap();
    let flow = format!(
        "mcpServers:\n  - {{name: Bare, command: {0}, args: [mcp, --, tool]}}\n  - {{name: S, command: {0}, args: [mcp, --, npx, -y]}}\n",
        reasons()
    );
    std::fs::write(&continued, &flow).unwrap();
    ok(&reasons_in(
        home.path(),
        &["unwrap", "--client", "continue"],
    ));
    let unwrapped = yaml_value(&std::fs::read_to_string(&continued).unwrap());
    let servers = unwrapped["mcpServers"].as_array().unwrap();
    assert_eq!(servers.len(), 2);
    assert_eq!(servers[0]["command"], "tool");
    assert!(
        servers[0]["args"]
            .as_array()
            .is_none_or(|args| args.is_empty())
    );
    assert_eq!(servers[1]["command"], "npx");
    assert_eq!(servers[1]["args"], json!(["-y"]));
    let aliased = "tools: &tool npx\nextensions:\n  a:\n    cmd: *tool\n    type: stdio\n";
    std::fs::write(&file, aliased).unwrap();
    let stderr = refused(&reasons_in(home.path(), &["wrap", "--client", "goose"]));
    assert!(stderr.contains("a: no `cmd` string"), "{stderr}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), aliased);
}

/// Goose's and Continue's remote servers, each kind as their documentation writes it, at
/// `url` (the tests' own HTTP server).
fn yaml_remotes(url: &str) -> [(&'static str, &'static str, String); 2] {
    let goose = format!(
        r#"extensions:
  search:
    enabled: true
    name: search
    type: streamable_http
    uri: {url}
    headers:
      Authorization: Bearer s3cret   # the team's token
    envs: {{}}
    env_keys: []
    timeout: 300
  legacy: {{type: sse, uri: "{url}", enabled: false}}
"#
    );
    let continued = format!(
        r#"name: my assistant
mcpServers:
  - name: Search
    type: streamable-http
    url: {url}
    requestOptions:
      headers:
        Authorization: "Bearer s3cret"
  - {{name: Flow, type: sse, url: "{url}"}}
"#
    );
    [
        ("goose", ".config/goose/config.yaml", goose),
        ("continue", ".continue/config.yaml", continued),
    ]
}

#[test]
fn goose_and_continue_remote_servers_run_behind_the_proxy_and_come_back_whole() {
    // A remote server in YAML becomes a stdio one running `reasons mcp --url-env`: its
    // remote keys kept aside under `reasons-unwrap-…`, its other keys (`enabled`,
    // `timeout`) as they were. Started as the client starts a stdio server, it reaches
    // the server with its header, which no argument holds; unwrap gives the file back
    // byte for byte, and value for value after a YAML library rewrote it.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    for (client, place, text) in yaml_remotes(&server.url) {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &text).unwrap();
        ok(&reasons_in(home.path(), &["wrap", "--client", client]));
        let wrapped = std::fs::read_to_string(&file).unwrap();
        let value = yaml_value(&wrapped);
        let (entry, flow, command, env) = match client {
            "goose" => {
                assert!(wrapped.contains("# the team's token"), "{wrapped}");
                let servers = &value["extensions"];
                assert_eq!(servers["search"]["timeout"], 300);
                assert_eq!(servers["search"]["reasons-unwrap-type"], "streamable_http");
                assert_eq!(servers["legacy"]["enabled"], false);
                (&servers["search"], &servers["legacy"], "cmd", "envs")
            }
            _ => {
                let servers = value["mcpServers"].as_array().unwrap();
                assert_eq!(servers.len(), 2);
                assert_eq!(servers[0]["name"], "Search");
                (&servers[0], &servers[1], "command", "env")
            }
        };
        for entry in [entry, flow] {
            assert_eq!(entry["type"], "stdio", "{wrapped}");
            assert_eq!(entry[command], reasons(), "{wrapped}");
            assert_eq!(entry[env]["REASONS_URL"], server.url.as_str(), "{wrapped}");
        }
        assert_eq!(
            entry["args"],
            json!([
                "mcp",
                "--url-env",
                "REASONS_URL",
                "--header-env",
                "Authorization=REASONS_HEADER_0"
            ]),
            "{wrapped}"
        );
        assert_eq!(flow["args"], json!(["mcp", "--url-env", "REASONS_URL"]));
        // Started as the client starts a stdio server: its command, arguments and env.
        let mut start = Command::new(entry[command].as_str().unwrap());
        for arg in entry["args"].as_array().unwrap() {
            start.arg(arg.as_str().unwrap());
        }
        for (name, value) in entry[env].as_object().unwrap() {
            start.env(name, value.as_str().unwrap());
        }
        std::fs::write(&log, "").unwrap();
        let mut proxy = Session::start_command(start);
        let cmdline = std::fs::read(format!("/proc/{}/cmdline", proxy.pid())).unwrap();
        assert!(!String::from_utf8_lossy(&cmdline).contains("s3cret"));
        let answer = proxy.ask(INITIALIZE);
        assert!(answer.contains("http-echo"), "{answer}");
        proxy.finish();
        let requests = http_received(&log);
        assert!(!requests.is_empty());
        assert_eq!(requests[0]["headers"]["authorization"], "Bearer s3cret");
        // From the entries alone, byte for byte.
        std::fs::remove_file(format!("{}.reasons-backup", file.display())).unwrap();
        ok(&reasons_in(home.path(), &["unwrap", "--client", client]));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text, "{client}");
        // And after a YAML library wrote the wrapped file back, value for value.
        ok(&reasons_in(home.path(), &["wrap", "--client", client]));
        let rewritten =
            serde_yaml::to_string(&yaml_value(&std::fs::read_to_string(&file).unwrap())).unwrap();
        std::fs::write(&file, &rewritten).unwrap();
        std::fs::remove_file(format!("{}.reasons-backup", file.display())).unwrap();
        ok(&reasons_in(home.path(), &["unwrap", "--client", client]));
        let unwrapped = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            yaml_value(&unwrapped),
            yaml_value(&text),
            "{client}: {rewritten}\n→\n{unwrapped}"
        );
    }
}

#[test]
fn a_yaml_remote_server_the_proxy_cannot_reach_as_the_client_does_is_refused() {
    // A header the client fills in itself, request options the proxy does not apply,
    // repeated headers: each names the server and why, and nothing is written.
    let goose = |entry: &str| format!("extensions:\n  remote:\n    type: streamable_http\n{entry}");
    for (client, place, text, says) in [
        (
            "goose",
            ".config/goose/config.yaml",
            goose("    uri: http://127.0.0.1:1/mcp\n    headers: {Authorization: \"Bearer ${TOKEN}\"}\n"),
            "remote: its URL or a header holds a `${…}`",
        ),
        (
            "goose",
            ".config/goose/config.yaml",
            goose("    uri: http://127.0.0.1:1/mcp\n    headers: {X-A: a, X-A: b}\n"),
            "duplicated key",
        ),
        (
            "continue",
            ".continue/config.yaml",
            "mcpServers:\n  - name: R\n    url: http://127.0.0.1:1/mcp\n    requestOptions:\n      timeout: 5\n".into(),
            "R: its `requestOptions` give `timeout`",
        ),
    ] {
        let home = tempfile::tempdir().unwrap();
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, &text).unwrap();
        let stderr = refused(&reasons_in(home.path(), &["wrap", "--client", client]));
        assert!(stderr.contains(says), "{stderr}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    }
}

#[test]
fn a_client_s_save_while_wrap_runs_is_never_lost() {
    // A client saves its config (a new file renamed over the old, as clients save) just
    // as wrap is about to replace it, 100 times: the kernel says when wrap creates its
    // first file in the folder (inotify), the new file it will put in place, which it
    // makes after its last read of the config, and the save follows at once, so each
    // round is the race, not a guess at when wrap runs. Whether the save lands before
    // wrap replaces the file (wrap sees it and refuses, saying so) or after (the save
    // replaces wrap's edit), the file afterwards is the save, byte for byte: wrap never
    // read it, so any other content is a lost save.
    use rustix::fs::inotify;
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let before = r#"{"mcpServers": {"a": {"command": "a"}}}"#;
    let saved = r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b"}}}"#;
    let save = |text: &str| {
        let next = dir.path().join("mcp.json.saving");
        std::fs::write(&next, text).unwrap();
        std::fs::rename(&next, &file).unwrap();
    };
    // Word of the first file made in the folder from now on, on a watch of its own, so
    // that nothing an earlier round made can be taken for it.
    let first_made = || {
        let watch = inotify::init(inotify::CreateFlags::CLOEXEC).unwrap();
        inotify::add_watch(&watch, dir.path(), inotify::WatchFlags::CREATE).unwrap();
        let (made, first) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut buffer = [std::mem::MaybeUninit::uninit(); 4096];
            let _ = inotify::Reader::new(&watch, &mut buffer).next();
            let _ = made.send(());
        });
        first
    };
    let (mut refused, mut replaced) = (0, 0);
    for round in 0..100 {
        save(before);
        let made = first_made();
        let wrap = Command::new(reasons())
            .args(["wrap", "--config", file.to_str().unwrap()])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        made.recv_timeout(std::time::Duration::from_secs(30))
            .unwrap_or_else(|_| panic!("round {round}: wrap made no file to put in place"));
        save(saved);
        let output = wrap.wait_with_output().unwrap();
        let now = std::fs::read_to_string(&file).unwrap();
        assert_eq!(now, saved, "round {round}: the save was lost");
        if output.status.success() {
            replaced += 1;
        } else {
            let stderr = String::from_utf8_lossy(&output.stderr);
            assert!(
                stderr.contains("changed while reasons was editing it"),
                "{stderr}"
            );
            refused += 1;
        }
    }
    assert_eq!(refused + replaced, 100);
    eprintln!(
        "wrap saw the save and refused {refused} times; the save replaced its edit {replaced} times"
    );
}

/// The servers a client starts, by name.
type Servers = std::collections::BTreeMap<String, Value>;

/// The servers a client starts from its scopes' server lists, given from the widest to
/// the narrowest: by name, a narrower scope's entry over a wider one's, as Claude Code
/// (user, then project, then local) and Gemini CLI (user, then workspace) resolve them.
fn resolved(scopes: &[&Value]) -> Servers {
    let mut servers = std::collections::BTreeMap::new();
    for scope in scopes {
        for (name, entry) in scope.as_object().into_iter().flatten() {
            servers.insert(name.clone(), entry.clone());
        }
    }
    servers
}

#[test]
fn every_scope_a_client_resolves_is_wrapped_and_the_one_it_starts_runs_behind_the_proxy() {
    // The same name at every scope: the server the client starts (the narrowest scope's)
    // runs behind the proxy with its own command, as does every other; after the files
    // are re-serialised (JSON.stringify's 2-space and compact layouts) unwrap gives back
    // what the client resolved before, value for value. Run in a project's folder, for
    // Claude Code (user, project `.mcp.json`, local `projects.<folder>`) and Gemini CLI
    // (user, workspace `.gemini/settings.json`).
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("app");
    std::fs::create_dir_all(project.join(".gemini")).unwrap();
    std::fs::create_dir_all(home.path().join(".gemini")).unwrap();
    let folder = project.to_str().unwrap();
    let server = |command: &str| json!({"command": command, "args": ["--flag"]});
    let claude = home.path().join(".claude.json");
    let user = json!({
        "mcpServers": {"shared": server("user-shared"), "mine": server("user-mine")},
        "projects": {
            folder: {"mcpServers": {"shared": server("local-shared")}},
            "/elsewhere": {"mcpServers": {"far": server("far")}}
        }
    });
    std::fs::write(&claude, serde_json::to_string_pretty(&user).unwrap()).unwrap();
    let shared = project.join(".mcp.json");
    let team = json!({"mcpServers": {"shared": server("project-shared"), "team": server("team")}});
    std::fs::write(&shared, team.to_string()).unwrap();
    let gemini_user = home.path().join(".gemini/settings.json");
    let gemini_workspace = project.join(".gemini/settings.json");
    let gemini = (
        json!({"mcpServers": {"a": server("user-a"), "u": server("user-u")}}),
        json!({"mcpServers": {"a": server("workspace-a")}}),
    );
    std::fs::write(&gemini_user, gemini.0.to_string()).unwrap();
    std::fs::write(&gemini_workspace, gemini.1.to_string()).unwrap();
    let claude_code = || {
        let user = read(&claude);
        let local = user["projects"][folder]["mcpServers"].clone();
        resolved(&[&user["mcpServers"], &read(&shared)["mcpServers"], &local])
    };
    let gemini_cli = || {
        resolved(&[
            &read(&gemini_user)["mcpServers"],
            &read(&gemini_workspace)["mcpServers"],
        ])
    };
    let in_project = |args: &[&str]| {
        let output = Command::new(reasons())
            .args(args)
            .current_dir(&project)
            .env("HOME", home.path())
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        ok(&output)
    };
    let resolvers: [(&str, &dyn Fn() -> Servers, usize); 2] =
        [("claude-code", &claude_code, 3), ("gemini", &gemini_cli, 2)];
    for (client, servers, count) in resolvers {
        let before = servers();
        assert_eq!(before.len(), count, "{client}: {before:?}");
        in_project(&["wrap", "--client", client]);
        let wrapped = servers();
        assert_eq!(wrapped.len(), count, "{client}: {wrapped:?}");
        for (name, entry) in &wrapped {
            let command = before[name]["command"].as_str().unwrap();
            assert!(
                behind_reasons(entry, &[command, "--flag"]),
                "{client} {name}: {entry}"
            );
        }
        for file in [&claude, &shared, &gemini_user, &gemini_workspace] {
            let value = read(file);
            let rewritten = match file == &claude {
                true => serde_json::to_string_pretty(&value).unwrap(),
                false => value.to_string(),
            };
            std::fs::write(file, rewritten).unwrap();
        }
        in_project(&["unwrap", "--client", client]);
        assert_eq!(servers(), before, "{client}");
    }
    // The other project's local scope, which Claude Code starts only there, was wrapped
    // and unwrapped too.
    assert_eq!(
        read(&claude)["projects"]["/elsewhere"]["mcpServers"]["far"],
        server("far")
    );
}

#[test]
fn what_wrap_prints_of_a_hostile_config_is_inert_one_row_per_server() {
    // R12: a cloned project's config names its servers, and its comments are in the diff;
    // neither may write to the terminal, and no name may draw a row of its own.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("mcp.json");
    let hostile =
        "x\u{1b}]52;c;Y3VybA==\u{7}\u{1b}[2J\u{202e}\nforged: now runs behind reasons mcp";
    let config = format!(
        "{{\n  // \u{1b}]0;owned\u{7} a comment\n  \"mcpServers\": {{{}: {{\"command\": \"srv\"}}}}\n}}\n",
        serde_json::to_string(hostile).unwrap()
    );
    std::fs::write(&file, &config).unwrap();
    for args in [vec!["wrap", "--dry-run"], vec!["wrap"], vec!["unwrap"]] {
        let mut args = args.clone();
        args.extend(["--config", file.to_str().unwrap()]);
        let printed = ok(&reasons_in(dir.path(), &args));
        assert!(
            !printed
                .chars()
                .any(|c| (c.is_control() && c != '\n') || c == '\u{202e}'),
            "{args:?}: {printed:?}"
        );
        let rows: Vec<&str> = printed
            .lines()
            .filter(|line| line.starts_with("x"))
            .collect();
        assert_eq!(rows.len(), 1, "{args:?}: {printed}");
        assert!(
            rows[0].starts_with("x forged: ") && !printed.contains("\nforged"),
            "{args:?}: {printed}"
        );
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), config);
}

#[test]
fn unwrap_undoes_every_form_the_proxy_runs_and_fails_naming_what_it_left() {
    // The README's entry (`mcp --audit FILE CMD …`), what `claude mcp add` and `gemini mcp
    // add` store (`mcp CMD …`, no `--`) and flags before `--` are all read as `reasons mcp`
    // reads them, and unwrapped to the server they run; what is not a line the proxy would
    // run, or a remote written by hand, is left, named with why, and the exit says so.
    let reasons = reasons();
    let entry = |args: &[&str]| json!({"command": reasons, "args": args});
    let config = json!({"mcpServers": {
        "readme": entry(&["mcp", "--audit", "/home/me/reasons.jsonl", "npx", "-y", "srv", "/notes"]),
        "added": entry(&["mcp", "srv-cmd", "--port", "1"]),
        "flags": entry(&["mcp", "--stats", "--required", "--", "srv", "c"]),
        "unread": entry(&["mcp", "--read-timeout", "0", "--", "srv"]),
        "remote": entry(&["mcp", "--url", "https://example.com/mcp"]),
    }});
    let yaml = format!(
        "extensions:\n{}",
        ["readme", "added", "flags", "unread", "remote"]
            .iter()
            .map(|name| {
                let args = &config["mcpServers"][name]["args"];
                format!("  {name}:\n    type: stdio\n    cmd: {reasons}\n    args: {args}\n")
            })
            .collect::<String>()
    );
    let home = tempfile::tempdir().unwrap();
    let json_file = home.path().join("mcp.json");
    let yaml_file = home.path().join("config.yaml");
    std::fs::write(&json_file, serde_json::to_string_pretty(&config).unwrap()).unwrap();
    std::fs::write(&yaml_file, &yaml).unwrap();
    let toml_file = home.path().join("config.toml");
    let toml_text: String = ["readme", "added", "flags", "unread", "remote"]
        .iter()
        .map(|name| {
            let args = &config["mcpServers"][name]["args"];
            format!("[mcp_servers.{name}]\ncommand = \"{reasons}\"\nargs = {args}\n\n")
        })
        .collect();
    std::fs::write(&toml_file, &toml_text).unwrap();
    for file in [&json_file, &yaml_file, &toml_file] {
        let output = reasons_in(home.path(), &["unwrap", "--config", file.to_str().unwrap()]);
        assert_eq!(output.status.code(), Some(1), "{output:?}");
        let rows = String::from_utf8_lossy(&output.stdout).into_owned();
        let said = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            said.contains("servers left running behind reasons mcp: 2"),
            "{said}"
        );
        for row in [
            "readme: runs as it did before",
            "added: runs as it did before",
            "flags: runs as it did before",
            "unread: left as it is: `reasons mcp` would not run its arguments (invalid value \
             '0' for '--read-timeout <SECONDS>'",
            "remote: left as it is: it runs `reasons mcp --url` as written by hand",
        ] {
            assert!(rows.contains(row), "{file:?} lacks {row:?}:\n{rows}");
        }
    }
    let servers = read(&json_file)["mcpServers"].clone();
    let yaml = yaml_value(&std::fs::read_to_string(&yaml_file).unwrap());
    let toml = toml_value(&std::fs::read_to_string(&toml_file).unwrap());
    for (servers, command) in [
        (&servers, "command"),
        (&yaml["extensions"], "cmd"),
        (&toml["mcp_servers"], "command"),
    ] {
        let line = |name: &str| started_by(&servers[name], command);
        assert_eq!(line("readme"), ["npx", "-y", "srv", "/notes"], "{servers}");
        assert_eq!(line("added"), ["srv-cmd", "--port", "1"], "{servers}");
        assert_eq!(line("flags"), ["srv", "c"], "{servers}");
        assert_eq!(line("unread")[0], reasons, "{servers}");
        assert_eq!(line("remote")[0], reasons, "{servers}");
    }
}

#[test]
fn every_file_a_client_reads_is_found_and_none_yet_says_where_it_would_be() {
    let home = tempfile::tempdir().unwrap();
    // No config yet: where the client keeps it, and that there is nothing to do.
    for (verb, client, place) in [
        ("wrap", "cursor", ".cursor/mcp.json"),
        (
            "unwrap",
            "cline",
            ".cline/data/settings/cline_mcp_settings.json",
        ),
        ("doctor", "continue", ".continue/config.yaml"),
    ] {
        let said = refused(&reasons_in(home.path(), &[verb, "--client", client]));
        assert!(
            said.contains(&format!(
                "{client} has no config here yet: it keeps its servers in"
            )) && said.contains(place)
                && said.contains("nothing to do. Add a server to")
                && !said.contains("os error"),
            "{verb} {client}: {said}"
        );
    }
    // A project's file with no user file yet is wrapped.
    let cursor = home.path().join("project/.cursor/mcp.json");
    std::fs::create_dir_all(cursor.parent().unwrap()).unwrap();
    std::fs::write(&cursor, r#"{"mcpServers":{"p":{"command":"p-srv"}}}"#).unwrap();
    let project = home.path().join("project");
    // Run in the project's folder, the home being elsewhere.
    let in_project = |args: &[&str]| {
        Command::new(reasons())
            .args(args)
            .current_dir(&project)
            .env("HOME", home.path())
            .env("XDG_CONFIG_HOME", home.path().join(".config"))
            .output()
            .unwrap()
    };
    let rows = ok(&in_project(&["wrap", "--client", "cursor"]));
    assert!(rows.contains("p: now runs behind reasons mcp"), "{rows}");
    assert!(behind_reasons(
        &read(&cursor)["mcpServers"]["p"],
        &["p-srv"]
    ));
    // Continue's block files: YAML, JSON in Claude Desktop's form, and JSON holding one
    // server named for its file; the Cline CLI's own file beside the extension's.
    let blocks = project.join(".continue/mcpServers");
    std::fs::create_dir_all(&blocks).unwrap();
    let claude_form = r#"{"mcpServers": {"c": {"command": "c-srv", "args": ["-x"]}}}"#;
    let one = r#"{"command": "one-srv", "args": ["--flag"], "env": {"K": "v"}}"#;
    let yaml =
        "name: b\nversion: 0.0.1\nschema: v1\nmcpServers:\n  - name: y\n    command: y-srv\n";
    std::fs::write(blocks.join("claude.json"), claude_form).unwrap();
    std::fs::write(blocks.join("solo.json"), one).unwrap();
    std::fs::write(blocks.join("block.yaml"), yaml).unwrap();
    std::fs::write(blocks.join("notes.txt"), "not a block").unwrap();
    let cline = home
        .path()
        .join(".cline/data/settings/cline_mcp_settings.json");
    std::fs::create_dir_all(cline.parent().unwrap()).unwrap();
    let cline_text = r#"{"mcpServers": {"k": {"command": "k-srv", "disabled": false}}}"#;
    std::fs::write(&cline, cline_text).unwrap();
    for client in ["continue", "cline"] {
        let rows = ok(&in_project(&["wrap", "--client", client]));
        assert!(!rows.contains("notes"), "{rows}");
    }
    assert!(behind_reasons(
        &read(&blocks.join("claude.json"))["mcpServers"]["c"],
        &["c-srv", "-x"]
    ));
    let solo = read(&blocks.join("solo.json"));
    assert!(behind_reasons(&solo, &["one-srv", "--flag"]), "{solo}");
    assert_eq!(solo["env"], json!({"K": "v"}));
    let block = yaml_value(&std::fs::read_to_string(blocks.join("block.yaml")).unwrap());
    assert!(
        behind_reasons(&block["mcpServers"][0], &["y-srv"]),
        "{block:?}"
    );
    assert!(behind_reasons(&read(&cline)["mcpServers"]["k"], &["k-srv"]));
    for client in ["continue", "cline"] {
        ok(&in_project(&["unwrap", "--client", client]));
    }
    assert_eq!(
        std::fs::read_to_string(blocks.join("claude.json")).unwrap(),
        claude_form
    );
    assert_eq!(
        std::fs::read_to_string(blocks.join("solo.json")).unwrap(),
        one
    );
    assert_eq!(
        std::fs::read_to_string(blocks.join("block.yaml")).unwrap(),
        yaml
    );
    assert_eq!(std::fs::read_to_string(&cline).unwrap(), cline_text);
}

#[test]
fn an_entry_an_earlier_release_wrapped_with_a_key_of_its_own_still_unwraps() {
    // Releases before kept a remote's keys under `reasons-unwrap` in the entry itself.
    let reasons = reasons();
    let home = tempfile::tempdir().unwrap();
    let json_file = home.path().join("mcp.json");
    let old = json!({"mcpServers": {"r": {
        "command": reasons,
        "args": ["mcp", "--url-env", "REASONS_URL"],
        "env": {"REASONS_URL": "https://example.com/mcp"},
        "timeout": 5,
        "reasons-unwrap": {"type": "http", "url": "https://example.com/mcp"}
    }}});
    std::fs::write(&json_file, old.to_string()).unwrap();
    let toml_file = home.path().join("config.toml");
    std::fs::write(
        &toml_file,
        format!(
            "[mcp_servers.r]\ncommand = {}\nargs = [\"mcp\", \"--url-env\", \"REASONS_URL\"]\n\
             env = {{ REASONS_URL = \"https://example.com/mcp\" }}\n\
             reasons-unwrap = {{ url = \"https://example.com/mcp\" }}\n",
            json!(reasons)
        ),
    )
    .unwrap();
    for file in [&json_file, &toml_file] {
        ok(&reasons_in(
            home.path(),
            &["unwrap", "--config", file.to_str().unwrap()],
        ));
    }
    assert_eq!(
        read(&json_file),
        json!({"mcpServers": {"r": {"type": "http", "url": "https://example.com/mcp", "timeout": 5}}})
    );
    assert_eq!(
        toml_value(&std::fs::read_to_string(&toml_file).unwrap()),
        json!({"mcp_servers": {"r": {"url": "https://example.com/mcp"}}})
    );
}

#[test]
fn goose_s_config_as_goose_s_own_writer_lays_it_out_is_wrapped_and_round_trips() {
    // Goose saves its config with serde_yaml, which writes a sequence at its key's own
    // indentation (`args:` then `- item` beneath it, not indented). Written by the same
    // writer, wrapped, saved again by it as Goose saves, then unwrapped: every server
    // as it was; and unwrapped straight after wrap, every byte.
    let config = json!({
        "GOOSE_PROVIDER": "openai",
        "extensions": {
            "fetch": {"args": ["mcp-server-fetch", "--flag"], "bundled": null, "cmd": "uvx",
                      "enabled": true, "env_keys": [], "envs": {"K": "v"}, "name": "fetch",
                      "timeout": 300, "type": "stdio"},
            "bare": {"cmd": "tool", "enabled": true, "envs": {}, "name": "bare", "type": "stdio"},
            "search": {"enabled": true, "headers": {"Authorization": "Bearer t"}, "name": "search",
                       "timeout": 300, "type": "streamable_http", "uri": "https://example.com/mcp"},
            "developer": {"bundled": true, "enabled": true, "name": "developer", "timeout": 300,
                          "type": "builtin"}
        }
    });
    let text = serde_yaml::to_string(&config).unwrap();
    assert!(
        text.contains("    args:\n    - mcp-server-fetch\n"),
        "the layout under test: {text}"
    );
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join(".config/goose/config.yaml");
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &text).unwrap();
    let rows = ok(&reasons_in(home.path(), &["wrap", "--client", "goose"]));
    assert!(
        rows.contains("fetch: now runs behind reasons mcp"),
        "{rows}"
    );
    assert!(rows.contains("bare: now runs behind reasons mcp"), "{rows}");
    let wrapped = yaml_value(&std::fs::read_to_string(&file).unwrap());
    let servers = &wrapped["extensions"];
    let line = |entry: &Value| started_by(entry, "cmd");
    assert_eq!(
        line(&servers["fetch"]),
        [
            reasons().as_str(),
            "mcp",
            "--",
            "uvx",
            "mcp-server-fetch",
            "--flag"
        ]
    );
    assert_eq!(
        line(&servers["bare"]),
        [reasons().as_str(), "mcp", "--", "tool"]
    );
    assert_eq!(servers["fetch"]["envs"], json!({"K": "v"}));
    assert_eq!(servers["search"]["type"], "stdio");
    assert_eq!(
        servers["search"]["envs"]["REASONS_URL"],
        "https://example.com/mcp"
    );
    std::fs::remove_file(backup_of(&file)).unwrap();
    ok(&reasons_in(home.path(), &["unwrap", "--client", "goose"]));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    // Saved by Goose while wrapped, then unwrapped: value for value. Goose saves from its
    // own types, which drop a key they do not know: what unwrap needs lives in `envs`.
    ok(&reasons_in(home.path(), &["wrap", "--client", "goose"]));
    let mut saved = yaml_value(&std::fs::read_to_string(&file).unwrap());
    for (_, entry) in saved["extensions"].as_object_mut().unwrap() {
        entry
            .as_object_mut()
            .unwrap()
            .retain(|key, _| !key.starts_with("reasons-unwrap"));
    }
    std::fs::write(&file, serde_yaml::to_string(&saved).unwrap()).unwrap();
    ok(&reasons_in(home.path(), &["unwrap", "--client", "goose"]));
    let mut unwrapped = yaml_value(&std::fs::read_to_string(&file).unwrap());
    // No `args` and an empty list start the same server.
    if unwrapped["extensions"]["bare"]["args"] == json!([]) {
        unwrapped["extensions"]["bare"]
            .as_object_mut()
            .unwrap()
            .remove("args");
    }
    assert_eq!(unwrapped, config);
}

#[test]
fn an_entry_that_is_no_server_is_not_counted_as_left_behind_the_proxy() {
    // unwrap's exit says whether something still runs behind the proxy: an entry that
    // is not a table runs nothing at all, so it is not one; wrap refuses it as before.
    let home = tempfile::tempdir().unwrap();
    let file = home.path().join("config.toml");
    let text = "[mcp_servers]\nodd = 1\n";
    std::fs::write(&file, text).unwrap();
    let rows = ok(&reasons_in(
        home.path(),
        &["unwrap", "--config", file.to_str().unwrap()],
    ));
    assert!(
        rows.contains("odd: does not run behind reasons mcp"),
        "{rows}"
    );
    let said = refused(&reasons_in(
        home.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    assert!(said.contains("odd: not a table"), "{said}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
}

#[test]
fn a_remote_server_is_refused_only_where_its_credentials_cannot_be_taken_over() {
    // A remote entry whose client gets its credentials in a way the proxy cannot do
    // (Gemini CLI's `authProviderType`, Claude Code's `headersHelper`, an `oauth` naming
    // a client of the user's own) would get none behind the proxy: wrap names each,
    // says why, exits non-zero and touches nothing.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("settings.json");
    let text = r#"{"mcpServers": {
  "own": {"httpUrl": "https://mcp.example.com/mcp", "oauth": {"enabled": true, "clientId": "c"}},
  "gcp": {"httpUrl": "https://example.com/mcp", "authProviderType": "google_credentials"},
  "helped": {"type": "http", "url": "https://example.com/mcp", "headersHelper": "/bin/token"}
}}"#;
    std::fs::write(&file, text).unwrap();
    let stderr = refused(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    for said in [
        "own: its `oauth` names a client of its own (`clientId`)",
        "gcp: its client gets its credentials itself (`authProviderType`)",
        "helped: its client gets its credentials itself (`headersHelper`)",
    ] {
        assert!(stderr.contains(said), "{said}: {stderr}");
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
    assert!(!dir.path().join("settings.json.reasons-backup").exists());
    // A plain OAuth sign-in (on or off) the proxy does itself, as the spec has a client
    // do: the entry runs `reasons mcp --url`, its `oauth` kept aside for unwrap, which
    // gives the entry back as it was.
    let plain = r#"{"mcpServers": {
  "linear": {"httpUrl": "https://mcp.linear.app/mcp", "oauth": {"enabled": true}},
  "off": {"httpUrl": "https://example.com/mcp", "oauth": {"enabled": false}}
}}"#;
    std::fs::write(&file, plain).unwrap();
    let wrapped = reasons_in(dir.path(), &["wrap", "--config", file.to_str().unwrap()]);
    assert!(
        wrapped.status.success(),
        "{}",
        String::from_utf8_lossy(&wrapped.stderr)
    );
    let servers = read(&file)["mcpServers"].clone();
    for (name, url) in [
        ("linear", "https://mcp.linear.app/mcp"),
        ("off", "https://example.com/mcp"),
    ] {
        let entry = &servers[name];
        assert_eq!(entry["env"]["REASONS_URL"], url, "{entry}");
        assert_eq!(entry["args"][0], "mcp", "{entry}");
        assert!(entry.get("oauth").is_none(), "{entry}");
    }
    let unwrapped = reasons_in(dir.path(), &["unwrap", "--config", file.to_str().unwrap()]);
    assert!(unwrapped.status.success());
    let back: serde_json::Value = serde_json::from_str(plain).unwrap();
    assert_eq!(read(&file), back);
}

#[test]
fn a_continue_block_that_links_to_another_client_s_config_is_not_edited_through_it() {
    // Continue reads each block file of the workspace's `.continue/mcpServers`; one that
    // is a link to another client's config is not Continue's own to edit.
    let home = tempfile::tempdir().unwrap();
    let project = home.path().join("project");
    let blocks = project.join(".continue/mcpServers");
    std::fs::create_dir_all(&blocks).unwrap();
    let other = home.path().join("claude_desktop_config.json");
    let text = r#"{"mcpServers":{"other":{"command":"other-srv"}}}"#;
    std::fs::write(&other, text).unwrap();
    std::os::unix::fs::symlink(&other, blocks.join("linked.json")).unwrap();
    std::fs::write(
        blocks.join("own.json"),
        r#"{"mcpServers":{"own":{"command":"own-srv"}}}"#,
    )
    .unwrap();
    let output = Command::new(reasons())
        .args(["wrap", "--client", "continue"])
        .current_dir(&project)
        .env("HOME", home.path())
        .env("XDG_CONFIG_HOME", home.path().join(".config"))
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(
        said.contains("own: now runs behind reasons mcp"),
        "{said} {output:?}"
    );
    assert_eq!(
        std::fs::read_to_string(&other).unwrap(),
        text,
        "edited through the link"
    );
    assert!(!said.contains("other"), "{said}");
}
