//! `reasons mcp (-- <server command...> | --url URL)`: the reasons layer in front of any
//! MCP server, over stdio or Streamable HTTP. To the client it is the server; to the
//! server it is the client.
//!
//! Threads read the client's stream and the server's (its stdout, or what its HTTP
//! answers carry), another turns signals into events; one loop feeds them to the `Proxy`
//! and writes what it says, so the order of each stream is kept. A server the proxy
//! starts runs in a process group of its own, which the proxy signals and, if it must,
//! kills: the server never outlives the proxy (R20).

mod error;
mod front;
mod outbox;
mod say;
mod signin;
mod upstream;

use outbox::{Feed, Outbox};
use reasons_host::Plugin;
use reasons_mcp::delivery::{About, Delivery, Part};
use reasons_mcp::jsonrpc::{Parsed, Refusal};
use reasons_mcp::{Audit, ComponentLayer, Now, Out, Proxy, jsonrpc, one_line};
use reasons_transform::Options;
use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::ExitStatus;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};
use upstream::{Http, Process, Upstream};

pub use error::Error;
pub use say::say;
pub use signin::{Given, Settings as SignInSettings, SignIn};
pub use upstream::{DEFAULT_READ_TIMEOUT_SECS, NEEDS_SIGN_IN, Remote};

/// How long the server has, at each step of its shutdown, before the next: once its
/// stdin is closed, then once it was sent SIGTERM (after which it gets SIGKILL).
const GRACE: Duration = Duration::from_secs(3);

/// The signals that end the proxy, each passed on to the server first.
const ENDING: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Where the server is.
#[derive(Clone)]
pub enum Server {
    /// A command and its arguments, started by the proxy and spoken to over stdio.
    Command(Vec<OsString>),
    /// A URL spoken to over Streamable HTTP.
    Url(Remote),
}

/// What `reasons mcp` was asked to do.
#[derive(Clone)]
pub struct Settings {
    /// The server.
    pub server: Server,
    /// Where to append one JSON line per `tools/call`.
    pub audit: Option<PathBuf>,
    /// Whether to print calls per tool, and how many carried a reason, on exit.
    pub stats: bool,
    /// The server's name in the client's config, which each audit record carries.
    pub name: Option<String>,
    /// Serve clients over Streamable HTTP instead of stdio.
    pub listen: Option<Listen>,
    /// The most bytes one message may have, from the client or the server, on every
    /// transport (`--max-message-mib`): what bounds the proxy's memory against a peer
    /// that writes without end.
    pub max_message: usize,
    /// How long a side may leave a line the proxy writes to it untaken
    /// (`--write-timeout`): then its session is ended, and what it would not read is
    /// dropped, never held without end.
    pub write_timeout: Duration,
}

/// The default of `--write-timeout`, in seconds: far past any pause of a client or server
/// that reads, soon enough that one that stopped is not waited for all day.
pub const DEFAULT_WRITE_TIMEOUT_SECS: u16 = 60;

/// The default of `--max-message-mib`: far above any real message (a 70 MiB call is
/// relayed), far below what would exhaust a machine.
pub const DEFAULT_MAX_MESSAGE_MIB: u16 = 256;

/// Why a message past the cap was not taken.
fn over_cap(max_message: usize) -> String {
    format!(
        "a message is over the {} MiB cap on one message (--max-message-mib); its stream was ended",
        max_message >> 20
    )
}

/// Where and how the proxy serves clients over Streamable HTTP (`front.rs`).
#[derive(Clone, Debug)]
pub struct Listen {
    /// A loopback address and port.
    pub address: String,
    /// The most legacy sessions open at once: each starts a server of its own.
    pub max_sessions: usize,
    /// The origins of the pages that may call it besides its own (`--allow-origin`).
    pub allow_origins: Vec<String>,
    /// Where the token every client sends is kept (`--token-file`); without it one is
    /// drawn at start and printed with the URL.
    pub token_file: Option<PathBuf>,
}

/// How the session ended, which the proxy's exit status repeats.
#[derive(Debug)]
pub enum Ended {
    /// A server the proxy started: its exit status, when it could be waited for, and the
    /// signal that ended the proxy, if one did.
    Process {
        /// The server's exit status.
        status: Option<ExitStatus>,
        /// The signal the proxy got.
        signal: Option<i32>,
    },
    /// A server at a URL: the session was closed, or a signal ended the proxy.
    Remote {
        /// The signal the proxy got.
        signal: Option<i32>,
    },
}

