//! `reasons wrap` and `unwrap` as the clients themselves read the result: Claude Code's
//! `claude mcp list` and Gemini CLI's `gemini mcp list` (installed from npm, pinned in
//! `tests/clients`), which start and check every server they are configured with and need
//! no account, run before wrap, after it and after unwrap. The oracle is what each client
//! says of each server: connected, and through `reasons mcp` exactly while wrapped.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// What `client mcp list` (`claude` or `gemini`) says, run in `folder` with `home` as
/// its home: each server line.
fn listed(client: &str, home: &Path, folder: &Path) -> Vec<String> {
    let program = installed("clients").join("node_modules/.bin").join(client);
    let output = output_within(
        Command::new(program)
            .args(["mcp", "list"])
            .current_dir(folder)
            .env("HOME", home)
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
    said.lines()
        .filter(|line| line.contains("own"))
        .map(str::to_string)
        .collect()
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
    let through = line.contains(&format!("{} mcp -- node", reasons()));
    line.contains("Connected") && through == wrapped
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
    let config = json!({
        "mcpServers": {"user-own": server},
        "projects": {folder.to_str().unwrap(): {"mcpServers": {"local-own": server}}}
    });
    std::fs::write(home.path().join(".claude.json"), config.to_string()).unwrap();
    for (step, wrapped) in [("before", false), ("wrap", true), ("unwrap", false)] {
        if step != "before" {
            wrap(step, "claude-code", home.path(), &folder);
        }
        let lines = listed("claude", home.path(), &folder);
        assert_eq!(lines.len(), 2, "{step}: {lines:#?}");
        for server in ["user-own", "local-own"] {
            assert!(
                connected(&lines, server, wrapped),
                "{step}, {server}: {lines:#?}"
            );
        }
    }
}

#[test]
fn gemini_cli_connects_to_its_servers_through_reasons_while_wrapped() {
    // Gemini CLI's settings, with its own keys beside the command (`timeout`, `trust`),
    // in a folder it trusts.
    let home = tempfile::tempdir().unwrap();
    let project = tempfile::tempdir().unwrap();
    let folder = project.path().canonicalize().unwrap();
    let gemini = home.path().join(".gemini");
    std::fs::create_dir_all(&gemini).unwrap();
    let own = own_server();
    let settings = json!({"mcpServers": {"own": {"command": own[0], "args": own[1..], "timeout": 30000, "trust": false}}});
    std::fs::write(gemini.join("settings.json"), settings.to_string()).unwrap();
    let trusted = json!({folder.to_str().unwrap(): "TRUST_FOLDER"});
    std::fs::write(gemini.join("trustedFolders.json"), trusted.to_string()).unwrap();
    for (step, wrapped) in [("before", false), ("wrap", true), ("unwrap", false)] {
        if step != "before" {
            wrap(step, "gemini", home.path(), &folder);
        }
        let lines = listed("gemini", home.path(), &folder);
        assert_eq!(lines.len(), 1, "{step}: {lines:#?}");
        assert!(connected(&lines, "own", wrapped), "{step}: {lines:#?}");
    }
}
