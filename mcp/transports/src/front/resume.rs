//! Resumable streams (MCP 2025-11-25, Streamable HTTP, "Resumability and Redelivery"):
//! a request's stream in a session of that revision or later opens with an event that
//! has an id and no message (the priming event) and the wait before coming back; every
//! message after it has an id, and what the stream carried is kept, so that a client
//! whose connection broke comes back with a GET carrying `Last-Event-ID` and gets what
//! came after it, then what is still to come, on the new stream.
//!
//! Bounded, as everything the front holds, and in bytes: a session keeps at most
//! [`KEPT_BYTES`] of messages (the oldest go first), a stream its last [`KEPT_MESSAGES`]
//! messages, and a session its last [`KEPT_STREAMS`] streams.

use reasons_mcp::jsonrpc::Id;
use std::collections::VecDeque;
use std::time::Duration;

/// The first revision whose clients take an event with no message (the priming event).
const FIRST_REVISION: &str = "2025-11-25";

/// The messages a stream keeps for a client that comes back: as many as a stream holds
/// unread before the front ends it.
const KEPT_MESSAGES: usize = super::STREAM_AHEAD;

/// The streams a session keeps: its latest, the rest forgotten.
const KEPT_STREAMS: usize = 16;

/// The most bytes of messages a session keeps for clients that come back: answers of
/// many MiB, read and resumed, leave the proxy's memory where it was.
const KEPT_BYTES: usize = 16 << 20;

/// The wait a client is asked to leave before it comes back for a broken stream.
pub const RETRY: Duration = Duration::from_secs(1);

/// Whether a session of `version` (its `MCP-Protocol-Version`) takes resumable streams.
/// Revisions are dates, so they order as text.
pub fn resumable(version: Option<&str>) -> bool {
    version.is_some_and(|version| version >= FIRST_REVISION)
}

/// The id of the `seq`th message of stream `number` (the priming event is the 0th).
pub fn event_id(number: u64, seq: u64) -> String {
    format!("{number}-{seq}")
}

/// What a stream's events are numbered from: its number, and the next message's; and
/// whether it opens with the priming event (a new stream does, a resumed one not).
#[derive(Clone, Copy, Debug)]
pub struct Numbering {
    pub number: u64,
    pub next: u64,
    pub prime: bool,
}

/// The streams a session keeps.
#[derive(Default)]
pub struct Kept {
    streams: VecDeque<Stream>,
    opened: u64,
    /// The bytes of every message kept.
    bytes: usize,
}

impl Stream {
    fn bytes(&self) -> usize {
        self.messages.iter().map(|(_, message)| message.len()).sum()
    }
}

/// One request's stream, as far as it went.
struct Stream {
    number: u64,
    /// The request, as the session knows it.
    request: Id,
    /// Its latest messages, with their numbers.
    messages: VecDeque<(u64, Vec<u8>)>,
    /// The number of the last message it carried.
    sent: u64,
    /// Whether its request was answered: nothing more comes.
    done: bool,
}

/// What a client that comes back is given: the request its stream was for, the messages
/// after the last it had, the numbering of what follows, and whether the request was
/// answered already.
pub struct Resumed {
    pub request: Id,
    pub messages: Vec<Vec<u8>>,
    pub numbering: Numbering,
    pub done: bool,
}

impl Kept {
    /// Opens a kept stream for `request`: its numbering.
    pub fn open(&mut self, request: Id) -> Numbering {
        self.opened += 1;
        if self.streams.len() == KEPT_STREAMS
            && let Some(forgotten) = self.streams.pop_front()
        {
            self.bytes -= forgotten.bytes();
        }
        self.streams.push_back(Stream {
            number: self.opened,
            request,
            messages: VecDeque::new(),
            sent: 0,
            done: false,
        });
        Numbering {
            number: self.opened,
            next: 1,
            prime: true,
        }
    }

    /// Keeps `message`, which the stream of `request` carries next, if that stream is kept.
    pub fn record(&mut self, request: &Id, message: &[u8]) {
        let Some(stream) = self.stream_of(request) else {
            return;
        };
        stream.sent += 1;
        let mut freed = 0;
        if stream.messages.len() == KEPT_MESSAGES
            && let Some((_, gone)) = stream.messages.pop_front()
        {
            freed = gone.len();
        }
        let kept = message.len() <= KEPT_BYTES;
        if kept {
            stream.messages.push_back((stream.sent, message.to_vec()));
        }
        self.bytes = self.bytes - freed + if kept { message.len() } else { 0 };
        // Over the bound, the oldest messages of the oldest streams go first.
        while self.bytes > KEPT_BYTES {
            let oldest = self
                .streams
                .iter_mut()
                .find(|stream| !stream.messages.is_empty());
            let Some((_, gone)) = oldest.and_then(|stream| stream.messages.pop_front()) else {
                break;
            };
            self.bytes -= gone.len();
        }
    }

