//! The front's routing against a simulated session, under random interleavings: several
//! clients of the shared session (2026-07-28) that pick the same ids and progress
//! tokens, or the one client of a legacy session that reuses an id; clients that close a
//! request's stream; a server that answers in any order, in batches, twice, with progress
//! notes, with a cancellation of its own, or with what nobody asked; a session that ends.
//! Whatever happens, every request a client keeps open gets exactly one final message on
//! its own stream, under its own id, holding its own answer, and only its own notes
//! before it (R19: no cross-client delivery); a request whose stream a shared-session
//! client closes is cancelled at the server under the front's id. The oracle reads each
//! stream with serde_json alone.

use super::*;
use crate::session::Client;
use proptest::prelude::*;
use reasons_mcp::delivery::{About, Part};
use reasons_mcp::jsonrpc::Line;
use serde_json::{Value, json};
use std::ops::Range;
use tokio::sync::mpsc::error::TryRecvError;

#[derive(Clone, Debug)]
enum Step {
    /// A client POSTs a request: which client, its id, whether it carries a token.
    Request { client: u8, id: u8, token: bool },
    /// A client closes the stream of one of its requests still open.
    Close(usize),
    /// The server answers one of the requests it holds, with the next in one batch if
    /// `batch`.
    Answer { which: usize, batch: bool },
    /// The server sends a progress note for one of the requests it holds.
    Note(usize),
    /// The server cancels one of the requests it holds (no answer follows).
    Cancels(usize),
    /// The server sends what nobody asked for: a log message.
    Unsolicited,
    /// The server sends its last answer again.
    Again,
    /// The session ends.
    End,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => (0..3u8, 0..3u8, any::<bool>())
            .prop_map(|(client, id, token)| Step::Request { client, id, token }),
        2 => any::<usize>().prop_map(Step::Close),
        5 => (any::<usize>(), any::<bool>()).prop_map(|(which, batch)| Step::Answer { which, batch }),
        3 => any::<usize>().prop_map(Step::Note),
        1 => any::<usize>().prop_map(Step::Cancels),
        1 => Just(Step::Unsolicited),
        1 => Just(Step::Again),
        1 => Just(Step::End),
    ]
}

/// One request as its client sees it.
struct Request {
    /// The number the test gave it, which the server's answer and notes carry.
    n: usize,
    given: Value,
    token: Option<Value>,
    stream: Option<Receiver<Sent>>,
    cancel: Option<Cancel>,
    received: Vec<Value>,
    /// Whether its stream ended (the front dropped its sender).
    ended: bool,
    closed: bool,
}

impl Request {
    /// Takes what its stream holds now.
    fn drain(&mut self) {
        let Some(stream) = &mut self.stream else {
            return;
        };
        loop {
            match stream.try_recv() {
                Ok(sent) => {
                    let message: Value =
                        serde_json::from_slice(&sent.line).expect("the front sends JSON");
                    // Only the request's answer goes under a status of its own.
                    let answers = message.get("method").is_none();
                    assert_eq!(sent.answer.is_some(), answers, "{message}");
                    self.received.push(message);
                }
                Err(TryRecvError::Empty) => return,
                Err(TryRecvError::Disconnected) => {
                    self.ended = true;
                    return;
                }
            }
        }
    }

    /// Whether its final message has come: an answer, or the server's cancellation.
    fn finished(&self) -> bool {
        self.received.iter().any(is_final)
    }
}

fn is_final(message: &Value) -> bool {
    message.get("method").is_none() || message["method"] == "notifications/cancelled"
}

/// A message the server sends, with what it is about: the test's own account, written
/// where the test put the id or token, as the proxy would give it.
type Said = (String, About);

/// `{head}NAME{tail}`, about what `NAME` names, by `about`.
fn said(head: &str, name: &Value, tail: &str, about: fn(Id, Range<usize>) -> About) -> Said {
    let name = name.to_string();
    let at = head.len()..head.len() + name.len();
    let id = Id::parse(&name).unwrap();
    (format!("{head}{name}{tail}"), about(id, at))
}

fn answer(one: &Held) -> Said {
    let tail = format!(r#","result":{{"n":{}}}}}"#, one.n);
    said(r#"{"jsonrpc":"2.0","id":"#, &one.id, &tail, |id, at| {
        About::Answer { id, at, code: None }
    })
}

