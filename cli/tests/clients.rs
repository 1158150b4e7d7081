//! `reasons wrap`, `reasons unwrap` and `reasons doctor` on MCP client configs the tests
//! write, in each known client's shape: servers with an environment, arguments, none,
//! disabled, already wrapped, remote; unknown keys, CRLF line endings and text beyond
//! ASCII. The oracle is the file's bytes, and a wrapped server actually run through
//! `reasons mcp`.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A config with every kind of server, in `key` (`mcpServers`, or VS Code's `servers`),
/// with `newline` between lines; the `files` server runs the tests' own MCP server.
fn config(key: &str, newline: &str) -> String {
    let own = own_server();
    let (command, args) = own.split_first().unwrap();
    [
        "{".to_string(),
        format!(r#"  "{key}": {{"#),
        format!(
            r#"    "files": {{ "command": {}, "args": {}, "env": {{"GRÜSSE": "héllo"}}, "x-unknown": [1, {{"a": null}}] }},"#,
            serde_json::to_string(command).unwrap(),
            serde_json::to_string(args).unwrap()
        ),
        r#"    "bare":{"command":"my-server"},"#.to_string(),
        r#"    "empty": {"command": "tool", "args": [ ]},"#.to_string(),
        r#"    "off": {"command": "npx", "args": ["-y", "@scope/thing"], "disabled": true},"#.to_string(),
        r#"    "done": {"command": "/opt/bin/reasons", "args": ["mcp", "--audit", "a.jsonl", "--", "srv"]},"#
            .to_string(),
        r#"    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer t0ken"}}"#
            .to_string(),
        "  },".to_string(),
        r#"  "theme": "dark ☾""#.to_string(),
        "}".to_string(),
        String::new(),
    ]
    .join(newline)
}

/// Writes `text` to a fresh folder's `name`; the folder and the file's path.
fn written(name: &str, text: &str) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join(name);
    if let Some(parent) = file.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::write(&file, text).unwrap();
    (dir, file)
}

fn backup(file: &Path) -> PathBuf {
    PathBuf::from(format!("{}.reasons-backup", file.display()))
}

