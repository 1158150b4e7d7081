//! The proxy against a simulated server, under random options, random client lines,
//! random timing and a server that misbehaves at random: whatever either side sends and in
//! whatever order the two sides' lines arrive, the server never receives a top-level
//! `reason` for a tool whose schema does not declare one (R18), and every client request
//! gets exactly one response and the client none it did not ask for (R19). Nor does the
//! proxy get safe by refusing: every call that may go reaches the server exactly once, as
//! the client sent it less the reason, and a tool's own `reason` arrives (R5, R9). The
//! oracle reads what the server received with serde_json alone, as a server would.
//!
//! The simulated server does what servers do that a proxy gets wrong: a tool changes
//! whether it owns `reason` under the same name, listings come in pages, a tool is
//! declared by the caller's capabilities (the `_meta` of a 2026-07-28 request), a change
//! is announced before or after the answers it overtakes (over HTTP the two travel apart),
//! listings and calls are answered with errors, and a server reached over HTTP forgets
//! its session (it restarted: 404 for what was sent in it). The oracle, never the proxy, decides
//! what each tool may receive: what its schema said in a generation of the server's tools
//! from the latest the proxy had heard of when it sent the call to the one the call ran
//! in, and byte for byte everything of the call outside its arguments.

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
    /// The server's tools change: `flip` comes to own `reason` or stops owning it, or
    /// `extra` comes or goes; it says so after what it has written, or (`early`) before
    /// it, as its note overtakes answers on another connection.
    ToolsChange { flip: bool, early: bool },
    /// The client closes its end.
    ClientGone,
    /// The server forgets its session (over HTTP): what was sent in it meets 404.
    SessionExpires,
    /// A line the proxy cannot read.
    Garbage(u8),
    /// The server misbehaves: it says its last line again, sends a line that is not
    /// JSON, answers a request nobody made, starts or stops spelling ids otherwise
    /// (`1.0` for `1`), or answers its next listing or call with an error.
    ServerMisbehaves(u8),
}

#[derive(Clone, Debug)]
enum Sent {
    Initialize,
    Initialized,
    List {
        view: u8,
    },
    Ping,
    Call {
        tool: &'static str,
        reason: u8,
        surrogate: bool,
        escaped_method: bool,
        /// The caller's view in its `_meta`: none, `a` or `b`.
        view: u8,
    },
}

fn sent() -> impl Strategy<Value = Sent> {
    prop_oneof![
        1 => Just(Sent::Initialize),
        1 => Just(Sent::Initialized),
        2 => (0..3u8).prop_map(|view| Sent::List { view }),
        1 => Just(Sent::Ping),
        8 => (
            prop::sample::select(vec!["plain", "own", "flip", "mine", "extra", "ghost"]),
            0..5u8,
            any::<bool>(),
            any::<bool>(),
            0..3u8,
        )
            .prop_map(|(tool, reason, surrogate, escaped_method, view)| Sent::Call {
                tool,
                reason,
                surrogate,
                escaped_method,
                view,
            }),
    ]
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => prop::collection::vec(sent(), 1..=3).prop_map(Step::Client),
        4 => (1..4usize).prop_map(Step::ServerReads),
        4 => (1..4usize).prop_map(Step::ProxyReads),
        2 => (any::<bool>(), any::<bool>())
            .prop_map(|(flip, early)| Step::ToolsChange { flip, early }),
        1 => (0..4u8).prop_map(Step::Garbage),
        2 => (0..6u8).prop_map(Step::ServerMisbehaves),
        1 => Just(Step::ClientGone),
        2 => Just(Step::SessionExpires),
    ]
}

