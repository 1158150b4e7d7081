//! `reasons doctor`: every server an MCP client's config names, started behind
//! `reasons mcp` as a wrapped config would start it, and listed: a table of its tools,
//! which gained the `reason` parameter, which were left alone and why, and any error.
//! A project's server runs only once its user approved it, as in the client; all a server
//! says is printed as inert text (R12's rules), so no server can write to the terminal.

use crate::approval::{Approval, Gate};
use crate::wrap::{self, Fate, Way};
use anyhow::Context;
use reasons_inert::inert;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long a server has to start and list its tools.
const PATIENCE: Duration = Duration::from_secs(30);

/// How long the proxy has to end its server once asked (its stdin closed, SIGTERM, each
/// with the proxy's grace period, then the server's whole process group killed), before
/// it is killed itself; and how long what it said is waited for after it is gone (a child
/// a launcher left behind may hold its stderr open).
const ENDING: Duration = Duration::from_secs(10);
const LAST_WORDS: Duration = Duration::from_secs(1);

/// One row of the table.
struct Row {
    server: String,
    tool: String,
    verdict: String,
}

/// The table for the config `file`, each server started through `reasons` (this binary)
/// exactly as `reasons wrap` would have the client start it: the config is wrapped in
/// memory, and each server's command, arguments and environment read from that.
pub fn run(file: &Path, gate: &Gate, start: &[String], reasons: &Path) -> anyhow::Result<String> {
    let param = reasons_transform::DEFAULT_NAME;
    let text = crate::files::read_text(file)?;
    let proxy = wrap::Wrapper {
        command: reasons.display().to_string(),
        audit: None,
    };
    let wrapped = wrap::edit(&text, file, Way::Wrap, &proxy)?;
    let config = wrap::as_json(&wrapped.text, file)?;
    let mut rows = Vec::new();
    for (server, fate) in wrapped.servers {
        let row = |tool: &str, verdict: String| Row {
            server: server.name.clone(),
            tool: tool.to_string(),
            verdict,
        };
        match fate {
            Fate::Skipped(why) => {
                rows.push(row("-", format!("not checked: {why}")));
                continue;
            }
            Fate::Outside(what) => {
                rows.push(row("-", format!("{what}: not a server")));
                continue;
            }
            Fate::Changed | Fate::AsItWas => {}
        }
        let entry = config
            .pointer(&server.pointer)
            .context("the wrapped config has each of its servers")?;
        // Cline's and Claude Code's `disabled`, Goose's and Codex's `enabled`.
        if entry["disabled"] == true || entry["enabled"] == false {
            rows.push(row("-", "disabled in the config: not started".into()));
            continue;
        }
        let named = start.contains(&server.name);
        match gate.approval(&server.name) {
            _ if named => {}
            Approval::Approved => {}
            Approval::Refused => {
                rows.push(row("-", format!("{NOT_STARTED}: its user refused it")));
                continue;
            }
            Approval::Pending => {
                rows.push(row("-", format!("{NOT_STARTED}: not approved yet")));
                continue;
            }
        }
        match listed(entry) {
            Ok(tools) if tools.is_empty() => rows.push(row("-", "lists no tools".into())),
            Ok(tools) => rows.extend(tools.iter().map(|tool| {
                row(
                    tool["name"].as_str().unwrap_or("(no name)"),
                    verdict(tool, param),
                )
            })),
            Err(error) => rows.push(row("-", format!("error: {error:#}"))),
        }
    }
    Ok(table(&rows))
}

/// Why a project's server was not started, and how to start it.
const NOT_STARTED: &str = "a project's server, not started (name it with --start to run it)";

