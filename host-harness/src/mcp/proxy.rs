//! The proxy's state machine: a line in, the lines out. There is no I/O here but the
//! audit log, so that every path can be tested with strings.
//!
//! It changes two things and relays everything else byte for byte, in order: the `tools`
//! of a `tools/list` result (through the layer's listing) and the `arguments` of a
//! `tools/call` request (through the layer's forwarding). It also lists the server's tools
//! itself, once the session is initialised and again whenever the server says they
//! changed, holding the client's requests until it knows the strip set.

use super::audit::{self, Audit, Outcome};
use super::jsonrpc::{self, CallParams, Envelope, Id, Message, Page};
use super::transform::{Forward, Transform};
use crate::provider::Json;
use indexmap::IndexMap;
use serde_json::value::RawValue;
use std::collections::HashMap;
use std::time::{Duration, Instant};

/// How long the client's requests wait for the proxy's own listing before they go on
/// with the strip set as it was.
pub const HOLD_AT_MOST: Duration = Duration::from_secs(10);

/// What becomes of a message on its way through.
enum Fate {
    /// Relayed byte for byte.
    Keep,
    /// Relayed as this text instead.
    Change(String),
    /// Not relayed: answered or consumed here.
    Drop,
}

impl Fate {
    /// Sends `line`, or what it became, with `to`, unless it was dropped.
    fn send(self, line: Vec<u8>, to: fn(Vec<u8>) -> Out, out: &mut Vec<Out>) {
        match self {
            Fate::Change(changed) => out.push(to(changed.into_bytes())),
            Fate::Keep => out.push(to(line)),
            Fate::Drop => {}
        }
    }
}

/// A line to write, to one side or the other.
#[derive(Debug, PartialEq, Eq)]
pub enum Out {
    /// To the server's stdin.
    Server(Vec<u8>),
    /// To the client (the proxy's stdout).
    Client(Vec<u8>),
}

/// A client request the server has yet to answer.
enum Pending {
    Initialize,
    List,
    Call(audit::Call),
    Other,
}

/// The proxy's own listing, page by page.
struct Listing {
    id: Id,
    tools: Vec<Json>,
    /// The server said its tools changed while this listing was under way.
    again: bool,
}

/// The proxy between one client and one server.
pub struct Proxy {
    transform: Transform,
    audit: Audit,
    pending: IndexMap<Id, Pending>,
    listing: Option<Listing>,
    /// Client messages that wait for the strip set, in order, and since when.
    held: Vec<Vec<u8>>,
    held_since: Option<Instant>,
    /// Whether the strip set is known: the first listing is done (or given up on), or the
    /// server has no tools. Until then a `tools/call` waits, and everything after it.
    ready: bool,
    own_ids: u64,
    /// What the server's `initialize` result said of tools, once it came.
    server_has_tools: Option<bool>,
    /// Whether the client has said `notifications/initialized`: the server takes
    /// requests only after that.
    initialized: bool,
}

impl Proxy {
    /// A proxy over `transform`, recording calls in `audit`.
    pub fn new(transform: Transform, audit: Audit) -> Proxy {
        Proxy {
            transform,
            audit,
            pending: IndexMap::new(),
            listing: None,
            held: Vec::new(),
            held_since: None,
            ready: false,
            own_ids: 0,
            server_has_tools: None,
            initialized: false,
        }
    }

    /// The calls recorded so far.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// A line from the client.
    pub fn client_sent(&mut self, line: Vec<u8>) -> Vec<Out> {
        let mut out = Vec::new();
        self.client_line(line, &mut out);
        out
    }

    fn client_line(&mut self, line: Vec<u8>, out: &mut Vec<Out>) {
        let Ok(text) = std::str::from_utf8(&line) else {
            return out.push(Out::Server(line));
        };
        if self.must_hold(text) {
            self.held_since.get_or_insert_with(Instant::now);
            return self.held.push(line);
        }
        let was_initialized = self.initialized;
        self.fate(text, out, Proxy::client_message)
            .send(line, Out::Server, out);
        if self.initialized && !was_initialized {
            self.list_if_ready_to(out);
        }
    }

