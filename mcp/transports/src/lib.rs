//! The reasons layer in front of any MCP server: the transports that drive the core
//! (`reasons_mcp`), each a room of its own.
//!
//! | transport | to the client | to the server | where |
//! |---|---|---|---|
//! | stdio proxy | the proxy's stdin and stdout | a process it starts, over its stdio | `stdio.rs`, `upstream/stdio.rs` |
//! | stdio proxy to a URL | the proxy's stdin and stdout | Streamable HTTP (or the legacy HTTP+SSE) | `stdio.rs`, `upstream/http.rs`, `upstream/legacy.rs` |
//! | HTTP front | Streamable HTTP on a loopback port, and the legacy HTTP+SSE | either of the above | `front.rs`, `front/` |
//!
//! Every transport feeds one loop per session (`session.rs`): threads read the client's
//! stream and the server's (`lines.rs` for a byte stream, the HTTP drivers for theirs),
//! another turns signals into events, and the loop feeds them to the `Proxy` and writes
//! what it says, so the order of each stream is kept. What one side does not take waits
//! in a bounded outbox (`outbox.rs`). A server the proxy starts runs in a process group
//! of its own, which the proxy signals and, if it must, kills: the server never outlives
//! the proxy (R20). Signing in to a server that asks is `signin.rs`; what the proxy
//! tells the human, `say.rs`; every HTTP client it makes, one that follows no redirect,
//! `agent.rs`.
//!
//! What to run is [`Settings`], which the `reasons mcp` command fills from its flags.

#![deny(missing_docs)]

mod agent;
mod audit_log;
mod ended;
mod error;
mod front;
mod lines;
mod outbox;
mod say;
mod session;
mod signin;
mod stdio;
mod telemetry;
mod upstream;

use outbox::Feed;
use reasons_host::Plugin;
use reasons_transform::Options;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

pub use ended::Ended;
pub use error::Error;
pub use say::say;
pub use signin::{Given, Settings as SignInSettings, SignIn};
pub use telemetry::Telemetry;
pub use upstream::{DEFAULT_READ_TIMEOUT_SECS, NEEDS_SIGN_IN, Remote};

use lines::over_cap;
use session::{Client, Ending, Event, Session};

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

/// What one proxy runs: its server, its clients' transport, its records and its bounds.
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
    /// transport (`Settings::max_message`): what bounds the proxy's memory against a peer
    /// that writes without end.
    pub max_message: usize,
    /// How long a side may leave a line the proxy writes to it untaken
    /// (`Settings::write_timeout`): then its session is ended, and what it would not read is
    /// dropped, never held without end.
    pub write_timeout: Duration,
    /// Where each request's span and the metrics go, when an OpenTelemetry collector is
    /// named (`OTEL_EXPORTER_OTLP_*`).
    pub telemetry: Option<Telemetry>,
}

/// The default write timeout (`Settings::write_timeout`), in seconds: far past any pause of a client or server
/// that reads, soon enough that one that stopped is not waited for all day.
pub const DEFAULT_WRITE_TIMEOUT_SECS: u16 = 60;

/// The default cap on one message (`Settings::max_message`), in MiB: far above any real message (a 70 MiB call is
/// relayed), far below what would exhaust a machine.
pub const DEFAULT_MAX_MESSAGE_MIB: u16 = 256;

/// Where and how the proxy serves clients over Streamable HTTP (`front.rs`).
#[derive(Clone, Debug)]
pub struct Listen {
    /// A loopback address and port.
    pub address: String,
    /// The most legacy sessions open at once: each starts a server of its own.
    pub max_sessions: usize,
    /// The origins of the pages that may call it besides its own.
    pub allow_origins: Vec<String>,
    /// Where the token every client sends is kept (`Listen::token_file`); without it one is
    /// drawn at start and printed with the URL.
    pub token_file: Option<PathBuf>,
}

/// Runs the proxy until the client has gone and the server has finished, the server has
/// gone, or a signal ended it. Fails only when it cannot start.
pub fn run(plugin: &Plugin, options: Options, settings: Settings) -> Result<Ended, Error> {
    let (feed, inbox) = outbox::channel();
    // Registered before the server starts, so that no signal falls between.
    forward_signals(feed.clone())?;
    match &settings.listen {
        Some(listen) => front::serve(listen, plugin, options, &settings, inbox),
        None => stdio::serve(plugin, &options, &settings, feed, &inbox),
    }
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
