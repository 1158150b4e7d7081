//! A server reached over HTTP that forgets the session (HTTP 404 for its id: it
//! restarted, or expired the session) did not run the request it refused, and the client
//! never chose to leave: the proxy starts a new session with the client's own
//! `initialize`, lists the server again, and sends again what the old session refused,
//! each call classified anew against the new listing (R18: the new server's tools may
//! not be the old one's), so that the client's session goes on.

use super::{Handshake, Kind, Out, Proxy};
use crate::Now;
use crate::jsonrpc::{self, Id, Line, Parsed};
use crate::layer::Layer;
use crate::outline::Outline;
use crate::proxy::hold::Held;

/// What a session of the client's needs to be started again.
#[derive(Default)]
pub(super) struct Again {
    /// The client's `initialize`, as it came, once the server answered it: what a
    /// session starts with again (none in a session without one).
    pub(super) initialize: Option<String>,
    /// The proxy's own `initialize` under way: what the client sends waits for it.
    pub(super) under_way: Option<Id>,
    /// Sessions started again since the server last answered a client's request: a
    /// server that forgets every session is not given another without end.
    pub(super) in_a_row: u32,
}

/// The most sessions started again in a row, none of them answering a client's request.
const MOST_RESTARTS: u32 = 3;

/// What the proxy tells a server whose new session's `initialize` it answered.
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;

impl<L: Layer> Proxy<L> {
    /// The request of a message sent alone, whose `outline` is its line to the server:
    /// over HTTP, `line` (the client's, as it came) is kept, to be sent again in a new
    /// session if the server forgets this one.
    pub(super) fn keep_to_send_again(&mut self, outline: &Outline, line: &Parsed) {
        if !self.over_http {
            return;
        }
        if let [id] = outline.ids.as_slice()
            && let Some(pending) = self.pending.get_mut(id)
        {
            pending.again = Some(line.text().to_string());
        }
    }

    /// The server answered line `exchange` with 404 for the session: it forgot it.
    /// `first`: the session was forgotten with this line (not a line of the forgotten
    /// session whose 404 came after another's). The line's request waits for a new
    /// session and its listing, before what came after it; a batch's requests, which are
    /// not sent again, are answered with `why`.
    pub fn session_lost(&mut self, exchange: u64, why: &str, first: bool, now: Now) -> Vec<Out> {
        self.now = now;
        let mut out = Vec::new();
        let Some(initialize) = self.again.initialize.clone() else {
            // No session of the client's to start again (it began with none).
            return self.unanswered(exchange, why, now);
        };
        if first && self.again.in_a_row >= MOST_RESTARTS {
            let why = format!(
                "{why}; it forgot each of the {MOST_RESTARTS} sessions started again for it \
                 before answering anything, so no other is started"
            );
            return self.unanswered(exchange, &why, now);
        }
        let again: Vec<String> = (self.pending)
            .extract_if(|_, pending| pending.exchange == exchange && pending.again.is_some())
            .filter_map(|(_, pending)| pending.again)
            .collect();
        if first && self.again.under_way.is_none() {
            self.start_again(&initialize, &mut out);
        }
        // Lines sent again go first, in the order they were sent the first time.
        let before = (self.held.iter())
            .take_while(|held| held.sent.is_some_and(|sent| sent < exchange))
            .count();
        for line in again {
            let line = Parsed::read(line.into_bytes()).expect("it was read when it came");
            let waits = self.waits(&line.line());
            let held = Held {
                sent: Some(exchange),
                ..self.hold(line, waits, now.instant)
            };
            self.held.insert(before, held);
        }
        if let Some(listing) = self.listing.take_if(|own| own.exchange == exchange) {
            // The proxy's own listing went to the old session: it lists again.
            self.abandoned.insert(listing.id);
            self.want = self.started + 1;
        }
        out.extend(self.unanswered(exchange, why, now));
        self.drain(&mut out);
        self.with_notes(out)
    }

    /// Sends the client's `initialize` (its text) under an id of the proxy's own; until
    /// it is answered, what the client sends waits, and every listing before it is stale.
    fn start_again(&mut self, initialize: &str, out: &mut Vec<Out>) {
        let id = Id::own();
        let line = Parsed::read(initialize.as_bytes().to_vec())
            .ok()
            .and_then(|line| line.renamed(&id, None))
            .expect("the client's initialize was read when it came, as one request");
        let Line::One(read) = line.line() else {
            unreachable!("renamed is one request")
        };
        let outline = Outline {
            own: true,
            ..Outline::of(&read, None)
        };
        if !cfg!(feature = "mutant-restart-keeps-listing") {
            self.want = self.started + 1;
        }
        self.handshake = Handshake::Waiting;
        self.expect(&id, Kind::Again, None);
        self.again.under_way = Some(id);
        self.again.in_a_row += 1;
        out.push(self.for_server(line.into_bytes(), outline));
    }

    /// The server answered the proxy's own `initialize` (`result`, or the error in
    /// `text`): the new session is told the handshake is done, and what waits goes on
    /// once its listing came; a refusal refuses the calls that wait.
    pub(super) fn started_again(&mut self, result: Option<&str>, text: &str, out: &mut Vec<Out>) {
        self.again.under_way = None;
        self.handshake = Handshake::Done;
        if result.is_some() {
            super::settled(result, out);
            let outline = Outline::request(None, "notifications/initialized", None, None);
            out.push(self.for_server(INITIALIZED.into(), outline));
            return;
        }
        let said =
            jsonrpc::at(text, &["error", "message"]).and_then(reasons_transform::json::string);
        let why = format!(
            "the MCP server forgot the session and refused a new one ({})",
            said.as_deref().unwrap_or("no reason given")
        );
        self.note(why.clone());
        for held in std::mem::take(&mut self.held) {
            let refuse = super::Release::Refuse(why.clone());
            self.client_line(&held.line, &held.waits, refuse, out);
        }
    }
}
