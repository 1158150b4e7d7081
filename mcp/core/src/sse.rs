//! An SSE body (`text/event-stream`), read as it arrives with `eventsource-stream`: the
//! parser reqwest-eventsource and async-openai use, driven on the reading thread. Any
//! reader will do (a socket's, a wasi:http body's); a read that fails with
//! `ErrorKind::TimedOut` is the server gone silent.

use eventsource_stream::Eventsource;
use std::io::Read;
use std::time::Duration;

/// Where a stream was, for resuming it: the last event id the server gave, and how long
/// it asked a client to wait before coming back.
#[derive(Debug, Default, PartialEq)]
pub struct Place {
    pub last_event_id: Option<String>,
    pub retry: Option<Duration>,
}

/// Why a stream broke off before it ended.
#[derive(Debug, PartialEq)]
pub enum Broken {
    /// The server sent nothing for as long as one read may wait.
    Silent,
    /// The connection, text that is not UTF-8, an event over the cap: what it was.
    Other(String),
}

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            Broken::Silent => f.write_str("the server sent nothing for too long"),
            Broken::Other(why) => f.write_str(why),
        }
    }
}

/// Reads `body` until it ends, handing each event's data to `message`.
pub fn read(body: impl Read, cap: usize, message: impl FnMut(String)) -> Result<(), Broken> {
    read_from(body, &mut Place::default(), cap, message)
}

/// [`read`], keeping `place` up to date as events come. The stream breaks off when more
/// than `cap` bytes come with no event ending among them: the parser would hold them all.
pub fn read_from(
    body: impl Read,
    place: &mut Place,
    cap: usize,
    mut message: impl FnMut(String),
) -> Result<(), Broken> {
    read_events(body, place, cap, |_, data| message(data))
}

/// [`read_from`], handing each event's kind (`message` when it names none) with its data.
pub fn read_events(
    body: impl Read,
    place: &mut Place,
    cap: usize,
    mut event_of: impl FnMut(&str, String),
) -> Result<(), Broken> {
    read_while(body, place, cap, |kind, data| {
        event_of(kind, data);
        true
    })
}

/// [`read_events`] for as long as `event_of` says to go on: a reader that has what it
/// came for (the answers a request was owed) stops there, whether the server ends the
/// stream or not.
pub fn read_while(
    mut body: impl Read,
    place: &mut Place,
    cap: usize,
    mut event_of: impl FnMut(&str, String) -> bool,
) -> Result<(), Broken> {
    // Bytes read since the last event came out of the parser.
    let unended = std::cell::Cell::new(0usize);
    let counted = &unended;
    let silent = std::cell::Cell::new(false);
    let timed = &silent;
    let chunks = std::iter::from_fn(move || {
        let mut chunk = vec![0; 16 * 1024];
        match body.read(&mut chunk) {
            Ok(0) => None,
            Ok(read) => {
                chunk.truncate(read);
                counted.set(counted.get() + read);
                if counted.get() > cap.saturating_add(chunk.len()) {
                    let over = format!("an event over the {} MiB cap on one message", cap >> 20);
                    return Some(Err(std::io::Error::other(over)));
                }
                Some(Ok(chunk))
            }
            Err(error) => {
                timed.set(timed_out(&error));
                Some(Err(error))
            }
        }
    });
    let events = futures_util::stream::iter(chunks).eventsource();
    for event in futures_executor::block_on_stream(events) {
        let event = event.map_err(|error| match silent.get() {
            true => Broken::Silent,
            false => Broken::Other(error.to_string()),
        })?;
        unended.set(0);
        // Each event carries the last id the stream gave (an empty one clears it).
        place.last_event_id = Some(event.id).filter(|id| !id.is_empty());
        // Only a retry given with an event's data counts: eventsource-stream drops an
        // event without data, with whatever it said.
        if event.retry.is_some() {
            place.retry = event.retry;
        }
        // An event without data (a keep-alive) carries nothing.
        if !event.data.is_empty() {
            let kind = if event.event.is_empty() {
                "message"
            } else {
                &event.event
            };
            if !event_of(kind, event.data) {
                break;
            }
        }
    }
    Ok(())
}

/// Whether a read failed because it waited as long as it may.
fn timed_out(error: &std::io::Error) -> bool {
    error.kind() == std::io::ErrorKind::TimedOut
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(body: &[u8]) -> (Vec<String>, Result<(), String>) {
        let mut got = Vec::new();
        let end = read(body, 1 << 20, |message| got.push(message)).map_err(|e| e.to_string());
        (got, end)
    }

    #[test]
    fn each_event_is_one_message_whatever_its_lines() {
        let body =
            b": keep-alive\r\n\r\nevent: message\ndata: {\"a\":\ndata: 1}\n\nid: 2\ndata: {}\n\n";
        let (got, end) = messages(body);
        assert_eq!(end, Ok(()));
        assert_eq!(got, ["{\"a\":\n1}", "{}"]);
    }

    #[test]
    fn the_place_to_resume_from_is_kept() {
        let mut place = Place::default();
        let body: &[u8] = b"retry: 250\nid: 7\ndata: {}\n\ndata: {}\n\n: no id\n\n";
        assert_eq!(read_from(body, &mut place, 1 << 20, |_| {}), Ok(()));
        assert_eq!(
            place,
            Place {
                last_event_id: Some("7".into()),
                retry: Some(Duration::from_millis(250)),
            }
        );
    }

    #[test]
    fn an_event_that_never_ends_breaks_the_stream_off_past_the_cap() {
        // R20: events up to the cap come through; one that goes on past it is never
        // held whole.
        let small = format!("data: {}\n\n", "a".repeat(900 << 10));
        let endless = format!("data: {}", "b".repeat(3 << 20));
        let body = format!("{small}{small}{endless}");
        let (got, end) = messages(body.as_bytes());
        assert_eq!(got.len(), 2);
        let why = end.unwrap_err();
        assert!(why.contains("over the 1 MiB cap"), "{why}");
    }

    #[test]
    fn a_reader_that_has_what_it_came_for_reads_no_further() {
        // A server may keep a POST's stream open after its answer: the reader stops at
        // the answer, and never waits on what comes after.
        struct Never;
        impl Read for Never {
            fn read(&mut self, _: &mut [u8]) -> std::io::Result<usize> {
                panic!("read past the event it stopped at")
            }
        }
        let body = (&b"data: 1\n\ndata: 2\n\n"[..]).chain(Never);
        let mut got = Vec::new();
        let end = read_while(body, &mut Place::default(), 1 << 20, |_, data| {
            got.push(data);
            got.len() < 2
        });
        assert_eq!(end, Ok(()));
        assert_eq!(got, ["1", "2"]);
    }

    #[test]
    fn text_that_is_not_utf8_breaks_the_stream_off() {
        let (got, end) = messages(b"data: {}\n\ndata: \xff\n\n");
        assert_eq!(got, ["{}"]);
        assert!(end.is_err());
    }
}
