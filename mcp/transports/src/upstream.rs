//! The server the proxy relays to: a command it starts and speaks to over stdio, or a
//! URL it speaks to over Streamable HTTP. Either way what the server sends comes back to
//! the loop as `Event::Server` lines, so the proxy cannot tell the two apart.

mod headers;
mod http;
mod process;
mod sse;

use crate::{Ended, Ending};

pub use http::{DEFAULT_READ_TIMEOUT_SECS, Http, Remote};
pub use process::Process;

/// The server, however it is reached.
pub enum Upstream {
    /// A child process.
    Process(Process),
    /// An MCP endpoint.
    Http(Http),
}

impl Upstream {
    /// Sends one message (a line, without its `\n`).
    pub fn send(&mut self, message: &[u8]) {
        match self {
            Upstream::Process(process) => process.send(message),
            Upstream::Http(http) => http.send(message),
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