#[test]
fn wrapping_changes_only_what_it_must_and_unwrapping_restores_every_byte() {
    for (key, newline) in [("mcpServers", "\n"), ("servers", "\r\n")] {
        let original = config(key, newline);
        let (dir, file) = written("mcp.json", &original);
        let config = file.to_str().unwrap();
        let report = ok(&reasons_in(dir.path(), &["wrap", "--config", config]));
        assert!(
            report.contains("done: already runs behind reasons mcp"),
            "{report}"
        );
        let wrapped = std::fs::read_to_string(&file).unwrap();
        assert_eq!(std::fs::read_to_string(backup(&file)).unwrap(), original);
        let value: Value = serde_json::from_str(&wrapped).unwrap();
        let servers = &value[key];
        assert_eq!(servers.as_object().unwrap().len(), 6);
        for name in ["files", "bare", "empty", "off", "remote"] {
            assert_eq!(servers[name]["command"], reasons(), "{name}");
            assert_eq!(servers[name]["args"][0], "mcp", "{name}");
        }
        // Everything else as it was: the environment, unknown keys, the flag that turns
        // a server off, the server already wrapped, the other settings, the line endings.
        assert_eq!(servers["files"]["env"]["GRÜSSE"], "héllo");
        assert_eq!(
            servers["files"]["x-unknown"],
            serde_json::json!([1, {"a": null}])
        );
        assert_eq!(servers["off"]["disabled"], true);
        assert_eq!(
            servers["off"]["args"],
            serde_json::json!(["mcp", "--", "npx", "-y", "@scope/thing"])
        );
        assert_eq!(
            servers["bare"]["args"],
            serde_json::json!(["mcp", "--", "my-server"])
        );
        assert_eq!(
            servers["empty"]["args"],
            serde_json::json!(["mcp", "--", "tool"])
        );
        assert_eq!(value["theme"], "dark ☾");
        assert_eq!(
            wrapped.matches(newline).count(),
            original.matches(newline).count()
        );
        assert!(wrapped.contains(r#""done": {"command": "/opt/bin/reasons", "args": ["mcp", "--audit", "a.jsonl", "--", "srv"]}"#));
        // A remote server goes behind `reasons mcp --url-env`, its URL and its header
        // through the environment (never in arguments, which `ps` shows).
        let remote = &servers["remote"];
        assert_eq!(
            remote["args"],
            serde_json::json!([
                "mcp",
                "--url-env",
                "REASONS_URL",
                "--header-env",
                "Authorization=REASONS_HEADER_0"
            ])
        );
        assert_eq!(remote["env"]["REASONS_URL"], "https://example.com/mcp");
        assert_eq!(remote["env"]["REASONS_HEADER_0"], "Bearer t0ken");
        assert!(!remote["args"].to_string().contains("t0ken"));

        // Idempotent: a second wrap changes nothing, not even the backup.
        let again = ok(&reasons_in(dir.path(), &["wrap", "--config", config]));
        assert!(again.contains("nothing to change"), "{again}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), wrapped);
        assert_eq!(std::fs::read_to_string(backup(&file)).unwrap(), original);

        // Unwrapping gives the file back byte for byte, but for the server that ran
        // behind the proxy before wrap did anything: unwrap means nothing runs behind
        // it, so that one runs its own command too (in the spelling wrap would have
        // added). From the edit alone (no backup to lean on), and again after wrapping
        // once more.
        let hand_wrapped = r#""done": {"command": "/opt/bin/reasons", "args": ["mcp", "--audit", "a.jsonl", "--", "srv"]}"#;
        assert_eq!(original.matches(hand_wrapped).count(), 1);
        let unwrapped = original.replace(hand_wrapped, r#""done": {"command": "srv"}"#);
        std::fs::remove_file(backup(&file)).unwrap();
        ok(&reasons_in(dir.path(), &["unwrap", "--config", config]));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), unwrapped, "{key}");
        std::fs::write(&file, &original).unwrap();
        ok(&reasons_in(dir.path(), &["wrap", "--config", config]));
        ok(&reasons_in(dir.path(), &["unwrap", "--config", config]));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), unwrapped, "{key}");
    }
}

