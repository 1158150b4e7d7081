//! A session loop's inbox: what other threads bring it (the HTTP upstream's drivers, the
//! front's handlers, the signal thread), with a descriptor that is readable while
//! something may wait in it, so that the loop waits for its inbox and for the streams it
//! reads itself in one `poll` (`sources.rs`).

use crate::event::Event;
use rustix::event::{EventfdFlags, eventfd};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::mpsc::Receiver;

/// The events sent to the loop, and its waker.
pub struct Inbox {
    pub(crate) events: Receiver<Event>,
    pub(crate) waker: Waker,
}

/// An eventfd: readable from the first [`Waker::wake`] until [`Waker::clear`]. Whoever
/// sends the loop an event wakes it after sending, and the loop clears it before it
/// takes what was sent, so that no event sent meanwhile goes unseen.
#[derive(Clone)]
pub struct Waker(Arc<OwnedFd>);

impl Waker {
    /// A waker not yet woken.
    pub fn new() -> Waker {
        // Without an eventfd the loop cannot wait for its inbox at all; the process is
        // out of descriptors, which nothing in the proxy could go on from.
        let fd = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)
            .expect("an eventfd for the session's inbox");
        Waker(Arc::new(fd))
    }

    /// Makes the waker readable. Past its counter's bound, a write fails and it stays
    /// readable, which is all a wake asks.
    pub fn wake(&self) {
        let _ = rustix::io::write(&*self.0, &1u64.to_ne_bytes());
    }

    /// Makes it unreadable again, until the next wake.
    pub fn clear(&self) {
        let _ = rustix::io::read(&*self.0, &mut [0; 8]);
    }
}

impl AsFd for Waker {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::{PollFd, PollFlags, Timespec, poll};

    fn readable(waker: &Waker) -> bool {
        let mut fds = [PollFd::new(waker, PollFlags::IN)];
        poll(&mut fds, Some(&Timespec::default())).unwrap() == 1
    }

    #[test]
    fn a_waker_is_readable_from_a_wake_until_it_is_cleared() {
        let waker = Waker::new();
        assert!(!readable(&waker), "not woken yet");
        waker.wake();
        waker.clone().wake();
        assert!(readable(&waker), "woken, by either handle");
        waker.clear();
        assert!(!readable(&waker), "one clear takes every wake before it");
    }
}
