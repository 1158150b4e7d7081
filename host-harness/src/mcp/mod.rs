//! `reasons mcp -- <server command...>`: the reasons layer in front of any MCP server
//! that speaks stdio. To the client it is the server; to the server it is the client.
//!
//! Two threads read the two streams line by line, a third turns signals into events; one
//! loop feeds them to the `Proxy` and writes what it says, so the order
//! of each stream is kept. The server runs in a process group of its own, which the
//! proxy signals and, if it must, kills: the server never outlives the proxy (R20).

mod audit;
mod jsonrpc;
mod layer;
mod proxy;

use crate::plugin::Plugin;
use anyhow::Context;
use audit::Audit;
use layer::ProxyLayer;
use proxy::{Out, Proxy};
use reasons_transform::Options;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

/// How long the server has, at each step of its shutdown, before the next: once its
/// stdin is closed, then once it was sent SIGTERM (after which it gets SIGKILL).
const GRACE: Duration = Duration::from_secs(3);

/// The signals that end the proxy, each passed on to the server first.
const ENDING: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// What `reasons mcp` was asked to do.
pub struct Settings {
    /// The server's command and its arguments.
    pub command: Vec<OsString>,
    /// Where to append one JSON line per `tools/call`.
    pub audit: Option<PathBuf>,
    /// Whether to print calls per tool, and how many carried a reason, on exit.
    pub stats: bool,
}

/// How the session ended: the server's end, which the proxy's exit status repeats.
#[derive(Debug)]
pub struct Ended {
    /// The server's exit status, when it could be waited for.
    pub status: Option<ExitStatus>,
    /// The signal that ended the proxy, if one did.
    pub signal: Option<i32>,
}

impl Ended {
    /// The proxy's exit code: the server's own code, or 128 + the signal that ended it
    /// (or the proxy), as a shell reports it.
    pub fn code(&self) -> u8 {
        let code = match (self.signal, self.status) {
            (Some(signal), _) => 128 + signal,
            (None, Some(status)) => match (status.code(), status.signal()) {
                (Some(code), _) => code,
                (None, Some(signal)) => 128 + signal,
                (None, None) => 1,
            },
            (None, None) => 1,
        };
        u8::try_from(code).unwrap_or(1)
    }
}

/// Why the server is being ended.
enum Ending {
    /// Its stdout closed, or the client's: it has a grace period to exit.
    Closed,
    /// Its stdin was closed a grace period ago and it is still running.
    Overdue,
    /// The proxy got this signal.
    Signal(i32),
}

enum Event {
    Client(Vec<u8>),
    ClientClosed,
    Server(Vec<u8>),
    ServerClosed,
    Signal(i32),
}

/// Runs the proxy until the client has gone and the server has finished, the server has
/// gone, or a signal ended it. Fails only when it cannot start.
pub fn run(plugin: &Plugin, options: Options, settings: Settings) -> anyhow::Result<Ended> {
    let (program, arguments) = settings
        .command
        .split_first()
        .context("no server command: `reasons mcp -- <server command...>`")?;
    let layer = ProxyLayer::new(plugin, options)?;
    let audit = Audit::new(settings.audit.as_deref(), settings.stats)?;
    let (events, inbox) = mpsc::channel();
    // Registered before the server starts, so that no signal falls between.
    forward_signals(events.clone())?;
    let mut server = Server::start(program, arguments)?;
    read_lines(
        std::io::stdin(),
        events.clone(),
        Event::Client,
        Event::ClientClosed,
    );
    read_lines(server.stdout()?, events, Event::Server, Event::ServerClosed);

    let mut proxy = Proxy::new(layer, audit);
    let mut to_client = std::io::stdout().lock();
    let mut client_closed = false;
    // When the server's stdin was closed: it has a grace period to exit by itself.
    let mut closed_at: Option<Instant> = None;
    let ended = loop {
        let grace_ends = closed_at.map(|at| at + GRACE);
        if grace_ends.is_some_and(|at| Instant::now() >= at) {
            break server.end(Ending::Overdue);
        }
        let event = match proxy.wake_at().into_iter().chain(grace_ends).min() {
            None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
            Some(at) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
        };
        let out = match event {
            Ok(Event::Client(line)) => proxy.client_sent(line),
            Ok(Event::Server(line)) => proxy.server_sent(line),
            Ok(Event::ClientClosed) => {
                client_closed = true;
                proxy.client_gone()
            }
            Ok(Event::ServerClosed) => break server.end(Ending::Closed),
            Ok(Event::Signal(signal)) => break server.end(Ending::Signal(signal)),
            Err(RecvTimeoutError::Timeout) => proxy.tick(),
            Err(RecvTimeoutError::Disconnected) => break server.end(Ending::Closed),
        };
        if !write_all(&out, &mut server, &mut to_client) {
            // The client can no longer read: nothing more can be answered.
            break server.end(Ending::Closed);
        }
        if client_closed && proxy.idle() && closed_at.is_none() {
            // Closing its stdin tells the server the session is over; it may still
            // answer what it has, which goes on being relayed until it exits.
            server.close_stdin();
            closed_at = Some(Instant::now());
        }
    };
    let out = proxy.server_gone(&ended.describe());
    write_all(&out, &mut server, &mut to_client);
    if ended.status.is_some_and(|status| !status.success()) || ended.signal.is_some() {
        eprintln!("reasons: the MCP server {}", ended.describe());
    }
    if proxy.audit().stats_wanted() {
        eprint!("{}", proxy.audit().stats());
    }
    Ok(ended)
}