    /// The request of the stream was answered: nothing more comes on it.
    pub fn finish(&mut self, request: &Id) {
        if let Some(stream) = self.stream_of(request) {
            stream.done = true;
        }
    }

    fn stream_of(&mut self, request: &Id) -> Option<&mut Stream> {
        self.streams
            .iter_mut()
            .rev()
            .find(|stream| &stream.request == request)
    }

    /// What a client that last had the event `last` (an id of [`event_id`]'s) is given:
    /// `None` when no kept stream has it.
    pub fn after(&self, last: &str) -> Option<Resumed> {
        let (number, seq) = last.split_once('-')?;
        let (number, seq): (u64, u64) = (number.parse().ok()?, seq.parse().ok()?);
        let stream = self.streams.iter().find(|stream| stream.number == number)?;
        if seq > stream.sent {
            return None;
        }
        let after: Vec<&(u64, Vec<u8>)> =
            stream.messages.iter().filter(|(at, _)| *at > seq).collect();
        // The first given keeps its own number (the ones before it may be forgotten).
        let next = after.first().map_or(stream.sent + 1, |(at, _)| *at);
        Some(Resumed {
            request: stream.request.clone(),
            messages: after
                .into_iter()
                .map(|(_, message)| message.clone())
                .collect(),
            numbering: Numbering {
                number,
                next,
                prime: false,
            },
            done: stream.done,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_that_comes_back_gets_what_came_after_its_last_event() {
        let mut kept = Kept::default();
        let request = Id::parse("7").unwrap();
        let numbering = kept.open(request.clone());
        assert_eq!((numbering.number, numbering.next), (1, 1));
        for message in [b"a", b"b", b"c"] {
            kept.record(&request, message);
        }
        let resumed = kept.after(&event_id(1, 1)).unwrap();
        assert_eq!(resumed.messages, [b"b".to_vec(), b"c".to_vec()]);
        assert_eq!(resumed.numbering.next, 2);
        assert!(!resumed.done);
        // From the priming event: everything; once answered, it says so.
        kept.finish(&request);
        let resumed = kept.after(&event_id(1, 0)).unwrap();
        assert_eq!(resumed.messages.len(), 3);
        assert!(resumed.done);
        // An id of no kept stream, of a message not sent yet, or not an id of ours.
        for unknown in ["2-0", "1-4", "x", "1-", "-1", ""] {
            assert!(kept.after(unknown).is_none(), "{unknown}");
        }
    }

    #[test]
    fn what_is_kept_is_bounded() {
        let mut kept = Kept::default();
        let request = Id::parse("1").unwrap();
        kept.open(request.clone());
        for _ in 0..KEPT_MESSAGES + 5 {
            kept.record(&request, b"m");
        }
        let resumed = kept.after(&event_id(1, 0)).unwrap();
        assert_eq!(resumed.messages.len(), KEPT_MESSAGES);
        // What follows keeps the numbers the messages had: the first five are gone.
        assert_eq!(resumed.numbering.next, 6);
        for n in 0..KEPT_STREAMS as u64 + 3 {
            kept.open(Id::parse(&(n + 10).to_string()).unwrap());
        }
        assert!(kept.after(&event_id(1, 0)).is_none());
        assert_eq!(kept.streams.len(), KEPT_STREAMS);
    }

    #[test]
    fn only_sessions_of_2025_11_25_and_later_resume() {
        assert!(resumable(Some("2025-11-25")));
        assert!(resumable(Some("2026-07-28")));
        assert!(!resumable(Some("2025-06-18")));
        assert!(!resumable(None));
    }

    #[test]
    fn what_is_kept_is_bounded_in_bytes_the_oldest_going_first() {
        // 16 answers of 8 MiB, each on a stream of its own: the session keeps at most
        // KEPT_BYTES of them, the latest.
        let mut kept = Kept::default();
        let answer = vec![b'x'; 8 << 20];
        for number in 0..16u32 {
            let request = Id::parse(&number.to_string()).unwrap();
            kept.open(request.clone());
            kept.record(&request, &answer);
            kept.finish(&request);
        }
        let held: usize = kept.streams.iter().map(Stream::bytes).sum();
        assert_eq!(held, kept.bytes);
        assert!(kept.bytes <= KEPT_BYTES, "{} bytes kept", kept.bytes);
        // The latest is still there for a client that comes back for it.
        let latest = kept.after(&event_id(16, 0)).unwrap();
        assert_eq!(latest.messages.len(), 1);
        assert_eq!(kept.after(&event_id(1, 0)).unwrap().messages.len(), 0);
    }
}
