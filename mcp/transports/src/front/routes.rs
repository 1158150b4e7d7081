//! Where the lines a session writes go: each answer to its own request's stream, under
//! the id and progress token its client gave, notes about a request to that request's
//! stream, anything else to the GET stream; in a shared session, nothing a client could
//! take for another's (R19).

use super::refused::{Refused, refuse, session_gone};
use super::{STREAM_AHEAD, lock, resume};
use crate::outbox::Feed;
use crate::session::Client;
use axum::http::StatusCode;
use indexmap::IndexMap;
use reasons_mcp::delivery::{About, Part};
use reasons_mcp::http::inbound;
use reasons_mcp::jsonrpc::{self, INTERNAL_ERROR, INVALID_REQUEST, Id, Parsed};
use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc::Sender;
use tokio::sync::mpsc::error::TrySendError;

/// One session's loop, as the handlers reach it.
pub(super) struct Running {
    pub(super) events: Feed,
    pub(super) routes: Arc<Mutex<Routes>>,
    pub(super) thread: Mutex<Option<std::thread::JoinHandle<()>>>,
}

impl Running {
    pub(super) fn ended(&self) -> bool {
        lock(&self.thread)
            .as_ref()
            .is_none_or(|thread| thread.is_finished())
    }
}

/// A message for one of a session's streams.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Sent {
    /// Its bytes.
    pub(super) line: Vec<u8>,
    /// Where it is the answer to its stream's request, the HTTP status that answer goes
    /// under, from the core's own reading of it: a request answered before anything
    /// else came for it is answered with one JSON body under that status.
    pub(super) answer: Option<u16>,
}

impl Sent {
    /// A message that answers no request of its stream's.
    pub(super) fn note(line: Vec<u8>) -> Sent {
        Sent { line, answer: None }
    }
}

/// Where the lines for a session's clients go.
#[derive(Default)]
pub(super) struct Routes {
    /// Each request waiting for its answer: the stream of its POST, and the id its client
    /// gave it when the front gave it another.
    pub(super) waiting: IndexMap<Id, (Sender<Sent>, Option<Id>)>,
    /// Each waiting request's progress token, as the server will name it, with the
    /// request, and the token its client gave when the front gave it another. Tokens
    /// compare as ids do: by value, whatever their spelling.
    pub(super) progress: HashMap<Id, (Id, Option<String>)>,
    /// The session's GET stream, for what the server sends on its own.
    pub(super) stream: Option<Sender<Sent>>,
    /// A legacy HTTP+SSE session's one stream, which every message for its client takes,
    /// answers included ([`legacy`]).
    pub(super) legacy: Option<Sender<Sent>>,
    /// Whether clients that do not know each other share the session (2026-07-28).
    pub(super) shared: bool,
    /// Whether the session's loop has ended: no request is taken any more.
    pub(super) ended: bool,
    /// What each resumable stream carried, for a client that comes back for it.
    pub(super) kept: resume::Kept,
    /// The protocol version the session's client asked for in `initialize`: what its
    /// streams may carry, where a request does not say (`MCP-Protocol-Version`).
    pub(super) version: Option<String>,
}

impl Routes {
    /// Ends the session's routes: each request still waiting is answered with an error
    /// under the id its client gave, and the GET stream ends.
    pub(super) fn end(&mut self) {
        self.ended = true;
        self.stream = None;
        self.legacy = None;
        self.progress.clear();
        for (id, (stream, given)) in self.waiting.drain(..) {
            let why = "reasons mcp: the session ended before the server answered this request";
            let id = given.unwrap_or(id);
            let answer = Sent {
                line: jsonrpc::error(Some(&id), INTERNAL_ERROR, why).into_bytes(),
                answer: Some(inbound::answer_status(Some(INTERNAL_ERROR))),
            };
            let _ = stream.try_send(answer);
        }
    }

    /// Registers a request waiting for its answer on `stream`: `given` is the id its
    /// client gave it, when the front gave it another; `token` its progress token as the
    /// server will see it, and the one its client gave, when the front gave it another.
    pub(super) fn wait(
        &mut self,
        id: Id,
        stream: Sender<Sent>,
        given: Option<Id>,
        token: Option<(Id, Option<String>)>,
    ) -> Result<(), Refused> {
        if self.ended {
            return Err(session_gone());
        }
        if let Some((key, given)) = token {
            self.progress.insert(key, (id.clone(), given));
        }
        self.waiting.insert(id, (stream, given));
        Ok(())
    }