/// The server: a fixed `plain` and `own` (which declares `reason`), a `flip` that owns
/// `reason` in some generations of its tools and not in others, a `mine` that owns it for
/// callers of view `a` until a client initializes (then the handshake, not a request,
/// says who calls), and an `extra` that comes and goes. It answers every request it
/// reads, in pages of `page` declarations when set, and misbehaves when told to.
#[derive(Default)]
struct Server {
    extra: bool,
    /// Whether `flip` owned `reason` in each generation of the tools, the first at 0:
    /// the latest is now.
    flips: Vec<bool>,
    page: Option<usize>,
    initialized: bool,
    /// Whether it answers an integer id as a decimal (`1.0` for `1`).
    respell: bool,
    /// Whether its next listing, or its next call, is answered with an error.
    fail_listing: bool,
    fail_call: bool,
    /// How many listings it answered with an error.
    failed_listings: usize,
    /// Its latest session over HTTP, numbered from 1 (0: none); every session up to
    /// `forgot` it has forgotten.
    session: u64,
    forgot: u64,
    inbox: VecDeque<ToServer>,
    outbox: VecDeque<String>,
    ran: Vec<Ran>,
}

/// A line the proxy sent the server.
struct ToServer {
    line: String,
    /// The generation of the server's tools the proxy had heard of when it sent it.
    heard: usize,
    /// The line's number, as the proxy gave it.
    exchange: u64,
    /// Whether it is an `initialize`, which the transport posts in no session.
    initialize: bool,
}

/// What came of a line the transport posted in a session (0: none).
enum Posted {
    Read,
    /// It started a session, which the transport learns from the answer's headers.
    Started(u64),
    /// It was not run: the session it went in is one the server forgot (404).
    Lost(u64),
    /// It was not run: it went in no session to a server that keeps them (400).
    Refused(u64),
}

/// A call the server ran.
struct Ran {
    tool: String,
    /// The call's text and its arguments' text, as the server received them.
    message: String,
    arguments: String,
    /// Whether the tool owned `reason` in each schema the proxy may have classified the
    /// call by: one for each generation from the one the proxy had heard of to the one
    /// the call ran in.
    owned: Vec<bool>,
}

/// A call as the server reads it, for its arguments' text as it came.
#[derive(serde::Deserialize)]
struct Call<'a> {
    #[serde(borrow)]
    params: Arguments<'a>,
}

#[derive(serde::Deserialize)]
struct Arguments<'a> {
    #[serde(borrow)]
    arguments: &'a serde_json::value::RawValue,
}

impl Server {
    fn new(page: Option<usize>) -> Server {
        Server {
            flips: vec![false],
            page,
            ..Server::default()
        }
    }

    /// The generation of its tools now: how many times they changed.
    fn generation(&self) -> usize {
        self.flips.len() - 1
    }

    /// Whether `tool` owns `reason` for a request with `params`, in generation `at`.
    fn owns(&self, tool: &str, params: &Value, at: usize) -> bool {
        match tool {
            "own" => true,
            "flip" => self.flips[at],
            "mine" => !self.initialized && params["_meta"]["view"] == "a",
            _ => false,
        }
    }

    fn tools(&self, params: &Value) -> Vec<Value> {
        let schema = |owns: bool| {
            let mut properties = json!({"text": {"type": "string"}});
            if owns {
                properties["reason"] = json!({"type": "string"});
            }
            json!({"type": "object", "properties": properties})
        };
        let mut tools: Vec<Value> = ["plain", "own", "flip", "mine"]
            .into_iter()
            .map(|tool| {
                let owns = self.owns(tool, params, self.generation());
                json!({"name": tool, "inputSchema": schema(owns)})
            })
            .collect();
        if self.extra {
            tools.push(json!({"name": "extra", "inputSchema": {"type": "object"}}));
        }
        tools
    }

    /// A page of its tools, from the cursor in `params`.
    fn listing(&self, params: &Value) -> Value {
        let tools = self.tools(params);
        let from = params["cursor"]
            .as_str()
            .and_then(|cursor| cursor.strip_prefix('p')?.parse().ok())
            .unwrap_or(0usize)
            .min(tools.len());
        let to = self
            .page
            .map_or(tools.len(), |page| (from + page).min(tools.len()));
        let mut result = json!({"tools": tools[from..to]});
        if to < tools.len() {
            result["nextCursor"] = json!(format!("p{to}"));
        }
        result
    }

