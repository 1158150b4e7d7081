//! `reasons mcp -- <server command...>`: the reasons layer in front of any MCP server
//! that speaks stdio. To the client it is the server; to the server it is the client.
//!
//! Two threads read the two streams line by line; one loop feeds the lines to the
//! [`Proxy`](proxy::Proxy) and writes what it says, so the order of each stream is kept.

mod audit;
mod jsonrpc;
mod proxy;
mod transform;

use crate::plugin::Plugin;
use anyhow::Context;
use audit::Audit;
use proxy::{Out, Proxy};
use reasons::Options;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
use transform::Transform;

/// How long the server has, once the client is gone, to finish its output and exit
/// before it is ended.
const GRACE: Duration = Duration::from_secs(3);

/// What `reasons mcp` was asked to do.
pub struct Settings {
    /// The server's command and its arguments.
    pub command: Vec<OsString>,
    /// Where to append one JSON line per `tools/call`.
    pub audit: Option<PathBuf>,
    /// Whether to print calls per tool, and how many carried a reason, on exit.
    pub stats: bool,
}

enum Event {
    Client(Vec<u8>),
    ClientClosed,
    Server(Vec<u8>),
    ServerClosed,
}

/// Runs the proxy until the client has gone and the server has finished, or the server
/// has gone. Fails only when it cannot start.
pub fn run(plugin: &Plugin, options: Options, settings: Settings) -> anyhow::Result<()> {
    let (program, arguments) = settings
        .command
        .split_first()
        .context("no server command: `reasons mcp -- <server command...>`")?;
    let transform = Transform::new(plugin, options)?;
    let audit = Audit::new(settings.audit.as_deref(), settings.stats)?;
    let mut child = Command::new(program)
        .args(arguments)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot start the MCP server {program:?}"))?;
    let (events, inbox) = mpsc::channel();
    let server_out = child.stdout.take().context("the server's stdout")?;
    read_lines(
        std::io::stdin(),
        events.clone(),
        Event::Client,
        Event::ClientClosed,
    );
    read_lines(server_out, events, Event::Server, Event::ServerClosed);

    let mut proxy = Proxy::new(transform, audit);
    let mut to_server = child.stdin.take();
    let mut to_client = std::io::stdout().lock();
    let mut closing: Option<Instant> = None;
    loop {
        let wake = closing.or(proxy.hold_ends());
        let event = match wake {
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        let out = match event {
            Ok(Event::Client(line)) => proxy.client_sent(line),
            Ok(Event::Server(line)) => proxy.server_sent(line),
            Ok(Event::ClientClosed) => {
                let out = proxy.client_gone();
                write_all(&out, &mut to_server, &mut to_client);
                // Closing its stdin tells the server the session is over.
                to_server = None;
                closing = Some(Instant::now() + GRACE);
                continue;
            }
            Ok(Event::ServerClosed) => {
                let why = describe(end(&mut child, GRACE));
                let out = proxy.server_gone(&why);
                write_all(&out, &mut to_server, &mut to_client);
                break;
            }
            Err(RecvTimeoutError::Timeout) if closing.is_some() => break,
            Err(RecvTimeoutError::Timeout) => proxy.give_up_waiting(),
            Err(RecvTimeoutError::Disconnected) => break,
        };
        if !write_all(&out, &mut to_server, &mut to_client) {
            break;
        }
    }
    end(&mut child, Duration::ZERO);
    if proxy.audit().stats_wanted() {
        eprint!("{}", proxy.audit().stats());
    }
    Ok(())
}

/// Writes each line where it goes; `false` when the client can no longer be written to.
fn write_all(out: &[Out], to_server: &mut Option<ChildStdin>, to_client: &mut impl Write) -> bool {
    for line in out {
        match line {
            Out::Server(bytes) => {
                // A server that stopped reading has exited or soon will: its end says why.
                if let Some(stdin) = to_server {
                    let _ = write_line(stdin, bytes);
                }
            }
            Out::Client(bytes) => {
                if write_line(to_client, bytes).is_err() {
                    return false;
                }
            }
        }
    }
    true
}

fn write_line(to: &mut impl Write, bytes: &[u8]) -> std::io::Result<()> {
    to.write_all(bytes)?;
    to.write_all(b"\n")?;
    to.flush()
}

/// Sends each line of `from`, without its `\n`, as `line(...)`, then `closed`.
fn read_lines(
    from: impl Read + Send + 'static,
    to: mpsc::Sender<Event>,
    line: fn(Vec<u8>) -> Event,
    closed: Event,
) {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        loop {
            let mut buffer = Vec::new();
            match from.read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(_) => {
                    if buffer.last() == Some(&b'\n') {
                        buffer.pop();
                    }
                    if to.send(line(buffer)).is_err() {
                        return;
                    }
                }
            }
        }
        let _ = to.send(closed);
    });
}

/// Waits up to `grace` for the server to exit, then ends it.
fn end(child: &mut Child, grace: Duration) -> Option<ExitStatus> {
    let until = Instant::now() + grace;
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
            _ => {
                let _ = child.kill();
                return child.wait().ok();
            }
        }
    }
}

fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(status) => format!("it {status}"),
        None => "it could not be waited for".into(),
    }
}