    /// Takes a client's request `id`, the message `line` whose progress token is
    /// `token` (with its place in the line), to wait for its answer on `answers`: the id
    /// the session will know it by, and the line to send it. In a shared session the
    /// request gets an id and a progress token of the front's own, since clients there
    /// may use the same ones, and its client's come back with what answers it; where
    /// that cannot be done, the request does not go. Where one client owns the session,
    /// an id still waiting is refused under that id: its answer could go to only one of
    /// the two POSTs (R19), and the one waiting keeps it.
    pub(super) fn admit(
        &mut self,
        id: Id,
        line: Parsed,
        token: Option<(Id, Range<usize>)>,
        answers: Sender<Sent>,
    ) -> Result<(Id, Parsed), Refused> {
        if !self.shared {
            if self.waiting.contains_key(&id) {
                let why = "a request with this id is still waiting for its answer in this \
                           session: an id is the client's to use once until it is answered";
                return Err(refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, why).under(id));
            }
            self.wait(
                id.clone(),
                answers,
                None,
                token.map(|(sent, _)| (sent, None)),
            )?;
            return Ok((id, line));
        }
        let own = Id::front();
        let given = token
            .as_ref()
            .map(|(_, at)| line.text()[at.clone()].to_string());
        let Some(renamed) = line.renamed(&own, token.map(|(_, at)| at)) else {
            let why = "the request could not be given an id of the front's own; it was not sent";
            return Err(refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, why));
        };
        let token = given.map(|given| (own.clone(), Some(given)));
        self.wait(own.clone(), answers, Some(id), token)?;
        Ok((own, renamed))
    }

    /// Sends one message the session wrote, `text`, to the stream it belongs on, as the
    /// proxy says what it is `about`: an answer to its request's POST, under the id that
    /// request's client gave, which ends that stream; a note about a waiting request
    /// (its progress, its cancellation) to that request's stream, under the names its
    /// client gave; anything else to the GET stream, or, where one client owns the
    /// session, to its latest request's stream. In a shared session nothing else is sure
    /// to be the right client's, so nothing else goes anywhere.
    pub(super) fn deliver(&mut self, text: &[u8], about: &About) {
        // The request, the message under the name its client gave, and whether the
        // message ends the request's stream (no answer follows a cancellation), with
        // the status it goes under where it answers the request.
        let (id, line, ends, answer) = match about {
            About::Answer { id, at, code } => {
                let Some((_, given)) = self.waiting.get(id) else {
                    return self.elsewhere(text);
                };
                let line = named(text, at, given.as_ref().map(Id::json));
                let status = inbound::answer_status(*code);
                (id.clone(), line, true, Some(status))
            }
            About::Cancelled { id, at } => {
                let Some((_, given)) = self.waiting.get(id) else {
                    return self.elsewhere(text);
                };
                let line = named(text, at, given.as_ref().map(Id::json));
                (id.clone(), line, true, None)
            }
            About::Progress { token, at } => {
                let Some((id, given)) = self.progress.get(token) else {
                    return self.elsewhere(text);
                };
                (id.clone(), named(text, at, given.as_deref()), false, None)
            }
            // An event of a subscription goes on the stream of the request that opened
            // it, which stays open for the next.
            About::Listened { id, at } => {
                let Some((_, given)) = self.waiting.get(id) else {
                    return self.elsewhere(text);
                };
                let line = named(text, at, given.as_ref().map(Id::json));
                (id.clone(), line, false, None)
            }
            About::Other => return self.elsewhere(text),
        };
        let Some((stream, _)) = self.waiting.get(&id) else {
            return self.elsewhere(text);
        };
        self.kept.record(&id, &line);
        if ends {
            self.kept.finish(&id);
        }
        if !put(stream, Sent { line, answer }) {
            if self.is_legacy(stream) {
                return self.end_legacy();
            }
            // Its client reads nothing of it: the stream ends here. The request still
            // waits, for nobody's stream: what else comes for it, its answer too, is kept
            // for the client to resume with `Last-Event-ID` (bounded in bytes), where it
            // went where a message about no request goes, and the answer was lost.
            crate::say::say(&format!(
                "the stream of request {} was ended: its client left {STREAM_AHEAD} \
                 messages unread (what comes for it is kept for its client to resume)",
                id.json()
            ));
            if let Some((stream, _)) = self.waiting.get_mut(&id) {
                *stream = ended_stream();
            }
            if ends {
                self.waiting.shift_remove(&id);
            }
            return self.forget_finished();
        }
        if ends {
            // Dropping the sender ends the POST's stream.
            self.waiting.shift_remove(&id);
            self.forget_finished();
        }
    }

    /// Sends `text`, a message about no waiting request, to the GET stream, or, where
    /// one client owns the session, to its latest request's stream.
    pub(super) fn elsewhere(&mut self, text: &[u8]) {
        if let Some(stream) = self.stream.as_ref().filter(|stream| !stream.is_closed()) {
            if !put(stream, Sent::note(text.to_vec())) {
                if self.is_legacy(stream) {
                    return self.end_legacy();
                }
                crate::say::say(&format!(
                    "a session's GET stream was ended: its client left {STREAM_AHEAD} \
                     messages unread (it may open another)"
                ));
                self.stream = None;
            }
            return;
        }
        if self.shared {
            return;
        }
        // A stream left unread holds what it holds; what does not fit is not sent there.
        if let Some((id, (stream, _))) = self.waiting.last() {
            self.kept.record(id, text);
            let _ = put(stream, Sent::note(text.to_vec()));
        }
    }

    /// Whether `stream` is a legacy session's one stream.
    fn is_legacy(&self, stream: &Sender<Sent>) -> bool {
        (self.legacy.as_ref()).is_some_and(|legacy| legacy.same_channel(stream))
    }

    /// A legacy session's one stream, left full by its client: it carries every answer
    /// and cannot be resumed, so it ends (after what it holds, which its client may still
    /// read), and the client knows its session is over, where it stayed open while the
    /// answers it could not take went nowhere.
    fn end_legacy(&mut self) {
        crate::say::say(&format!(
            "a legacy session's stream was ended: its client left {STREAM_AHEAD} messages \
             unread, and an answer it cannot take is not dropped unsaid"
        ));
        self.end();
    }

    /// Forgets the progress tokens of requests no longer waiting.
    pub(super) fn forget_finished(&mut self) {
        let Routes {
            progress, waiting, ..
        } = self;
        progress.retain(|_, (id, _)| waiting.contains_key(id));
    }
}

