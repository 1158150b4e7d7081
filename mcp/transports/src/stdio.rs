//! The proxy over its own stdio: one session, whose client is the proxy's stdin and
//! stdout.

use crate::lines::{Ends, read_lines};
use crate::outbox::{Feed, Outbox};
use crate::session::{Client, Event, Session};
use crate::{Ended, Error, Settings};
use reasons_host::Plugin;
use reasons_mcp::delivery::Part;
use reasons_mcp::jsonrpc::Parsed;
use reasons_transform::Options;
use std::sync::mpsc;
use std::time::Instant;

/// Serves the one client on the proxy's stdio until its session ends.
pub(crate) fn serve(
    plugin: &Plugin,
    options: &Options,
    settings: &Settings,
    feed: Feed,
    inbox: &mpsc::Receiver<Event>,
) -> Result<Ended, Error> {
    let mut client = Stdout(Outbox::at_once(std::io::stdout()));
    let session = Session::open(plugin, options, settings, feed.gated(client.0.backlog()))?;
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
    let ended = session.serve(inbox, &mut client);
    // What the session said last (the answers to what waited, say) reaches the client.
    client.0.drain(settings.write_timeout);
    Ok(ended)
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
