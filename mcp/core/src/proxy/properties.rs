//! The proxy against a simulated server, under random options, random client lines,
//! random timing and a server that misbehaves at random: whatever either side sends and in
//! whatever order the two sides' lines arrive, the server never receives a top-level
//! `reason` for a tool whose schema does not declare one (R18), and every client request
//! gets exactly one response and the client none it did not ask for (R19). Nor does the
//! proxy get safe by refusing: every call that may go reaches the server exactly once, as
//! the client sent it less the reason, and a tool's own `reason` arrives (R5, R9). The
//! oracle reads what the server received with serde_json alone, as a server would.

use super::*;
use crate::delivery::{About, Delivery};
use crate::layer::{ComponentLayer, NativeLayer};
use proptest::prelude::*;
use reasons_host::Plugin;
use reasons_transform::Options;
use serde_json::{Value, json};

/// The time, read as a transport reads it.
fn now() -> Now {
    Now {
        instant: std::time::Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

/// What a client does next, or what the wire delivers next.
#[derive(Clone, Debug)]
enum Step {
    /// The client sends these messages, as one line (a batch when more than one).
    Client(Vec<Sent>),
    /// The server reads this many of the lines sent to it, and answers.
    ServerReads(usize),
    /// The proxy reads this many of the server's lines.
    ProxyReads(usize),
    /// The server's tools change: `extra` comes or goes, and it says so.
    ToolsChange,
    /// The client closes its end.
    ClientGone,
    /// A line the proxy cannot read.
    Garbage(u8),
    /// The server misbehaves: it says its last line again, sends a line that is not
    /// JSON, answers a request nobody made, or starts or stops spelling ids otherwise
    /// (`1.0` for `1`).
    ServerMisbehaves(u8),
}

#[derive(Clone, Debug)]
enum Sent {
    Initialize,
    Initialized,
    List,
    Ping,
    Call {
        tool: &'static str,
        reason: u8,
        surrogate: bool,
        escaped_method: bool,
    },
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![
        1 => Just(Sent::Initialize),
        1 => Just(Sent::Initialized),
        2 => Just(Sent::List),
        1 => Just(Sent::Ping),
        6 => (
            prop::sample::select(vec!["plain", "own", "extra", "ghost"]),
            0..5u8,
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(tool, reason, surrogate, escaped_method)| Sent::Call {
                tool,
                reason,
                surrogate,
                escaped_method
            }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec(sent(), 1..=3).prop_map(Step::Client),
        4 => (1..4usize).prop_map(Step::ServerReads),
        4 => (1..4usize).prop_map(Step::ProxyReads),
        1 => Just(Step::ToolsChange),
        1 => (0..4u8).prop_map(Step::Garbage),
        2 => (0..4u8).prop_map(Step::ServerMisbehaves),
        1 => Just(Step::ClientGone),
    ]
}

/// The server: a fixed `plain` and `own` (which declares `reason`), and an `extra` that
/// comes and goes; it answers every request it reads, and misbehaves when told to.
#[derive(Default)]
struct Server {
    extra: bool,
    /// Whether it answers an integer id as a decimal (`1.0` for `1`).
    respell: bool,
    inbox: VecDeque<String>,
    outbox: VecDeque<String>,
    /// Each call it ran: the tool and its arguments' text.
    ran: Vec<(String, String)>,
}

impl Server {
    fn tools(&self) -> Vec<Value> {
        let schema = |properties: Value| json!({"type": "object", "properties": properties});
        let mut tools = vec![
            json!({"name": "plain", "inputSchema": schema(json!({"text": {"type": "string"}}))}),
            json!({"name": "own", "inputSchema": schema(json!({"reason": {"type": "string"}}))}),
        ];
        if self.extra {
            tools.push(json!({"name": "extra", "inputSchema": {"type": "object"}}));
        }
        tools
    }

    /// Reads one line, as a lenient server does (a lone surrogate read as any other
    /// character), and answers it.
    fn read(&mut self) {
        let Some(line) = self.inbox.pop_front() else {
            return;
        };
        let readable = line.replace("\\ud", "\\u00");
        let value: Value = serde_json::from_str(&readable).expect("the proxy sends JSON");
        let answers: Vec<Value> = match value {
            Value::Array(messages) => messages.iter().filter_map(|m| self.answer(m)).collect(),
            message => self.answer(&message).into_iter().collect(),
        };
        match (line.starts_with('['), answers.len()) {
            (_, 0) => {}
            (true, _) => self.outbox.push_back(Value::Array(answers).to_string()),
            (false, _) => self.outbox.extend(answers.iter().map(Value::to_string)),
        }
    }

    fn answer(&mut self, message: &Value) -> Option<Value> {
        let id = message.get("id")?.clone();
        let result = match message["method"].as_str()? {
            "initialize" => json!({"capabilities": {"tools": {"listChanged": true}}}),
            "tools/list" => json!({"tools": self.tools()}),
            "tools/call" => {
                let params = &message["params"];
                let name = params["name"].as_str().unwrap_or_default().to_string();
                self.ran.push((name, params["arguments"].to_string()));
                json!({"content": [{"type": "text", "text": "done"}]})
            }
            _ => json!({}),
        };
        let id = match id.as_u64() {
            Some(n) if self.respell => Value::Number(serde_json::Number::from_f64(n as f64)?),
            _ => id,
        };
        Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
    }

    /// Misbehaves in the way `kind` says.
    fn misbehave(&mut self, kind: u8) {
        match kind {
            0 => {
                if let Some(last) = self.outbox.back().cloned() {
                    self.outbox.push_back(last);
                }
            }
            1 => self
                .outbox
                .push_back("\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}".into()),
            2 => self
                .outbox
                .push_back(r#"{"jsonrpc":"2.0","id":"nobody","result":{}}"#.into()),
            _ => self.respell = !self.respell,
        }
    }
}

/// The client's side: what it sent and what it got.
#[derive(Default)]
struct Client {
    next_id: u64,
    /// Each request's id, as a value.
    asked: Vec<Value>,
    /// Each call it sent: its tag (the start of its `text`), tool, reason and arguments.
    calls: Vec<SentCall>,
    /// Every response it got.
    answers: Vec<Value>,
}

struct SentCall {
    tag: String,
    tool: &'static str,
    reason: u8,
    arguments: String,
}

impl Client {
    /// A fresh id in one of the spellings clients use; its value.
    fn id(&mut self) -> (String, Value) {
        self.next_id += 1;
        let n = self.next_id;
        match n % 4 {
            0 => (n.to_string(), json!(n)),
            1 => (format!("{n}.0"), json!(n)),
            2 => (
                format!(r#""reasons-proxy/{n}""#),
                json!(format!("reasons-proxy/{n}")),
            ),
            _ => (format!(r#""s{n}""#), json!(format!("s{n}"))),
        }
    }

    fn line(&mut self, sent: &Sent) -> String {
        let notification = |method: &str| format!(r#"{{"jsonrpc":"2.0","method":"{method}"}}"#);
        if let Sent::Initialized = sent {
            return notification("notifications/initialized");
        }
        let (id, value) = self.id();
        self.asked.push(value);
        let request = |method: &str, params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"{method}","params":{params}}}"#)
        };
        match sent {
            Sent::Initialize => request("initialize", "{}"),
            Sent::List => request("tools/list", "{}"),
            Sent::Ping => request("ping", "{}"),
            Sent::Call {
                tool,
                reason,
                surrogate,
                escaped_method,
            } => {
                // A tag of its own, so that what the server ran can be told apart.
                let tag = format!("c{};", self.next_id);
                let text = if *surrogate {
                    format!(r#""{tag} cut \ud83d""#)
                } else {
                    format!(r#""{tag}""#)
                };
                let variant = *reason;
                let reason = match reason {
                    0 => String::new(),
                    1 => r#","reason":"SECRET""#.into(),
                    2 => r#","\u0072eason":"SECRET""#.into(),
                    3 => r#","reason":"SECRET","reason":null"#.into(),
                    _ => r#","reason":{"nested":"SECRET"}"#.into(),
                };
                let method = if *escaped_method {
                    r#"tools\/call"#
                } else {
                    "tools/call"
                };
                let arguments = format!(r#"{{"text":{text}{reason}}}"#);
                self.calls.push(SentCall {
                    tag,
                    tool,
                    reason: variant,
                    arguments: arguments.clone(),
                });
                request(
                    method,
                    &format!(r#"{{"name":"{tool}","arguments":{arguments}}}"#),
                )
            }
            Sent::Initialized => unreachable!("answered above"),
        }
    }

    fn got(&mut self, delivery: &Delivery) {
        let text = String::from_utf8(delivery.line.clone()).unwrap();
        let messages = match lenient(&text) {
            Value::Array(messages) => messages,
            message => vec![message],
        };
        assert_eq!(delivery.parts.len(), messages.len(), "{text}");
        for (part, message) in delivery.parts.iter().zip(&messages) {
            // Each message lies where the proxy says, and names its request there.
            let own = &text[part.text.clone()];
            assert_eq!(&lenient(own), message, "{text}");
            let answer = message.get("method").is_none() && !message["id"].is_null();
            match &part.about {
                About::Answer { id, at } => {
                    assert!(answer, "{own}");
                    assert_eq!(lenient(id.json()), message["id"], "{own}");
                    assert_eq!(lenient(&own[at.clone()]), message["id"], "{own}");
                }
                About::Other => assert!(!answer, "{own}"),
                about => panic!("the simulated server sends no {about:?}: {own}"),
            }
        }
        // The server's own requests and notifications, relayed, are not answers.
        let answers = messages.into_iter().filter(|m| m.get("method").is_none());
        self.answers.extend(answers);
    }
}

/// Lenient text of the tests' own, read as the simulated server reads it.
fn lenient(text: &str) -> Value {
    serde_json::from_str(&text.replace("\\ud", "\\u00")).unwrap()
}

fn garbage(kind: u8) -> Vec<u8> {
    let call = br#"{"jsonrpc":"2.0","id":99,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#;
    match kind {
        0 => [&b"\xef\xbb\xbf"[..], call].concat(),
        1 => call.iter().map(|&b| if b == b'S' { 0xff } else { b }).collect(),
        2 => br#"{"jsonrpc":"2.0","id":98,"method":"tools/call","params":{"name":"own","name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(),
        _ => br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(),
    }
}

/// Plays `steps` under `options`, then lets both sides run dry and the server go; the
/// oracle's checks.
fn play<L: Layer>(options: Options, steps: &[Step], layer: impl FnOnce(Options) -> L) {
    let required = options.required;
    let layer = layer(options);
    let mut proxy = Proxy::new(layer, Audit::new(false, false), now());
    let (mut server, mut client) = (Server::default(), Client::default());
    let deliver = |out: Vec<Out>, server: &mut Server, client: &mut Client| {
        for line in out {
            match line {
                Out::Server { line, .. } => {
                    server.inbox.push_back(String::from_utf8(line).unwrap())
                }
                Out::Client(to) => client.got(&to),
                // For the human running the proxy, or the transport: no side's.
                Out::Note(_) | Out::Learnt(_) | Out::Record(_) | Out::Span(_) => {}
            }
        }
    };
    let mut gone = false;
    let mut changes = 0;
    let mut sent_garbage = Vec::new();
    for step in steps {
        let out = match step {
            Step::Client(_) | Step::Garbage(_) if gone => continue,
            Step::Client(messages) => {
                let lines: Vec<String> = messages.iter().map(|m| client.line(m)).collect();
                let line = match lines.len() {
                    1 => lines[0].clone(),
                    _ => format!("[{}]", lines.join(",")),
                };
                proxy.client_sent(line.into_bytes(), now())
            }
            Step::Garbage(kind) => {
                sent_garbage.push(*kind);
                proxy.client_sent(garbage(*kind), now())
            }
            Step::ServerReads(count) => {
                (0..*count).for_each(|_| server.read());
                Vec::new()
            }
            Step::ProxyReads(count) => {
                let lines: Vec<String> = (0..*count)
                    .filter_map(|_| server.outbox.pop_front())
                    .collect();
                lines
                    .into_iter()
                    .flat_map(|line| proxy.server_sent(line.into_bytes(), now()))
                    .collect()
            }
            Step::ToolsChange => {
                changes += 1;
                server.extra = !server.extra;
                let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
                server.outbox.push_back(changed.into());
                Vec::new()
            }
            Step::ServerMisbehaves(kind) => {
                server.misbehave(*kind);
                Vec::new()
            }
            Step::ClientGone => {
                gone = true;
                proxy.client_gone(now())
            }
        };
        deliver(out, &mut server, &mut client);
    }
    // Both sides run dry: every line is read and answered.
    while !server.inbox.is_empty() || !server.outbox.is_empty() {
        server.read();
        let lines: Vec<String> = server.outbox.drain(..).collect();
        for line in lines {
            let out = proxy.server_sent(line.into_bytes(), now());
            deliver(out, &mut server, &mut client);
        }
    }
    let out = proxy.server_gone("the test is over", now());
    deliver(out, &mut server, &mut client);

    for (tool, arguments) in &server.ran {
        let arguments: Value = serde_json::from_str(arguments).unwrap();
        let declares = tool == "own";
        assert!(
            declares || arguments.get("reason").is_none(),
            "R18: {tool} received {arguments}"
        );
    }
    for id in &client.asked {
        let answers = client
            .answers
            .iter()
            .filter(|a| same_id(&a["id"], id))
            .count();
        assert_eq!(answers, 1, "R19: request {id} got {answers} answers");
    }
    // No answer the client did not ask for: each is to one of its requests, or to a line
    // it sent that could not be read (null: the id could not be either).
    let garbage_ids: Vec<Value> = sent_garbage
        .iter()
        .filter_map(|kind| match kind {
            2 => Some(json!(98)),
            3 => None,
            _ => Some(json!(99)),
        })
        .collect();
    for answer in &client.answers {
        let id = &answer["id"];
        let asked = client
            .asked
            .iter()
            .chain(&garbage_ids)
            .any(|asked| same_id(id, asked));
        assert!(
            asked || (id.is_null() && !sent_garbage.is_empty()),
            "R19: an answer nobody asked for: {answer}"
        );
    }
    // Liveness: every call to a tool the server always has reaches it exactly once (but
    // one that required mode refuses: no reason, or a null one as the last spelling),
    // as it was sent less a reason the layer added; a tool's own arrives as sent.
    for call in &client.calls {
        let ran: Vec<&String> = server
            .ran
            .iter()
            .filter(|(tool, arguments)| {
                tool == call.tool
                    && lenient(arguments)["text"]
                        .as_str()
                        .is_some_and(|text| text.starts_with(&call.tag))
            })
            .map(|(_, arguments)| arguments)
            .collect();
        let refused = required && call.tool == "plain" && matches!(call.reason, 0 | 3);
        // R18: a server whose tools change while every listing of 16 in a row is under
        // way is never current; only a run that announces that many changes may see it.
        let unsettled = changes >= 16;
        let may_go = matches!(call.tool, "plain" | "own") && !refused && !unsettled;
        if refused {
            assert!(
                ran.is_empty(),
                "required mode: {} ran without a reason",
                call.tag
            );
            continue;
        }
        if !may_go {
            // A tool that comes and goes, or one the server never had: once at most.
            assert!(ran.len() <= 1, "{} ran {} times", call.tag, ran.len());
            continue;
        }
        assert_eq!(
            ran.len(),
            1,
            "{} ({}) reached the server {} times",
            call.tag,
            call.tool,
            ran.len()
        );
        let mut expected = lenient(&call.arguments);
        if call.tool == "plain" {
            expected.as_object_mut().unwrap().shift_remove("reason");
        }
        assert_eq!(
            lenient(ran[0]),
            expected,
            "R5 R9: {} as the server read it",
            call.tag
        );
    }
}

/// The layer's options: required mode or not, the property first or last, another
/// description.
fn options() -> impl Strategy<Value = Options> {
    (any::<bool>(), any::<bool>(), any::<bool>()).prop_map(|(required, first, described)| Options {
        required,
        position: if first {
            reasons_transform::Position::First
        } else {
            reasons_transform::Position::Last
        },
        description: if described {
            "Why, in \"one\" line.".into()
        } else {
            reasons_transform::DEFAULT_DESCRIPTION.into()
        },
        ..Options::default()
    })
}

/// Whether two ids are one value (`1` and `1.0` are).
fn same_id(a: &Value, b: &Value) -> bool {
    match (a.as_f64(), b.as_f64()) {
        (Some(a), Some(b)) => a == b,
        _ => a == b,
    }
}

// 256 cases by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn no_reason_reaches_a_server_every_request_is_answered_once_and_every_call_goes(
        options in options(),
        steps in prop::collection::vec(step(), 1..40)
    ) {
        play(options, &steps, |options| {
            ComponentLayer::new(&Plugin::reasons().unwrap(), options).unwrap()
        });
    }

    #[test]
    fn so_with_the_transform_linked_in_as_the_layer(
        options in options(),
        steps in prop::collection::vec(step(), 1..40)
    ) {
        // The layer the wasi:http gateway links: the same properties as the component.
        play(options, &steps, |options| NativeLayer::new(options).unwrap());
    }
}