/// The tools the server `entry` (of a wrapped config) lists after the MCP handshake,
/// within [`PATIENCE`].
fn listed(entry: &Value) -> anyhow::Result<Vec<Value>> {
    let text = |value: &Value| value.as_str().map(expand).transpose();
    // Each client's spelling of a stdio server: `command`, `args` and `env`; Goose's `cmd`
    // and `envs`; Zed's older form, the three in an object that is the entry's `command`
    // (its program `path`).
    let run = match entry["command"].is_object() {
        true => &entry["command"],
        false => entry,
    };
    let program = ["command", "cmd", "path"]
        .iter()
        .find_map(|key| run[*key].as_str())
        .context("no command")?;
    let program = expand(program)?;
    let mut args = Vec::new();
    for arg in run["args"].as_array().into_iter().flatten() {
        args.extend(text(arg)?);
    }
    let mut env = Vec::new();
    // VS Code's `envFile` first: the entry's own `env` wins over it, as there.
    if let Some(file) = text(&entry["envFile"])? {
        let read = dotenvy::from_path_iter(&file)
            .with_context(|| format!("its envFile {file} cannot be read"))?;
        for pair in read {
            env.push(pair.with_context(|| format!("its envFile {file} is not a dotenv file"))?);
        }
    }
    let own = ["env", "envs"].iter().find_map(|key| run[*key].as_object());
    for (name, value) in own.into_iter().flatten() {
        env.extend(text(value)?.map(|value| (name.clone(), value)));
    }
    let mut command = Command::new(&program);
    if let Some(folder) = text(&entry["cwd"])? {
        command.current_dir(folder);
    }
    let mut child = command
        .args(&args)
        .envs(env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let mut to = child.stdin.take().context("its stdin")?;
    let words = last_words(child.stderr.take().context("its stderr")?);
    let inbox = lines_of(child.stdout.take().context("its stdout")?);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "reasons-doctor", "version": env!("CARGO_PKG_VERSION")}}});
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    let until = Instant::now() + PATIENCE;
    let outcome = (|| {
        writeln!(to, "{initialize}")?;
        answer(&inbox, 1, until)?;
        writeln!(
            to,
            r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
        )?;
        for page in 2..1002 {
            let params = cursor.take().map(|cursor| json!({"cursor": cursor}));
            let mut request = json!({"jsonrpc": "2.0", "id": page, "method": "tools/list"});
            if let Some(params) = params {
                request["params"] = params;
            }
            writeln!(to, "{request}")?;
            let result = answer(&inbox, page, until)?;
            tools.extend(result["tools"].as_array().cloned().unwrap_or_default());
            match result.get("nextCursor") {
                Some(next) if !next.is_null() => cursor = Some(next.clone()),
                _ => return Ok(()),
            }
        }
        anyhow::bail!("its listing ran past 1,000 pages")
    })();
    drop(to);
    end(&mut child);
    let last = last_line(&words);
    outcome.map(|()| tools).map_err(|error| match last {
        Some(last) => error.context(last.trim().to_string()),
        None => error,
    })
}

/// The longest line doctor reads from the proxy: its own cap on a message, past which
/// the proxy itself ends the stream.
const LONGEST: usize = (reasons_mcp_transports::DEFAULT_MAX_MESSAGE_MIB as usize) << 20;

/// Each line `from` gives, as it comes, from a thread of its own that reads no further
/// than a few lines ahead of what is taken, none longer than [`LONGEST`].
fn lines_of(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (lines, inbox) = mpsc::sync_channel(16);
    std::thread::spawn(move || each_line(from, |line| lines.send(line).is_ok()));
    inbox
}

/// The last line `from` gives that is not blank, once it ends: what else it says (a
/// server's log, of any length) is read and let go.
fn last_words(from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (said, words) = mpsc::sync_channel(1);
    std::thread::spawn(move || {
        let mut last = None;
        each_line(from, |line| {
            if !line.trim().is_empty() {
                last = Some(line);
            }
            true
        });
        if let Some(last) = last {
            let _ = said.send(last);
        }
    });
    words
}

/// Gives each line of `from` to `take`, cut at [`LONGEST`] bytes (the rest of such a line
/// is skipped), until it ends or `take` says stop.
fn each_line(from: impl Read, mut take: impl FnMut(String) -> bool) {
    let mut from = BufReader::new(from);
    loop {
        let mut line = Vec::new();
        let limit = LONGEST as u64 + 1;
        match (&mut from).take(limit).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => {}
        }
        if line.last() != Some(&b'\n') && line.len() > LONGEST {
            // The rest of the line, up to its end, is not kept.
            if from.skip_until(b'\n').is_err() {
                return;
            }
        }
        let line = String::from_utf8_lossy(&line)
            .trim_end_matches('\n')
            .to_string();
        if !take(line) {
            return;
        }
    }
}

