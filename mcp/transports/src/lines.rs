//! A byte stream read as lines by the session's own loop (the client's stdin, a server's
//! stdout), each bounded by the cap on one message: read when `poll` says it is ready, so
//! that a line is acted on in the thread that read it.

use crate::event::Event;
use crate::inbox::Waker;
use crate::outbox::Backlog;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use std::collections::VecDeque;

/// Why a message past the cap was not taken.
pub(crate) fn over_cap(max_message: usize) -> String {
    format!(
        "a message is over the {} MiB cap on one message (--max-message-mib); its stream was ended",
        max_message >> 20
    )
}

/// How a stream of lines ends: past the cap, or closed.
pub(crate) struct Ends {
    pub over_cap: Event,
    pub closed: Event,
}

/// What one read takes from a stream at most: a pipe's default size, and far more than a
/// round trip's line.
const CHUNK: usize = 64 << 10;

/// A stream read as lines, each sent as `line(...)` without its `\n`, then how it ended.
/// A line longer than the cap is never held whole: the stream ends as soon as what is
/// unread of it goes past the cap.
pub(crate) struct Lines {
    from: OwnedFd,
    /// Bytes read and not yet sent as a line: at most the cap and a read.
    unread: Vec<u8>,
    cap: usize,
    line: fn(Vec<u8>) -> Event,
    /// Taken when the stream ends: nothing is read from it after.
    ends: Option<Ends>,
    /// Where its lines go: while that is over its budget, the stream is not read.
    gate: Option<Backlog>,
}

impl Lines {
    /// `from` read as lines of at most `cap` bytes. It is read only once `poll` has said
    /// it is ready, so a read does not wait, and the descriptor is left as it is: the
    /// proxy's stdin is shared with whoever started it.
    pub(crate) fn new(from: OwnedFd, cap: usize, line: fn(Vec<u8>) -> Event, ends: Ends) -> Lines {
        Lines {
            from,
            unread: Vec::new(),
            cap,
            line,
            ends: Some(ends),
            gate: None,
        }
    }

    /// The same stream, not read while `gate` (if any) is over its budget.
    pub(crate) fn gated(self, gate: Option<Backlog>) -> Lines {
        Lines { gate, ..self }
    }

    /// Has `reader` woken whenever what this stream's lines wait in makes room.
    pub(crate) fn wake_on_room(&self, reader: &Waker) {
        self.gate.iter().for_each(|gate| gate.wakes(reader.clone()));
    }

    /// Whether the stream has not ended.
    pub(crate) fn open(&self) -> bool {
        self.ends.is_some()
    }

    /// Whether the stream is to be read now: it has not ended, and its lines have room.
    pub(crate) fn wanted(&self) -> bool {
        self.open() && self.gate.as_ref().is_none_or(Backlog::has_room)
    }

    /// Reads what the stream has, once, and adds each whole line to `events`, and how
    /// the stream ended if it did.
    pub(crate) fn read(&mut self, events: &mut VecDeque<Event>) {
        if !self.open() {
            return;
        }
        // What was unread before holds no line break: only what comes now is looked at.
        let mut scanned = self.unread.len();
        self.unread.reserve(CHUNK);
        match rustix::io::read(&self.from, rustix::buffer::spare_capacity(&mut self.unread)) {
            Err(Errno::AGAIN | Errno::INTR) => return,
            Err(_) => return self.end(events, |ends| ends.closed),
            Ok(0) => {
                // A last line without its line break is still a line.
                if !self.unread.is_empty() && self.unread.len() <= self.cap {
                    let last = std::mem::take(&mut self.unread);
                    events.push_back((self.line)(last));
                }
                return self.end(events, |ends| ends.closed);
            }
            Ok(_) => {}
        }
        let mut start = 0;
        while let Some(at) = memchr::memchr(b'\n', &self.unread[scanned..]) {
            let end = scanned + at;
            if end - start > self.cap {
                return self.end(events, |ends| ends.over_cap);
            }
            events.push_back((self.line)(self.unread[start..end].to_vec()));
            start = end + 1;
            scanned = start;
        }
        self.unread.drain(..start);
        if self.unread.len() > self.cap {
            self.end(events, |ends| ends.over_cap);
        }
    }

    fn end(&mut self, events: &mut VecDeque<Event>, how: fn(Ends) -> Event) {
        if let Some(ends) = self.ends.take() {
            events.push_back(how(ends));
        }
        self.unread = Vec::new();
    }
}

impl AsFd for Lines {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.from.as_fd()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Write;

    const CAP: usize = 16;

    /// A pipe's read end as lines of at most `cap` bytes, each said as an `Unanswered`
    /// with its text, and its write end.
    pub(crate) fn pipe(cap: usize) -> (Lines, std::io::PipeWriter) {
        let (reader, writer) = std::io::pipe().unwrap();
        let line = |line| Event::Unanswered {
            exchange: 0,
            why: String::from_utf8(line).unwrap(),
        };
        let ends = Ends {
            over_cap: Event::ClientOverCap,
            closed: Event::ClientClosed,
        };
        (Lines::new(reader.into(), cap, line, ends), writer)
    }

    /// What `events` said, as words.
    fn said(events: VecDeque<Event>) -> Vec<String> {
        let word = |event| match event {
            Event::Unanswered { why, .. } => format!("line {why}"),
            Event::ClientOverCap => "over the cap".into(),
            Event::ClientClosed => "closed".into(),
            _ => unreachable!("a stream says nothing else"),
        };
        events.into_iter().map(word).collect()
    }

    /// Writes each piece and reads once after it, then closes the pipe and reads until
    /// the stream ends: what was said.
    fn read_in(pieces: &[&str]) -> Vec<String> {
        let (mut lines, mut writer) = pipe(CAP);
        let mut events = VecDeque::new();
        for piece in pieces {
            writer.write_all(piece.as_bytes()).unwrap();
            lines.read(&mut events);
        }
        drop(writer);
        while lines.open() {
            lines.read(&mut events);
        }
        said(events)
    }

    #[test]
    fn lines_that_come_in_pieces_are_said_whole_and_in_order() {
        let said = read_in(&["{\"a\":1}\n{\"b", "\":2}", "\n\n{\"c\":3}\n{\"d\"", ":4}"]);
        let expected = [
            "line {\"a\":1}",
            "line {\"b\":2}",
            "line ",
            "line {\"c\":3}",
            "line {\"d\":4}",
            "closed",
        ];
        assert_eq!(said.len(), expected.len(), "{said:?}");
        assert_eq!(said, expected);
    }

    #[test]
    fn a_line_of_the_cap_is_taken_and_one_past_it_ends_the_stream() {
        let at_cap = "x".repeat(CAP);
        let past = "y".repeat(CAP + 1);
        // Whole in one read, and a byte at a time: the lines before it are said, then
        // the stream ends, and nothing after it is read.
        let whole = format!("{at_cap}\n{past}\nafter\n");
        let bytes: Vec<String> = whole.chars().map(String::from).collect();
        let pieces: Vec<&str> = bytes.iter().map(String::as_str).collect();
        for said in [read_in(&[&whole]), read_in(&pieces)] {
            assert_eq!(said.len(), 2, "{said:?}");
            assert_eq!(said, [format!("line {at_cap}"), "over the cap".into()]);
        }
        // A last line past the cap, never ended by a line break, ends it too.
        let said = read_in(&["ok\n", &past]);
        assert_eq!(said, ["line ok", "over the cap"]);
    }
}