    /// Whether a client message waits: while the proxy lists, and before the strip set is
    /// first known from the first call on (and, to keep the order, whatever follows it).
    /// A response (the client answering the server) never waits: the server may need it
    /// before it can answer anything else.
    fn must_hold(&self, text: &str) -> bool {
        let waiting = self.listing.is_some() || !self.held.is_empty();
        // Any text that names `tools/call` counts as a call: a wait too many costs little.
        let early_call = !self.ready && text.contains("tools/call");
        (waiting || early_call) && !is_response(text)
    }

    /// Lists the server's tools if the session allows it now and the server has any.
    fn list_if_ready_to(&mut self, out: &mut Vec<Out>) {
        match (self.initialized, self.server_has_tools) {
            (true, Some(true)) => match &mut self.listing {
                Some(listing) => listing.again = true,
                None => self.start_listing(out),
            },
            (_, Some(false)) => self.release(out),
            _ => {}
        }
    }

    /// What becomes of a line, one message or a batch, each message's fate decided by `each`.
    fn fate(
        &mut self,
        text: &str,
        out: &mut Vec<Out>,
        each: fn(&mut Proxy, &str, &mut Vec<Out>) -> Fate,
    ) -> Fate {
        match jsonrpc::batch(text) {
            None => each(self, text, out),
            Some(elements) => {
                let fates = elements
                    .iter()
                    .map(|element| each(self, element.get(), out))
                    .collect();
                rebuild(&elements, fates)
            }
        }
    }

    /// One client message, and what becomes of it.
    fn client_message(&mut self, text: &str, out: &mut Vec<Out>) -> Fate {
        match Message::read(text) {
            Message::Request(id, envelope) => match envelope.method() {
                "tools/call" => return self.call(text, id, &envelope, out),
                "tools/list" => self.expect(id, Pending::List),
                "initialize" => self.expect(id, Pending::Initialize),
                _ => self.expect(id, Pending::Other),
            },
            Message::Notification(envelope) => {
                self.initialized |= envelope.method() == "notifications/initialized";
            }
            Message::Response(..) | Message::Other => {}
        }
        Fate::Keep
    }

    fn expect(&mut self, id: Id, pending: Pending) {
        self.pending.insert(id, pending);
    }

    /// A `tools/call`: its arguments through the layer, or its answer from the layer.
    fn call(&mut self, text: &str, id: Id, envelope: &Envelope, out: &mut Vec<Out>) -> Fate {
        let params = envelope
            .params
            .and_then(|params| serde_json::from_str::<CallParams>(params.get()).ok());
        let Some(params) = params else {
            // Not a call the server can run either: it will say so.
            self.expect(id, Pending::Other);
            return Fate::Keep;
        };
        let arguments = params.arguments.map(RawValue::get);
        let reason = self.reason(&params.name, arguments);
        match self.transform.forward(id.json(), &params.name, arguments) {
            Forward::Answer(answer) => {
                let message = answer_text(&answer.content);
                let call = audit::Call::new(&params.name, reason, None);
                self.audit
                    .record(id.json(), call, Outcome::Answered(&message));
                let result = serde_json::json!({
                    "content": [{"type": "text", "text": message}],
                    "isError": true,
                });
                out.push(Out::Client(
                    jsonrpc::result(&id, &result.to_string()).into_bytes(),
                ));
                Fate::Drop
            }
            Forward::AsItCame => {
                let call = audit::Call::new(&params.name, reason, arguments);
                self.expect(id, Pending::Call(call));
                Fate::Keep
            }
            Forward::Send(stripped) => {
                let call = audit::Call::new(&params.name, reason, Some(&stripped));
                self.expect(id, Pending::Call(call));
                let before = arguments.unwrap_or_default();
                Fate::Change(jsonrpc::replace(text, before, &stripped))
            }
        }
    }

