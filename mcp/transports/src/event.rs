//! What a session's loop waits for, and why its server is being ended: the words every
//! side's reader, the HTTP drivers and the signal thread speak to the loop in, below all
//! of them.

use reasons_mcp::jsonrpc::{Parsed, Refusal};

/// Why the server is being ended.
pub(crate) enum Ending {
    /// Its stdout closed, or the client's: it has a grace period to exit.
    Closed,
    /// Its stdin was closed a grace period ago and it is still running.
    Overdue,
    /// The proxy got this signal.
    Signal(i32),
}

/// What the loop waits for.
pub(crate) enum Event {
    /// A line from the client, read where it came in (its reader's thread, the HTTP
    /// front's handler), or the refusal of the whole of it.
    Client(Result<Parsed, Refusal>),
    ClientClosed,
    /// The client sent a line past the cap: its stream was ended there.
    ClientOverCap,
    /// A line from the server, read where it came in (its reader's thread, the HTTP
    /// upstream's), or the refusal of the whole of it.
    Server(Result<Parsed, Refusal>),
    /// A line in the body of an HTTP error the server answered line `exchange` with,
    /// read.
    ServerAnswered {
        line: Result<Parsed, Refusal>,
        exchange: u64,
    },
    /// The server will not answer line `exchange` any more, for this reason.
    Unanswered {
        exchange: u64,
        why: String,
    },
    /// The server forgot the session line `exchange` went in (HTTP 404), as `why` says;
    /// `first`: with this line (see [`Proxy::session_lost`]).
    SessionLost {
        exchange: u64,
        why: String,
        first: bool,
    },
    ServerClosed,
    /// The server sent a line past the cap: its stream was ended there.
    ServerOverCap,
    Signal(i32),
}
