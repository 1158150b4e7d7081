//! What one proxy runs ([`Settings`]), which the `reasons mcp` command fills from its
//! flags, and the bounds every transport keeps.

use crate::telemetry::Telemetry;
use crate::upstream::Remote;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// How long the server has, at each step of its shutdown, before the next: once its
/// stdin is closed, then once it was sent SIGTERM (after which it gets SIGKILL).
pub(crate) const GRACE: Duration = Duration::from_secs(3);

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