    /// The model's reason in a call to `tool`, if the audit wants it and it is the
    /// model's (the layer strips this tool's reason) rather than the tool's own.
    fn reason(&self, tool: &str, arguments: Option<&str>) -> Option<Box<RawValue>> {
        if !self.audit.wants_reasons() || !self.transform.strips(tool) {
            return None;
        }
        let members: HashMap<String, Box<RawValue>> = serde_json::from_str(arguments?).ok()?;
        members
            .into_iter()
            .find_map(|(key, value)| (key == self.transform.param()).then_some(value))
    }

    /// A line from the server.
    pub fn server_sent(&mut self, line: Vec<u8>) -> Vec<Out> {
        let mut out = Vec::new();
        let Ok(text) = std::str::from_utf8(&line) else {
            out.push(Out::Client(line));
            return out;
        };
        self.fate(text, &mut out, Proxy::server_message)
            .send(line, Out::Client, &mut out);
        out
    }

    /// One server message, answered like [`Proxy::client_message`].
    fn server_message(&mut self, text: &str, out: &mut Vec<Out>) -> Fate {
        match Message::read(text) {
            Message::Response(id, envelope) => {
                if id.is_own() {
                    // A page of the listing under way, or a late one given up on.
                    if self
                        .listing
                        .as_ref()
                        .is_some_and(|listing| listing.id == id)
                    {
                        self.listed(&envelope, out);
                    }
                    return Fate::Drop;
                }
                match self.pending.shift_remove(&id) {
                    Some(Pending::List) => return self.page(text, &envelope),
                    Some(Pending::Call(call)) => {
                        let outcome = match (envelope.result, envelope.error) {
                            (_, Some(error)) => Outcome::Error(error),
                            (result, None) => Outcome::Result {
                                is_error: result.is_some_and(is_error),
                            },
                        };
                        self.audit.record(id.json(), call, outcome);
                    }
                    Some(Pending::Initialize) => {
                        let has_tools = envelope.result.is_some_and(jsonrpc::has_tools);
                        self.server_has_tools = Some(has_tools);
                        // The relay comes first: the client may not act on anything else
                        // before it sees the server's answer.
                        out.push(Out::Client(text.as_bytes().to_vec()));
                        self.list_if_ready_to(out);
                        return Fate::Drop;
                    }
                    Some(Pending::Other) | None => {}
                }
            }
            Message::Notification(envelope)
                if envelope.method() == "notifications/tools/list_changed" =>
            {
                out.push(Out::Client(text.as_bytes().to_vec()));
                self.list_if_ready_to(out);
                return Fate::Drop;
            }
            _ => {}
        }
        Fate::Keep
    }

    /// A page of a listing the client asked for, its tools as the model is to see them.
    fn page(&mut self, text: &str, envelope: &Envelope) -> Fate {
        let Some(page) = envelope.result.and_then(Page::read) else {
            return Fate::Keep;
        };
        match self.transform.page(&page.tools) {
            Ok(augmented) => {
                let array = format!("[{}]", augmented.join(","));
                Fate::Change(jsonrpc::replace(text, page.array, &array))
            }
            Err(error) => {
                eprintln!("reasons: the listing goes to the client as it is: {error}");
                Fate::Keep
            }
        }
    }

    fn start_listing(&mut self, out: &mut Vec<Out>) {
        let id = self.ask_for_tools(None, out);
        self.listing = Some(Listing {
            id,
            tools: Vec::new(),
            again: false,
        });
    }

