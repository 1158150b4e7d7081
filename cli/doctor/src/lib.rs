//! What `reasons doctor` finds, as a library: which servers of an MCP client's config
//! may start (`approval.rs`), each started behind `reasons mcp` as a wrapped config would
//! start it and its tools listed (`listing.rs`), and a row per tool saying whether it
//! gained the `reason` parameter, was left alone and why, or what went wrong. The command
//! (`reasons doctor`) reads its flags and prints the rows.

#![deny(missing_docs)]

pub mod approval;
pub mod listing;

use anyhow::Context;
use approval::{Launch, Lists, Place, Scope, Verdict};
use reasons_wrap::{self as wrap, Fate, Way};
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// One row of doctor's table: a server, one of its tools (`-` for none), and what was
/// found.
#[derive(Debug, PartialEq, Eq)]
pub struct Row {
    /// The server's name in the config.
    pub server: String,
    /// The tool's name, or `-`.
    pub tool: String,
    /// What the layer did to it, or why the server was not started or listed.
    pub verdict: String,
}

/// What doctor does about one server of a config.
pub enum Check {
    /// What is known of it without starting it: a row.
    Told(Row),
    /// Start it, and list its tools: its name, and its entry in the wrapped config.
    Start {
        /// Its name.
        server: String,
        /// Its entry, as the wrapped config has it, to start.
        entry: Value,
    },
}

/// Who said which servers may start: the user, by name or for the folder doctor runs in,
/// and the client, by its lists.
pub struct Say<'a> {
    /// The servers the user named to start.
    pub start: &'a [String],
    /// Whether the user says the folder doctor runs in is theirs.
    pub mine: bool,
    /// That folder.
    pub here: &'a Path,
    /// The client's lists of servers that may or may not start.
    pub lists: &'a Lists,
}

impl Say<'_> {
    /// Why the server `name` of `scope`, whose entry is `entry` as the user wrote it, is
    /// not started; `None` when it is.
    fn against(&self, name: &str, scope: &Scope, entry: &Value) -> Option<String> {
        if self.start.iter().any(|named| named == name) {
            return None;
        }
        match scope {
            Scope::Project { folder } if self.mine && folder == self.here => None,
            Scope::Project { .. } => Some(NOT_STARTED.into()),
            Scope::Own => match self.lists.verdict(&Launch::of(name, entry)) {
                Verdict::Allowed => None,
                Verdict::Blocked(why) => Some(format!(
                    "not started: {why} (name it with --start to run it)"
                )),
            },
        }
    }
}

/// What to do about each server of the config `file`, each to be started through
/// `reasons` exactly as `reasons wrap` would have the client start it, with `proxy`: the
/// config is wrapped in memory, and each server's command, arguments and environment
/// read from that; a project's server runs in its project's folder.
pub fn checks(
    file: &Path,
    place: Place,
    say: &Say,
    proxy: &wrap::Wrapper,
) -> anyhow::Result<Vec<Check>> {
    let text = reasons_wrap::files::read_text(file)?;
    let wrapped = wrap::edit(&text, file, Way::Wrap, proxy)?;
    // Read once the edit took it: a config it refuses is named by its refusal.
    let original = wrap::as_json(&text, file)?;
    let config = wrap::as_json(&wrapped.text, file)?;
    let mut checks = Vec::new();
    for (server, fate) in wrapped.servers {
        let told = |verdict: String| {
            Check::Told(Row {
                server: server.name.clone(),
                tool: "-".into(),
                verdict,
            })
        };
        match fate {
            Fate::Skipped(why) => {
                checks.push(told(format!("not checked: {why}")));
                continue;
            }
            Fate::Outside(what) => {
                checks.push(told(format!("{what}: not a server")));
                continue;
            }
            Fate::Changed | Fate::AsItWas => {}
        }
        let entry = config
            .pointer(&server.pointer)
            .context("the wrapped config has each of its servers")?;
        // Cline's and Claude Code's `disabled`, Goose's and Codex's `enabled`.
        if entry["disabled"] == true || entry["enabled"] == false {
            checks.push(told("disabled in the config: not started".into()));
            continue;
        }
        let scope = approval::scope(file, &server.pointer, place, say.here);
        let written = original.pointer(&server.pointer).unwrap_or(&Value::Null);
        if let Some(why) = say.against(&server.name, &scope, written) {
            checks.push(told(why));
            continue;
        }
        let mut entry = entry.clone();
        if let Scope::Project { folder } = scope
            && entry.get("cwd").is_none()
            && let Some(entry) = entry.as_object_mut()
        {
            entry.insert("cwd".into(), folder.display().to_string().into());
        }
        checks.push(Check::Start {
            server: server.name.clone(),
            entry,
        });
    }
    Ok(checks)
}

