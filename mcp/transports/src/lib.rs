//! The reasons layer in front of any MCP server: the transports that drive the core
//! (`reasons_mcp`), each a room of its own.
//!
//! | transport | to the client | to the server | where |
//! |---|---|---|---|
//! | stdio proxy | the proxy's stdin and stdout | a process it starts, over its stdio | `stdio.rs`, `upstream/stdio.rs` |
//! | stdio proxy to a URL | the proxy's stdin and stdout | Streamable HTTP (or the legacy HTTP+SSE) | `stdio.rs`, `upstream/http.rs`, `upstream/legacy.rs` |
//! | HTTP front | Streamable HTTP on a loopback port, and the legacy HTTP+SSE | either of the above | `front.rs`, `front/` |
//!
//! Every transport feeds one loop per session (`session.rs`), on one thread: it reads
//! the byte streams of either side itself (`lines.rs`: the client's stdin, a server's
//! stdout) and its inbox (`inbox.rs`: what the HTTP drivers, the front's handlers and the
//! signal thread bring), all waited on in one `poll` (`sources.rs`), feeds each to the
//! `Proxy` where it arrives and writes what it says, so the order of each stream is
//! kept. What one side does not take waits in a bounded outbox (`outbox.rs`), and the
//! other side is not read meanwhile. A server the proxy starts runs in a process group
//! of its own, which the proxy signals and, if it must, kills: the server never outlives
//! the proxy (R20). Signing in to a server that asks is `signin.rs`; what the proxy
//! tells the human, `say.rs`; every HTTP request it sends, and the secrets each
//! carries (to their own origin alone, never in clear off this machine), `outgoing.rs`.
//!
//! What to run is [`Settings`] (`settings.rs`), which the `reasons mcp` command fills from
//! its flags. It and the loop's words (`event.rs`: what the loop waits for, why a server
//! is ended) lie below every room, which imports each name from the room that defines it.

#![deny(missing_docs)]

mod audit_log;
mod ended;
mod error;
mod event;
mod front;
mod inbox;
mod lines;
mod outbox;
mod outgoing;
mod say;
mod session;
mod settings;
mod signin;
mod sources;
mod stdio;
mod telemetry;
mod upstream;

use event::Event;
use outbox::Feed;
use reasons_host::Plugin;
use reasons_transform::Options;

pub use ended::Ended;
pub use error::Error;
pub use say::say;
pub use settings::{DEFAULT_MAX_MESSAGE_MIB, DEFAULT_WRITE_TIMEOUT_SECS, Listen, Server, Settings};
pub use signin::{Given, Settings as SignInSettings, SignIn};
pub use telemetry::Telemetry;
pub use upstream::{DEFAULT_READ_TIMEOUT_SECS, NEEDS_SIGN_IN, Remote};

/// The signals that end the proxy, each passed on to the server first.
const ENDING: [i32; 3] = [libc::SIGTERM, libc::SIGINT, libc::SIGHUP];

/// Runs the proxy until the client has gone and the server has finished, the server has
/// gone, or a signal ended it. Fails only when it cannot start.
pub fn run(plugin: &Plugin, options: Options, settings: Settings) -> Result<Ended, Error> {
    let (feed, inbox) = outbox::channel();
    // Registered before the server starts, so that no signal falls between.
    forward_signals(feed.clone())?;
    match &settings.listen {
        Some(listen) => front::serve(listen, plugin, options, &settings, inbox),
        None => stdio::serve(plugin, &options, &settings, feed, inbox),
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
