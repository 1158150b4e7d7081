//! The time, as the transport reads it and hands it in: the core has no clock of its own,
//! so that it runs wherever its transport does (a wasi:http engine's clock is the
//! engine's) and a test can say what time it is.

use std::time::{Instant, SystemTime};

/// A moment, read once by the transport for one step of the proxy.
#[derive(Clone, Copy, Debug)]
pub struct Now {
    /// For how long things have waited: the hold, a listing's age, a call's duration.
    pub instant: Instant,
    /// For the time of day an audit record gives.
    pub wall: SystemTime,
}
