//! `reasons doctor`: every server an MCP client's config names, started behind
//! `reasons mcp` as a wrapped config would start it, and listed: a table of its tools,
//! which gained the `reason` parameter, which were left alone and why, and any error.
//! A project's server runs only when its user names it or says the folder is theirs, and
//! in its project's folder (`approval.rs`); all a server says is printed as inert text
//! (R12's rules), so no server can write to the terminal.

mod listing;
mod report;

use crate::approval::{self, Launch, Lists, Place, Scope, Verdict};
use anyhow::Context;
use reasons_wrap::{self as wrap, Fate, Way};
use report::Row;
use serde_json::Value;
use std::path::Path;
use std::time::Duration;

/// What doctor does about one server of a config.
enum Check {
    /// What is known of it without starting it: a row.
    Told(Row),
    /// Start it, and list its tools: its name, and its entry in the wrapped config.
    Start { server: String, entry: Value },
}

/// Who said which servers may start: the user, by name or for the folder doctor runs in,
/// and the client, by its lists.
struct Say<'a> {
    start: &'a [String],
    mine: bool,
    here: &'a Path,
    lists: &'a Lists,
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
/// `reasons` (this binary) exactly as `reasons wrap` would have the client start it: the
/// config is wrapped in memory, and each server's command, arguments and environment
/// read from that; a project's server runs in its project's folder.
fn checks(file: &Path, place: Place, say: &Say, reasons: &Path) -> anyhow::Result<Vec<Check>> {
    let text = reasons_wrap::files::read_text(file)?;
    let proxy = wrap::Wrapper {
        command: reasons.display().to_string(),
        launcher: Vec::new(),
        audit: None,
        reads: crate::mcp::line,
    };
    let wrapped = wrap::edit(&text, file, Way::Wrap, &proxy)?;
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

/// The rows for the server `server`, its `entry` started and its tools listed.
fn rows_of(server: &str, entry: &Value, patience: Duration) -> Vec<Row> {
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

/// Start every server an MCP client's config names behind `reasons mcp` and print, per
/// server, its tools: which gained the reason parameter, which were left alone and
/// why, and any error.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: crate::wrap::ConfigArgs,
    /// Start this server too: a project's, or one a client's list blocks; repeat for more.
    #[arg(long, value_name = "SERVER")]
    start: Vec<String>,
    /// The folder doctor runs in is yours: start its project's servers (those of its
    /// config files, and the client's entries for it), not only the ones named.
    #[arg(long)]
    mine: bool,
    /// How long each server has to start and list its tools, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = listing::PATIENCE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    patience: u64,
}

/// `reasons doctor`, over every file the client reads: one table, each server's rows as
/// soon as it is done.
pub fn command(
    Args {
        config,
        start,
        mine,
        patience,
    }: Args,
) -> anyhow::Result<u8> {
    let reasons = std::env::current_exe().context("cannot tell where this binary is")?;
    let here = std::env::current_dir().context("cannot tell which folder this is")?;
    let here = std::fs::canonicalize(&here).unwrap_or(here);
    let lists = Lists::of(config.client())?;
    let named = config.client().is_none();
    let say = Say {
        start: &start,
        mine,
        here: &here,
        lists: &lists,
    };
    let mut told = Vec::new();
    let mut started = Vec::new();
    for (file, project) in config.files_with_scope()? {
        let place = match (named, project) {
            (true, _) => Place::Named,
            (false, true) => Place::Project,
            (false, false) => Place::Client,
        };
        for check in checks(&file, place, &say, &reasons)? {
            match check {
                Check::Told(row) => told.push(row),
                Check::Start { server, entry } => started.push((server, entry)),
            }
        }
    }
    report::run(told, started, Duration::from_secs(patience), rows_of);
    Ok(0)
}
