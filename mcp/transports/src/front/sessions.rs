//! The legacy sessions a front holds: each by its `Mcp-Session-Id`, when each was last
//! used, and those ended whose servers may still run, which count toward the limit.

use super::routes::Running;
use crate::event::Event;
use std::collections::HashMap;
use std::sync::Arc;

/// The legacy sessions.
#[derive(Default)]
pub(super) struct Sessions {
    /// Each, by its `Mcp-Session-Id`, with when it was last used.
    pub(super) open: HashMap<String, (Arc<Running>, u64)>,
    /// How many are being opened: each holds a place while its server starts, outside
    /// the lock, so that requests to other sessions do not wait on it.
    pub(super) opening: usize,
    /// Sessions ended (evicted, or DELETEd) whose servers may still be running.
    pub(super) ending: Vec<Arc<Running>>,
    /// The readiness probe's session, while it is open: it holds no client's place and
    /// is never ended to make room for one.
    pub(super) probe: Option<String>,
    /// The uses of sessions so far: the clock "last used" is read on. A count, not the
    /// time: nothing a client or the machine's clock does can reorder it.
    uses: u64,
}

impl Sessions {
    /// The session `id`, marked as used now.
    pub(super) fn touch(&mut self, id: &str) -> Option<Arc<Running>> {
        self.uses += 1;
        let now = self.uses;
        let (running, used) = self.open.get_mut(id)?;
        *used = now;
        Some(running.clone())
    }

    /// Adds a session, as used now.
    pub(super) fn add(&mut self, id: String, running: Arc<Running>) {
        self.uses += 1;
        self.open.insert(id, (running, self.uses));
    }

    /// Ends the session `id`, as a stdio client closing its stdin does: what waits is
    /// answered, then the server is told the session is over. Whether there was one.
    pub(super) fn end(&mut self, id: &str) -> bool {
        let Some((running, _)) = self.open.remove(id) else {
            return false;
        };
        if self.probe.as_deref() == Some(id) {
            self.probe = None;
        }
        running.events.control_soon(Event::ClientClosed);
        self.ending.push(running);
        true
    }

    /// Forgets what is over: sessions whose loop has ended, whose servers are gone.
    pub(super) fn prune(&mut self) {
        self.open.retain(|_, (running, _)| !running.ended());
        self.ending.retain(|running| !running.ended());
        if self
            .probe
            .as_ref()
            .is_some_and(|id| !self.open.contains_key(id))
        {
            self.probe = None;
        }
    }

    /// The clients' sessions open: every one but the probe's.
    pub(super) fn clients(&self) -> usize {
        self.open.len() - usize::from(self.probe.is_some())
    }

    /// The servers of clients' legacy sessions running, starting, or ending.
    pub(super) fn servers(&self) -> usize {
        self.clients() + self.opening + self.ending.len()
    }

    /// The client session used least recently: the one ended to make room.
    pub(super) fn least_used(&self) -> Option<String> {
        (self.open.iter())
            .filter(|(id, _)| self.probe.as_ref() != Some(*id))
            .min_by_key(|(_, (_, used))| *used)
            .map(|(id, _)| id.clone())
    }
}

/// The longest an `initialize` waits for the server of an ended session to be gone: its
/// stdin closed, then SIGTERM, each given the grace period, take about twice that.
pub(super) const PLACE_AT_MOST: std::time::Duration = crate::settings::GRACE.saturating_mul(4);
