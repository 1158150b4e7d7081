//! An SSE body (`text/event-stream`), read as it arrives with `eventsource-stream`: the
//! parser reqwest-eventsource and async-openai use, driven here on the reading thread.

use eventsource_stream::Eventsource;
use std::io::Read;

/// Reads `body` until it ends, handing each event's data to `message`. An error names
/// what broke the stream off (the connection, or text that is not UTF-8).
pub fn read(mut body: impl Read, mut message: impl FnMut(String)) -> Result<(), String> {
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
        match event {
            // An event without data (a keep-alive, an `endpoint` of the old transport's
            // shape) carries no message.
            Ok(event) if event.data.is_empty() => {}
            Ok(event) => message(event.data),
            Err(error) => return Err(error.to_string()),
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
    fn text_that_is_not_utf8_breaks_the_stream_off() {
        let (got, end) = messages(b"data: {}\n\ndata: \xff\n\n");
        assert_eq!(got, ["{}"]);
        assert!(end.is_err());
    }
}