/// Writes `messages` as the session would: one line, a batch when there are more.
fn write(session: &mut Routed, messages: &[Said]) {
    if let [(message, about)] = messages {
        let whole = Part {
            text: 0..message.len(),
            about: about.clone(),
        };
        session.write(message.as_bytes(), &[whole]);
        return;
    }
    let (mut line, mut parts) = (String::from("["), Vec::new());
    for (message, about) in messages {
        if !parts.is_empty() {
            line.push(',');
        }
        parts.push(Part {
            text: line.len()..line.len() + message.len(),
            about: about.clone(),
        });
        line.push_str(message);
    }
    line.push(']');
    session.write(line.as_bytes(), &parts);
}

/// A request as the server holds it: its id and token as the server sees them.
struct Held {
    n: usize,
    id: Value,
    token: Option<Value>,
}

fn play(shared: bool, steps: &[Step]) {
    let routes = Arc::new(Mutex::new(Routes {
        shared,
        ..Routes::default()
    }));
    // Room for every cancellation the steps can make: the oracle reads them at the end.
    let (events, cancelled) = outbox::holding(64);
    let running = Arc::new(Running {
        events,
        routes: routes.clone(),
        thread: Mutex::new(None),
    });
    let mut session = Routed(routes.clone());
    let mut requests: Vec<Request> = Vec::new();
    let mut held: Vec<Held> = Vec::new();
    let mut last_answer: Option<Vec<Said>> = None;
    // Front ids of requests whose client closed them before their end: each must be
    // cancelled at the server.
    let mut to_cancel: Vec<Value> = Vec::new();
    let mut ended = false;
    // The requests the server answered, by number: each must get that answer, and only
    // those the server still held when the session ended may get the front's error.
    let mut answered_by_server: Vec<usize> = Vec::new();
    let finish = [Step::End];
    for step in steps.iter().chain(&finish) {
        match step {
            Step::Request { client, id, token } => {
                let n = requests.len();
                // Distinct clients spell the same ids alike: in the shared session they
                // collide on purpose. A legacy session has one client, whose tokens are
                // its own to keep apart.
                let given = json!(id);
                let token = token.then(|| match shared {
                    true => json!(format!("t{client}")),
                    false => json!(n),
                });
                let mut meta = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28"});
                if let Some(token) = &token {
                    meta["progressToken"] = token.clone();
                }
                let text = json!({"jsonrpc": "2.0", "id": given, "method": "tools/call",
                    "params": {"name": "t", "arguments": {}, "_meta": meta}})
                .to_string();
                let (answers, stream) = channel(STREAM_AHEAD);
                // A legacy request waits until the server answers or cancels it, whether
                // or not its client still reads its stream.
                let pending = held.iter().any(|one| requests[one.n].given == given);
                let line = Parsed::read(text.into_bytes()).unwrap();
                let named = match line.line() {
                    Line::One(read) => reasons_mcp::http::admission::route(&read).unwrap().token,
                    Line::Batch(_) => unreachable!("one request"),
                };
                let id = Id::parse(&given.to_string()).unwrap();
                let admitted = lock(&routes).admit(id, line, named, answers);
                let (id, line) = match admitted {
                    Ok(admitted) => admitted,
                    Err(refused) => {
                        // Only a session that has ended, or a legacy client's id still
                        // waiting, is refused; under that id when it is the id.
                        assert!(ended || (!shared && pending), "{refused:?}");
                        if !ended {
                            let under = refused.id.as_ref().map(Id::json);
                            assert_eq!(under, Some(given.to_string().as_str()));
                        }
                        continue;
                    }
                };
                assert!(!ended, "a session that ended took a request");
                assert!(
                    shared || !pending,
                    "a legacy id still waiting was taken again"
                );
                let sent: Value = serde_json::from_str(line.text()).unwrap();
                assert_eq!(sent["id"].to_string(), id.json());
                held.push(Held {
                    n,
                    id: sent["id"].clone(),
                    token: token
                        .as_ref()
                        .map(|_| sent["params"]["_meta"]["progressToken"].clone()),
                });
                requests.push(Request {
                    n,
                    given,
                    token,
                    stream: Some(stream),
                    cancel: shared.then(|| Cancel {
                        running: running.clone(),
                        id,
                    }),
                    received: Vec::new(),
                    ended: false,
                    closed: false,
                });
            }
            Step::Close(which) => {
                let open: Vec<usize> = (0..requests.len())
                    .filter(|at| !requests[*at].closed)
                    .collect();
                if open.is_empty() {
                    continue;
                }
                let request = &mut requests[open[which % open.len()]];
                request.drain();
                if shared && !request.finished() && !request.ended {
                    let front = held
                        .iter()
                        .find(|one| one.n == request.n)
                        .map(|one| one.id.clone())
                        .expect("a request not finished is held by the server");
                    to_cancel.push(front);
                }
                request.closed = true;
                request.stream = None;
                request.cancel = None;
            }
            Step::Answer { which, batch } => {
                if held.is_empty() {
                    continue;
                }
                let count = if *batch { 2.min(held.len()) } else { 1 };
                let at = which % held.len();
                let answered: Vec<Held> = (0..count)
                    .map(|_| held.remove(at.min(held.len() - 1)))
                    .collect();
                // After the end, the front has answered them all already.
                if !ended {
                    answered_by_server.extend(answered.iter().map(|one| one.n));
                }
                let answers: Vec<Said> = answered.iter().map(answer).collect();
                write(&mut session, &answers);
                last_answer = Some(answers);
            }
            Step::Note(which) => {
                let with_token: Vec<&Held> =
                    held.iter().filter(|one| one.token.is_some()).collect();
                if with_token.is_empty() {
                    continue;
                }
                let one = with_token[which % with_token.len()];
                let head = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"#;
                let tail = format!(r#","progress":{}}}}}"#, one.n);
                let token = one.token.as_ref().unwrap();
                let note = said(head, token, &tail, |token, at| About::Progress {
                    token,
                    at,
                });
                write(&mut session, &[note]);
            }
            Step::Cancels(which) => {
                if held.is_empty() {
                    continue;
                }
                let one = held.remove(which % held.len());
                let head =
                    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"#;
                let tail = r#","reason":"the server gave up"}}"#;
                let note = said(head, &one.id, tail, |id, at| About::Cancelled { id, at });
                write(&mut session, &[note]);
            }
            Step::Unsolicited => {
                let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
                    "params": {"level": "info", "data": "hello"}});
                write(&mut session, &[(note.to_string(), About::Other)]);
            }
            // A legacy client may use an id again once it is answered, and then a
            // server's second answer to the first would be the second's: the proxy, which
            // drops a second answer before the front sees it, is what keeps that out.
            Step::Again if shared => {
                if let Some(answers) = &last_answer {
                    write(&mut session, answers);
                }
            }
            Step::Again => {}
            Step::End => {
                lock(&routes).end();
                ended = true;
            }
        }
        for request in &mut requests {
            request.drain();
        }
    }
    // What the server was told: a cancellation for each request closed before its end.
    let told: Vec<Value> = cancelled
        .events
        .try_iter()
        .map(|event| match event {
            Event::Client(line) => serde_json::from_str::<Value>(line.unwrap().text()).unwrap(),
            _ => panic!("the front sends the session only client lines"),
        })
        .collect();
    assert_eq!(told.len(), to_cancel.len(), "{told:?}");
    for (note, id) in told.iter().zip(&to_cancel) {
        assert_eq!(note["method"], "notifications/cancelled");
        assert_eq!(&note["params"]["requestId"], id);
    }
    for request in requests.iter().filter(|request| !request.closed) {
        let n = request.n;
        let messages = &request.received;
        assert!(request.ended, "{n}: its stream never ended: {messages:?}");
        let finals: Vec<&Value> = messages.iter().filter(|m| is_final(m)).collect();
        assert_eq!(finals.len(), 1, "{n}: {messages:?}");
        let last = messages.last().unwrap();
        assert!(is_final(last), "{n}: {messages:?}");
        match last.get("method") {
            None => {
                assert_eq!(last["id"], request.given, "{n}: {last}");
                if answered_by_server.contains(&n) {
                    assert_eq!(last["result"]["n"], n, "{n}: not its own answer: {last}");
                } else {
                    // Still held when the session ended: the front's word that it did.
                    let why = last["error"]["message"].as_str().unwrap_or_default();
                    assert!(why.contains("session ended"), "{n}: {last}");
                    assert!(last.get("result").is_none(), "{n}: {last}");
                }
            }
            Some(_) => assert_eq!(last["params"]["requestId"], request.given, "{n}: {last}"),
        }
        for note in &messages[..messages.len() - 1] {
            if note["method"] == "notifications/progress" {
                assert_eq!(
                    Some(&note["params"]["progressToken"]),
                    request.token.as_ref(),
                    "{n}"
                );
                assert_eq!(note["params"]["progress"], n, "{n}: another's note");
            } else {
                assert!(!shared, "{n}: a stranger's message: {note}");
                assert_eq!(note["method"], "notifications/message", "{n}: {note}");
            }
        }
        if shared {
            let text = messages.iter().map(Value::to_string).collect::<String>();
            assert!(!text.contains("reasons-front/"), "{n}: a front id: {text}");
        }
    }
}

// 256 cases by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn every_request_is_answered_once_on_its_own_stream_and_no_client_sees_another_s(
        shared in any::<bool>(),
        steps in prop::collection::vec(step(), 0..40),
    ) {
        play(shared, &steps);
    }
}
