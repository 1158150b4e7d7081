//! The server the proxy relays to: a command it starts and speaks to over stdio
//! (`stdio.rs`), or a URL it speaks to over Streamable HTTP (`http.rs`, and its legacy
//! HTTP+SSE mode, `http/legacy.rs`). Either way what the server sends comes back to
//! the loop as `Event::Server` lines, so the proxy cannot tell the two apart; over HTTP,
//! the end of each POST's answer comes too (`Event::Unanswered`), so that the proxy
//! answers what it did not answer.

mod http;
mod stdio;

use crate::ended::Ended;
use crate::event::Ending;
use crate::outbox::Backlog;
use reasons_mcp::{Learnt, Outline};
use std::io::Read;
use std::time::Instant;

pub use http::{DEFAULT_READ_TIMEOUT_SECS, Http, NEEDS_SIGN_IN, Remote};
pub(crate) use reasons_mcp::shown::url as shown;
pub use stdio::Process;

/// The server, however it is reached.
pub enum Upstream {
    /// A child process.
    Process(Process),
    /// An MCP endpoint.
    Http(Http),
}

impl Upstream {
    /// Sends one message (a line, without its `\n`), outlined by the proxy that read it.
    pub fn send(&mut self, message: &[u8], outline: &Outline) {
        match self {
            Upstream::Process(process) => process.send(message),
            Upstream::Http(http) => http.send(message, outline),
        }
    }

    /// Keeps what the server said that later requests carry.
    pub fn learnt(&mut self, learnt: &Learnt) {
        match self {
            // A process carries nothing beside its lines.
            Upstream::Process(_) => {}
            Upstream::Http(http) => http.learnt(learnt),
        }
    }

    /// What waits to reach the server: the client is not read from while it is over its
    /// budget.
    pub fn backlog(&self) -> Backlog {
        match self {
            Upstream::Process(process) => process.backlog(),
            Upstream::Http(http) => http.backlog(),
        }
    }

    /// Since when the server has not taken a line the proxy is writing to it, if it has
    /// one. A URL's requests have their own timeout (`Remote::read_timeout`) instead.
    pub fn stalled_since(&self) -> Option<Instant> {
        match self {
            Upstream::Process(process) => process.stalled_since(),
            Upstream::Http(_) => None,
        }
    }

    /// Tells the server the session is over. `true` when nothing more can come from it
    /// (an HTTP session, once ended); `false` when it may still answer until it exits.
    pub fn close(&mut self) -> bool {
        match self {
            Upstream::Process(process) => {
                process.close_stdin();
                false
            }
            Upstream::Http(http) => {
                http.close();
                true
            }
        }
    }

    /// Ends the server, as `how` says.
    pub fn end(&mut self, how: Ending) -> Ended {
        match self {
            Upstream::Process(process) => process.end(how),
            Upstream::Http(http) => http.end(how),
        }
    }
}

/// `body` read as an event stream, for as long as it goes on.
fn event_stream(body: ureq::Body) -> Timed<impl Read> {
    Timed(body.into_with_config().limit(u64::MAX).reader())
}

/// A response body whose timeouts read as `ErrorKind::TimedOut`, as the SSE reader knows
/// a silent server: ureq wraps its own in the reader's error.
struct Timed<R>(R);

impl<R: Read> Read for Timed<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.0.read(buf).map_err(|error| {
            let timeout = error
                .get_ref()
                .and_then(|inner| inner.downcast_ref::<ureq::Error>())
                .is_some_and(|inner| matches!(inner, ureq::Error::Timeout(_)));
            match timeout {
                true => std::io::Error::new(std::io::ErrorKind::TimedOut, error),
                false => error,
            }
        })
    }
}
