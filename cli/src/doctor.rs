//! `reasons doctor`: every server an MCP client's config names, started behind
//! `reasons mcp` as a wrapped config would start it, and listed: a table of its tools,
//! which gained the `reason` parameter, which were left alone and why, and any error.
//! A project's server runs only once its user approved it, as in the client; all a server
//! says is printed as inert text (R12's rules), so no server can write to the terminal.

mod listing;
mod report;

use crate::approval::{Approval, Gate};
use anyhow::Context;
use reasons_wrap::{self as wrap, Fate, Way};
use report::Row;
use serde_json::Value;
use std::path::Path;

/// What doctor does about one server of a config.
enum Check {
    /// What is known of it without starting it: a row.
    Told(Row),
    /// Start it, and list its tools: its name, and its entry in the wrapped config.
    Start { server: String, entry: Value },
}

/// What to do about each server of the config `file`, each to be started through
/// `reasons` (this binary) exactly as `reasons wrap` would have the client start it: the
/// config is wrapped in memory, and each server's command, arguments and environment
/// read from that.
fn checks(
    file: &Path,
    gate: &Gate,
    start: &[String],
    reasons: &Path,
) -> anyhow::Result<Vec<Check>> {
    let text = reasons_wrap::files::read_text(file)?;
    let proxy = wrap::Wrapper {
        command: reasons.display().to_string(),
        audit: None,
        reads: crate::mcp::line,
    };
    let wrapped = wrap::edit(&text, file, Way::Wrap, &proxy)?;
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
        let named = start.contains(&server.name);
        match gate.approval(&server.name) {
            _ if named => {}
            Approval::Approved => {}
            Approval::Refused => {
                checks.push(told(format!("{NOT_STARTED}: its user refused it")));
                continue;
            }
            Approval::Pending => {
                checks.push(told(format!("{NOT_STARTED}: not approved yet")));
                continue;
            }
        }
        checks.push(Check::Start {
            server: server.name.clone(),
            entry: entry.clone(),
        });
    }
    Ok(checks)
}

/// The rows for the server `server`, its `entry` started and its tools listed.
fn rows_of(server: &str, entry: &Value) -> Vec<Row> {
    let row = |tool: &str, verdict: String| Row {
        server: server.to_string(),
        tool: tool.to_string(),
        verdict,
    };
    match listing::listed(entry) {
        Ok(tools) if tools.is_empty() => vec![row("-", "lists no tools".into())],
        Ok(tools) => tools
            .iter()
            .map(|tool| {
                row(
                    tool["name"].as_str().unwrap_or("(no name)"),
                    verdict(tool, reasons_transform::DEFAULT_NAME),
                )
            })
            .collect(),
        // A server that wants credentials the proxy cannot get works once given them:
        // it is not broken, and the row says what it needs.
        Err(error) if error.contains(reasons_mcp_transports::NEEDS_SIGN_IN) => {
            vec![row("-", format!("needs sign-in: {error}"))]
        }
        Err(error) => vec![row("-", format!("error: {error}"))],
    }
}

/// Why a project's server was not started, and how to start it.
const NOT_STARTED: &str = "a project's server, not started (name it with --start to run it)";

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
    /// Start this project server too, though the client has no approval of it on record
    /// (or one `doctor` cannot read); repeat for more.
    #[arg(long, value_name = "SERVER")]
    start: Vec<String>,
}

/// `reasons doctor`, over every file the client reads: one table, each server's rows as
/// soon as it is done.
pub fn command(Args { config, start }: Args) -> anyhow::Result<u8> {
    let reasons = std::env::current_exe().context("cannot tell where this binary is")?;
    let mut told = Vec::new();
    let mut started = Vec::new();
    for (file, project) in config.files_with_scope()? {
        for check in checks(&file, &Gate::of(&file, project)?, &start, &reasons)? {
            match check {
                Check::Told(row) => told.push(row),
                Check::Start { server, entry } => started.push((server, entry)),
            }
        }
    }
    report::run(told, started, rows_of);
    Ok(0)
}