    /// Reads one line, as a lenient server does (a lone surrogate read as any other
    /// character), and answers it; or runs nothing of it, when it went in a session the
    /// server forgot.
    /// `session`: the one the line was posted in over HTTP (0: none); `None` over stdio,
    /// where there are no sessions to forget.
    fn read(&mut self, session: Option<u64>) -> Option<Posted> {
        let ToServer {
            line,
            heard,
            exchange,
            ..
        } = self.inbox.pop_front()?;
        let readable = line.replace("\\ud", "\\u00");
        let value: Value = serde_json::from_str(&readable).expect("the proxy sends JSON");
        // A line in no session starts one when it begins with `initialize`: nothing of
        // it runs before the session is there.
        let first = value
            .as_array()
            .and_then(|batch| batch.first())
            .unwrap_or(&value);
        let initializes = first["method"] == "initialize";
        let forgotten = session.is_some_and(|session| session != 0 && session <= self.forgot);
        let sessionless = session == Some(0) && self.session != 0;
        if forgotten {
            return Some(Posted::Lost(exchange));
        }
        if sessionless && !initializes {
            return Some(Posted::Refused(exchange));
        }
        // Each message's own text, for what the oracle compares byte for byte.
        let texts: Vec<&str> = match value {
            Value::Array(_) => {
                let parts: Vec<&serde_json::value::RawValue> =
                    serde_json::from_str(&line).expect("a batch");
                parts.iter().map(|part| part.get()).collect()
            }
            _ => vec![line.as_str()],
        };
        let started = self.session;
        let answers: Vec<Value> = texts
            .iter()
            .filter_map(|text| self.answer(text, heard))
            .collect();
        match (line.starts_with('['), answers.len()) {
            (_, 0) => {}
            (true, _) => self.outbox.push_back(Value::Array(answers).to_string()),
            (false, _) => self.outbox.extend(answers.iter().map(Value::to_string)),
        }
        match self.session != started {
            true => Some(Posted::Started(self.session)),
            false => Some(Posted::Read),
        }
    }

    /// Forgets its sessions, as a server that restarted does: restarted as another
    /// version, where `flip` owns `reason` if it did not, or the other way round, with
    /// no note (a new session lists the tools anew).
    fn expire(&mut self) {
        self.forgot = self.session;
        self.initialized = false;
        let owns = self.flips[self.generation()];
        self.flips.push(!owns);
    }