/// The rows for the server `server`, its `entry` started and its tools listed within
/// `patience`.
pub fn rows_of(server: &str, entry: &Value, patience: Duration) -> Vec<Row> {
    let row = |tool: &str, verdict: String| Row {
        server: server.to_string(),
        tool: tool.to_string(),
        verdict,
    };
    match listing::listed(entry, patience) {
        Ok(tools) if tools.is_empty() => vec![row("-", "lists no tools".into())],
        Ok(tools) => tools
            .iter()
            .map(|tool| {
                let name = tool["name"].as_str().unwrap_or("(no name)");
                let param = reasons_transform::DEFAULT_NAME;
                let mut verdict = verdict(tool, param);
                // A tool that asks why itself: named, with the way to leave it alone.
                let fields = reasons_host::asks_why::asks_why(tool, param);
                if !fields.is_empty() {
                    verdict = format!("{verdict}; {}", reasons_host::asks_why::note(name, &fields));
                }
                row(name, verdict)
            })
            .collect(),
        // A server that wants credentials the proxy cannot get works once given them:
        // it is not broken, and the row says what it needs.
        Err(error) if error.contains(reasons_mcp_transports::NEEDS_SIGN_IN) => {
            vec![row("-", needs_sign_in(&error))]
        }
        Err(error) => vec![row("-", format!("error: {error}"))],
    }
}

/// The row of a server that asks its users to sign in: the way out first (`reasons login
/// URL`, with its URL), then why, since a row is cut at its cap.
fn needs_sign_in(error: &str) -> String {
    let way = error
        .find(reasons_mcp_transports::NEEDS_SIGN_IN)
        .and_then(|at| {
            let rest = &error[at..];
            // The command ends at its closing backtick, the one after `reasons login URL`.
            let opening = rest.find('`')?;
            let closing = rest[opening + 1..].find('`')? + opening + 1;
            Some((at, &rest[..=closing]))
        });
    match way {
        Some((at, way)) => {
            let cause = error[..at].trim_end_matches(['.', ';', ' ']);
            format!("needs sign-in: {way} in a terminal ({cause})")
        }
        None => format!("needs sign-in: {error}"),
    }
}

/// Why a project's server was not started, and how to start it.
const NOT_STARTED: &str = "a project's server, not started: its folder chose it (name it with \
                           --start, or pass --mine in a folder of your own, to run it)";