impl Ended {
    /// The proxy's exit code: the server's own code, or 128 + the signal that ended it
    /// (or the proxy), as a shell reports it.
    pub fn code(&self) -> u8 {
        let code = match *self {
            Ended::Process {
                signal: Some(signal),
                ..
            }
            | Ended::Remote {
                signal: Some(signal),
            } => 128 + signal,
            Ended::Remote { signal: None } => 0,
            Ended::Process {
                status: Some(status),
                ..
            } => match (status.code(), status.signal()) {
                (Some(code), _) => code,
                (None, Some(signal)) => 128 + signal,
                (None, None) => 1,
            },
            Ended::Process { status: None, .. } => 1,
        };
        u8::try_from(code).unwrap_or(1)
    }

    /// What ended the server, when it did not end well, for the human on stderr. A
    /// server that ends as the signal the proxy passed on asks (it exits, or the signal
    /// ends it) ended well: that is how clients close a stdio server.
    fn failure(&self) -> Option<String> {
        match *self {
            Ended::Process {
                status: Some(status),
                signal: Some(signal),
            } if status.success()
                || status.signal() == Some(signal)
                || status.code() == Some(128 + signal) =>
            {
                None
            }
            Ended::Process {
                status: Some(status),
                ..
            } if status.success() => None,
            Ended::Remote { .. } => None,
            _ => Some(self.describe()),
        }
    }