    /// Sends a `tools/list` request of the proxy's own (for the page after `cursor`, if
    /// given); its id.
    fn ask_for_tools(&mut self, cursor: Option<&RawValue>, out: &mut Vec<Out>) -> Id {
        self.own_ids += 1;
        let id = Id::own(self.own_ids);
        let params = cursor.map(|cursor| format!(r#"{{"cursor":{}}}"#, cursor.get()));
        out.push(Out::Server(
            jsonrpc::request(&id, "tools/list", params.as_deref()).into_bytes(),
        ));
        id
    }

    /// A page of the proxy's own listing: ask for the next, or use the whole.
    fn listed(&mut self, envelope: &Envelope, out: &mut Vec<Out>) {
        let Some(mut listing) = self.listing.take() else {
            return;
        };
        let Some(page) = envelope.result.and_then(Page::read) else {
            eprintln!("reasons: the server did not list its tools; the strip set stays");
            return self.release(out);
        };
        listing
            .tools
            .extend(page.tools.iter().map(|tool| tool.to_string()));
        if let Some(cursor) = page.next_cursor {
            listing.id = self.ask_for_tools(Some(cursor), out);
            self.listing = Some(listing);
            return;
        }
        if let Err(error) = self.transform.catalogue(listing.tools) {
            eprintln!("reasons: the server's tools could not be listed through the layer: {error}");
        }
        if listing.again {
            return self.start_listing(out);
        }
        self.release(out);
    }

    /// Sends on the client messages held for the listing, in order.
    fn release(&mut self, out: &mut Vec<Out>) {
        self.listing = None;
        self.ready = true;
        self.held_since = None;
        for line in std::mem::take(&mut self.held) {
            self.client_line(line, out);
        }
    }

    /// When the held messages go on regardless, if any are held.
    pub fn hold_ends(&self) -> Option<Instant> {
        self.held_since.map(|since| since + HOLD_AT_MOST)
    }

    /// Sends on what waited too long for the strip set, which stays as it is.
    pub fn give_up_waiting(&mut self) -> Vec<Out> {
        let mut out = Vec::new();
        if self.held_since.is_some() {
            eprintln!("reasons: the server's tools were not listed in time; the strip set stays");
            self.release(&mut out);
        }
        out
    }

    /// The client has gone: whatever is held goes to the server now.
    pub fn client_gone(&mut self) -> Vec<Out> {
        self.give_up_waiting()
    }

    /// The server has gone: every request it will never answer gets an error.
    pub fn server_gone(&mut self, why: &str) -> Vec<Out> {
        let message = format!("the MCP server exited before answering ({why})");
        let held = std::mem::take(&mut self.held);
        for line in &held {
            if let Ok(Message::Request(id, _)) = std::str::from_utf8(line).map(Message::read) {
                self.expect(id, Pending::Other);
            }
        }
        let mut out = Vec::new();
        for (id, pending) in std::mem::take(&mut self.pending) {
            if let Pending::Call(call) = pending {
                self.audit.record(id.json(), call, Outcome::Lost(&message));
            }
            out.push(Out::Client(jsonrpc::error(&id, &message).into_bytes()));
        }
        out
    }
}

/// Whether `text` is a response (the client answering the server), which never waits.
fn is_response(text: &str) -> bool {
    matches!(Message::read(text), Message::Response(..))
}

/// Whether a `tools/call` result says `isError: true`.
fn is_error(result: &RawValue) -> bool {
    #[derive(serde::Deserialize)]
    struct CallResult {
        #[serde(default, rename = "isError")]
        is_error: bool,
    }
    serde_json::from_str::<CallResult>(result.get()).is_ok_and(|result| result.is_error)
}

/// The text of a layer's answer: its content is JSON, a string when it is a message.
fn answer_text(content: &str) -> String {
    serde_json::from_str::<String>(content).unwrap_or_else(|_| content.to_string())
}

/// A batch's fate from its elements': an unchanged batch keeps its exact text, and one
/// whose every element was answered here is not sent at all.
fn rebuild(elements: &[&RawValue], fates: Vec<Fate>) -> Fate {
    if fates.iter().all(|fate| matches!(fate, Fate::Keep)) {
        return Fate::Keep;
    }
    let parts: Vec<&str> = elements
        .iter()
        .zip(&fates)
        .filter_map(|(element, fate)| match fate {
            Fate::Keep => Some(element.get()),
            Fate::Change(changed) => Some(changed.as_str()),
            Fate::Drop => None,
        })
        .collect();
    match parts.is_empty() {
        true => Fate::Drop,
        false => Fate::Change(format!("[{}]", parts.join(","))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plugin::Plugin;
    use reasons::Options;

    const ECHO: &str = r#"{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}}"#;
    const NOTE: &str = r#"{"name":"note","inputSchema":{"type":"object","properties":{"reason":{"type":"string"}}}}"#;
    const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
    const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    const HAS_TOOLS: &str = r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}}}}"#;