impl Ended {
    fn describe(&self) -> String {
        match (self.signal, self.status) {
            (Some(signal), Some(status)) => {
                format!("was ended after the proxy got signal {signal} ({status})")
            }
            (_, Some(status)) => format!("exited ({status})"),
            (_, None) => "could not be waited for".into(),
        }
    }
}

/// The server: a child in a process group of its own, so that a signal reaches it and
/// whatever it started (an `npx` and its `node`), and none reaches it twice.
struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
}

impl Server {
    fn start(program: &OsString, arguments: &[OsString]) -> anyhow::Result<Server> {
        let mut command = Command::new(program);
        command
            .args(arguments)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .process_group(0);
        #[cfg(target_os = "linux")]
        // SAFETY: prctl is async-signal-safe, which is all that may run between fork and exec.
        unsafe {
            // Should the proxy itself be killed outright, the kernel ends the server.
            command.pre_exec(|| {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
        let mut child = command
            .spawn()
            .with_context(|| format!("cannot start the MCP server {program:?}"))?;
        Ok(Server {
            stdin: child.stdin.take(),
            child,
        })
    }

    fn stdout(&mut self) -> anyhow::Result<std::process::ChildStdout> {
        self.child.stdout.take().context("the server's stdout")
    }

    fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// Signals the server's process group; it may already be gone.
    fn signal(&self, signal: i32) {
        let group = self.child.id() as libc::pid_t;
        // SAFETY: kill has no memory-safety preconditions.
        unsafe {
            libc::kill(-group, signal);
        }
    }

    /// Ends the server, in the order MCP's stdio transport gives: its stdin closed, then
    /// SIGTERM, then SIGKILL, each after a grace period it did not use to exit. A signal
    /// the proxy got is passed on first.
    fn end(&mut self, how: Ending) -> Ended {
        self.close_stdin();
        let signal = match how {
            Ending::Signal(signal) => Some(signal),
            Ending::Closed | Ending::Overdue => None,
        };
        let mut status = match how {
            Ending::Signal(signal) => {
                self.signal(signal);
                self.wait(GRACE)
            }
            Ending::Closed => self.wait(GRACE),
            Ending::Overdue => None,
        };
        if status.is_none() && signal != Some(libc::SIGTERM) {
            self.signal(libc::SIGTERM);
            status = self.wait(GRACE);
        }
        if status.is_none() {
            self.signal(libc::SIGKILL);
            status = self.child.wait().ok();
        }
        // What the server started and left behind ends with it.
        self.signal(libc::SIGKILL);
        Ended { status, signal }
    }

    fn wait(&mut self, grace: Duration) -> Option<ExitStatus> {
        let until = Instant::now() + grace;
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => return None,
            }
        }
    }
}

/// Passes each ending signal to the loop, as an event.
fn forward_signals(to: mpsc::Sender<Event>) -> anyhow::Result<()> {
    let mut signals =
        signal_hook::iterator::Signals::new(ENDING).context("cannot listen for signals")?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if to.send(Event::Signal(signal)).is_err() {
                return;
            }
        }
    });
    Ok(())
}

/// Writes each line where it goes; `false` when the client can no longer be written to.
fn write_all(out: &[Out], server: &mut Server, to_client: &mut impl Write) -> bool {
    for line in out {
        match line {
            Out::Server(bytes) => {
                // A server that stopped reading has exited or soon will: its end says why.
                if let Some(stdin) = &mut server.stdin {
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