/// Ends the proxy as a client would: SIGTERM, which it passes on to its server before it
/// ends the server's whole process group, children a launcher left behind included; a
/// proxy still there after [`ENDING`] is killed.
fn end(proxy: &mut std::process::Child) {
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's, not reaped.
    unsafe { libc::kill(proxy.id() as libc::pid_t, libc::SIGTERM) };
    let until = Instant::now() + ENDING;
    while Instant::now() < until {
        if let Ok(Some(_)) = proxy.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = proxy.kill();
    let _ = proxy.wait();
}

/// The last line the proxy wrote to stderr, waiting at most [`LAST_WORDS`] for the rest.
fn last_line(words: &mpsc::Receiver<String>) -> Option<String> {
    words.recv_timeout(LAST_WORDS).ok()
}

/// `value` with the variables clients expand in a server's command, arguments,
/// environment and folder expanded as they expand them: `${NAME}` and `${NAME:-default}`
/// (Claude Code), `${env:NAME}`, `${workspaceFolder}` and `${userHome}` (VS Code, Cursor),
/// the workspace being the folder doctor runs in. One only the client can give (VS Code's
/// `${input:…}`, which asks the user) is an error that names it.
fn expand(value: &str) -> anyhow::Result<String> {
    let mut out = String::new();
    let mut rest = value;
    while let Some(at) = rest.find("${") {
        out.push_str(&rest[..at]);
        let Some(end) = rest[at..].find('}') else {
            break;
        };
        let inner = &rest[at + 2..at + end];
        let var = |name: &str| std::env::var(name).ok();
        let expanded = match inner.split_once(":-") {
            Some((name, default)) => var(name).unwrap_or_else(|| default.to_string()),
            None => match inner {
                "workspaceFolder" => std::env::current_dir()?.display().to_string(),
                "userHome" => var("HOME").unwrap_or_default(),
                _ if inner.starts_with("env:") => var(&inner[4..]).unwrap_or_default(),
                _ if inner.contains(':') => anyhow::bail!(
                    "`${{{inner}}}` is the client's to give (it asks the user): doctor cannot"
                ),
                name => var(name).unwrap_or_default(),
            },
        };
        out.push_str(&expanded);
        rest = &rest[at + end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

/// The result of the response with `id`, skipping whatever else comes first.
fn answer(inbox: &mpsc::Receiver<String>, id: u64, until: Instant) -> anyhow::Result<Value> {
    loop {
        let line = match inbox.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                anyhow::bail!("no answer within {} s", PATIENCE.as_secs())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => anyhow::bail!("it ended before answering"),
        };
        let Ok(message) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if message["id"] != id || message.get("method").is_some() {
            continue;
        }
        if let Some(error) = message.get("error") {
            anyhow::bail!("it answered with an error: {error}");
        }
        return Ok(message["result"].clone());
    }
}

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

/// The rows as a table of inert text: a server's name, its tools' names and what it said
/// in an error are its own, and may hold escapes or line breaks that would draw rows.
fn table(rows: &[Row]) -> String {
    let rows: Vec<Row> = rows
        .iter()
        .map(|row| Row {
            server: inert(&row.server, NAME_CAP),
            tool: inert(&row.tool, NAME_CAP),
            verdict: inert(&row.verdict, VERDICT_CAP),
        })
        .collect();
    let width = |pick: fn(&Row) -> &str, title: &str| {
        rows.iter()
            .map(|row| pick(row).chars().count())
            .chain([title.len()])
            .max()
            .unwrap_or(0)
    };
    let (server, tool) = (
        width(|row| &row.server, "server"),
        width(|row| &row.tool, "tool"),
    );
    let mut out = format!("{:server$}  {:tool$}  {}\n", "server", "tool", "reason");
    for row in &rows {
        out.push_str(&format!(
            "{:server$}  {:tool$}  {}\n",
            row.server, row.tool, row.verdict
        ));
    }
    out
}

/// Start every server an MCP client's config names behind `reasons mcp` and print, per
/// server, its tools: which gained the reason parameter, which were left alone and
/// why, and any error.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: wrap::ConfigArgs,
    /// Start this project server too, though the client has no approval of it on record
    /// (or one `doctor` cannot read); repeat for more.
    #[arg(long, value_name = "SERVER")]
    start: Vec<String>,
}

/// How many characters of a name, and of a verdict, a row shows.
const NAME_CAP: usize = 64;
const VERDICT_CAP: usize = 400;

/// `reasons doctor`, over every file the client reads.
pub fn command(Args { config, start }: Args) -> anyhow::Result<u8> {
    let reasons = std::env::current_exe().context("cannot tell where this binary is")?;
    for (file, project) in config.files_with_scope()? {
        let table = run(&file, &Gate::of(&file, project)?, &start, &reasons)?;
        print!("{table}");
    }
    Ok(0)
}