/// Whether `tool` gained the parameter, and if not, why.
fn verdict(tool: &Value, param: &str) -> String {
    let schema = &tool["inputSchema"];
    let property = &schema["properties"][param];
    let ours = property["description"]
        .as_str()
        .is_some_and(|description| description == reasons_transform::DEFAULT_DESCRIPTION);
    if ours {
        return format!("`{param}` added: calls are stripped of it");
    }
    if !property.is_null() {
        return format!("left alone: its schema has a `{param}` of its own, which reaches it");
    }
    if !schema.is_object() {
        return "left alone: its input schema is not an object the layer can read".into();
    }
    format!("left alone: its schema names `{param}` elsewhere, or the layer could not read it")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_s_verdict_says_what_the_layer_did_to_it() {
        let added = json!({"inputSchema": {"type": "object", "properties": {"reason": {
            "type": "string", "description": reasons_transform::DEFAULT_DESCRIPTION}}}});
        assert_eq!(
            verdict(&added, "reason"),
            "`reason` added: calls are stripped of it"
        );
        let own = json!({"inputSchema": {"type": "object", "properties": {"reason": {
            "type": "string", "description": "the tool's own"}}}});
        assert_eq!(
            verdict(&own, "reason"),
            "left alone: its schema has a `reason` of its own, which reaches it"
        );
        let unreadable = json!({"inputSchema": true});
        assert_eq!(
            verdict(&unreadable, "reason"),
            "left alone: its input schema is not an object the layer can read"
        );
        let elsewhere = json!({"inputSchema": {"type": "object", "required": ["reason"]}});
        assert_eq!(
            verdict(&elsewhere, "reason"),
            "left alone: its schema names `reason` elsewhere, or the layer could not read it"
        );
    }

    #[test]
    fn a_server_that_asks_for_sign_in_shows_the_way_out_first() {
        let error = "the MCP server at https://x.example/mcp answered HTTP 401: it asks for \
                     credentials; sign in with `reasons login https://x.example/mcp` in a \
                     terminal, or give the token your client would send";
        assert_eq!(
            needs_sign_in(error),
            "needs sign-in: sign in with `reasons login https://x.example/mcp` in a terminal \
             (the MCP server at https://x.example/mcp answered HTTP 401: it asks for \
             credentials)"
        );
        // Without the command's closing backtick, the error as it is.
        let cut = "401; sign in with `reasons login https://x.example/mcp";
        assert_eq!(needs_sign_in(cut), format!("needs sign-in: {cut}"));
    }

    /// The checks of a config in a folder of its own, doctor run there, as `say` says.
    fn checked(start: &[String], mine: bool) -> Vec<(String, Option<Value>, Option<String>)> {
        let folder = tempfile::tempdir().unwrap();
        let here = std::fs::canonicalize(folder.path()).unwrap();
        let file = here.join("mcp.json");
        let config = json!({"mcpServers": {
            "fs": {"command": "npx", "args": ["-y", "fs"]},
            "off": {"command": "off", "disabled": true},
        }});
        std::fs::write(&file, config.to_string()).unwrap();
        let lists = Lists::default();
        let say = Say {
            start,
            mine,
            here: &here,
            lists: &lists,
        };
        let proxy = wrap::Wrapper {
            command: "/bin/reasons".into(),
            launcher: Vec::new(),
            audit: None,
            reads: |_| wrap::Line::Unread("not read here".into()),
        };
        let checks = checks(&file, Place::Named, &say, &proxy).unwrap();
        checks
            .into_iter()
            .map(|check| match check {
                Check::Told(row) => (row.server, None, Some(row.verdict)),
                Check::Start { server, entry } => (server, Some(entry), None),
            })
            .collect()
    }

    #[test]
    fn a_project_s_server_starts_only_when_named_or_its_folder_is_the_user_s() {
        // A config in the folder doctor runs in came with it: its server is not started.
        let checks = checked(&[], false);
        assert_eq!(checks.len(), 2, "{checks:?}");
        assert_eq!(checks[0].0, "fs");
        assert_eq!(checks[0].2.as_deref(), Some(NOT_STARTED));
        assert_eq!(
            checks[1].2.as_deref(),
            Some("disabled in the config: not started")
        );
        // Named, it starts behind the proxy, as wrap would run it, in its folder.
        for checks in [checked(&["fs".into()], false), checked(&[], true)] {
            assert_eq!(checks.len(), 2, "{checks:?}");
            let entry = checks[0].1.as_ref().expect("started");
            assert_eq!(entry["command"], "/bin/reasons");
            assert_eq!(entry["args"], json!(["mcp", "--", "npx", "-y", "fs"]));
            assert!(entry["cwd"].is_string(), "{entry}");
            // A disabled server is not started, named or not.
            assert!(checks[1].1.is_none());
        }
    }
}