    fn proxy(options: Options) -> Proxy {
        let transform = Transform::new(&Plugin::reasons().unwrap(), options).unwrap();
        Proxy::new(transform, Audit::new(None, true).unwrap())
    }

    fn server(text: &str) -> Out {
        Out::Server(text.as_bytes().to_vec())
    }

    fn client(text: &str) -> Out {
        Out::Client(text.as_bytes().to_vec())
    }

    fn own_listing(number: u64, params: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":"reasons-proxy/{number}","method":"tools/list"{params}}}"#
        )
    }

    fn listing_result(id: &str, tools: &[&str], cursor: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{cursor}}}}}"#,
            tools.join(",")
        )
    }

    /// A proxy whose session is initialised and whose own listing of `tools` is done.
    fn initialised(options: Options, tools: &[&str]) -> Proxy {
        let mut proxy = proxy(options);
        assert_eq!(proxy.client_sent(INITIALIZE.into()), [server(INITIALIZE)]);
        assert_eq!(proxy.server_sent(HAS_TOOLS.into()), [client(HAS_TOOLS)]);
        assert_eq!(
            proxy.client_sent(INITIALIZED.into()),
            [server(INITIALIZED), server(&own_listing(1, ""))]
        );
        let listed = listing_result(r#""reasons-proxy/1""#, tools, "");
        assert_eq!(proxy.server_sent(listed.into_bytes()), []);
        proxy
    }

    fn call(id: u32, tool: &str, arguments: &str) -> String {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments},"_meta":{{"k":1}}}}}}"#
        )
    }

    #[test]
    fn only_the_tools_and_the_arguments_change() {
        // R1 R9: every other byte of every message is relayed as it came.
        let mut proxy = initialised(Options::default(), &[ECHO]);
        let request = r#"{ "jsonrpc" : "2.0", "id" : "a", "method" : "tools/list" }"#;
        assert_eq!(proxy.client_sent(request.into()), [server(request)]);
        let result = r#"{"result" : { "tools" : [ {"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}} ] , "nextCursor" : null }, "jsonrpc":"2.0", "id":"a"}"#;
        let expected = r#"{"result" : { "tools" : [{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"},"reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}}}}] , "nextCursor" : null }, "jsonrpc":"2.0", "id":"a"}"#;
        assert_eq!(proxy.server_sent(result.into()), [client(expected)]);

        let sent = call(7, "echo", r#"{ "message" : "hi" , "reason" : "to test" }"#);
        assert_eq!(
            proxy.client_sent(sent.into_bytes()),
            [server(&call(7, "echo", r#"{"message":"hi"}"#))]
        );
        for text in [
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"Echo: hi"}]}}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
            r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#,
        ] {
            assert_eq!(proxy.server_sent(text.into()), [client(text)]);
        }
        for text in [
            r#"{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant"}}"#,
            r#"{"jsonrpc":"2.0","id":8,"method":"server/discover"}"#,
            &call(9, "echo", r#"{"message":"no reason"}"#),
            "not json at all",
        ] {
            assert_eq!(proxy.client_sent(text.into()), [server(text)]);
        }
        assert_eq!(
            proxy.client_sent(b"\xff\xfe".to_vec()),
            [Out::Server(b"\xff\xfe".to_vec())]
        );
    }

    #[test]
    fn a_tool_that_owns_reason_gets_it() {
        // R5: its `reason` is a real argument.
        let mut proxy = initialised(Options::default(), &[NOTE]);
        let sent = call(1, "note", r#"{"reason":"mine"}"#);
        assert_eq!(
            proxy.client_sent(sent.clone().into_bytes()),
            [server(&sent)]
        );
    }

    #[test]
    fn a_call_waits_for_the_strip_set() {
        // R8: the server's tools are listed before the first call goes on, even when the
        // client sends everything at once.
        let mut proxy = proxy(Options::default());
        let sent = call(1, "echo", r#"{"message":"hi","reason":"x"}"#);
        let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
        assert_eq!(proxy.client_sent(INITIALIZE.into()), [server(INITIALIZE)]);
        assert_eq!(proxy.client_sent(INITIALIZED.into()), [server(INITIALIZED)]);
        assert_eq!(proxy.client_sent(sent.into_bytes()), []);
        assert_eq!(proxy.client_sent(ping.into()), [], "order is kept");
        assert!(proxy.hold_ends().is_some());
        assert_eq!(
            proxy.server_sent(HAS_TOOLS.into()),
            [client(HAS_TOOLS), server(&own_listing(1, ""))]
        );
        let listed = listing_result(r#""reasons-proxy/1""#, &[ECHO], "");
        assert_eq!(
            proxy.server_sent(listed.into_bytes()),
            [
                server(&call(1, "echo", r#"{"message":"hi"}"#)),
                server(ping)
            ]
        );
        assert!(proxy.hold_ends().is_none());
    }

    #[test]
    fn pages_are_followed_and_a_change_lists_again() {
        // R8: the strip set is the whole catalogue's, and the latest one's.
        let mut proxy = initialised(Options::default(), &[]);
        let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
        assert_eq!(
            proxy.server_sent(changed.into()),
            [client(changed), server(&own_listing(2, ""))]
        );
        let first = listing_result(r#""reasons-proxy/2""#, &[NOTE], r#","nextCursor":"p2""#);
        assert_eq!(
            proxy.server_sent(first.into_bytes()),
            [server(&own_listing(3, r#","params":{"cursor":"p2"}"#))]
        );
        let second = listing_result(r#""reasons-proxy/3""#, &[ECHO], "");
        assert_eq!(proxy.server_sent(second.into_bytes()), []);
        assert!(proxy.transform.strips("echo"));
        assert!(!proxy.transform.strips("note"));
    }

    #[test]
    fn a_call_refused_in_required_mode_is_answered_here() {
        let options = Options {
            required: true,
            ..Options::default()
        };
        let mut proxy = initialised(options, &[ECHO]);
        let out = proxy.client_sent(call(4, "echo", r#"{"message":"hi"}"#).into_bytes());
        let [Out::Client(answer)] = out.as_slice() else {
            panic!("{out:?}")
        };
        let answer: serde_json::Value = serde_json::from_slice(answer).unwrap();
        assert_eq!(answer["id"], 4);
        assert_eq!(answer["result"]["isError"], true);
        let text = answer["result"]["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("needs a `reason` argument"), "{text}");
    }

    #[test]
    fn a_batch_has_each_call_stripped() {
        let mut proxy = initialised(Options::default(), &[ECHO]);
        let batch = format!(
            "[{}, {}]",
            call(1, "echo", r#"{"reason":"x","message":"a"}"#),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
        );
        let expected = format!(
            "[{},{}]",
            call(1, "echo", r#"{"message":"a"}"#),
            r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#
        );
        assert_eq!(proxy.client_sent(batch.into_bytes()), [server(&expected)]);
    }

    #[test]
    fn when_the_server_goes_each_pending_request_gets_an_error() {
        let mut proxy = initialised(Options::default(), &[ECHO]);
        proxy.client_sent(call(5, "echo", r#"{"message":"a"}"#).into_bytes());
        proxy.client_sent(br#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#.to_vec());
        let out = proxy.server_gone("it exit status: 1");
        let message = r#""the MCP server exited before answering (it exit status: 1)""#;
        assert_eq!(
            out,
            [
                client(&format!(
                    r#"{{"jsonrpc":"2.0","id":5,"error":{{"code":-32603,"message":{message}}}}}"#
                )),
                client(&format!(
                    r#"{{"jsonrpc":"2.0","id":"p","error":{{"code":-32603,"message":{message}}}}}"#
                )),
            ]
        );
        assert!(proxy.audit().stats().contains("1 tool calls"));
    }
}
