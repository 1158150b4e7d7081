//! One client's session: the loop that feeds the core what each side and the clock
//! bring and writes what it says, until the client has gone and the server has
//! finished, the server has gone, or a signal ended it. Every transport runs its
//! sessions here.

use crate::audit_log::AuditLog;
use crate::ended::Ended;
use crate::error::Error;
use crate::event::{Ending, Event};
use crate::lines::{Ends, Lines, over_cap};
use crate::outbox::Feed;
use crate::say::say;
use crate::settings::{GRACE, Server, Settings};
use crate::sources::Sources;
use crate::telemetry::Telemetry;
use crate::upstream::{Http, Process, Upstream};
use reasons_host::Plugin;
use reasons_mcp::delivery::{About, Delivery, Part};
use reasons_mcp::jsonrpc::Parsed;
use reasons_mcp::{Audit, ComponentLayer, Now, Out, Proxy, jsonrpc, one_line};
use reasons_transform::Options;
use std::sync::mpsc::RecvTimeoutError;
use std::time::{Duration, Instant};

/// One client's session: the proxy, and the server it relays to.
pub(crate) struct Session {
    proxy: Proxy<ComponentLayer>,
    pub(crate) server: Upstream,
    /// What the server writes, when the loop reads it itself (a process's stdout).
    server_lines: Option<Lines>,
    /// What the session keeps of its calls and requests, for others.
    kept: Kept,
    max_message: usize,
    write_timeout: Duration,
}

/// Where what a session keeps goes.
struct Kept {
    /// The audit records, when the proxy keeps a log.
    log: Option<AuditLog>,
    /// Each request's span, when a collector is named.
    telemetry: Option<Telemetry>,
}

/// Where the lines for the client go.
pub(crate) trait Client {
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

impl Session {
    /// The layer, the audit and the server (started, or connected to) of one session;
    /// what the server sends waits for room where `events` is gated (the client's
    /// outbox), and goes to `events` when other threads bring it (over HTTP).
    pub(crate) fn open(
        plugin: &Plugin,
        options: &Options,
        settings: &Settings,
        events: Feed,
    ) -> Result<Session, Error> {
        let layer = ComponentLayer::new(plugin, options.clone())?;
        let log = settings.audit.as_deref().map(AuditLog::open).transpose()?;
        let audit = Audit::new(log.is_some(), settings.stats).named(settings.name.clone());
        let mut over_http = false;
        let mut server_lines = None;
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
                let line = |line| Event::Server(Parsed::read(line));
                let lines = Lines::new(stdout.into(), settings.max_message, line, ends);
                server_lines = Some(lines.gated(events.gate()));
                Upstream::Process(process)
            }
            Server::Url(remote) => {
                over_http = true;
                Upstream::Http(Http::connect(remote.clone(), events, settings.max_message))
            }
        };
        let mut proxy = Proxy::new(layer, audit, now());
        if over_http {
            proxy = proxy.over_http();
        }
        if settings.telemetry.is_some() {
            proxy = proxy.with_telemetry();
        }
        Ok(Session {
            proxy,
            server,
            server_lines,
            kept: Kept {
                log,
                telemetry: settings.telemetry.clone(),
            },
            max_message: settings.max_message,
            write_timeout: settings.write_timeout,
        })
    }

    /// Runs the session on the events of `sources`, and what its server writes, until
    /// the client has gone and the server has finished, the server has gone, or a signal
    /// ended it.
    pub(crate) fn serve(self, sources: &mut Sources, client: &mut dyn Client) -> Served {
        let Session {
            mut proxy,
            mut server,
            server_lines,
            mut kept,
            max_message,
            write_timeout,
        } = self;
        server_lines
            .into_iter()
            .for_each(|lines| sources.read(lines));
        let mut client_closed = false;
        // Why the server was ended, when the proxy ended it for a cause of its own.
        let mut cause: Option<String> = None;
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
                write_all(&out, &mut server, client, &mut kept);
                cause = Some(why);
                break server.end(Ending::Overdue);
            }
            let wake = proxy.wake_at().into_iter().chain(grace_ends);
            let event = sources.next(wake.chain(client_gives_up).chain(server_gives_up).min());
            let out = match event {
                Ok(Event::Client(line)) => proxy.client_read(line, now()),
                Ok(Event::Server(line)) => proxy.server_read(line, now()),
                Ok(Event::ServerAnswered { line, exchange }) => {
                    proxy.server_answered(line, exchange, now())
                }
                Ok(Event::Unanswered { exchange, why }) => proxy.unanswered(exchange, &why, now()),
                Ok(Event::SessionLost {
                    exchange,
                    why,
                    first,
                }) => proxy.session_lost(exchange, &why, first, now()),
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
                    let why = format!("it sent {}", over_cap(max_message));
                    let out = proxy.server_gone(&why, now());
                    write_all(&out, &mut server, client, &mut kept);
                    cause = Some(why);
                    break server.end(Ending::Overdue);
                }
                Ok(Event::Signal(signal)) => break server.end(Ending::Signal(signal)),
                Err(RecvTimeoutError::Timeout) => proxy.tick(now()),
                Err(RecvTimeoutError::Disconnected) => break server.end(Ending::Closed),
            };
            if !write_all(&out, &mut server, client, &mut kept) {
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
        write_all(&out, &mut server, client, &mut kept);
        if let Some(failure) = ended.failure() {
            say(&format!("the MCP server {failure}"));
        }
        if proxy.audit().stats_wanted() {
            eprint!("{}", proxy.audit().stats());
            // The tools that ask why themselves: the model is asked twice there.
            let param = proxy.param().to_string();
            for note in reasons_host::asks_why::notes(&proxy.declared(), &param) {
                say(&note);
            }
        }
        let signalled = matches!(
            ended,
            Ended::Process {
                signal: Some(_),
                ..
            }
        ) || matches!(ended, Ended::Remote { signal: Some(_) });
        Served {
            why: cause.unwrap_or_else(|| ended.describe()),
            client_open: !client_closed && !signalled,
            ended,
        }
    }
}

/// How a session ended: how its server did, why, and whether the client still has its
/// end open (and may send requests no server will answer).
pub(crate) struct Served {
    pub(crate) ended: Ended,
    pub(crate) why: String,
    pub(crate) client_open: bool,
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

/// Writes each line where it goes, as one line ([`one_line`]); `false` when the client
/// can no longer be written to.
fn write_all(out: &[Out], server: &mut Upstream, client: &mut dyn Client, kept: &mut Kept) -> bool {
    for line in out {
        match line {
            Out::Server { line, outline } => server.send(&one_line(line), outline),
            Out::Note(note) => say(note),
            Out::Learnt(learnt) => server.learnt(learnt),
            Out::Record(record) => kept.log.iter_mut().for_each(|log| log.append(record)),
            Out::Span(span) => kept.telemetry.iter().for_each(|to| to.span(span.clone())),
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