    /// How the server ended, for the requests it never answered.
    fn describe(&self) -> String {
        match *self {
            Ended::Process {
                status,
                signal: Some(signal),
            } => format!(
                "was ended after the proxy got signal {signal} ({})",
                status.map_or("not waited for".into(), |status| status.to_string())
            ),
            Ended::Process {
                status: Some(status),
                ..
            } if !status.success() => format!("exited ({status})"),
            Ended::Process { status: None, .. } => "could not be waited for".into(),
            Ended::Process { .. } => "exited".into(),
            Ended::Remote {
                signal: Some(signal),
            } => format!("session was ended after the proxy got signal {signal}"),
            Ended::Remote { signal: None } => "session was closed".into(),
        }
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

/// What the loop waits for.
enum Event {
    /// A line from the client, read where it came in (its reader's thread, the HTTP
    /// front's handler), or the refusal of the whole of it.
    Client(Result<Parsed, Refusal>),
    ClientClosed,
    /// The client sent a line past the cap: its stream was ended there.
    ClientOverCap,
    Server(Vec<u8>),
    /// A line in the body of an HTTP error the server answered line `exchange` with.
    ServerAnswered {
        line: Vec<u8>,
        exchange: u64,
    },
    /// The server will not answer line `exchange` any more, for this reason.
    Unanswered {
        exchange: u64,
        why: String,
    },
    ServerClosed,
    /// The server sent a line past the cap: its stream was ended there.
    ServerOverCap,
    Signal(i32),
}

/// Runs the proxy until the client has gone and the server has finished, the server has
/// gone, or a signal ended it. Fails only when it cannot start.
pub fn run(plugin: &Plugin, options: Options, settings: Settings) -> Result<Ended, Error> {
    let (feed, inbox) = outbox::channel();
    // Registered before the server starts, so that no signal falls between.
    forward_signals(feed.clone())?;
    if let Some(listen) = &settings.listen {
        return front::serve(listen, plugin, options, &settings, inbox);
    }
    let mut client = Stdout(Outbox::new(std::io::stdout()));
    let session = Session::open(plugin, &options, &settings, feed.gated(client.0.backlog()))?;
    let ends = Ends {
        over_cap: Event::ClientOverCap,
        closed: Event::ClientClosed,
    };
    read_lines(
        std::io::stdin(),
        settings.max_message,
        feed.gated(session.server.backlog()),
        |line| Event::Client(Parsed::read(line)),
        ends,
    );
    let ended = session.serve(&inbox, &mut client);
    // What the session said last (the answers to what waited, say) reaches the client.
    client.0.drain(settings.write_timeout);
    Ok(ended)
}

/// One client's session: the proxy, and the server it relays to.
struct Session {
    proxy: Proxy<ComponentLayer>,
    server: Upstream,
    max_message: usize,
    write_timeout: Duration,
}

/// Where the lines for the client go.
trait Client {
    /// Writes one line, whose messages are `parts`; `false` when the client can no
    /// longer be written to.
    fn write(&mut self, line: &[u8], parts: &[Part]) -> bool;

    /// Since when the client has not taken a line the proxy is writing to it, if it has
    /// one; `None` for a client that never holds the session up (the HTTP front's
    /// streams, each bounded on its own).
    fn stalled_since(&self) -> Option<Instant> {
        None
    }
}

/// A client on the proxy's stdio.
struct Stdout(Outbox);

impl Client for Stdout {
    fn write(&mut self, line: &[u8], _: &[Part]) -> bool {
        self.0.send(line)
    }

    fn stalled_since(&self) -> Option<Instant> {
        self.0.stalled_since()
    }
}

impl Session {
    /// The layer, the audit and the server (started, or connected to) of one session;
    /// what the server sends goes to `events`, gated by the client's outbox.
    fn open(
        plugin: &Plugin,
        options: &Options,
        settings: &Settings,
        events: Feed,
    ) -> Result<Session, Error> {
        let layer = ComponentLayer::new(plugin, options.clone())?;
        let log = settings.audit.as_deref().map(audit_log).transpose()?;
        let audit = Audit::new(log, settings.stats).named(settings.name.clone());
        let mut over_http = false;
        let server = match &settings.server {
            Server::Command(command) => {
                let (program, arguments) = command.split_first().ok_or_else(|| {
                    Error::Setting("no server command: `reasons mcp -- <server command...>`".into())
                })?;
                let (process, stdout) = Process::start(program, arguments)?;
                let ends = Ends {
                    over_cap: Event::ServerOverCap,
                    closed: Event::ServerClosed,
                };
                read_lines(stdout, settings.max_message, events, Event::Server, ends);
                Upstream::Process(process)
            }
            Server::Url(remote) => {
                over_http = true;
                Upstream::Http(Http::connect(remote.clone(), events, settings.max_message))
            }
        };
        let proxy = Proxy::new(layer, audit, now());
        Ok(Session {
            proxy: if over_http { proxy.over_http() } else { proxy },
            server,
            max_message: settings.max_message,
            write_timeout: settings.write_timeout,
        })
    }

    /// Runs the session on the events of `inbox` until the client has gone and the
    /// server has finished, the server has gone, or a signal ended it.
    fn serve(self, inbox: &mpsc::Receiver<Event>, client: &mut dyn Client) -> Ended {
        let Session {
            mut proxy,
            mut server,
            max_message,
            write_timeout,
        } = self;
        let mut client_closed = false;
        // When the server was told the session is over: it has a grace period to exit.
        let mut closed_at: Option<Instant> = None;
        let ended = loop {
            let grace_ends = closed_at.map(|at| at + GRACE);
            if grace_ends.is_some_and(|at| Instant::now() >= at) {
                break server.end(Ending::Overdue);
            }
            let client_gives_up = client.stalled_since().map(|at| at + write_timeout);
            if client_gives_up.is_some_and(|at| Instant::now() >= at) {
                say(&stalled("the client", "stdout", write_timeout));
                break server.end(Ending::Closed);
            }
            let server_gives_up = server.stalled_since().map(|at| at + write_timeout);
            if server_gives_up.is_some_and(|at| Instant::now() >= at) {
                // What waits is answered with why; the server, which may be stuck
                // anywhere, is ended at once.
                let why = stalled("it", "stdin", write_timeout);
                let out = proxy.server_gone(&why, now());
                write_all(&out, &mut server, client);
                break server.end(Ending::Overdue);
            }
            let wake = proxy.wake_at().into_iter().chain(grace_ends);
            let event = match wake.chain(client_gives_up).chain(server_gives_up).min() {
                None => inbox.recv().map_err(|_| RecvTimeoutError::Disconnected),
                Some(at) => inbox.recv_timeout(at.saturating_duration_since(Instant::now())),
            };
            let out = match event {
                Ok(Event::Client(line)) => proxy.client_read(line, now()),
                Ok(Event::Server(line)) => proxy.server_sent(line, now()),
                Ok(Event::ServerAnswered { line, exchange }) => {
                    proxy.server_answered(line, exchange, now())
                }
                Ok(Event::Unanswered { exchange, why }) => proxy.unanswered(exchange, &why, now()),
                Ok(Event::ClientClosed) => {
                    client_closed = true;
                    proxy.client_gone(now())
                }
                Ok(Event::ClientOverCap) => {
                    // Said under no id: which request it was could not be read.
                    let why = format!("reasons mcp: {}", over_cap(max_message));
                    let error = jsonrpc::error(None, jsonrpc::INVALID_REQUEST, &why);
                    let error = Delivery::one(error.into_bytes(), About::Other);
                    client.write(&error.line, &error.parts);
                    client_closed = true;
                    proxy.client_gone(now())
                }
                Ok(Event::ServerClosed) => break server.end(Ending::Closed),
                Ok(Event::ServerOverCap) => {
                    // What waits is answered with why, and the server is ended at once:
                    // its stream can no longer be read.
                    let out =
                        proxy.server_gone(&format!("it sent {}", over_cap(max_message)), now());
                    write_all(&out, &mut server, client);
                    break server.end(Ending::Overdue);
                }
                Ok(Event::Signal(signal)) => break server.end(Ending::Signal(signal)),
                Err(RecvTimeoutError::Timeout) => proxy.tick(now()),
                Err(RecvTimeoutError::Disconnected) => break server.end(Ending::Closed),
            };
            if !write_all(&out, &mut server, client) {
                // The client can no longer read: nothing more can be answered.
                break server.end(Ending::Closed);
            }
            if client_closed && proxy.idle() && closed_at.is_none() {
                // Telling the server the session is over (closing its stdin, or ending
                // the HTTP session); a process may still answer what it has, which goes
                // on being relayed until it exits.
                if server.close() {
                    break server.end(Ending::Closed);
                }
                closed_at = Some(Instant::now());
            }
        };
        let out = proxy.server_gone(&ended.describe(), now());
        write_all(&out, &mut server, client);
        if let Some(failure) = ended.failure() {
            say(&format!("the MCP server {failure}"));
        }
        if proxy.audit().stats_wanted() {
            eprint!("{}", proxy.audit().stats());
        }
        ended
    }
}

/// Why a side's session was ended: it took nothing written to its `stream` for `waited`.
fn stalled(side: &str, stream: &str, waited: Duration) -> String {
    format!(
        "{side} took nothing the proxy wrote to its {stream} for {} s (--write-timeout): \
         the session was ended",
        waited.as_secs()
    )
}

/// The time, for the core, which reads no clock of its own.
fn now() -> Now {
    Now {
        instant: Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

/// The audit log at `path`, appended to; it holds the model's reasons, so only its owner
/// may read it.
fn audit_log(path: &std::path::Path) -> Result<Box<dyn Write + Send>, Error> {
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::File::options()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(Error::system(format!(
            "cannot open the audit log {}",
            path.display()
        )))?;
    Ok(Box::new(file))
}

/// Passes each ending signal to the loop, as an event.
fn forward_signals(to: Feed) -> Result<(), Error> {
    let mut signals = signal_hook::iterator::Signals::new(ENDING)
        .map_err(Error::system("cannot listen for signals"))?;
    std::thread::spawn(move || {
        for signal in signals.forever() {
            if !to.control(Event::Signal(signal)) {
                return;
            }
        }
    });
    Ok(())
}

/// Writes each line where it goes, as one line ([`one_line`]); `false` when the client
/// can no longer be written to.
fn write_all(out: &[Out], server: &mut Upstream, client: &mut dyn Client) -> bool {
    for line in out {
        match line {
            Out::Server { line, outline } => server.send(&one_line(line), outline),
            Out::Note(note) => say(note),
            Out::Learnt(learnt) => server.learnt(learnt),
            Out::Client(Delivery { line, parts }) => {
                // A line break made a space keeps every part where it was.
                if !client.write(&one_line(line), parts) {
                    return false;
                }
            }
        }
    }
    true
}

/// How a stream of lines ends: past the cap, or closed.
struct Ends {
    over_cap: Event,
    closed: Event,
}

/// Sends each line of `from`, without its `\n`, as `line(...)`, then how the stream
/// ended. A line longer than `cap` is never held whole: reading stops past the cap, and
/// the stream ends there. Each line waits for room where it goes before the next is read
/// (`outbox.rs`).
fn read_lines(
    from: impl Read + Send + 'static,
    cap: usize,
    to: Feed,
    line: fn(Vec<u8>) -> Event,
    ends: Ends,
) {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        // At most the cap and its line break.
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        let ended = loop {
            let mut buffer = Vec::new();
            match (&mut from).take(limit).read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break ends.closed,
                Ok(_) => {
                    if buffer.last() == Some(&b'\n') {
                        buffer.pop();
                    } else if buffer.len() > cap {
                        break ends.over_cap;
                    }
                    if !to.line(line(buffer)) {
                        return;
                    }
                }
            }
        };
        to.control(ended);
    });
}
