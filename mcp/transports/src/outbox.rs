//! Backpressure: what the loop writes to a peer waits in an outbox, written on a thread of
//! its own, so that the loop never waits on a peer that stops reading; the reader of the
//! other side stops reading while that outbox holds more than its budget, so the other
//! side is slowed down rather than the proxy's memory grown; and a peer that takes
//! nothing of what waits for it within the write timeout (`Settings::write_timeout`) has its
//! session ended, as the loop sees from [`Outbox::stalled_since`].
//!
//! What another thread sends the loop goes through a [`Feed`]: a channel of a few events,
//! so that a sender whose lines the loop has not taken yet waits too. The streams the loop
//! reads itself (`sources.rs`) are not read while the outbox their lines go to is over
//! its budget; the outbox wakes the loop when it has room again.
//!
//! While nothing waits in it, a line the peer takes at once is written by the loop
//! itself ([`at_once`]).

mod at_once;

use crate::event::Event;
use crate::inbox::{Inbox, Waker};
use at_once::AtOnce;
use rustix::fd::AsFd;
use std::io::Write;
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

/// The bytes an outbox holds before the side that fills it is no longer read from.
pub const BUDGET: usize = 1 << 20;

/// The events waiting for the loop, at most: a line the loop has not taken holds its
/// reader as a full outbox does, so at most this many lines of each reader wait, however
/// long they are.
const AHEAD: usize = 2;

/// The channel to the loop: a feed for each sender, and the loop's inbox.
pub fn channel() -> (Feed, Inbox) {
    holding(AHEAD)
}

/// The channel to the loop, with room for `ahead` events.
pub fn holding(ahead: usize) -> (Feed, Inbox) {
    let (events, inbox) = mpsc::sync_channel(ahead);
    let waker = Waker::new();
    let feed = Feed {
        events,
        waker: waker.clone(),
        gate: None,
    };
    (
        feed,
        Inbox {
            events: inbox,
            waker,
        },
    )
}

/// Where a thread sends what it has for the loop.
#[derive(Clone)]
pub struct Feed {
    events: SyncSender<Event>,
    waker: Waker,
    /// The outbox of the side the lines go to, when the proxy writes to it itself.
    gate: Option<Backlog>,
}

impl Feed {
    /// The same feed, for lines that go where `gate` holds what waits to be written.
    pub fn gated(&self, gate: Backlog) -> Feed {
        Feed {
            events: self.events.clone(),
            waker: self.waker.clone(),
            gate: Some(gate),
        }
    }

    /// What the lines sent here wait in, on the other side, if the feed is gated.
    pub fn gate(&self) -> Option<Backlog> {
        self.gate.clone()
    }

    /// Sends a line read from one side, once the other has room for it and the loop for
    /// one more event: a reader that waits here reads nothing more, so a side that does
    /// not read slows the other down. `false` when the loop has ended.
    pub fn line(&self, event: Event) -> bool {
        if let Some(gate) = &self.gate {
            gate.wait_for_room();
        }
        self.control(event)
    }

    /// Sends a line at once, if the other side and the loop have room for it: for callers
    /// that must not wait (the HTTP front's handlers). `Ok(false)` when the loop has
    /// ended; the event back when there is no room.
    pub fn try_line(&self, event: Event) -> Result<bool, Box<Event>> {
        if !self.gate.as_ref().is_none_or(Backlog::has_room) {
            return Err(Box::new(event));
        }
        match self.events.try_send(event) {
            Ok(()) => {
                self.waker.wake();
                Ok(true)
            }
            Err(mpsc::TrySendError::Disconnected(_)) => Ok(false),
            Err(mpsc::TrySendError::Full(event)) => Err(Box::new(event)),
        }
    }

    /// Sends what is not a line (how a stream ended, a signal), once the loop has room:
    /// nothing the other side does holds it back. `false` when the loop has ended.
    pub fn control(&self, event: Event) -> bool {
        if self.events.send(event).is_err() {
            return false;
        }
        self.waker.wake();
        true
    }

    /// Sends what is not a line at once when the loop has room, from a thread of its own
    /// when it has not: for callers that must not wait. It is not lost either way.
    pub fn control_soon(&self, event: Event) {
        let event = match self.events.try_send(event) {
            Ok(()) => return self.waker.wake(),
            Err(mpsc::TrySendError::Disconnected(_)) => return,
            Err(mpsc::TrySendError::Full(event)) => event,
        };
        let feed = self.clone();
        std::thread::spawn(move || feed.control(event));
    }
}

/// How long the outbox's thread waits before writing again to a peer whose end was full
/// when it could not wait (one its peer made non-blocking).
const FULL_PAUSE: std::time::Duration = std::time::Duration::from_millis(5);

