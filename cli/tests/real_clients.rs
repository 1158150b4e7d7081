//! `reasons wrap` and `unwrap` as the clients themselves read the result: Claude Code's
//! `claude mcp list` and Gemini CLI's `gemini mcp list` (installed from npm, pinned in
//! `tests/clients`), which start and check every server they are configured with and need
//! no account, run before wrap, after it and after unwrap. The oracle is what each client
//! says of each server: connected, and through `reasons mcp` exactly while wrapped.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::json;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// What `client mcp list` (`claude` or `gemini`) says, run in `folder` with `home` as
/// its home: each server line.
fn listed(client: &str, home: &Path, folder: &Path) -> Vec<String> {
    listed_with(client, home, folder, &[])
}

/// [`listed`], with `env` added to the client's environment.
fn listed_with(client: &str, home: &Path, folder: &Path, env: &[(&str, &str)]) -> Vec<String> {
    let program = installed("clients").join("node_modules/.bin").join(client);
    let output = output_within(
        Command::new(program)
            .args(["mcp", "list"])
            .current_dir(folder)
            .env("HOME", home)
            .envs(env.iter().copied())
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        Duration::from_secs(120),
    );
    // Gemini CLI writes its list to stderr, Claude Code to stdout.
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(output.status.success(), "{client}: {said}");
    // A strict client names a key it does not know in a server's entry on every run.
    assert!(
        !said.contains("Unrecognized key") && !said.contains("Invalid configuration"),
        "{client}: {said}"
    );
    said.lines()
        .filter(|line| line.contains("own"))
        .map(str::to_string)
        .collect()
}

