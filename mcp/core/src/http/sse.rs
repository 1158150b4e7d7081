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
    /// The id of the last event the server gave (`Last-Event-ID` when coming back).
    pub last_event_id: Option<String>,
    /// The wait the server asked for before coming back (`retry:`).
    pub retry: Option<Duration>,
}

impl Place {
    /// How long to wait before coming back for the stream: as long as the server asked
    /// (`retry:`), else a second, within bounds: a `retry: 0` would have a client ask
    /// without pause, a huge one never.
    pub fn wait_before_coming_back(&self) -> Duration {
        self.retry
            .unwrap_or(DEFAULT_RETRY)
            .clamp(MIN_RETRY, MAX_RETRY)
    }
}

/// How many GET streams in a row may end without an event before a client stops asking
/// (a POST's stream resumed, or the session's own).
pub const RECONNECTS: u32 = 5;

/// The wait before coming back for a stream, when the server named none.
const DEFAULT_RETRY: Duration = Duration::from_secs(1);

/// The least and the most a client waits before coming back, whatever the server asks.
const MIN_RETRY: Duration = Duration::from_millis(100);
const MAX_RETRY: Duration = Duration::from_secs(60);

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
    read_while(body, place, cap, |event| {
        if !event.data.is_empty() {
            event_of(&event.kind, event.data);
        }
        true
    })
}

/// One event of a stream, as [`read_while`] hands it on.
pub struct Event {
    /// Its kind: `message` when it names none.
    pub kind: String,
    /// The stream's last event id as of this event, if it gave one.
    pub id: Option<String>,
    /// The wait before coming back it named, if any.
    pub retry: Option<Duration>,
    /// Its data; empty for an event that only gives an id (a priming event), which
    /// carries no message.
    pub data: String,
}