#[test]
fn a_dry_run_prints_the_change_and_makes_none() {
    let original = config("mcpServers", "\n");
    let (dir, file) = written(".mcp.json", &original);
    let out = ok(&reasons_in(
        dir.path(),
        &["wrap", "--dry-run", "--config", file.to_str().unwrap()],
    ));
    assert!(
        out.contains(r#"-    "bare":{"command":"my-server"},"#),
        "{out}"
    );
    assert!(
        out.contains(r#""args": ["mcp", "--", "my-server"]"#),
        "{out}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
    assert!(!backup(&file).exists());
}

#[test]
fn a_dry_run_shows_no_header_value_or_secret_variable() {
    // A diff goes to a terminal and into logs: a header's token, a client secret and a
    // variable named as a secret are shown as `…`, before and after, the kept copy too.
    let original = r#"{"mcpServers": {"r": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer S3CRET-ONE"}, "auth": {"CLIENT_ID": "app", "CLIENT_SECRET": "S3CRET-TWO"}}, "s": {"command": "x", "env": {"GITHUB_TOKEN": "S3CRET-THREE", "LOG_LEVEL": "debug"}}}}"#;
    let (dir, file) = written("mcp.json", original);
    let out = ok(&reasons_in(
        dir.path(),
        &["wrap", "--dry-run", "--config", file.to_str().unwrap()],
    ));
    assert!(!out.contains("S3CRET"), "{out}");
    assert!(out.contains(r#""Authorization": "…""#), "{out}");
    assert!(out.contains(r#""LOG_LEVEL": "debug""#), "{out}");
    assert!(out.contains("r: now runs behind reasons mcp"), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), original);
}

#[test]
fn a_linked_config_is_edited_where_it_is_and_stays_linked() {
    let (dir, file) = written(
        "dotfiles/mcp.json",
        r#"{"mcpServers": {"s": {"command": "srv"}}}"#,
    );
    let link = dir.path().join(".mcp.json");
    std::os::unix::fs::symlink(&file, &link).unwrap();
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", link.to_str().unwrap()],
    ));
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains(r#""args": ["mcp", "--", "srv"]"#)
    );
    assert!(backup(&file).exists());
}

#[test]
fn known_clients_are_found_where_they_keep_their_config() {
    let home = tempfile::tempdir().unwrap();
    for (client, place) in [
        (
            "claude-desktop",
            ".config/Claude/claude_desktop_config.json",
        ),
        ("claude-code", ".claude.json"),
        ("cursor", ".cursor/mcp.json"),
        ("vscode", ".config/Code/User/mcp.json"),
        ("windsurf", ".codeium/windsurf/mcp_config.json"),
        ("gemini", ".gemini/settings.json"),
        ("lmstudio", ".lmstudio/mcp.json"),
        (
            "cline",
            ".config/Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json",
        ),
        (
            "roo",
            ".config/Code/User/globalStorage/rooveterinaryinc.roo-cline/settings/mcp_settings.json",
        ),
    ] {
        let file = home.path().join(place);
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        std::fs::write(&file, r#"{"mcpServers": {"s": {"command": "srv"}}}"#).unwrap();
        let out = ok(&reasons_in(home.path(), &["wrap", "--client", client]));
        assert!(
            out.contains("s: now runs behind reasons mcp"),
            "{client}: {out}"
        );
        let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        assert_eq!(
            value["mcpServers"]["s"]["args"],
            serde_json::json!(["mcp", "--", "srv"]),
            "{client}"
        );
    }
    // Zed keeps its servers in `context_servers`, in its settings (JSON with comments).
    let zed = home.path().join(".config/zed/settings.json");
    std::fs::create_dir_all(zed.parent().unwrap()).unwrap();
    let settings = "{\n  // Zed\n  \"theme\": \"One Dark\",\n  \"context_servers\": {\"s\": {\"command\": \"srv\", \"args\": []}},\n}\n";
    std::fs::write(&zed, settings).unwrap();
    let out = ok(&reasons_in(home.path(), &["wrap", "--client", "zed"]));
    assert!(out.contains("s: now runs behind reasons mcp"), "zed: {out}");
    let edited = std::fs::read_to_string(&zed).unwrap();
    // The empty list is the user's: filled as `[ …]`, so that unwrap gives it back.
    assert!(
        edited.contains("// Zed") && edited.contains(r#""args": [ "mcp", "--", "srv"]"#),
        "{edited}"
    );
    ok(&reasons_in(home.path(), &["unwrap", "--client", "zed"]));
    assert_eq!(std::fs::read_to_string(&zed).unwrap(), settings);
    let unknown = reasons_in(home.path(), &["wrap", "--client", "notepad"]);
    assert!(!unknown.status.success());
    assert!(String::from_utf8_lossy(&unknown.stderr).contains("no known client `notepad`"));
}

#[test]
fn a_file_it_cannot_edit_exactly_is_refused_and_left_alone() {
    for (text, says) in [
        (
            "{\"mcpServers\": {\"s\": {\"command\": \"srv\"}}",
            "not JSON",
        ),
        ("{\"tools\": {}}", "no `mcpServers`"),
    ] {
        let (dir, file) = written("mcp.json", text);
        let out = reasons_in(dir.path(), &["wrap", "--config", file.to_str().unwrap()]);
        assert!(!out.status.success(), "{text}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains(says), "{text}: {stderr}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), text);
        assert!(!backup(&file).exists());
    }
}

#[test]
fn a_wrapped_server_runs_through_reasons_mcp() {
    // R9: the server the config names, started as the wrapped config says, never sees
    // the reason.
    let (dir, file) = written("mcp.json", &config("mcpServers", "\n"));
    ok(&reasons_in(
        dir.path(),
        &["wrap", "--config", file.to_str().unwrap()],
    ));
    let value: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    let files = &value["mcpServers"]["files"];
    let mut command = vec![files["command"].as_str().unwrap().to_string()];
    command.extend(
        files["args"]
            .as_array()
            .unwrap()
            .iter()
            .map(|arg| arg.as_str().unwrap().to_string()),
    );
    let mut session = Session::start(&command);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let answer: Value = serde_json::from_str(&session.ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record","arguments":{"text":"hi","reason":"to test"}}}"#,
    ))
    .unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], r#"{"text":"hi"}"#);
}

#[test]
fn the_doctor_lists_each_server_s_tools_and_what_became_of_them() {
    // R5 R8 as a user sees them: a tool that owns `reason` is left alone, the others gain
    // it; a server that cannot start, and one that cannot be reached, are named as such.
    let (own_command, own_args) = own_server()
        .split_first()
        .map(|(c, a)| (c.clone(), a.to_vec()))
        .unwrap();
    let log = tempfile::tempdir().unwrap();
    let signs_in = http_echo_with(&log.path().join("http.jsonl"), &["--unauthorized"]);
    let config = serde_json::json!({"mcpServers": {
        "own": {"command": own_command, "args": own_args},
        "broken": {"command": "/nonexistent/server"},
        "away": {"url": "http://127.0.0.1:9/mcp"},
        "signs": {"url": signs_in.url}
    }});
    let (dir, file) = written("mcp.json", &config.to_string());
    let table = ok(&reasons_in(
        dir.path(),
        &["doctor", "--mine", "--config", file.to_str().unwrap()],
    ));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 1 + 5 + 3, "{table}");
    let row = |server: &str, tool: &str| {
        rows.iter()
            .find(|row| row.split_whitespace().take(2).eq([server, tool]))
            .unwrap_or_else(|| panic!("no row for {server} {tool}: {table}"))
            .to_string()
    };
    assert!(row("own", "note").contains("left alone: its schema has a `reason` of its own"));
    for tool in ["record", "slow", "hang", "die"] {
        assert!(row("own", tool).contains("`reason` added"), "{tool}");
    }
    assert!(
        row("broken", "-").contains("cannot start the MCP server"),
        "{table}"
    );
    assert!(
        row("away", "-").contains("cannot reach the MCP server at http://127.0.0.1:9/mcp"),
        "{table}"
    );
    // A server that wants credentials is not broken: the row says what it needs.
    // The way out first, with the server's own URL (a row is cut at its cap), then why.
    let signs = row("signs", "-");
    let way = signs.find("needs sign-in: sign in with `reasons login http");
    let cause = signs.find("answered HTTP 401");
    assert!(way.is_some() && way < cause, "{table}");
    assert!(row("away", "-").contains("error: "), "{table}");
}

#[test]
fn the_doctor_ends_each_server_whole_whatever_its_launcher_left_behind() {
    // Bounded: a server started through a shell that leaves a child behind, holding the
    // server's stderr open for an hour. The doctor still ends (its time for one server is
    // 30 s to list and 10 s to end it; the test allows 90 s), and the child ends with
    // the server's process group.
    let marker = format!(
        "{}.{}",
        3600 + std::process::id() % 1000,
        std::process::id()
    );
    let own = own_server().join(" ");
    let launcher = format!("sleep {marker} & exec {own}");
    let config = serde_json::json!({"mcpServers": {
        "launched": {"command": "sh", "args": ["-c", launcher]}
    }});
    let (dir, file) = written("mcp.json", &config.to_string());
    let mut doctor = Command::new(reasons())
        .args(["doctor", "--mine", "--config", file.to_str().unwrap()])
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let until = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let status = loop {
        if let Some(status) = doctor.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > until {
            let _ = doctor.kill();
            panic!("the doctor did not end in 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    assert!(status.success());
    let mut table = String::new();
    std::io::Read::read_to_string(&mut doctor.stdout.take().unwrap(), &mut table).unwrap();
    assert!(table.contains("`reason` added"), "{table}");
    let left = || {
        std::fs::read_dir("/proc")
            .unwrap()
            .filter_map(|entry| std::fs::read(entry.ok()?.path().join("cmdline")).ok())
            .any(|cmdline| cmdline == format!("sleep\0{marker}\0").as_bytes())
    };
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while left() {
        assert!(
            std::time::Instant::now() < until,
            "the launcher's child outlived the doctor"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn the_doctor_expands_variables_as_clients_do_and_starts_no_disabled_server() {
    // A server that works in the client is not reported broken: `${NAME}`,
    // `${NAME:-default}` and `${workspaceFolder}` are expanded as clients expand them, its
    // `cwd` is its folder; a disabled server is listed as such and never started; what
    // only the client can give (`${input:…}`) is named.
    let peers = peers();
    let config = serde_json::json!({"mcpServers": {
        "vars": {"command": "node", "args": ["${REASONS_DOCTOR_PEERS}/own-server.mjs"],
                 "env": {"UNUSED": "${REASONS_NO_SUCH:-fallback}"}, "cwd": "${workspaceFolder}"},
        "off": {"command": "/nonexistent/server", "disabled": true},
        "asks": {"command": "node", "args": ["${input:script}"]},
        "dotenv": {"command": "node", "args": ["-e", "import(process.env.REASONS_DOCTOR_SCRIPT)"], "envFile": "${workspaceFolder}/.env"}
    }});
    let (dir, file) = written("mcp.json", &config.to_string());
    // The script the server runs, named only in its environment, from the envFile.
    let script = peers.join("own-server.mjs");
    std::fs::write(
        dir.path().join(".env"),
        format!(
            "# for the dotenv server\nREASONS_DOCTOR_SCRIPT={}\n",
            script.display()
        ),
    )
    .unwrap();
    let output = Command::new(reasons())
        .args(["doctor", "--mine", "--config", file.to_str().unwrap()])
        .env("HOME", dir.path())
        .env("REASONS_DOCTOR_PEERS", &peers)
        .current_dir(dir.path())
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let table = ok(&output);
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 1 + 5 + 1 + 1 + 5, "{table}");
    assert!(
        rows.iter()
            .any(|row| row.starts_with("dotenv") && row.contains("record")),
        "{table}"
    );
    assert!(
        rows.iter().any(|row| row.starts_with("vars")
            && row.contains("record")
            && row.contains("`reason` added")),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row.starts_with("off") && row.contains("disabled")),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row.starts_with("asks") && row.contains("${input:script}")),
        "{table}"
    );
}

#[test]
fn zed_s_older_form_and_goose_s_spelling_are_wrapped_and_checked_as_those_clients_start_them() {
    // Zed's older form nests the program (`path`), its `args` and `env` in the entry's
    // `command`: wrap edits that object, the server started as Zed starts it runs behind
    // the proxy, unwrap gives the file back byte for byte. The doctor starts it so too,
    // and Goose's `cmd` and `envs`, and leaves Goose's `enabled: false` alone.
    let own = own_server();
    let settings = format!(
        "{{\n  // Zed\n  \"context_servers\": {{\n    \"own\": {{\"command\": {{\"path\": {}, \"args\": {}, \"env\": {{}}}}, \"settings\": {{}}}},\n  }},\n}}\n",
        serde_json::to_string(&own[0]).unwrap(),
        serde_json::to_string(&own[1..]).unwrap(),
    );
    let (dir, file) = written("settings.json", &settings);
    let path = file.to_str().unwrap();
    ok(&reasons_in(dir.path(), &["wrap", "--config", path]));
    let wrapped = std::fs::read_to_string(&file).unwrap();
    let text = wrapped
        .replace("// Zed", "")
        .replace(",\n  },\n}", "\n  }\n}");
    let value: serde_json::Value =
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {wrapped}"));
    let command = &value["context_servers"]["own"]["command"];
    assert_eq!(command["path"], reasons(), "{wrapped}");
    let args: Vec<&str> = command["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    let mut expected = vec!["mcp", "--"];
    expected.extend(own.iter().map(String::as_str));
    assert_eq!(args, expected, "{wrapped}");
    let table = ok(&reasons_in(
        dir.path(),
        &["doctor", "--mine", "--config", path],
    ));
    assert!(
        table.lines().any(|row| row.starts_with("own")
            && row.contains("record")
            && row.contains("`reason` added")),
        "{table}"
    );
    std::fs::remove_file(backup(&file)).unwrap();
    ok(&reasons_in(dir.path(), &["unwrap", "--config", path]));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), settings);

    let goose = format!(
        "extensions:\n  own:\n    cmd: {}\n    args: {}\n    envs: {{}}\n    type: stdio\n  off:\n    cmd: /nonexistent/server\n    enabled: false\n    type: stdio\n",
        serde_json::to_string(&own[0]).unwrap(),
        serde_json::to_string(&own[1..]).unwrap(),
    );
    let (dir, file) = written("config.yaml", &goose);
    let table = ok(&reasons_in(
        dir.path(),
        &["doctor", "--mine", "--config", file.to_str().unwrap()],
    ));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 1 + 5 + 1, "{table}");
    assert!(
        rows.iter()
            .any(|row| row.starts_with("own") && row.contains("record")),
        "{table}"
    );
    assert!(
        rows.iter()
            .any(|row| row.starts_with("off") && row.contains("disabled")),
        "{table}"
    );
}

/// `doctor --client claude-code` and `args` run in `folder`, the user's home being `home`.
fn doctor_in(folder: &Path, home: &Path, args: &[&str]) -> String {
    let output = Command::new(reasons())
        .args(["doctor", "--client", "claude-code"])
        .args(args)
        .current_dir(folder)
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join(".config"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    ok(&output)
}

#[test]
fn the_doctor_starts_nothing_a_checkout_chose_unless_its_user_names_it() {
    // A cloned repository's `.mcp.json` is anyone's commands, and so are the files that
    // approve them in the same clone: `.claude/settings.json` approving all of them, a
    // committed `.claude/settings.local.json` approving one by name. Whatever they say,
    // the doctor starts a project's server only when its user names it (--start) or says
    // the folder is theirs (--mine), and says why on each row. The oracle is what ran.
    let home = tempfile::tempdir().unwrap();
    let clone = tempfile::tempdir().unwrap();
    let folder = std::fs::canonicalize(clone.path()).unwrap();
    let names = ["approved", "all", "named"];
    let marker = |name: &str| folder.join(format!("{name}.ran"));
    let servers: serde_json::Map<String, Value> = names
        .iter()
        .map(|name| (name.to_string(), marked_server(&marker(name))))
        .collect();
    self_approving_clone(&folder, Value::Object(servers), "approved");
    let ran = || -> Vec<&str> {
        let ran = names.into_iter().filter(|name| marker(name).exists());
        ran.collect()
    };
    let table = doctor_in(&folder, home.path(), &["--start", "named"]);
    assert_eq!(ran(), ["named"], "{table}");
    let row = |table: &str, server: &str| {
        let row = table.lines().find(|row| row.starts_with(server));
        row.unwrap_or_else(|| panic!("no row for {server}: {table}"))
            .to_string()
    };
    for server in ["approved", "all"] {
        let row = row(&table, server);
        assert!(row.contains("its folder chose it"), "{table}");
        assert!(row.contains("--mine"), "{table}");
    }
    let named = |row: &&str| row.starts_with("named") && row.contains("record");
    assert!(table.lines().any(|row| named(&row)), "{table}");

    std::fs::remove_file(marker("named")).unwrap();
    let table = doctor_in(&folder, home.path(), &["--mine"]);
    assert_eq!(ran(), names, "{table}");
}

#[test]
fn a_local_scope_server_runs_in_its_own_project_s_folder_and_a_user_s_deny_list_blocks() {
    // Claude Code's local scope: `~/.claude.json` keeps servers for each project folder,
    // and starts them there, where a relative command finds that project's files. The
    // doctor, run in another folder (a clone holding a `server.sh` of its own), starts
    // the project's `server.sh`, and only once named. A server of the user's own that
    // the user's settings deny is not started either, and says by which file.
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let clone = tempfile::tempdir().unwrap();
    let (project, clone) = (
        std::fs::canonicalize(project.path()).unwrap(),
        std::fs::canonicalize(clone.path()).unwrap(),
    );
    let own = own_server().join(" ");
    for (folder, whose) in [(&project, "project"), (&clone, "clone")] {
        let script = format!(
            "touch '{}/{whose}.ran'; exec {own}\n",
            home.path().display()
        );
        std::fs::write(folder.join("server.sh"), script).unwrap();
    }
    let denied_marker = home.path().join("denied.ran");
    let state = serde_json::json!({
        "mcpServers": {"denied": marked_server(&denied_marker)},
        "projects": {project.to_str().unwrap(): {"mcpServers": {
            "local": {"command": "sh", "args": ["server.sh"]}
        }}}
    });
    std::fs::write(home.path().join(".claude.json"), state.to_string()).unwrap();
    std::fs::create_dir(home.path().join(".claude")).unwrap();
    std::fs::write(
        home.path().join(".claude/settings.json"),
        r#"{"deniedMcpServers": [{"serverName": "denied"}]}"#,
    )
    .unwrap();

    let table = doctor_in(&clone, home.path(), &[]);
    let ran = |whose: &str| home.path().join(format!("{whose}.ran")).exists();
    assert!(
        !ran("project") && !ran("clone") && !ran("denied"),
        "{table}"
    );
    let denied = table.lines().find(|row| row.starts_with("denied"));
    let denied = denied.unwrap_or_else(|| panic!("{table}"));
    assert!(denied.contains("deniedMcpServers in"), "{table}");
    let local = table.lines().find(|row| row.starts_with("local"));
    assert!(
        local.is_some_and(|row| row.contains("its folder chose it")),
        "{table}"
    );

    // Named: run in its own project's folder, never in the folder doctor runs in.
    let name = format!("local (project {})", project.display());
    let table = doctor_in(&clone, home.path(), &["--start", &name]);
    assert!(ran("project") && !ran("clone"), "{table}");
    assert!(!ran("denied"), "{table}");
}

#[test]
fn the_doctor_names_a_tool_that_asks_why_itself() {
    // A PostHog-style server's tool asks the model why in a required `context`: doctor's
    // row says `reason` was added, names the tool's own field, and the way to leave the
    // tool as its server declares it.
    let server = scripted_server(
        r#"const tool = { name: "query", inputSchema: { type: "object", properties: {
          query: { type: "string" },
          context: { type: "string", description: "Why are you calling this tool? Briefly describe the user's goal." },
        }, required: ["query", "context"] } };"#,
        r#"message.method === "initialize"
          ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "posthog-like", version: "1" } }
          : { tools: [tool] }"#,
    );
    let config =
        serde_json::json!({"mcpServers": {"posthog": {"command": server[0], "args": server[1..]}}});
    let (_dir, file) = written("mcp.json", &config.to_string());
    let output = Command::new(reasons())
        .args(["doctor", "--config"])
        .arg(&file)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let table = ok(&output);
    let row = table.lines().find(|row| row.starts_with("posthog"));
    let row = row.unwrap_or_else(|| panic!("{table}"));
    assert!(row.contains("`reason` added"), "{row}");
    assert!(
        row.contains("asks the model why itself (`context`)"),
        "{row}"
    );
    assert!(row.contains("--leave-alone query"), "{row}");
}

