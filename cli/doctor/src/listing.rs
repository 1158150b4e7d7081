//! One server started behind `reasons mcp` as a wrapped config starts it, and its tools
//! listed through the proxy: the MCP handshake, then every page of `tools/list`, within
//! its patience ([`PATIENCE`] unless `--patience` says); then the proxy is ended as a
//! client ends it.

use anyhow::Context;
use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex, mpsc};
use std::time::{Duration, Instant};

/// How long a server has to start and list its tools, unless `--patience` says.
pub const PATIENCE: Duration = Duration::from_secs(30);

/// How long the proxy has to end its server once its stdin is closed, as a client closes
/// it (the proxy's own grace, then SIGTERM to the server's whole process group, then
/// SIGKILL), before it is sent SIGTERM itself, and then killed.
pub const ENDING: Duration = Duration::from_secs(10);
const SIGNALLED: Duration = Duration::from_secs(5);

/// How long what the proxy said is waited for once it is gone (a child a launcher left
/// behind may hold its stderr open).
const LAST_WORDS: Duration = Duration::from_secs(1);

/// The most one server can take: `patience` to list, then its ending.
pub fn at_most(patience: Duration) -> Duration {
    patience + ENDING + SIGNALLED + LAST_WORDS
}

/// The tools the server `entry` (of a wrapped config) lists after the MCP handshake,
/// within `patience`; or what went wrong, the cause first, then the last thing the proxy
/// said before it (what the server printed, or why the proxy gave up on it).
pub fn listed(entry: &Value, patience: Duration) -> Result<Vec<Value>, String> {
    let mut said = None;
    listing(entry, patience, &mut said).map_err(|error| match said {
        Some(said) => format!("{error:#} (the proxy's last words: {})", said.trim()),
        None => format!("{error:#}"),
    })
}

/// [`listed`], with the proxy's last line on stderr kept in `said` when it fails.
fn listing(
    entry: &Value,
    patience: Duration,
    said: &mut Option<String>,
) -> anyhow::Result<Vec<Value>> {
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
        // A server behind `reasons mcp --url` that asks to sign in is reported as such,
        // never signed in to: nobody asked doctor to open a browser.
        .env("REASONS_NO_SIGN_IN", "true")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start {program}"))?;
    let mut to = child.stdin.take().context("its stdin")?;
    let words = Words::of(child.stderr.take().context("its stderr")?);
    let inbox = lines_of(child.stdout.take().context("its stdout")?);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "reasons-doctor", "version": env!("CARGO_PKG_VERSION")}}});
    let mut tools = Vec::new();
    let mut cursor: Option<Value> = None;
    let until = (Instant::now() + patience, patience);
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
    // What the proxy said before it is ended: once doctor ends it, what it says is
    // about that. A proxy that ended on its own has said all it will, soon.
    let gone_by_itself = matches!(child.try_wait(), Ok(Some(_)))
        || outcome.as_ref().is_err_and(|error| error.is::<Ended>());
    *said = words.last(gone_by_itself);
    drop(to);
    end(&mut child);
    outcome.map(|()| tools)
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

/// The last line a stream gave that is not blank: what else it says (a server's log, of
/// any length) is read and let go.
struct Words {
    last: Arc<Mutex<Option<String>>>,
    ended: mpsc::Receiver<()>,
}

impl Words {
    /// The words of `from`, read on a thread of their own.
    fn of(from: impl Read + Send + 'static) -> Words {
        let last = Arc::new(Mutex::new(None));
        let (done, ended) = mpsc::sync_channel(1);
        let keep = last.clone();
        std::thread::spawn(move || {
            each_line(from, |line| {
                if !line.trim().is_empty() {
                    *keep.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(line);
                }
                true
            });
            let _ = done.send(());
        });
        Words { last, ended }
    }

    /// The last line so far; `to_the_end`, once the stream ends (at most [`LAST_WORDS`]).
    fn last(&self, to_the_end: bool) -> Option<String> {
        if to_the_end {
            let _ = self.ended.recv_timeout(LAST_WORDS);
        }
        self.last
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
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

/// Ends the proxy, its stdin already closed, as a client ends it: the proxy ends its
/// server's whole process group, children a launcher left behind included. One still
/// there after [`ENDING`] is sent SIGTERM (which it passes on), and after [`SIGNALLED`]
/// more, killed.
fn end(proxy: &mut std::process::Child) {
    if gone_within(proxy, ENDING) {
        return;
    }
    // SAFETY: kill has no memory-safety preconditions; the pid is our child's, not reaped.
    unsafe { libc::kill(proxy.id() as libc::pid_t, libc::SIGTERM) };
    if gone_within(proxy, SIGNALLED) {
        return;
    }
    let _ = proxy.kill();
    let _ = proxy.wait();
}

/// Whether `proxy` has exited within `time`.
fn gone_within(proxy: &mut std::process::Child, time: Duration) -> bool {
    let until = Instant::now() + time;
    while Instant::now() < until {
        if let Ok(Some(_)) = proxy.try_wait() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
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

/// The proxy ended before it answered.
#[derive(Debug)]
struct Ended;

impl std::fmt::Display for Ended {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("it ended before answering")
    }
}

impl std::error::Error for Ended {}

/// The result of the response with `id`, skipping whatever else comes first.
/// `until` is when to give up, and the patience that ends then.
fn answer(
    inbox: &mpsc::Receiver<String>,
    id: u64,
    (until, patience): (Instant, Duration),
) -> anyhow::Result<Value> {
    loop {
        let line = match inbox.recv_timeout(until.saturating_duration_since(Instant::now())) {
            Ok(line) => line,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                anyhow::bail!("no answer within {} s", patience.as_secs())
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => return Err(Ended.into()),
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
