//! What the server owes each line the proxy sent it. Every line to the server is
//! numbered ([`Outline::exchange`]), and every request in it remembers its line, so that a
//! transport whose answers come per line (an HTTP POST's body or event stream) needs to
//! read none of them: it asks whether a line is still owed an answer, and says when one
//! never will be, and the proxy, which read every answer that came, answers the rest.

use super::{Out, Proxy};
use crate::Now;
use crate::jsonrpc::{self, INTERNAL_ERROR, Id, Line, Parsed, Refusal};
use crate::layer::Layer;
use crate::outline::Outline;

impl<L: Layer> Proxy<L> {
    /// `line` to the server, numbered, its requests marked as sent in it, and a call's
    /// `Mcp-Param-*` headers read from its arguments as forwarded.
    pub(super) fn for_server(&mut self, line: Vec<u8>, mut outline: Outline) -> Out {
        self.sent += 1;
        outline.exchange = self.sent;
        for id in &outline.ids {
            if let Some(pending) = self.pending.get_mut(id) {
                pending.exchange = self.sent;
            }
        }
        if let (Some("tools/call"), Some(tool), Some(arguments)) =
            (outline.method.as_deref(), &outline.name, &outline.arguments)
        {
            outline.params = self.params.of(tool, arguments);
        }
        Out::Server { line, outline }
    }

    /// The ids of line `exchange`'s requests the server has yet to answer: the client's,
    /// in the order of their text, then the proxy's own listing's.
    fn owed(&self, exchange: u64) -> Vec<Id> {
        let mut owed: Vec<Id> = self
            .pending
            .iter()
            .filter(|(_, pending)| pending.exchange == exchange)
            .map(|(id, _)| id.clone())
            .collect();
        owed.sort_by(|a, b| a.json().cmp(b.json()));
        let own = self.listing.as_ref().filter(|own| own.exchange == exchange);
        owed.extend(own.map(|own| own.id.clone()));
        owed
    }

    /// Whether `id` is a request of line `exchange` the server has yet to answer.
    fn owes(&self, exchange: u64, id: &Id) -> bool {
        let own = self.listing.as_ref();
        self.pending
            .get(id)
            .is_some_and(|pending| pending.exchange == exchange)
            || own.is_some_and(|own| own.exchange == exchange && &own.id == id)
    }

    /// Whether line `exchange` to the server is still owed an answer.
    pub fn awaits(&self, exchange: u64) -> bool {
        let own = self.listing.as_ref();
        self.pending
            .values()
            .any(|pending| pending.exchange == exchange)
            || own.is_some_and(|own| own.exchange == exchange)
    }

    /// The server will not answer line `exchange` any more (its HTTP answer ended, broke
    /// off, or never came): each of its requests still owed an answer gets an error
    /// saying `why`, as if the server had sent it, so that a call waiting on a listing
    /// of the proxy's own is refused.
    pub fn unanswered(&mut self, exchange: u64, why: &str, now: Now) -> Vec<Out> {
        let mut out = Vec::new();
        for id in self.owed(exchange) {
            let error = jsonrpc::error(Some(&id), INTERNAL_ERROR, why);
            out.extend(self.server_sent(error.into_bytes(), now));
        }
        out
    }

    /// A line in the body of an HTTP error the server answered line `exchange` with:
    /// taken as [`Proxy::server_sent`] takes it when it answers one of that line's
    /// requests, and dropped unread by anyone when it does not (an error page, an error
    /// under no id).
    pub fn server_answered(
        &mut self,
        line: Result<Parsed, Refusal>,
        exchange: u64,
        now: Now,
    ) -> Vec<Out> {
        self.server_line(line, Some(exchange), now)
    }

    /// Whether `read` holds an answer to a request of line `exchange`.
    pub(super) fn answers(&self, read: &Line, exchange: u64) -> bool {
        read.answered().any(|id| self.owes(exchange, id))
    }
}
