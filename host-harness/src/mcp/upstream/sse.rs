//! An SSE body (`text/event-stream`), read as it arrives with `eventsource-stream`: the
//! parser reqwest-eventsource and async-openai use, driven here on the reading thread.

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

/// Reads `body` until it ends, handing each event's data to `message`. An error names
/// what broke the stream off (the connection, or text that is not UTF-8).
pub fn read(body: impl Read, message: impl FnMut(String)) -> Result<(), String> {
    read_from(body, &mut Place::default(), message)
}

/// [`read`], keeping `place` up to date as events come.
pub fn read_from(
    mut body: impl Read,
    place: &mut Place,
    mut message: impl FnMut(String),
) -> Result<(), String> {
    let chunks = std::iter::from_fn(move || {
        let mut chunk = vec![0; 16 * 1024];
        match body.read(&mut chunk) {
            Ok(0) => None,
            Ok(read) => {
                chunk.truncate(read);
                Some(Ok(chunk))
            }
            Err(error) => Some(Err(error)),
        }
    });
    let events = futures_util::stream::iter(chunks).eventsource();
    for event in futures_executor::block_on_stream(events) {
        let event = event.map_err(|error| error.to_string())?;
        // Each event carries the last id the stream gave (an empty one clears it).
        place.last_event_id = Some(event.id).filter(|id| !id.is_empty());
        // Only a retry given with an event's data counts: eventsource-stream drops an
        // event without data, with whatever it said.
        if event.retry.is_some() {
            place.retry = event.retry;
        }
        // An event without data (a keep-alive, an `endpoint` of the old transport's
        // shape) carries no message.
        if !event.data.is_empty() {
            message(event.data);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn messages(body: &[u8]) -> (Vec<String>, Result<(), String>) {
        let mut got = Vec::new();
        let end = read(body, |message| got.push(message));
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
        assert_eq!(read_from(body, &mut place, |_| {}), Ok(()));
        assert_eq!(
            place,
            Place {
                last_event_id: Some("7".into()),
                retry: Some(Duration::from_millis(250)),
            }
        );
    }

    #[test]
    fn text_that_is_not_utf8_breaks_the_stream_off() {
        let (got, end) = messages(b"data: {}\n\ndata: \xff\n\n");
        assert_eq!(got, ["{}"]);
        assert!(end.is_err());
    }
}