/// [`read_events`] for as long as `event_of` says to go on: a reader that has what it
/// came for (the answers a request was owed) stops there, whether the server ends the
/// stream or not. An event that gives an id and no data (a priming event) is handed on
/// too, for a reader that tells its own client where the stream is.
pub fn read_while(
    body: impl Read,
    place: &mut Place,
    cap: usize,
    mut event_of: impl FnMut(Event) -> bool,
) -> Result<(), Broken> {
    // Bytes read since the last event came out of the parser.
    let unended = std::cell::Cell::new(0usize);
    let counted = &unended;
    let silent = std::cell::Cell::new(false);
    let timed = &silent;
    let mut lines = Lines::new(body);
    let chunks = std::iter::from_fn(move || {
        let line = lines.next_line(|read| {
            counted.set(counted.get() + read);
            if counted.get() > cap.saturating_add(CHUNK) {
                let over = format!("an event over the {} MiB cap on one message", cap >> 20);
                return Err(std::io::Error::other(over));
            }
            Ok(())
        });
        match line {
            Ok(None) => None,
            Ok(Some(line)) => Some(Ok(line)),
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
        // An event without data or id (a keep-alive) carries nothing.
        if event.data.is_empty() && place.last_event_id.is_none() {
            continue;
        }
        let kind = match event.event.is_empty() {
            true => "message".to_string(),
            false => event.event,
        };
        let event = Event {
            kind,
            id: place.last_event_id.clone(),
            retry: event.retry,
            data: event.data,
        };
        if !event_of(event) {
            break;
        }
    }
    Ok(())
}

/// How much one read asks the body for.
const CHUNK: usize = 16 * 1024;

/// A body cut into whole lines before the parser sees them. eventsource-stream parses
/// from the start of what it holds each time it is given more, and copies what follows
/// each line it takes: given a long line in pieces, or many lines at once, it takes time
/// quadratic in the event. Given one whole line at a time, it reads each byte once.
struct Lines<R> {
    body: R,
    /// Bytes read and not yet handed on; those before `from` are handed on already.
    held: Vec<u8>,
    from: usize,
    /// How far `held` is known to have no line end.
    scanned: usize,
    ended: bool,
    chunk: Box<[u8; CHUNK]>,
}

impl<R: Read> Lines<R> {
    fn new(body: R) -> Self {
        Lines {
            body,
            held: Vec::new(),
            from: 0,
            scanned: 0,
            ended: false,
            chunk: Box::new([0; CHUNK]),
        }
    }

    /// The next line with its line end (the last may have none), reading as needed;
    /// `count` is told of each read's size and may refuse it.
    fn next_line(
        &mut self,
        mut count: impl FnMut(usize) -> std::io::Result<()>,
    ) -> std::io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(end) = self.line_end() {
                let line = self.held[self.from..end].to_vec();
                self.from = end;
                self.scanned = end;
                return Ok(Some(line));
            }
            if self.ended {
                let rest = self.held.split_off(self.from);
                self.from = 0;
                self.scanned = 0;
                return Ok(Some(rest).filter(|rest| !rest.is_empty()));
            }
            // What was handed on goes before more is read, so `held` is one line at most.
            self.held.drain(..self.from);
            self.scanned -= self.from;
            self.from = 0;
            // Read into a buffer of its own: growing `held` for each read would clear
            // a chunk's worth of it for a read of one byte.
            let read = self.body.read(&mut self.chunk[..])?;
            match read {
                0 => self.ended = true,
                read => {
                    count(read)?;
                    self.held.extend_from_slice(&self.chunk[..read]);
                }
            }
        }
    }

    /// Where the first line in `held` ends, if it ends in what was read: after its LF,
    /// after a CR not at the end (a CR at the end may be the first of CR LF).
    fn line_end(&mut self) -> Option<usize> {
        let unscanned = &self.held[self.scanned..];
        match unscanned
            .iter()
            .position(|byte| matches!(byte, b'\n' | b'\r'))
        {
            None => {
                self.scanned = self.held.len();
                None
            }
            Some(at) => {
                let at = self.scanned + at;
                match (self.held[at], self.held.get(at + 1)) {
                    (b'\r', Some(b'\n')) => Some(at + 2),
                    (b'\r', None) if !self.ended => {
                        self.scanned = at;
                        None
                    }
                    _ => Some(at + 1),
                }
            }
        }
    }
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
    fn the_wait_before_coming_back_is_the_server_s_within_bounds() {
        let after = |retry: Option<u64>| {
            let retry = retry.map(Duration::from_millis);
            let place = Place {
                last_event_id: None,
                retry,
            };
            place.wait_before_coming_back()
        };
        assert_eq!(after(Some(250)), Duration::from_millis(250));
        assert_eq!(after(None), Duration::from_secs(1));
        // Neither without pause nor never.
        assert_eq!(after(Some(0)), Duration::from_millis(100));
        assert_eq!(after(Some(u64::MAX)), Duration::from_secs(60));
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
        let end = read_while(body, &mut Place::default(), 1 << 20, |event| {
            got.push(event.data);
            got.len() < 2
        });
        assert_eq!(end, Ok(()));
        assert_eq!(got, ["1", "2"]);
    }

    #[test]
    fn a_priming_event_is_handed_on_with_its_id_and_carries_no_message() {
        // 2025-11-25: a server opens a resumable stream with an id, a wait and no
        // message; a reader that tells its own client where the stream is sees it, one
        // that reads messages does not.
        let body = "id: p1\nretry: 250\ndata: \n\nid: e2\ndata: {}\n\n: keep-alive\n\n";
        let mut got = Vec::new();
        let mut place = Place::default();
        let end = read_while(body.as_bytes(), &mut place, 1 << 20, |event| {
            got.push((event.id, event.retry, event.data));
            true
        });
        assert_eq!(end, Ok(()));
        assert_eq!(got.len(), 2, "{got:?}");
        let wait = Some(Duration::from_millis(250));
        assert_eq!(got[0], (Some("p1".into()), wait, String::new()));
        assert_eq!(got[1], (Some("e2".into()), None, "{}".into()));
        assert_eq!(place.last_event_id.as_deref(), Some("e2"));
        let (messages, _) = messages(body.as_bytes());
        assert_eq!(messages, ["{}"]);
    }

    /// A body that gives at most `most` bytes a read, as a slow connection would.
    struct Trickle<'a> {
        body: &'a [u8],
        most: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, into: &mut [u8]) -> std::io::Result<usize> {
            let mut piece = &self.body[..self.most.min(self.body.len())];
            let read = piece.read(into)?;
            self.body = &self.body[read..];
            Ok(read)
        }
    }

    fn trickled(body: &[u8], most: usize, cap: usize) -> Vec<String> {
        let mut got = Vec::new();
        let end = read(Trickle { body, most }, cap, |message| got.push(message));
        assert_eq!(end, Ok(()), "{most} bytes a read");
        got
    }

    #[test]
    fn events_are_the_same_however_the_bytes_arrive() {
        // Every line end the format has, a CR LF that may be cut between its two bytes,
        // a character of more than one byte, a last event with no line end after it.
        let body = "data: a\r\n\r\ndata: \u{e9}\u{1F600}\rdata: b\r\rid: 1\ndata: c\n\ndata: d\n\n";
        let whole = ["a", "\u{e9}\u{1F600}\nb", "c", "d"];
        for most in 1..=body.len() {
            assert_eq!(
                trickled(body.as_bytes(), most, 1 << 20),
                whole,
                "{most} a read"
            );
        }
        for split in 0..=body.len() {
            let (first, rest) = body.as_bytes().split_at(split);
            let mut got = Vec::new();
            assert_eq!(read(first.chain(rest), 1 << 20, |m| got.push(m)), Ok(()));
            assert_eq!(got, whole, "split at {split}");
        }
    }

    #[test]
    fn a_64_mib_event_is_read_in_linear_time_however_it_arrives() {
        // R20: an event as big as the cap on one message, cut into reads of one byte and
        // up: the parser was given each read's bytes whole and reparsed the unended line
        // every time, a time quadratic in the event that would not end here.
        let data = "x".repeat(64 << 20);
        let body = format!("data: {data}\n\ndata: after\n\n");
        for most in [1, 7, 16 << 10, body.len()] {
            let got = trickled(body.as_bytes(), most, 65 << 20);
            assert_eq!(got.len(), 2, "{most} a read");
            assert!(got[0] == data, "{most} a read: the event came out changed");
            assert_eq!(got[1], "after");
        }
    }

    #[test]
    fn a_stream_of_empty_lines_is_read_in_linear_time() {
        // Empty lines dispatch no event: many in one read made the parser copy what
        // followed each of them.
        let body = format!("{}data: 1\n\n", "\n".repeat(8 << 20));
        assert_eq!(trickled(body.as_bytes(), 16 << 10, 16 << 20), ["1"]);
    }

    #[test]
    fn text_that_is_not_utf8_breaks_the_stream_off() {
        let (got, end) = messages(b"data: {}\n\ndata: \xff\n\n");
        assert_eq!(got, ["{}"]);
        assert!(end.is_err());
    }
}