#[test]
fn nothing_a_server_names_reaches_the_terminal_as_more_than_text() {
    // R12 for what a server says: a tool named with a clipboard-setting (OSC 52), a
    // title-setting and a screen-clearing escape, C1 and reordering characters, and a
    // line break followed by a forged row, from a server whose name holds escapes too.
    // The doctor prints one row for it, of inert bytes only.
    let forged = "\u{1b}]52;c;aGVsbG8=\u{7}clip\u{1b}]0;title\u{7}\u{1b}[2J\u{9b}2J\u{202e}evil\nforged  tool  `reason` added";
    let name = serde_json::to_string(forged).unwrap();
    let server = scripted_server(
        &format!(
            r#"const tool = {{ name: {name}, description: {name}, inputSchema: {{ type: "object" }} }};"#
        ),
        &format!(
            r#"message.method === "initialize"
              ? {{ protocolVersion: message.params.protocolVersion, capabilities: {{ tools: {{}} }}, serverInfo: {{ name: {name}, version: "1" }} }}
              : {{ tools: [tool] }}"#
        ),
    );
    let config = serde_json::json!({"mcpServers": {
        "srv\u{1b}[31m\u{7}": {"command": server[0], "args": server[1..]}
    }});
    let (dir, file) = written("mcp.json", &config.to_string());
    let table = ok(&reasons_in(
        dir.path(),
        &["doctor", "--mine", "--config", file.to_str().unwrap()],
    ));
    let rows: Vec<&str> = table.lines().collect();
    assert_eq!(rows.len(), 1 + 1, "{table:?}");
    assert!(rows[1].contains("clip"), "{table:?}");
    assert!(rows[1].contains("`reason` added"), "{table:?}");
    let raw: Vec<char> = table
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || ('\u{202a}'..='\u{202e}').contains(&c))
        .collect();
    assert_eq!(raw, Vec::<char>::new(), "{table:?}");
}