/// The table `reasons doctor --client client` prints, run in `folder` with `home` as its
/// home.
fn doctor(client: &str, home: &Path, folder: &Path) -> String {
    let doctor = Command::new(reasons())
        .args(["doctor", "--client", client])
        .current_dir(folder)
        .env("HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    String::from_utf8_lossy(&doctor.stdout).into_owned()
}

/// Whether the line for `server` among `lines` says it connected, through `reasons mcp`
/// when `wrapped`.
fn connected(lines: &[String], server: &str, wrapped: bool) -> bool {
    let Some(line) = lines
        .iter()
        .find(|line| line.contains(&format!("{server}: ")))
    else {
        return false;
    };
    let through = line.contains(&format!("{} mcp -- node", reasons()))
        || line.contains(&format!("{} mcp --url-env", reasons()));
    line.contains("Connected") && through == wrapped
}

/// Gemini CLI's `settings` written in `home`, with `folder` trusted; its config folder.
fn gemini_settings(home: &Path, folder: &Path, settings: &serde_json::Value) -> PathBuf {
    let gemini = home.join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    std::fs::write(gemini.join("settings.json"), settings.to_string()).unwrap();
    let trusted = json!({folder.to_str().unwrap(): "TRUST_FOLDER"});
    std::fs::write(gemini.join("trustedFolders.json"), trusted.to_string()).unwrap();
    gemini
}

fn wrap(way: &str, client: &str, home: &Path, folder: &Path) {
    let output = Command::new(reasons())
        .args([way, "--client", client])
        .current_dir(folder)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn claude_code_connects_to_every_scope_s_servers_through_reasons_while_wrapped() {
    // The user scope and the local scope (`claude mcp add`'s default), each checked by
    // Claude Code itself; it rewrites ~/.claude.json as it starts, so unwrap meets a
    // file the client re-serialised.
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap();
    let own = own_server();
    let server = json!({"type": "stdio", "command": own[0], "args": own[1..]});
    let remote = own_server_http(&home.path().join("remote.log"));
    let config = json!({
        "mcpServers": {"user-own": server, "user-own-remote": {"type": "http", "url": remote.url}},
        "projects": {folder.to_str().unwrap(): {"mcpServers": {"local-own": server}}}
    });
    std::fs::write(home.path().join(".claude.json"), config.to_string()).unwrap();
    for (step, wrapped) in [("before", false), ("wrap", true), ("unwrap", false)] {
        if step != "before" {
            wrap(step, "claude-code", home.path(), &folder);
        }
        let lines = listed("claude", home.path(), &folder);
        assert_eq!(lines.len(), 3, "{step}: {lines:#?}");
        for server in ["user-own", "user-own-remote", "local-own"] {
            assert!(
                connected(&lines, server, wrapped),
                "{step}, {server}: {lines:#?}"
            );
        }
    }
}

#[test]
fn a_wrapped_server_that_signs_in_asks_the_person_once_and_then_connects() {
    // A Gemini CLI server that signs in with OAuth (the tests' own, `oauth-server.mjs`),
    // wrapped: when the client starts it, `reasons mcp --url` has the person sign in, in
    // the browser, once; the client connects through it, and the next start needs no
    // one. The token is kept in the store, never in the client's config.
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let folder = project.path().canonicalize().unwrap();
    let log = home.path().join("server.jsonl");
    let server = Listening::start(&node("oauth-server.mjs", &[log.to_str().unwrap()]), "/mcp");
    let settings = json!({"mcpServers": {
        "own-signs-in": {"httpUrl": server.url, "oauth": {"enabled": true}, "timeout": 60000}
    }});
    let gemini = gemini_settings(home.path(), &folder, &settings);
    wrap("wrap", "gemini", home.path(), &folder);
    let browser = format!("node {}", peers().join("browser.mjs").display());
    let opened = home.path().join("browser.log");
    let config = home.path().join(".config");
    let env = [
        ("BROWSER", browser.as_str()),
        ("BROWSER_LOG", opened.to_str().unwrap()),
        ("XDG_CONFIG_HOME", config.to_str().unwrap()),
    ];
    for start in ["first", "second"] {
        let lines = listed_with("gemini", home.path(), &folder, &env);
        assert_eq!(lines.len(), 1, "{start}: {lines:#?}");
        assert!(
            connected(&lines, "own-signs-in", true),
            "{start}: {lines:#?}"
        );
        let pages = std::fs::read_to_string(&opened).unwrap_or_default();
        assert_eq!(pages.lines().count(), 1, "{start}: {pages}");
    }
    let kept = std::fs::read_to_string(config.join("reasons/sign-in.json")).unwrap();
    let kept: serde_json::Value = serde_json::from_str(&kept).unwrap();
    let token = kept["servers"][&server.url]["token"]["access"]
        .as_str()
        .unwrap();
    let settings = std::fs::read_to_string(gemini.join("settings.json")).unwrap();
    assert!(!settings.contains(token));
}

#[test]
fn gemini_cli_connects_to_its_servers_through_reasons_while_wrapped() {
    // Gemini CLI's settings, with its own keys beside the command (`timeout`, `trust`),
    // a stdio server and a remote one, in a folder it trusts.
    let (home, project) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let folder = project.path().canonicalize().unwrap();
    let own = own_server();
    let log = home.path().join("remote.log");
    let remote = own_server_http(&log);
    let settings = json!({"mcpServers": {
        "own": {"command": own[0], "args": own[1..], "timeout": 30000, "trust": false},
        "own-remote": {"httpUrl": remote.url, "timeout": 30000}
    }});
    gemini_settings(home.path(), &folder, &settings);
    for (step, wrapped) in [("before", false), ("wrap", true), ("unwrap", false)] {
        if step != "before" {
            wrap(step, "gemini", home.path(), &folder);
        }
        let lines = listed("gemini", home.path(), &folder);
        assert_eq!(lines.len(), 2, "{step}: {lines:#?}");
        // A remote server is wrapped with no key of wrap's own, which Gemini refuses.
        for server in ["own", "own-remote"] {
            assert!(connected(&lines, server, wrapped), "{step}: {lines:#?}");
        }
    }
}

#[test]
fn codex_reads_its_wrapped_config_strictly_and_lists_its_servers_through_reasons() {
    // Codex refuses, under `--strict-config`, a config with any key it does not know: a
    // wrapped one, stdio and remote, is read as its own; `codex mcp list` shows each
    // running behind the proxy, and unwrap gives the file back.
    let home = tempfile::tempdir().unwrap();
    let codex_home = home.path().join(".codex");
    std::fs::create_dir_all(&codex_home).unwrap();
    let remote = own_server_http(&home.path().join("remote.log"));
    let own = own_server();
    let config = format!(
        "# the user's own\nmodel = \"o3\"\n\n[mcp_servers.own]\ncommand = {}\nargs = {}\n\n\
         [mcp_servers.own-remote]\nurl = {}\nhttp_headers = {{ \"X-Team\" = \"t\" }}\n",
        json!(own[0]),
        json!(own[1..]),
        json!(remote.url)
    );
    let file = codex_home.join("config.toml");
    std::fs::write(&file, &config).unwrap();
    let codex = |args: &[&str]| {
        let program = installed("clients").join("node_modules/.bin/codex");
        let output = output_within(
            Command::new(program)
                .args(args)
                .current_dir(home.path())
                .env("HOME", home.path())
                .env("CODEX_HOME", &codex_home)
                .stdin(std::process::Stdio::null()),
            Duration::from_secs(120),
        );
        format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    };
    for (step, wrapped) in [("before", false), ("wrap", true), ("unwrap", false)] {
        if step != "before" {
            wrap(step, "codex", home.path(), home.path());
        }
        // Strictness refuses a key it does not know as the config is read, before the
        // banner; past it, with no account, it would wait for the network: it is ended
        // once it shows the banner.
        let read = strictly_read(&codex_home, home.path());
        assert!(read.is_ok(), "{step}: {read:?}");
        let listed = codex(&["mcp", "list"]);
        let rows: Vec<&str> = listed
            .lines()
            .filter(|line| line.starts_with("own"))
            .collect();
        assert_eq!(rows.len(), 2, "{step}: {listed}");
        for row in rows {
            assert_eq!(row.contains(&reasons()), wrapped, "{step}: {row}");
        }
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), config);
}

/// Whether `codex exec --strict-config` reads the config in `codex_home` as its own: its
/// banner once it has, or what it said when it refused the config.
fn strictly_read(codex_home: &Path, home: &Path) -> Result<(), String> {
    use std::io::BufRead;
    let mut codex = Command::new(installed("clients").join("node_modules/.bin/codex"))
        // No server started: only the file's reading is asked of it.
        .args(["exec", "--strict-config", "-c", "mcp_servers={}"])
        .args(["--skip-git-repo-check", "hi"])
        .current_dir(home)
        .env("HOME", home)
        .env("CODEX_HOME", codex_home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = codex.stderr.take().unwrap();
    let (said, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stderr).lines() {
            let Ok(line) = line else { return };
            if said.send(line).is_err() {
                return;
            }
        }
    });
    let mut seen = Vec::new();
    let outcome = loop {
        match lines.recv_timeout(Duration::from_secs(60)) {
            Ok(line) if line.starts_with("OpenAI Codex v") => break Ok(()),
            Ok(line) => seen.push(line),
            Err(_) => break Err(seen.join("\n")),
        }
    };
    let _ = codex.kill();
    let _ = codex.wait();
    outcome
}

