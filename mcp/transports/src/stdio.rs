//! The proxy over its own stdio: one session, whose client is the proxy's stdin and
//! stdout.

use crate::ended::Ended;
use crate::error::Error;
use crate::event::Event;
use crate::inbox::Inbox;
use crate::lines::{Ends, Lines};
use crate::outbox::{Feed, Outbox};
use crate::session::{Client, Session};
use crate::settings::Settings;
use crate::sources::Sources;
use reasons_host::Plugin;
use reasons_mcp::delivery::Part;
use reasons_mcp::jsonrpc::{self, Parsed};
use reasons_transform::Options;
use rustix::fd::AsFd;
use std::time::{Duration, Instant};

/// How long the proxy goes on answering once the server is gone: a client that sent its
/// `initialize` as the server exited still gets its answer, and one that sends without
/// end cannot keep the proxy.
const LINGER: Duration = Duration::from_secs(2);

/// Serves the one client on the proxy's stdio until its session ends. Every request gets
/// one answer (R19), whatever the server did: one that cannot be started, or that has
/// gone, has each request the client still sends answered with why, until the client
/// closes its end or [`LINGER`] has passed.
pub(crate) fn serve(
    plugin: &Plugin,
    options: &Options,
    settings: &Settings,
    feed: Feed,
    inbox: Inbox,
) -> Result<Ended, Error> {
    let mut client = Stdout(Outbox::at_once(std::io::stdout()));
    let mut sources = Sources::new(inbox);
    // A handle of its own, which the proxy's stdin outlives; taken before the server is
    // started, so that a proxy that has no stdin starts none.
    let stdin = (std::io::stdin().as_fd().try_clone_to_owned())
        .map_err(Error::system("cannot read its stdin"))?;
    let ends = Ends {
        over_cap: Event::ClientOverCap,
        closed: Event::ClientClosed,
    };
    let line = |line| Event::Client(Parsed::read(line));
    let stdin = Lines::new(stdin, settings.max_message, line, ends);
    let session = match Session::open(plugin, options, settings, feed.gated(client.0.backlog())) {
        Ok(session) => session,
        Err(error) => {
            sources.read(stdin);
            answer_until_closed(&mut sources, &mut client, &format!("reasons mcp: {error}"));
            client.0.drain(settings.write_timeout);
            return Err(error);
        }
    };
    // The client's lines wait for room in the server's stdin.
    sources.read(stdin.gated(Some(session.server.backlog())));
    let served = session.serve(&mut sources, &mut client);
    if served.client_open {
        let why = format!(
            "the MCP server is gone ({}); the request was not sent",
            served.why
        );
        answer_until_closed(&mut sources, &mut client, &why);
    }
    let ended = served.ended;
    // What the session said last (the answers to what waited, say) reaches the client.
    client.0.drain(settings.write_timeout);
    Ok(ended)
}

/// Answers each request the client sends with `why`, until it closes its end, [`LINGER`]
/// has passed, or a signal comes.
fn answer_until_closed(sources: &mut Sources, client: &mut Stdout, why: &str) {
    let until = Instant::now() + LINGER;
    loop {
        match sources.next(Some(until)) {
            Ok(Event::Client(line)) => {
                let answer = jsonrpc::unanswerable(&line, jsonrpc::INTERNAL_ERROR, why);
                if answer.is_some_and(|answer| !client.0.send(answer.as_bytes())) {
                    return;
                }
            }
            Ok(Event::ClientClosed | Event::ClientOverCap | Event::Signal(_)) | Err(_) => return,
            // The server's last words, if any: nobody is there to relay them for.
            Ok(_) => {}
        }
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