    fn answer(&mut self, text: &str, heard: usize) -> Option<Value> {
        let message = lenient(text);
        let method = message["method"].as_str()?;
        if method == "initialize" {
            self.initialized = true;
            self.session += 1;
        }
        let id = message.get("id")?.clone();
        let params = &message["params"];
        let error = |message: &str| json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": message}});
        let result = match method {
            "initialize" => json!({"capabilities": {"tools": {"listChanged": true}}}),
            "tools/list" if std::mem::take(&mut self.fail_listing) => {
                self.failed_listings += 1;
                return Some(error("the tools are being reloaded"));
            }
            "tools/list" => self.listing(params),
            "tools/call" => {
                let name = params["name"].as_str().unwrap_or_default().to_string();
                let call: Call = serde_json::from_str(text).expect("a call");
                let now = self.generation();
                let owned = (heard.min(now)..=now)
                    .map(|at| self.owns(&name, params, at))
                    .collect();
                self.ran.push(Ran {
                    tool: name,
                    message: text.to_string(),
                    arguments: call.params.arguments.get().to_string(),
                    owned,
                });
                if std::mem::take(&mut self.fail_call) {
                    return Some(error("the tool failed"));
                }
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

    /// Its tools change as `flip` says, and it says so, `early` or not.
    fn change(&mut self, flip: bool, early: bool) {
        let owns = self.flips[self.generation()];
        self.flips.push(owns != flip);
        if !flip {
            self.extra = !self.extra;
        }
        // The note names its generation, for the oracle to know what the proxy heard.
        let note = json!({
            "jsonrpc": "2.0",
            "method": "notifications/tools/list_changed",
            "params": {"_meta": {"generation": self.generation()}},
        })
        .to_string();
        match early {
            true => self.outbox.push_front(note),
            false => self.outbox.push_back(note),
        }
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
            3 => self.respell = !self.respell,
            4 => self.fail_listing = true,
            _ => self.fail_call = true,
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
    /// Its text, and its arguments' text, as the client sent them.
    message: String,
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
        // The caller's capabilities, for a server that declares tools by them.
        let meta = |view: u8| match view {
            0 => "",
            1 => r#","_meta":{"view":"a"}"#,
            _ => r#","_meta":{"view":"b"}"#,
        };
        match sent {
            Sent::Initialize => request("initialize", "{}"),
            Sent::List { view } => {
                let meta = meta(*view).trim_start_matches(',');
                request("tools/list", &format!("{{{meta}}}"))
            }
            Sent::Ping => request("ping", "{}"),
            Sent::Call {
                tool,
                reason,
                surrogate,
                escaped_method,
                view,
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
                let message = request(
                    method,
                    &format!(
                        r#"{{"name":"{tool}","arguments":{arguments}{}}}"#,
                        meta(*view)
                    ),
                );
                self.calls.push(SentCall {
                    tag,
                    tool,
                    reason: variant,
                    message: message.clone(),
                    arguments,
                });
                message
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
                About::Answer { id, at, code } => {
                    assert!(answer, "{own}");
                    assert_eq!(lenient(id.json()), message["id"], "{own}");
                    assert_eq!(lenient(&own[at.clone()]), message["id"], "{own}");
                    // What an HTTP front answers its status by.
                    assert_eq!(*code, message["error"]["code"].as_i64(), "{own}");
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

/// Why the transport says a line was not run: the server forgot the session it went in.
const FORGOTTEN: &str = "the server forgot the session";

/// Both sides and the wire between them, as the proxy's transport would run them.
struct Sim<L: Layer> {
    proxy: Proxy<L>,
    server: Server,
    client: Client,
    /// The latest generation of the server's tools the proxy has read a note of.
    heard: usize,
    /// The session the transport posts in, learnt from the headers of the server's
    /// answer to `initialize` (0: none); whether it is over HTTP, where a server may
    /// forget its sessions. The transport posts one line at a time, as the server reads.
    session: u64,
    http: bool,
}

impl<L: Layer> Sim<L> {
    /// Delivers what the proxy wrote: each line reaches its side at once.
    fn deliver(&mut self, out: Vec<Out>) {
        for line in out {
            match line {
                Out::Server { line, outline } => self.server.inbox.push_back(ToServer {
                    line: String::from_utf8(line).unwrap(),
                    heard: self.heard,
                    exchange: outline.exchange,
                    initialize: outline.method.as_deref() == Some("initialize"),
                }),
                Out::Client(to) => self.client.got(&to),
                // For the human running the proxy, or the transport: no side's.
                Out::Note(_) | Out::Learnt(_) | Out::Record(_) | Out::Span(_) => {}
            }
        }
    }

    /// The server reads a line and answers it, or meets a session it forgot: the
    /// transport tells the proxy, as its 404 says, and posts what follows in no session
    /// until one starts (a server that keeps sessions answers that with 400).
    fn server_reads(&mut self) {
        // A new session starts clean, as the transport starts it: no session's id rides
        // on an `initialize`.
        if self
            .server
            .inbox
            .front()
            .is_some_and(|next| next.initialize)
        {
            self.session = 0;
        }
        let posted = self.server.read(self.http.then_some(self.session));
        match posted {
            Some(Posted::Started(session)) if self.http => self.session = session,
            Some(Posted::Lost(exchange)) => {
                let first = self.session != 0;
                self.session = 0;
                // Every listing the proxy asks for from now on is of the server as it
                // is now, or later: what it sends after this reflects no earlier tools.
                self.heard = self.heard.max(self.server.generation());
                let out = self.proxy.session_lost(exchange, FORGOTTEN, first, now());
                self.deliver(out);
            }
            Some(Posted::Refused(exchange)) => {
                // Sent with no session after the server forgot one, and none started.
                let why = format!("{FORGOTTEN}, and refused a request in none (HTTP 400)");
                let out = self.proxy.unanswered(exchange, &why, now());
                self.deliver(out);
            }
            _ => {}
        }
    }

    /// The proxy reads the server's next line; what it writes reaches its side before
    /// the next is read, so what the proxy had heard when it sent a line is what it had
    /// read by then.
    fn proxy_reads(&mut self) -> bool {
        let Some(line) = self.server.outbox.pop_front() else {
            return false;
        };
        // A line the server misbehaves with may be no JSON at all.
        let note = serde_json::from_str::<Value>(&line).unwrap_or_default();
        if let Some(generation) = note["params"]["_meta"]["generation"].as_u64() {
            self.heard = self.heard.max(generation as usize);
        }
        let out = self.proxy.server_sent(line.into_bytes(), now());
        self.deliver(out);
        true
    }
}

/// Plays `steps` under `options`, over HTTP or not (and then keeping its listings or
/// answering whole ones, as the gateway does), after a handshake or not, then lets both
/// sides run dry and the server go; the oracle's checks.
fn play<L: Layer>(
    options: Options,
    (page, http, handshake, whole): (Option<usize>, bool, bool, bool),
    steps: &[Step],
    layer: impl FnOnce(Options) -> L,
) {
    let required = options.required;
    let proxy = Proxy::new(layer(options), Audit::new(false, false), now());
    let mut sim = Sim {
        proxy: match (http, whole) {
            (true, true) => proxy.over_http().answering_whole_listings(),
            (true, false) => proxy.over_http(),
            (false, _) => proxy,
        },
        server: Server::new(page),
        client: Client::default(),
        heard: 0,
        session: 0,
        http,
    };
    let mut gone = false;
    let mut changes = 0;
    let mut sent_garbage = Vec::new();
    // A session that began as most do (a server forgets only a session it has).
    let begun = [
        Step::Client(vec![Sent::Initialize]),
        Step::ServerReads(1),
        Step::ProxyReads(1),
        Step::Client(vec![Sent::Initialized]),
    ];
    let begun = if handshake { &begun[..] } else { &[] };
    for step in begun.iter().chain(steps) {
        let out = match step {
            Step::Client(_) | Step::Garbage(_) if gone => continue,
            Step::Client(messages) => {
                let lines: Vec<String> = messages.iter().map(|m| sim.client.line(m)).collect();
                let line = match lines.len() {
                    1 => lines[0].clone(),
                    _ => format!("[{}]", lines.join(",")),
                };
                sim.proxy.client_sent(line.into_bytes(), now())
            }
            Step::Garbage(kind) => {
                sent_garbage.push(*kind);
                sim.proxy.client_sent(garbage(*kind), now())
            }
            Step::ServerReads(count) => {
                (0..*count).for_each(|_| sim.server_reads());
                Vec::new()
            }
            Step::ProxyReads(count) => {
                for _ in 0..*count {
                    sim.proxy_reads();
                }
                Vec::new()
            }
            Step::ToolsChange { flip, early } => {
                changes += 1;
                sim.server.change(*flip, *early);
                Vec::new()
            }
            Step::ServerMisbehaves(kind) => {
                sim.server.misbehave(*kind);
                Vec::new()
            }
            Step::ClientGone => {
                gone = true;
                sim.proxy.client_gone(now())
            }
            Step::SessionExpires if sim.http => {
                sim.server.expire();
                Vec::new()
            }
            Step::SessionExpires => Vec::new(),
        };
        sim.deliver(out);
    }
    // Both sides run dry: every line is read and answered.
    let mut rounds = 0;
    while !sim.server.inbox.is_empty() || !sim.server.outbox.is_empty() {
        rounds += 1;
        assert!(rounds < 10_000, "the two sides never run dry");
        sim.server_reads();
        while sim.proxy_reads() {}
    }
    let out = sim.proxy.server_gone("the test is over", now());
    sim.deliver(out);
    let Sim { server, client, .. } = sim;

    for ran in &server.ran {
        let arguments = lenient(&ran.arguments);
        assert!(
            ran.owned.contains(&true) || arguments.get("reason").is_none(),
            "R18: {} received {arguments}",
            ran.tool
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
    // Liveness: every call to a tool the server always has reaches it exactly once, as
    // it was sent less a reason the layer added, or as it was sent where the tool owned
    // its `reason`; what may keep it from the server is required mode (no reason, or a
    // null one as the last spelling, for a tool that owns none), a listing the server
    // failed, or, R18, a server whose tools change while every listing of 16 in a row
    // is under way, which is never current. Whatever keeps it is said in an error.
    let unsettled = changes >= 16 || server.failed_listings > 0;
    for call in &client.calls {
        let ran: Vec<&Ran> = server
            .ran
            .iter()
            .filter(|ran| {
                ran.tool == call.tool
                    && lenient(&ran.arguments)["text"]
                        .as_str()
                        .is_some_and(|text| text.starts_with(&call.tag))
            })
            .collect();
        let unasked = required && matches!(call.reason, 0 | 3);
        if !matches!(call.tool, "plain" | "own" | "flip" | "mine") {
            // A tool that comes and goes, or one the server never had: once at most.
            assert!(ran.len() <= 1, "{} ran {} times", call.tag, ran.len());
            continue;
        }
        let [ran] = ran.as_slice() else {
            assert!(ran.is_empty(), "{} ran {} times", call.tag, ran.len());
            let answer =
                (client.answers.iter()).find(|answer| lenient(&call.message)["id"] == answer["id"]);
            // A JSON-RPC error, or a tool's result that says it is one (required mode's
            // refusal, for the model to read and call again).
            let error = |answer: &Value| {
                answer.get("error").is_some() || answer["result"]["isError"] == json!(true)
            };
            assert!(
                answer.is_some_and(error),
                "{} ({}) did not reach the server, and its answer says no error: {answer:?}",
                call.tag,
                call.tool,
            );
            // A server that forgets its session may have what was sent in it refused,
            // saying so: a batch is not sent again, and a server that forgets each new
            // session in a row is given no other (what waits for its listing neither).
            let forgotten = answer.is_some_and(|answer| {
                answer["error"]["message"]
                    .as_str()
                    .is_some_and(|message| message.contains(FORGOTTEN))
            });
            assert!(
                unasked || unsettled || forgotten,
                "{} ({}) was kept from a server that has it: {answer:?}",
                call.tag,
                call.tool
            );
            continue;
        };
        // Everything outside its arguments arrives byte for byte (R9).
        assert_eq!(
            ran.message.replacen(&ran.arguments, "ARGUMENTS", 1),
            call.message.replacen(&call.arguments, "ARGUMENTS", 1),
            "R9: {} outside its arguments",
            call.tag
        );
        if ran.arguments == call.arguments && ran.owned.contains(&true) {
            // R5: classified as the tool's own, it arrives as sent.
            continue;
        }
        assert!(
            ran.owned.contains(&false) && !unasked,
            "R5: {} ({}) owned its reason, or required mode would have refused it, but \
             it arrived as {}",
            call.tag,
            call.tool,
            ran.arguments
        );
        let mut expected = lenient(&call.arguments);
        expected.as_object_mut().unwrap().shift_remove("reason");
        assert_eq!(
            lenient(&ran.arguments),
            expected,
            "R9: {} as the server read it",
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

/// Whether a case's proxy answers whole listings, as the gateway's does: over HTTP, where
/// the server pages its listings by more than one tool. Read from what each case draws
/// already, so that every other input of a seed stays what it was (the mutation check
/// counts on its seed's cases).
fn whole(http: bool, page: Option<usize>) -> bool {
    http && page.is_some_and(|size| size > 1)
}

// 256 cases by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn no_reason_reaches_a_server_every_request_is_answered_once_and_every_call_goes(
        options in options(),
        page in prop::option::of(1..4usize),
        (http, handshake) in (any::<bool>(), any::<bool>()),
        steps in prop::collection::vec(step(), 1..40)
    ) {
        play(options, (page, http, handshake, whole(http, page)), &steps, |options| {
            ComponentLayer::new(&Plugin::reasons().unwrap(), options).unwrap()
        });
    }

    #[test]
    fn so_with_the_transform_linked_in_as_the_layer(
        options in options(),
        page in prop::option::of(1..4usize),
        (http, handshake) in (any::<bool>(), any::<bool>()),
        steps in prop::collection::vec(step(), 1..40)
    ) {
        // The layer the wasi:http gateway links: the same properties as the component.
        play(options, (page, http, handshake, whole(http, page)), &steps, |options| NativeLayer::new(options).unwrap());
    }
}
