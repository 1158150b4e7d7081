//! A byte stream read as lines (the client's stdin, a server's stdout), each bounded by
//! the cap on one message and each waiting for room where it goes.

use crate::event::Event;
use crate::outbox::Feed;
use std::io::{BufRead, BufReader, Read};

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

/// Sends each line of `from`, without its `\n`, as `line(...)`, then how the stream
/// ended. A line longer than `cap` is never held whole: reading stops past the cap, and
/// the stream ends there. Each line waits for room where it goes before the next is read
/// (`outbox.rs`).
pub(crate) fn read_lines(
    from: impl Read + Send + 'static,
    cap: usize,
    to: Feed,
    line: fn(Vec<u8>) -> Event,
    ends: Ends,
) {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        // At most the cap and its line break.
        let limit = u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1);
        let ended = loop {
            let mut buffer = Vec::new();
            match (&mut from).take(limit).read_until(b'\n', &mut buffer) {
                Ok(0) | Err(_) => break ends.closed,
                Ok(_) => {
                    if buffer.last() == Some(&b'\n') {
                        buffer.pop();
                    } else if buffer.len() > cap {
                        break ends.over_cap;
                    }
                    if !to.line(line(buffer)) {
                        return;
                    }
                }
            }
        };
        to.control(ended);
    });
}