#[test]
fn the_doctor_shows_each_server_as_it_is_done_and_names_a_silent_one_cause_first() {
    // Ten servers, three of them silent (they start and never answer): the seven that
    // answer are printed as they are done, before the silent ones' patience is up;
    // while doctor waits, stderr names the silent ones; each silent one's row says why
    // first. Checked at once, the three silent ones are waited for together, not in a
    // row. The patience is 20 s: the silent ones are far over it, the answering ones
    // (about a second each) far under.
    let own = own_server();
    let mut servers = serde_json::Map::new();
    for at in 0..7 {
        servers.insert(
            format!("fast{at}"),
            serde_json::json!({"command": own[0], "args": own[1..]}),
        );
    }
    for at in 0..3 {
        servers.insert(
            format!("silent{at}"),
            serde_json::json!({"command": "sleep", "args": ["600"]}),
        );
    }
    let config = serde_json::json!({ "mcpServers": servers });
    let (dir, file) = written("mcp.json", &config.to_string());
    let started = std::time::Instant::now();
    let mut doctor = Command::new(reasons())
        .args(["doctor", "--patience", "20", "--config"])
        .arg(&file)
        .env("HOME", dir.path())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = doctor.stderr.take().unwrap();
    let said = std::thread::spawn(move || std::io::read_to_string(stderr).unwrap());
    let mut rows = Vec::new();
    for line in std::io::BufRead::lines(std::io::BufReader::new(doctor.stdout.take().unwrap())) {
        rows.push((started.elapsed(), line.unwrap()));
    }
    assert!(doctor.wait().unwrap().success());
    let said = said.join().unwrap();
    // A header, then the own server's five tools for each fast one, one row per silent one.
    assert_eq!(rows.len(), 1 + 7 * 5 + 3, "{rows:#?}");
    assert!(rows[0].1.starts_with("server "), "{rows:#?}");
    let when = |prefix: &str| -> Vec<std::time::Duration> {
        rows.iter()
            .filter(|(_, row)| row.starts_with(prefix))
            .map(|(at, _)| *at)
            .collect()
    };
    let (fast, silent) = (when("fast"), when("silent"));
    assert_eq!((fast.len(), silent.len()), (35, 3), "{rows:#?}");
    // As they were done: every answering one before any silent one, which waited out
    // its patience.
    let last_fast = rows.iter().rposition(|(_, row)| row.starts_with("fast"));
    let first_silent = rows.iter().position(|(_, row)| row.starts_with("silent"));
    assert!(last_fast < first_silent, "{rows:#?}");
    assert!(
        silent
            .iter()
            .all(|at| *at >= std::time::Duration::from_secs(20))
    );
    for (_, row) in rows.iter().filter(|(_, row)| row.starts_with("silent")) {
        let verdict = row.split_once("  -  ").map(|(_, verdict)| verdict.trim());
        assert!(
            verdict.is_some_and(|verdict| verdict.starts_with("error: no answer within 20 s")),
            "the cause first: {row}"
        );
        assert!(!row.contains("signal 15"), "{row}");
    }
    assert!(
        said.contains("checking 10 servers, 8 at a time") && said.contains("waiting for silent"),
        "{said}"
    );
    // One wait for all three, not three in a row: a progress line names them together.
    let together = said
        .lines()
        .any(|line| (0..3).all(|at| line.contains(&format!("silent{at} ("))));
    assert!(together, "{said}");
}