/// Writes all of `line` to `to`, waiting for room where the end does not wait itself: a
/// peer may make its end non-blocking (the end is shared), and a full one is not a
/// peer that is gone. A peer that never makes room is ended by the session's write
/// timeout, as one that never reads a blocking end is.
fn write_patiently(to: &mut impl Write, line: &[u8]) -> std::io::Result<()> {
    let mut written = 0;
    while written < line.len() {
        match to.write(&line[written..]) {
            Ok(0) => return Err(std::io::ErrorKind::WriteZero.into()),
            Ok(count) => written += count,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) if error.kind() == std::io::ErrorKind::WouldBlock => {
                std::thread::sleep(FULL_PAUSE);
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}

/// Lines for a peer, written to it on a thread of their own.
pub struct Outbox {
    lines: Option<mpsc::Sender<Vec<u8>>>,
    backlog: Backlog,
    /// The peer's end, when the loop may write to it itself.
    at_once: Option<AtOnce>,
}

impl Outbox {
    /// An outbox whose thread writes each line to `to`, which it drops once the outbox is
    /// closed and everything in it written.
    pub fn new(mut to: impl Write + Send + 'static) -> Outbox {
        let (lines, queue) = mpsc::channel::<Vec<u8>>();
        let backlog = Backlog::new(BUDGET);
        let writer = backlog.clone();
        std::thread::spawn(move || {
            for line in queue {
                let written = write_patiently(&mut to, &line).and_then(|()| to.flush());
                writer.done(line.len());
                if written.is_err() {
                    // The peer is gone: nothing more can reach it, and nothing waits for
                    // room in it.
                    writer.break_off();
                    return;
                }
            }
        });
        Outbox {
            lines: Some(lines),
            backlog,
            at_once: None,
        }
    }

    /// An outbox for `to`, a pipe or a socket, which the loop writes to itself while
    /// nothing waits for it and it takes a line at once; otherwise as [`Outbox::new`].
    pub fn at_once(to: impl Write + AsFd + Send + 'static) -> Outbox {
        let at_once = AtOnce::of(&to);
        let mut outbox = Outbox::new(to);
        outbox.at_once = at_once;
        outbox
    }

    /// Queues `line` and its line break; `false` when the peer can no longer be written
    /// to.
    pub fn send(&self, line: &[u8]) -> bool {
        let Some(lines) = &self.lines else {
            return false;
        };
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line);
        bytes.push(b'\n');
        // Under the backlog's lock: nothing is queued meanwhile, so lines keep their order.
        let mut state = self.backlog.lock();
        if state.broken {
            return false;
        }
        if state.used == 0
            && let Some(at_once) = &self.at_once
        {
            let written = at_once.write(&bytes);
            if written == bytes.len() {
                return true;
            }
            bytes.drain(..written);
        }
        state.add(bytes.len());
        drop(state);
        lines.send(bytes).is_ok()
    }

    /// No more lines: what is queued is written, then the peer's end is closed.
    pub fn close(&mut self) {
        self.lines = None;
        self.at_once = None;
    }

    /// Closes the outbox and waits until what is in it is written, for as long as the
    /// peer keeps taking it: until a line has waited `patience` for it.
    pub fn drain(mut self, patience: Duration) {
        self.close();
        let shared = &self.backlog.0;
        let mut state = self.backlog.lock();
        while state.used > 0 && !state.broken {
            if state
                .waiting_since
                .is_some_and(|since| since.elapsed() >= patience)
            {
                return;
            }
            let tick = Duration::from_millis(100);
            state = (shared.changed.wait_timeout(state, tick))
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
    }

    /// What waits in the outbox, for the readers it holds back.
    pub fn backlog(&self) -> Backlog {
        self.backlog.clone()
    }

    /// Since when the peer has taken nothing of what waits for it, if anything does.
    pub fn stalled_since(&self) -> Option<Instant> {
        self.backlog.lock().waiting_since
    }
}

impl Drop for Outbox {
    fn drop(&mut self) {
        // The session is over: a reader waiting for room in it waits no more.
        self.backlog.break_off();
    }
}

/// What waits to go somewhere, counted against a budget, with the readers that wait for
/// room in it.
#[derive(Clone)]
pub struct Backlog(Arc<Shared>);

struct Shared {
    budget: usize,
    state: Mutex<State>,
    changed: Condvar,
}

#[derive(Default)]
struct State {
    /// What is queued and not yet taken (bytes, or whatever the budget counts).
    used: usize,
    /// Since when nothing has been taken while something waits: set as the first thing
    /// is added, moved on as each is taken, gone when nothing waits. Kept where `used`
    /// changes, so that no one reading it sees a line queued but not yet counted as
    /// waiting.
    waiting_since: Option<Instant>,
    /// Whether nothing will be taken any more: nobody waits for room.
    broken: bool,
    /// The loop that reads the side whose lines come here, woken as room is made.
    reader: Option<Waker>,
}

impl State {
    fn add(&mut self, amount: usize) {
        self.used += amount;
        self.waiting_since.get_or_insert_with(Instant::now);
    }
}

impl Backlog {
    /// An empty backlog, with room until `budget` is used.
    pub fn new(budget: usize) -> Backlog {
        Backlog(Arc::new(Shared {
            budget,
            state: Mutex::default(),
            changed: Condvar::new(),
        }))
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.0.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Counts `amount` more as waiting.
    pub fn add(&self, amount: usize) {
        self.lock().add(amount);
    }

    /// Counts `amount` as taken, and wakes whoever waits for room.
    pub fn done(&self, amount: usize) {
        let mut state = self.lock();
        state.used = state.used.saturating_sub(amount);
        state.waiting_since = (state.used > 0).then(Instant::now);
        let reader = state.reader.clone();
        drop(state);
        self.0.changed.notify_all();
        reader.iter().for_each(Waker::wake);
    }

    fn break_off(&self) {
        let mut state = self.lock();
        state.broken = true;
        let reader = state.reader.clone();
        drop(state);
        self.0.changed.notify_all();
        reader.iter().for_each(Waker::wake);
    }

    /// Wakes `reader` whenever room is made: a loop that stopped reading a side for want
    /// of room here polls nothing that would tell it so.
    pub fn wakes(&self, reader: Waker) {
        self.lock().reader = Some(reader);
    }

    /// Whether there is room: less than the budget used, or nothing taken any more.
    pub fn has_room(&self) -> bool {
        let state = self.lock();
        state.used < self.0.budget || state.broken
    }

    /// Waits until there is room.
    pub fn wait_for_room(&self) {
        let mut state = self.lock();
        while state.used >= self.0.budget && !state.broken {
            state = self
                .0
                .changed
                .wait(state)
                .unwrap_or_else(PoisonError::into_inner);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{BufRead, BufReader};

    #[test]
    fn lines_written_at_once_and_lines_queued_reach_the_peer_once_each_in_order() {
        // R19: while a slow peer reads, its pipe fills and empties by turns, and the loop
        // writes some lines itself and queues others; the peer must read every line
        // once, in the order sent, whichever way each went.
        let (reader, writer) = std::io::pipe().unwrap();
        let outbox = Outbox::at_once(writer);
        let line = |number: usize| format!("{number:05}{}", "x".repeat(3000));
        let peer = std::thread::spawn(move || {
            let mut read = Vec::new();
            for line in BufReader::new(reader).lines() {
                read.push(line.unwrap());
                if read.len() % 8 == 0 {
                    std::thread::sleep(Duration::from_micros(300));
                }
            }
            read
        });
        for number in 0..2000 {
            assert!(outbox.send(line(number).as_bytes()));
            if number % 16 == 0 {
                std::thread::sleep(Duration::from_micros(200));
            }
        }
        outbox.drain(Duration::from_secs(30));
        let read = peer.join().unwrap();
        assert_eq!(read.len(), 2000, "every line, once");
        for (number, read) in read.iter().enumerate() {
            assert_eq!(*read, line(number), "line {number} in its place");
        }
    }

    #[test]
    fn a_non_blocking_end_that_is_full_for_a_while_is_not_a_peer_that_is_gone() {
        // The client made its end non-blocking (it is shared) and reads late: every
        // line reaches it, whole and in order, where a full end was taken for one gone.
        let (mut reader, writer) = std::io::pipe().unwrap();
        let flags = rustix::fs::fcntl_getfl(&writer).unwrap();
        rustix::fs::fcntl_setfl(&writer, flags | rustix::fs::OFlags::NONBLOCK).unwrap();
        let outbox = Outbox::new(writer);
        let lines: Vec<String> = (0..64)
            .map(|n| format!("{n}:{}", "x".repeat(8000)))
            .collect();
        for line in &lines {
            outbox.send(line.as_bytes());
        }
        std::thread::sleep(std::time::Duration::from_millis(200));
        drop(outbox);
        let mut read = String::new();
        std::io::Read::read_to_string(&mut reader, &mut read).unwrap();
        let got: Vec<&str> = read.lines().collect();
        assert_eq!(got.len(), lines.len());
        assert!(got.iter().zip(&lines).all(|(got, sent)| got == sent));
    }
}