#[test]
fn a_clone_that_approves_its_own_servers_runs_none_in_claude_code_nor_in_doctor() {
    // The oracle for doctor's rule is the client's own: a cloned folder whose
    // `.claude/settings.json` approves all of its `.mcp.json` (and whose committed
    // settings.local.json approves one by name) has its servers pending approval in
    // Claude Code itself until its user trusts the folder; doctor starts none of them
    // either, and says how to. Neither ran one (each server leaves a mark when it runs).
    let home = tempfile::tempdir().unwrap();
    let clone = tempfile::tempdir().unwrap();
    let folder = clone.path().canonicalize().unwrap();
    let (all_mark, named_mark) = (folder.join("own-all.ran"), folder.join("own-named.ran"));
    let servers =
        json!({"own-all": marked_server(&all_mark), "own-named": marked_server(&named_mark)});
    self_approving_clone(&folder, servers, "own-named");
    let lines = listed("claude", home.path(), &folder);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines.iter().all(|line| line.contains("Pending approval")),
        "Claude Code runs them: {lines:#?}"
    );
    let table = doctor("claude-code", home.path(), &folder);
    for server in ["own-all", "own-named"] {
        let row = table.lines().find(|row| row.starts_with(server));
        let row = row.unwrap_or_else(|| panic!("no row for {server}: {table}"));
        assert!(row.contains("--mine") || row.contains("--start"), "{table}");
    }
    assert!(
        !all_mark.exists() && !named_mark.exists(),
        "a server ran: {table}"
    );
}

#[test]
fn a_clone_s_gemini_servers_run_in_neither_gemini_cli_nor_doctor_until_trusted() {
    // Gemini CLI's folder trust is the oracle: in a folder its user has not trusted, the
    // project's own servers are disabled by Gemini itself, and doctor starts none of
    // them either, naming how to. Neither ran it (the server leaves a mark when it runs).
    let home = tempfile::tempdir().unwrap();
    let clone = tempfile::tempdir().unwrap();
    let folder = clone.path().canonicalize().unwrap();
    let mark = folder.join("own-project.ran");
    let settings = json!({"mcpServers": {"own-project": marked_server(&mark)}});
    std::fs::create_dir(folder.join(".gemini")).unwrap();
    std::fs::write(folder.join(".gemini/settings.json"), settings.to_string()).unwrap();
    let lines = listed("gemini", home.path(), &folder);
    assert_eq!(lines.len(), 1, "{lines:#?}");
    assert!(
        lines[0].contains("Disabled"),
        "Gemini CLI runs it: {lines:#?}"
    );
    let table = doctor("gemini", home.path(), &folder);
    let row = table.lines().find(|row| row.starts_with("own-project"));
    let row = row.unwrap_or_else(|| panic!("no row: {table}"));
    assert!(row.contains("--mine") || row.contains("--start"), "{table}");
    assert!(!mark.exists(), "the server ran: {table}");
}
