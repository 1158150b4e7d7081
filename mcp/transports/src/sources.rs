//! Where a session's events come from, all waited on in one `poll` by the session's own
//! thread: the streams it reads itself (the client's stdin, a server's stdout) and its
//! inbox, for what other threads bring (the HTTP upstream's drivers, the front's
//! handlers, signals). A line is read, parsed and acted on in the thread it arrives in:
//! handing each line from a reader's thread to the loop cost two thread wake-ups a round
//! trip, most of what the proxy added to one (issue 57).

use crate::event::Event;
use crate::inbox::Inbox;
use crate::lines::Lines;
use rustix::event::{PollFd, PollFlags, Timespec, poll};
use std::collections::VecDeque;
use std::sync::mpsc::{RecvTimeoutError, TryRecvError};
use std::time::Instant;

/// A session's sources of events.
pub(crate) struct Sources {
    inbox: Inbox,
    /// Whether the inbox may hold more: the next wait does not wait then.
    inbox_more: bool,
    /// The streams the loop reads itself.
    streams: Vec<Lines>,
    /// What has been read and not yet taken.
    ready: VecDeque<Event>,
}

impl Sources {
    /// Events from `inbox` alone, so far.
    pub(crate) fn new(inbox: Inbox) -> Sources {
        Sources {
            inbox,
            inbox_more: true,
            streams: Vec::new(),
            ready: VecDeque::new(),
        }
    }

    /// Reads `lines` too, while it lasts.
    pub(crate) fn read(&mut self, lines: Lines) {
        lines.wake_on_room(&self.inbox.waker);
        self.streams.push(lines);
    }

    /// The next event, waiting until `until` at most (for ever without it): `Timeout`
    /// when it passes first, `Disconnected` when nothing more can come.
    ///
    /// Each turn reads every ready stream once and takes one event from the inbox, so
    /// that no source is kept waiting by another that always has something.
    pub(crate) fn next(&mut self, until: Option<Instant>) -> Result<Event, RecvTimeoutError> {
        loop {
            if let Some(event) = self.ready.pop_front() {
                return Ok(event);
            }
            let left = until.map(|at| at.saturating_duration_since(Instant::now()));
            // A wait too long for a timespec is a wait for ever, never none at all.
            let timeout = match self.inbox_more {
                true => Some(Timespec::default()),
                false => left.and_then(|left| Timespec::try_from(left).ok()),
            };
            self.wait(timeout.as_ref());
            match self.inbox.events.try_recv() {
                Ok(event) => {
                    self.inbox_more = true;
                    self.ready.push_back(event);
                }
                Err(TryRecvError::Empty) => self.inbox_more = false,
                Err(TryRecvError::Disconnected) => {
                    self.inbox_more = false;
                    if self.ready.is_empty() && !self.streams.iter().any(Lines::open) {
                        return Err(RecvTimeoutError::Disconnected);
                    }
                }
            }
            if self.ready.is_empty() && left.is_some_and(|left| left.is_zero()) {
                return Err(RecvTimeoutError::Timeout);
            }
        }
    }

    /// Waits for the inbox's waker or a wanted stream, for `timeout` at most, and reads
    /// each stream that is ready.
    fn wait(&mut self, timeout: Option<&Timespec>) {
        let wanted: Vec<usize> = (0..self.streams.len())
            .filter(|&stream| self.streams[stream].wanted())
            .collect();
        let mut fds = Vec::with_capacity(1 + wanted.len());
        fds.push(PollFd::new(&self.inbox.waker, PollFlags::IN));
        for &stream in &wanted {
            fds.push(PollFd::new(&self.streams[stream], PollFlags::IN));
        }
        // Interrupted by a signal, it is tried again on the next turn.
        if poll(&mut fds, timeout).is_err() {
            return;
        }
        let woken = !fds[0].revents().is_empty();
        let ready: Vec<usize> = (fds[1..].iter().zip(&wanted))
            .filter(|(fd, _)| !fd.revents().is_empty())
            .map(|(_, &stream)| stream)
            .collect();
        drop(fds);
        if woken {
            // Cleared before the inbox is read: what is sent after is seen next time.
            self.inbox.waker.clear();
        }
        for stream in ready {
            self.streams[stream].read(&mut self.ready);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::tests::pipe;
    use crate::outbox::{Backlog, channel};
    use std::io::Write;
    use std::sync::mpsc;
    use std::time::Duration;

    fn stream() -> (Lines, std::io::PipeWriter) {
        pipe(1 << 20)
    }

    fn text(event: Event) -> String {
        match event {
            Event::Unanswered { why, .. } => format!("stream {why}"),
            Event::Signal(signal) => format!("inbox {signal}"),
            Event::ClientClosed => "closed".into(),
            _ => unreachable!(),
        }
    }

    #[test]
    fn a_stream_held_back_for_room_is_read_as_soon_as_room_is_made() {
        // Backpressure: the line's stream is not read while what its lines go to is
        // over its budget; room made wakes the loop, with nothing else to wake it.
        let (_feed, inbox) = channel();
        let gate = Backlog::new(10);
        gate.add(10);
        let (lines, mut writer) = stream();
        writer.write_all(b"held\n").unwrap();
        let mut sources = Sources::new(inbox);
        sources.read(lines.gated(Some(gate.clone())));
        let soon = Instant::now() + Duration::from_millis(200);
        assert!(
            matches!(sources.next(Some(soon)), Err(RecvTimeoutError::Timeout)),
            "read while there was no room"
        );
        let (said, heard) = mpsc::channel();
        std::thread::spawn(move || said.send(sources.next(None).map(text)));
        gate.done(10);
        let heard = heard.recv_timeout(Duration::from_secs(30));
        assert_eq!(heard.expect("the loop woke").unwrap(), "stream held");
    }

    #[test]
    fn an_inbox_that_always_has_more_does_not_keep_a_stream_waiting() {
        let (feed, inbox) = channel();
        let sender = std::thread::spawn(move || while feed.control(Event::Signal(1)) {});
        let (lines, mut writer) = stream();
        writer.write_all(b"mine\n").unwrap();
        drop(writer);
        let mut sources = Sources::new(inbox);
        sources.read(lines);
        let said: Vec<String> = (0..6).map(|_| text(sources.next(None).unwrap())).collect();
        assert_eq!(said.len(), 6);
        assert!(said.iter().any(|said| said == "stream mine"), "{said:?}");
        assert!(said.iter().any(|said| said == "closed"), "{said:?}");
        drop(sources);
        sender.join().unwrap();
    }

    #[test]
    fn nothing_left_to_come_is_said_so_and_a_deadline_passed_is_a_timeout() {
        let (feed, inbox) = channel();
        let mut sources = Sources::new(inbox);
        let passed = Instant::now();
        assert!(matches!(
            sources.next(Some(passed)),
            Err(RecvTimeoutError::Timeout)
        ));
        assert!(feed.control(Event::Signal(2)));
        drop(feed);
        assert_eq!(text(sources.next(None).unwrap()), "inbox 2");
        assert!(matches!(
            sources.next(None),
            Err(RecvTimeoutError::Disconnected)
        ));
    }
}