/// A stream that is over: what is put on it goes nowhere, and dropping the one that was
/// there ended its client's response.
fn ended_stream() -> Sender<Sent> {
    tokio::sync::mpsc::channel(1).0
}

/// Puts `message` on `stream`; `false` when the stream is full: its client has not read
/// what it holds. A stream whose client has gone takes what it is given, for nobody.
pub(super) fn put(stream: &Sender<Sent>, message: Sent) -> bool {
    !matches!(stream.try_send(message), Err(TrySendError::Full(_)))
}

/// `message` under the name its client gave its request (`given`, when the front gave
/// the request another), in place of the one at `at`.
pub(super) fn named(message: &[u8], at: &Range<usize>, given: Option<&str>) -> Vec<u8> {
    let Some(given) = given else {
        return message.to_vec();
    };
    [&message[..at.start], given.as_bytes(), &message[at.end..]].concat()
}

/// The session's client, as its loop writes to it.
pub(super) struct Routed(pub(super) Arc<Mutex<Routes>>);

impl Client for Routed {
    fn write(&mut self, line: &[u8], parts: &[Part]) -> bool {
        let mut routes = lock(&self.0);
        // A batch (a server may answer in one) is taken apart, so that each answer
        // reaches its own request's POST.
        for part in parts {
            routes.deliver(&line[part.text.clone()], &part.about);
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stream_ended_for_its_backlog_keeps_what_comes_after_for_resumption() {
        // R19: a tool sends progress faster than its client reads; its stream is ended
        // when full, and the answer that comes later is kept for the client that comes
        // back with its last event id, where it went nowhere.
        let mut routes = Routes::default();
        let request = Id::parse("7").unwrap();
        let (stream, _unread) = tokio::sync::mpsc::channel(1);
        routes.waiting.insert(request.clone(), (stream, None));
        routes
            .progress
            .insert(Id::parse(r#""p""#).unwrap(), (request.clone(), None));
        routes.kept.open(request.clone());
        let note = br#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p","progress":1}}"#;
        let token = note.windows(3).position(|w| w == br#""p""#).unwrap();
        let at = token..token + 3;
        let progress = About::Progress {
            token: Id::parse(r#""p""#).unwrap(),
            at,
        };
        for _ in 0..3 {
            routes.deliver(note, &progress);
        }
        let answer = br#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
        let id = answer.windows(5).position(|w| w == br#""id":"#).unwrap() + 5;
        let at = id..id + 1;
        let code = None;
        routes.deliver(
            answer,
            &About::Answer {
                id: request,
                at,
                code,
            },
        );
        let resumed = routes.kept.after(&resume::event_id(1, 0)).unwrap();
        assert_eq!(resumed.messages.len(), 4);
        assert_eq!(resumed.messages[3], answer.to_vec());
        assert!(resumed.done);
        assert!(routes.waiting.is_empty(), "answered: nothing waits");
    }

    #[test]
    fn a_legacy_stream_its_client_leaves_unread_ends_so_that_the_client_knows() {
        // R19: the legacy transport's one stream carries every answer and cannot be
        // resumed; left full, it ends (after what it holds), where it stayed open while
        // the answers it could not take went nowhere.
        let mut routes = Routes::default();
        let (stream, mut unread) = tokio::sync::mpsc::channel(2);
        routes.stream = Some(stream.clone());
        routes.legacy = Some(stream.clone());
        let request = Id::parse("7").unwrap();
        routes.waiting.insert(request, (stream, None));
        let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"x"}}"#;
        for _ in 0..3 {
            routes.deliver(note, &About::Other);
        }
        assert!(routes.ended, "the session's stream was ended");
        assert!(routes.waiting.is_empty() && routes.legacy.is_none() && routes.stream.is_none());
        // The client reads what the stream held, then sees it end.
        let mut read = 0;
        while let Ok(message) = unread.try_recv() {
            assert_eq!(message, Sent::note(note.to_vec()));
            read += 1;
        }
        assert_eq!(read, 2);
        assert_eq!(
            unread.try_recv(),
            Err(tokio::sync::mpsc::error::TryRecvError::Disconnected)
        );
    }
}
