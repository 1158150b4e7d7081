//! The proxy's state machine: a line in, the lines out. There is no I/O here but the
//! audit log, so that every path can be tested with strings.
//!
//! It changes two things and relays everything else byte for byte, in order: the `tools`
//! of a `tools/list` result (through the layer's listing) and the `arguments` of a
//! `tools/call` request (through the layer's forwarding). It fails closed (R18): a call
//! goes to the server only once the proxy knows its tool's fate from a listing that is
//! current, listing the server itself when it must, and a message it cannot read, or a
//! call whose fate it cannot learn, is answered with an error and never relayed.

use crate::Now;
use crate::audit::{self, Audit, Outcome};
use crate::delivery::{About, Delivery};
use crate::http::headers::ParamHeaders;
use crate::jsonrpc::{
    self, CallParams, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST, Id, Line, Message, Page,
    Params, Parsed, Read, Refusal,
};
use crate::layer::{Layer, Routing};
use crate::outline::{self, Outline};
use crate::telemetry::{CallFacts, Fate as CallFate, Span, Spans};
use catalogues::Catalogues;
use hold::{
    Awaits, Caller, HOLD_AT_MOST, Held, HeldPage, Listings, OwnListing, Waits, bypasses_hold,
};
use reasons_transform::json::{self, Member, Object};
use std::collections::{HashMap, HashSet, VecDeque};
use std::time::Duration;

mod catalogues;
mod hold;
mod owed;
mod restart;

/// The most characters of a note: enough for a server's error message, short of a flood.
const NOTE_CAP: usize = 1000;

/// A line to write, to one side or the other.
#[derive(Debug, PartialEq, Eq)]
pub enum Out {
    /// To the server, with what its transport needs to know of it.
    Server {
        /// The line, without its line break.
        line: Vec<u8>,
        /// What its transport needs to know of it.
        outline: Outline,
    },
    /// To the client (the proxy's stdout), with what a transport needs to know of it.
    Client(Delivery),
    /// For the human running the proxy (its stderr), never for either side: one line of
    /// inert text (R12), as it may quote what a server or a client said.
    Note(String),
    /// What the server said that a transport keeps for later: never a line to write.
    Learnt(Learnt),
    /// A call's audit record, one line of JSON without its line break, for the log the
    /// transport keeps (only when the audit wants records).
    Record(String),
    /// A client's request, answered: its span, for the collector the transport sends to
    /// (only with [`Proxy::with_telemetry`]).
    Span(Span),
}

/// What the server said that a transport keeps, so that no transport reads a message
/// the proxy read.
#[derive(Debug, PartialEq, Eq)]
pub enum Learnt {
    /// The protocol version the server's answer to `initialize` settled, which an HTTP
    /// transport's later requests carry (`MCP-Protocol-Version`).
    Version(String),
}

/// What becomes of one client message.
enum Fate {
    /// Relayed byte for byte.
    Keep,
    /// A call relayed as this text instead, with its arguments as forwarded.
    Change { text: String, arguments: String },
    /// Not relayed: answered here with this response, an error with this code or a
    /// result (`None`).
    Answer { text: String, code: Option<i64> },
}

impl Fate {
    /// Answered here with the error `code` under `id`, saying `why`.
    fn error(id: Option<&Id>, code: i64, why: &str) -> Fate {
        Fate::Answer {
            text: jsonrpc::error(id, code, why),
            code: Some(code),
        }
    }
}

/// What becomes of one server message.
enum Relay {
    /// Relayed to the client byte for byte.
    Keep,
    /// Relayed as this text instead, which is about this.
    Change(String, About),
    /// Not relayed: the proxy's own, or one it cannot read or match.
    Drop,
    /// Held until the proxy's own listing (a page of declarations it has not listed),
    /// made for the caller of the listing this page answers; whether that listing asked
    /// for the first page.
    Hold(Caller, bool),
}

/// What becomes of a held message when it leaves the hold.
enum Release {
    /// Its calls' tools are known from a listing newer than the message.
    Go,
    /// The listing it waited for failed, or the wait was too long: its calls are refused.
    Refuse(String),
}

/// A client request the server has yet to answer.
struct Pending {
    kind: Kind,
    /// The line to the server it went in ([`Outline::exchange`]).
    exchange: u64,
    /// The client batch it came in, when that batch has answers of the proxy's to add.
    batch: Option<u64>,
    /// Whether it came in a client batch at all: an answer to a request sent alone is
    /// delivered alone, whatever the server wrapped it in.
    batched: bool,
    /// The client's line it came in, as the client sent it, when it came alone to a
    /// server over HTTP: what is sent again, classified anew, in a new session when the
    /// server forgets this one ([`Proxy::session_lost`]).
    again: Option<String>,
}

enum Kind {
    Initialize,
    /// A `tools/list`; whether it asked for a page after the first, whose it is, and
    /// the number a whole listing answering it has: listings are numbered when they are
    /// asked for, since a server answers what it read then, whatever it said since.
    List {
        cursor: bool,
        caller: Caller,
        asked: u64,
    },
    Call(audit::Call),
    /// The proxy's own `initialize`, starting a session again for a server that forgot
    /// the client's.
    Again,
    Other,
}

/// Whether the client's `initialize` has been answered, when it sent one.
#[derive(Clone, Copy)]
enum Handshake {
    /// No `initialize` seen: a 2026-07-28 session, or none yet.
    None,
    /// Sent, not answered: the server takes no other request before it is.
    Waiting,
    Done,
}

/// The proxy's answers to some requests of a client batch, sent in the batch's response.
struct Batch {
    /// Requests of the batch the server has yet to answer.
    left: usize,
    answers: Vec<(String, About)>,
}

/// The proxy between one client and one server.
pub struct Proxy<L> {
    layer: L,
    audit: Audit,
    pending: HashMap<Id, Pending>,
    /// The server's tools as each caller was last shown them.
    catalogues: Catalogues,
    /// Listings asked for so far (the proxy's own, and the client's).
    started: u64,
    /// The listing the catalogue must be at least, to be current: the server said its
    /// tools changed after the listings before it were asked for.
    want: u64,
    /// Listings in a row that a change overtook ([`hold::MOST_OVERTAKEN`]).
    overtaken: u32,
    /// How far the listings made for each caller have come.
    listings: HashMap<Caller, Listings>,
    listing: Option<OwnListing>,
    /// Client messages waiting, in order, and the server's listing answers waiting.
    held: VecDeque<Held>,
    pages: VecDeque<HeldPage>,
    handshake: Handshake,
    /// Own ids given up on, whose late answers are dropped.
    abandoned: HashSet<Id>,
    batches: HashMap<u64, Batch>,
    batch_ids: u64,
    /// Lines sent to the server so far: the last one's number.
    sent: u64,
    /// The `Mcp-Param-*` headers each tool asks for, learnt from the listings read.
    params: ParamHeaders,
    /// How long a message may wait ([`HOLD_AT_MOST`] unless a test says otherwise).
    hold: Duration,
    /// The time the transport last handed in, with the step it is for.
    now: Now,
    /// What the human running the proxy is to be told, with the next lines out.
    notes: Vec<String>,
    /// The audit records made since the last output.
    records: Vec<String>,
    /// Whether the server is reached over Streamable HTTP, where a tool whose
    /// `x-mcp-header` annotations break the rules is dropped ([`Proxy::over_http`]).
    over_http: bool,
    /// Whether a client's first page of tools is answered with the whole listing
    /// ([`Proxy::answering_whole_listings`]).
    whole_listings: bool,
    /// The client's requests' spans, when telemetry is wanted.
    spans: Option<Spans>,
    /// What starts a session again for a server that forgets the client's.
    again: restart::Again,
}

impl<L: Layer> Proxy<L> {
    /// A proxy over `transform`, recording calls in `audit`.
    pub fn new(layer: L, audit: Audit, now: Now) -> Proxy<L> {
        Proxy {
            now,
            notes: Vec::new(),
            records: Vec::new(),
            layer,
            audit,
            pending: HashMap::new(),
            catalogues: Catalogues::default(),
            started: 0,
            want: 0,
            overtaken: 0,
            listings: HashMap::new(),
            listing: None,
            held: VecDeque::new(),
            pages: VecDeque::new(),
            handshake: Handshake::None,
            abandoned: HashSet::new(),
            batches: HashMap::new(),
            batch_ids: 0,
            sent: 0,
            params: ParamHeaders::default(),
            hold: HOLD_AT_MOST,
            over_http: false,
            whole_listings: false,
            spans: None,
            again: restart::Again::default(),
        }
    }

    /// The proxy, handing out each client request's span once it is answered
    /// ([`Out::Span`]).
    pub fn with_telemetry(self) -> Proxy<L> {
        Proxy {
            spans: Some(Spans::default()),
            ..self
        }
    }

    /// The proxy of a server reached over Streamable HTTP. As an HTTP client of it in
    /// 2026-07-28, it MUST drop a tool whose `x-mcp-header` annotations break the rules:
    /// such a tool is left out of every listing a 2026-07-28 client gets, and a call to it
    /// is refused, since no header the server could read can be built for it.
    pub fn over_http(self) -> Proxy<L> {
        Proxy {
            over_http: true,
            ..self
        }
    }

    /// The proxy of a client it keeps nothing of between requests (the gateway): a
    /// client's first page of tools, when more pages follow it, is answered with the
    /// whole listing the proxy walked to augment it (every page, as its caller's
    /// catalogue holds them, without `nextCursor`). A page alone cannot be augmented
    /// (R7 reads the whole listing), so each page a client asked for would cost the
    /// server a whole listing; answered whole, a client's listing costs one. A server
    /// chooses its page size; a client reads one page as well as twenty.
    pub fn answering_whole_listings(self) -> Proxy<L> {
        Proxy {
            whole_listings: true,
            ..self
        }
    }

    /// Whether the proxy drops any tool, as [`Proxy::over_http`] says: over HTTP, out of a
    /// legacy session (one that began with `initialize`, which sends no such headers).
    pub(crate) fn dropping(&self) -> bool {
        self.over_http && matches!(self.handshake, Handshake::None)
    }

    /// Whether `tool` is one the proxy drops.
    fn drops(&self, tool: &str) -> bool {
        self.dropping() && self.params.breaks_rules(tool)
    }

    /// The calls recorded so far.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }

    /// The declarations the server listed, as it listed them (every caller's), each once:
    /// what `--stats` tells of the tools that ask the model why themselves.
    pub fn declared(&self) -> Vec<String> {
        self.catalogues.declared()
    }

    /// The parameter's name (R11).
    pub fn param(&self) -> &str {
        self.layer.param()
    }

    /// Something the human running the proxy is to be told, made inert here so that no
    /// transport can print a server's words raw.
    fn note(&mut self, note: String) {
        self.notes.push(reasons_inert::inert(&note, NOTE_CAP));
    }

    /// `out`, with the records and notes made on the way to it: the records first, so
    /// that a call's record is in the log before its answer reaches the client (a
    /// client that reads the log once answered finds it there).
    fn with_notes(&mut self, out: Vec<Out>) -> Vec<Out> {
        let mut all: Vec<Out> = self.records.drain(..).map(Out::Record).collect();
        let mut ended = Vec::new();
        if let Some(spans) = &mut self.spans {
            ended.extend(spans.ended_unanswered());
            for out in &out {
                if let Out::Client(delivery) = out {
                    ended.extend(spans.delivered(delivery, self.now.instant));
                }
            }
        }
        all.extend(out);
        all.extend(self.notes.drain(..).map(Out::Note));
        all.extend(ended.into_iter().map(Out::Span));
        all
    }

    /// What the layer did with the call `id`, for its span.
    fn told(&mut self, id: &Id, facts: CallFacts) {
        if let Some(spans) = &mut self.spans {
            spans.call(id, facts);
        }
    }

    /// Records `call`, answered under `id`, as ending now with `outcome`.
    fn record(&mut self, id: &Id, call: audit::Call, outcome: Outcome) {
        let record = self.audit.record(id.json(), call, outcome, self.now);
        self.records.extend(record);
    }

    /// A line from the client.
    pub fn client_sent(&mut self, line: Vec<u8>, now: Now) -> Vec<Out> {
        self.client_read(Parsed::read(line), now)
    }

    /// A line from the client that was read already (the HTTP front reads each POST
    /// to route it), or the refusal of the whole of it.
    pub fn client_read(&mut self, line: Result<Parsed, Refusal>, now: Now) -> Vec<Out> {
        self.now = now;
        let now = now.instant;
        let mut out = Vec::new();
        match line {
            Err(refusal) => {
                let about = About::made(refusal.id.as_ref(), Some(refusal.code));
                out.push(Out::Client(Delivery::one(
                    refusal.answer().into_bytes(),
                    about,
                )));
            }
            Ok(line) => {
                let read = line.line();
                if let Some(spans) = &mut self.spans {
                    spans.arrived(&read, self.now);
                }
                // What never waits: the client answering the server (which may need
                // that to answer anything), and `initialized` (which a server may need
                // before it lists its tools for the calls that wait).
                let waits = (!self.held.is_empty() || self.again.under_way.is_some())
                    && !bypasses_hold(&read);
                let awaited = self.waits(&read);
                if waits || !self.can_go(&awaited, None) {
                    if let Some(spans) = &mut self.spans {
                        spans.held(&read);
                    }
                    self.held.push_back(self.hold(line, awaited, now));
                } else {
                    self.client_line(&line, &awaited, Release::Go, &mut out);
                }
            }
        }
        self.drain(&mut out);
        self.with_notes(out)
    }

    /// One client line (a message or a batch), with its held calls' fate; `waits`: what
    /// each of its messages waited for.
    fn client_line(&mut self, line: &Parsed, waits: &Waits, release: Release, out: &mut Vec<Out>) {
        match line.line() {
            Line::One(read) => {
                match self.client_message(&read, waits.calls.first(), &release, None) {
                    Fate::Keep => {
                        let outline = Outline::of(&read, None);
                        self.keep_to_send_again(&outline, line);
                        out.push(self.for_server(line.text().into(), outline));
                    }
                    Fate::Change { text, arguments } => {
                        let outline = Outline::of(&read, Some(&arguments));
                        self.keep_to_send_again(&outline, line);
                        out.push(self.for_server(text.into_bytes(), outline));
                    }
                    Fate::Answer { text, code } => {
                        let about = About::made(answered(&read), code);
                        out.push(Out::Client(Delivery::one(text.into_bytes(), about)));
                    }
                }
            }
            Line::Batch(reads) => self.client_batch(&reads, waits, &release, out),
        }
    }

    /// A client batch: sent on as a batch of what goes to the server; the proxy's own
    /// answers join the server's response to it, so the client gets one batch back.
    fn client_batch(
        &mut self,
        reads: &[Read],
        waits: &Waits,
        release: &Release,
        out: &mut Vec<Out>,
    ) {
        self.batch_ids += 1;
        let batch = self.batch_ids;
        let (mut sent, mut answers, mut owed) = (Vec::new(), Vec::new(), Vec::new());
        for (read, awaits) in reads.iter().zip(&waits.calls) {
            match self.client_message(read, Some(awaits), release, Some(batch)) {
                Fate::Keep => sent.push(read.text.to_string()),
                Fate::Change { text, .. } => sent.push(text),
                Fate::Answer { text, code } => {
                    answers.push((text, About::made(answered(read), code)));
                    continue;
                }
            }
            owed.extend(outline::request_id(read));
        }
        let requests = owed.len();
        if !sent.is_empty() {
            let line = format!("[{}]", sent.join(",")).into_bytes();
            out.push(self.for_server(line, Outline::batch(owed)));
        }
        match (answers.is_empty(), requests) {
            (true, _) => self.untag(batch),
            (false, 0) => {
                self.untag(batch);
                out.push(Out::Client(Delivery::batch(answers)));
            }
            (false, left) => {
                self.batches.insert(batch, Batch { left, answers });
            }
        }
    }

    /// Forgets that pending requests came in `batch`: it has no answers to add.
    fn untag(&mut self, batch: u64) {
        for pending in self.pending.values_mut() {
            if pending.batch == Some(batch) {
                pending.batch = None;
            }
        }
    }

    /// One client message, and what becomes of it; `awaits`: what it waited for, when
    /// it is a call.
    fn client_message(
        &mut self,
        read: &Read,
        awaits: Option<&Option<Awaits>>,
        release: &Release,
        batch: Option<u64>,
    ) -> Fate {
        let message = match &read.message {
            Err(refusal) => {
                return Fate::Answer {
                    text: refusal.answer(),
                    code: Some(refusal.code),
                };
            }
            Ok(message) => message,
        };
        match message {
            Message::Request {
                id, method, params, ..
            } => {
                let own = self
                    .listing
                    .as_ref()
                    .is_some_and(|listing| &listing.id == id)
                    || self.abandoned.contains(id);
                if self.pending.contains_key(id) || own {
                    if let Some(spans) = &mut self.spans
                        && !own
                    {
                        spans.twin_refused(id, method, params.as_ref(), self.now);
                    }
                    let why = "the id is already in use by a request not yet answered; \
                               the request was not sent";
                    return Fate::error(Some(id), INVALID_REQUEST, why);
                }
                let kind = match method.as_str() {
                    "tools/call" => {
                        // Decided against the catalogue it waited for, by construction.
                        let Some(Some(Awaits { caller, .. })) = awaits else {
                            unreachable!("every call of a line is in what the line waits for")
                        };
                        let call = (read.text, id, params.as_ref(), caller);
                        return self.call(call, release, batch);
                    }
                    "tools/list" => {
                        match params.as_ref().map(|params| (params, params.members())) {
                            // Whether it asks for a later page decides whether its answer is a
                            // whole catalogue: that must be read as the server reads it.
                            Some((_, Err(why))) => {
                                let why = format!("the params {why}; the request was not sent");
                                return Fate::error(Some(id), INVALID_PARAMS, &why);
                            }
                            Some((params, Ok(members))) => Kind::List {
                                cursor: jsonrpc::member(members, "cursor").is_some(),
                                caller: self.caller_of(Some(params)),
                                asked: self.number_listing(),
                            },
                            None => Kind::List {
                                cursor: false,
                                caller: None,
                                asked: self.number_listing(),
                            },
                        }
                    }
                    "initialize" => {
                        self.handshake = Handshake::Waiting;
                        self.again.initialize = Some(read.text.to_string());
                        Kind::Initialize
                    }
                    _ => Kind::Other,
                };
                self.expect(id, kind, batch);
                Fate::Keep
            }
            Message::Notification { method, .. } if method == "tools/call" => Fate::error(
                None,
                INVALID_REQUEST,
                "a tools/call needs an id; it was not sent",
            ),
            Message::Notification { .. } | Message::Response { .. } => Fate::Keep,
        }
    }

    /// A request of the client's this proxy never saw, whose stream the client resumed
    /// through it (2025-11-25's `Last-Event-ID`): its answer is relayed as the server
    /// sends it. Only a request whose answer is relayed as read may be resumed so
    /// ([`answered_as_read`]): a listing's or an `initialize`'s answer decides what the
    /// proxy strips, and one it did not ask for decides nothing.
    pub fn resumed(&mut self, id: &Id) {
        self.expect(id, Kind::Other, None);
    }

    /// Expects the server's answer to `id`; the line it goes in numbers it
    /// ([`Proxy::for_server`]).
    fn expect(&mut self, id: &Id, kind: Kind, batch: Option<u64>) {
        if let Some(spans) = &mut self.spans {
            spans.sent(id, self.now.instant);
        }
        let pending = Pending {
            kind,
            exchange: 0,
            batch,
            batched: batch.is_some(),
            again: None,
        };
        self.pending.insert(id.clone(), pending);
    }

    /// A `tools/call` (its text, id, params and caller): sent on stripped, sent on as it
    /// came when there is nothing of the layer's in it, or answered here, never sent with
    /// a doubt (R18). Its fate is decided against its own caller's catalogue alone.
    fn call(
        &mut self,
        (text, id, params, caller): (&str, &Id, Option<&Params>, &Caller),
        release: &Release,
        batch: Option<u64>,
    ) -> Fate {
        // What the client said of the call's invocation, for its record.
        let invocation = params
            .and_then(|params| params.in_meta(audit::AI_INVOCATION))
            .filter(|_| self.audit.wants_records());
        let params = match CallParams::read(params) {
            Ok(params) => params,
            Err(why) => {
                let message = format!("{why}; the call was not sent");
                return Fate::error(Some(id), INVALID_PARAMS, &message);
            }
        };
        let name = params.name.as_str();
        let arguments = params.arguments;
        // The arguments' top-level members, read once: whether the parameter is among
        // them, and the model's reason for the audit. `None`: not readable.
        let members = arguments.map_or(Some(Vec::new()), |arguments| {
            Object::parse(arguments).map(|object| object.members)
        });
        let catalogue = self.catalogues.of(caller);
        let known = catalogue.is_some_and(|catalogue| catalogue.names.contains(name));
        let augmented = catalogue.is_some_and(|catalogue| catalogue.stripped.contains(name));
        // The model's reason, when the layer strips this tool's (else it is the tool's
        // own): for the record, and for the span its length alone, never its text.
        let given = (members.as_deref())
            .filter(|_| augmented)
            .and_then(|members| self.reason_in(members));
        let reason = given
            .filter(|_| self.audit.wants_reasons())
            .map(str::to_string);
        let length = given.map(|value| json::string(value).map_or(0, |text| text.chars().count()));
        let facts = move |fate| CallFacts {
            augmented,
            reason: length,
            fate,
        };
        let refuse = |proxy: &mut Proxy<L>, reason, code, why: String| {
            proxy.told(id, facts(CallFate::Refused));
            let call = audit::Call::kept(name, reason, proxy.now).invoked(invocation);
            proxy.record(id, call, Outcome::Answered(&why));
            Fate::error(Some(id), code, &why)
        };
        if let Release::Refuse(why) = release {
            let why = format!("{why}; the call was not sent");
            return refuse(self, reason, INTERNAL_ERROR, why);
        }
        if self.drops(name) {
            let why = format!(
                "the tool `{name}` declares x-mcp-header annotations that break the rules of \
                 MCP 2026-07-28, so an HTTP client drops it from its tools; the call was not sent"
            );
            return refuse(self, reason, INVALID_PARAMS, why);
        }
        let Some(members) = members else {
            let why = "the arguments are not readable JSON".to_string();
            return refuse(self, reason, INVALID_PARAMS, why);
        };
        let param = self.layer.param().as_bytes();
        let carries = members.iter().any(|member| member.key.as_ref() == param);
        if !known && carries {
            let why = format!(
                "the tool `{name}` is not in the server's latest tools/list, so whether `{}` \
                 is its own argument is unknown; the call was not sent",
                self.layer.param()
            );
            return refuse(self, reason, INVALID_PARAMS, why);
        }
        let sent = |proxy: &mut Proxy<L>, reason, arguments: Option<&str>, fate: Fate| {
            let told = match fate {
                Fate::Change { .. } => CallFate::Stripped,
                _ => CallFate::Forwarded,
            };
            proxy.told(id, facts(told));
            proxy.expect(
                id,
                Kind::Call(
                    audit::Call::sent(
                        name,
                        reason,
                        arguments.filter(|_| proxy.audit.wants_records()),
                        proxy.now,
                    )
                    .invoked(invocation),
                ),
                batch,
            );
            fate
        };
        let through_layer = augmented && (carries || self.layer.required());
        if !through_layer {
            // R9: nothing of the layer's in it (or a tool that owns the name, R5).
            return sent(self, reason, arguments, Fate::Keep);
        }
        if !self.layer_reads(caller) {
            let why = "the layer could not read the tools listed for this client again; the \
                       call was not sent";
            return refuse(self, reason, INTERNAL_ERROR, why.into());
        }
        match self.layer.route(id.json(), name, arguments) {
            Routing::Answer(answer) => {
                self.told(id, facts(CallFate::Refused));
                let message = answer_text(&answer.content);
                let call = audit::Call::kept(name, reason, self.now).invoked(invocation);
                self.record(id, call, Outcome::Answered(&message));
                let result = serde_json::json!({
                    "content": [{"type": "text", "text": message}],
                    "isError": true,
                });
                Fate::Answer {
                    text: jsonrpc::result(id, &result.to_string()),
                    code: None,
                }
            }
            Routing::Send(stripped) => {
                let mut changed = jsonrpc::replace(text, arguments.unwrap_or_default(), &stripped);
                if cfg!(feature = "mutant-respell-outside") {
                    changed = changed.replacen(r"\/", "/", 1);
                }
                let fate = Fate::Change {
                    text: changed,
                    arguments: stripped.clone(),
                };
                sent(self, reason, Some(&stripped), fate)
            }
            Routing::AsItCame if !carries => sent(self, reason, arguments, Fate::Keep),
            Routing::AsItCame => refuse(
                self,
                reason,
                INTERNAL_ERROR,
                "the layer left the reason in a call it strips; the call was not sent".into(),
            ),
        }
    }

    /// The text of the reason among a call's top-level `members`: a repeated key's last
    /// value, the one parsers read.
    fn reason_in<'a>(&self, members: &'a [Member<'a>]) -> Option<&'a str> {
        let param = self.layer.param().as_bytes();
        members
            .iter()
            .rev()
            .find(|member| member.key.as_ref() == param)
            .map(|member| member.value)
    }

    /// Whether the layer's strip set is `caller`'s catalogue's, reading it again when the
    /// layer last read another caller's (the shared session).
    fn layer_reads(&mut self, caller: &Caller) -> bool {
        if self.catalogues.layer_holds(caller) {
            return true;
        }
        let Some(listed) = self
            .catalogues
            .of(caller)
            .map(|catalogue| catalogue.listed())
        else {
            return false;
        };
        let read = self.layer.augment(listed).is_ok();
        if read {
            self.catalogues.layer_read(caller);
        }
        read
    }

    /// A line from the server.
    pub fn server_sent(&mut self, line: Vec<u8>, now: Now) -> Vec<Out> {
        self.server_read(Parsed::read(line), now)
    }

    /// A line from the server that was read already (where it came in, as a client's
    /// is), or the refusal of the whole of it.
    pub fn server_read(&mut self, line: Result<Parsed, Refusal>, now: Now) -> Vec<Out> {
        self.server_line(line, None, now)
    }

    /// A line from the server; with `only`, taken only when it answers a request of that
    /// line to the server ([`Proxy::server_answered`]).
    fn server_line(
        &mut self,
        line: Result<Parsed, Refusal>,
        only: Option<u64>,
        now: Now,
    ) -> Vec<Out> {
        self.now = now;
        let mut out = Vec::new();
        let line = match line {
            Ok(line) if only.is_some_and(|exchange| !self.answers(&line.line(), exchange)) => {
                return out;
            }
            Ok(line) => line,
            Err(_) if only.is_some() => return out,
            Err(refusal) => {
                // Nothing can be answered to the server about it, and nothing it says is
                // relayed unread: the client gets no message the proxy could not check.
                self.note(format!(
                    "dropped a line from the server: {}",
                    refusal.message
                ));
                return self.with_notes(out);
            }
        };
        let mut finished = Vec::new();
        match line.line() {
            Line::One(read) => {
                match self.server_message(&read, true, &mut finished, &mut out) {
                    Relay::Keep => {
                        let about = About::of(&read);
                        out.push(Out::Client(Delivery::one(line.into_bytes(), about)));
                    }
                    Relay::Change(text, about) => {
                        out.push(Out::Client(Delivery::one(text.into_bytes(), about)));
                    }
                    Relay::Drop => {}
                    Relay::Hold(caller, first) => {
                        let held = self.hold_page(line, caller, first);
                        self.pages.push_back(held);
                    }
                }
                for answers in finished.drain(..) {
                    out.push(Out::Client(Delivery::batch(answers)));
                }
            }
            Line::Batch(reads) => {
                let mut parts = Vec::new();
                for read in &reads {
                    let alone = self.answers_a_request_sent_alone(read);
                    let part = match self.server_message(read, false, &mut finished, &mut out) {
                        Relay::Keep => (read.text.to_string(), About::of(read)),
                        Relay::Change(text, about) => (text, about),
                        Relay::Drop | Relay::Hold(..) => continue,
                    };
                    match alone {
                        true => out.push(Out::Client(Delivery::one(part.0.into_bytes(), part.1))),
                        false => parts.push(part),
                    }
                }
                parts.extend(finished.into_iter().flatten());
                if !parts.is_empty() {
                    out.push(Out::Client(Delivery::batch(parts)));
                }
            }
        }
        self.drain(&mut out);
        self.with_notes(out)
    }

    /// What becomes of one server message. Only a message that is a whole line may be
    /// held (`may_hold`); a batch's answers the proxy adds go to `finished`.
    fn server_message(
        &mut self,
        read: &Read,
        may_hold: bool,
        finished: &mut Vec<Vec<(String, About)>>,
        out: &mut Vec<Out>,
    ) -> Relay {
        let message = match &read.message {
            Ok(message) => message,
            Err(refusal) => {
                self.note(format!(
                    "dropped a message from the server: {}",
                    refusal.message
                ));
                return Relay::Drop;
            }
        };
        let (id, result) = match message {
            Message::Notification { method, .. }
                if method == "notifications/tools/list_changed" =>
            {
                // The catalogue is stale from now, and so is every listing asked for
                // before this, whenever its answer comes: calls wait for a listing asked
                // for after this. Nothing is listed until a call needs it, so a server
                // that says this on every listing cannot make the proxy list without end.
                self.want = self.started + 1;
                return Relay::Keep;
            }
            Message::Response {
                id: Some(id),
                result,
                ..
            } => (id, *result),
            Message::Response { id: None, .. } => {
                self.note("dropped an error the server sent for no request".into());
                return Relay::Drop;
            }
            _ => return Relay::Keep,
        };
        if self
            .listing
            .as_ref()
            .is_some_and(|listing| &listing.id == id)
        {
            self.own_page(result, read.text, out);
            return Relay::Drop;
        }
        if self.abandoned.remove(id) {
            return Relay::Drop;
        }
        let Some(pending) = self.pending.remove(id) else {
            // R19: a second answer to a request already answered, or to none.
            self.note(format!(
                "dropped a response to no pending request ({})",
                id.json()
            ));
            return Relay::Drop;
        };
        if let Some(spans) = &mut self.spans {
            spans.answered_upstream(id, self.now.instant);
        }
        if !matches!(pending.kind, Kind::Again) {
            self.again.in_a_row = 0;
        }
        if let Some(batch) = pending.batch
            && let Some(entry) = self.batches.get_mut(&batch)
        {
            entry.left -= 1;
            if entry.left == 0 {
                finished.extend(self.batches.remove(&batch).map(|batch| batch.answers));
            }
        }
        match pending.kind {
            Kind::List {
                cursor,
                caller,
                asked,
            } => {
                // Read once, for the headers its tools declare and for the page itself.
                let page = result.and_then(Page::read);
                if let Some(page) = &page {
                    self.params.learn(page);
                }
                return self.page(read, page, (cursor, asked), caller, may_hold);
            }
            Kind::Call(call) => {
                let outcome = match (result, &read.message) {
                    (Some(result), _) => Outcome::Result {
                        is_error: is_error(result),
                    },
                    _ => Outcome::Error(audit::Json(error_of(read.text))),
                };
                self.record(id, call, outcome);
            }
            Kind::Initialize => {
                self.handshake = Handshake::Done;
                if result.is_none() {
                    self.again.initialize = None;
                }
                settled(result, out);
            }
            Kind::Again => {
                self.started_again(result, read.text, out);
                return Relay::Drop;
            }
            Kind::Other => {}
        }
        Relay::Keep
    }

    /// Whether `read`, a message of a server batch, answers a client request that came
    /// in no batch: a client that sent one message reads one answer, not an array.
    fn answers_a_request_sent_alone(&self, read: &Read) -> bool {
        match &read.message {
            Ok(Message::Response { id: Some(id), .. }) => {
                self.pending.get(id).is_some_and(|pending| !pending.batched)
            }
            _ => false,
        }
    }

    /// The client has gone. What waits still goes on (the client may read answers after
    /// it stops writing); the caller closes the server's stdin once [`Proxy::idle`].
    pub fn client_gone(&mut self, now: Now) -> Vec<Out> {
        self.tick(now)
    }

    /// The server has gone: every request it will never answer gets an error, and every
    /// call among them is audited as lost. What waited was never sent.
    pub fn server_gone(&mut self, why: &str, now: Now) -> Vec<Out> {
        self.now = now;
        let message = format!("the MCP server exited before answering ({why})");
        let mut out = Vec::new();
        for held in std::mem::take(&mut self.held) {
            let refuse = Release::Refuse(message.clone());
            self.client_line(&held.line, &held.waits, refuse, &mut out);
        }
        out.retain(|line| matches!(line, Out::Client(_)));
        for held in std::mem::take(&mut self.pages) {
            if let Line::One(read) = held.line.line() {
                let about = About::of(&read);
                out.push(Out::Client(Delivery::one(read.text.into(), about)));
            }
        }
        let mut lost: Vec<(Id, Pending)> = self.pending.drain().collect();
        lost.sort_by(|(a, _), (b, _)| a.json().cmp(b.json()));
        for (id, pending) in lost {
            match pending.kind {
                Kind::Call(call) => self.record(&id, call, Outcome::Lost(&message)),
                // The proxy's own: no client asked it.
                Kind::Again => continue,
                _ => {}
            }
            let error = jsonrpc::error(Some(&id), INTERNAL_ERROR, &message);
            let about = About::made(Some(&id), Some(INTERNAL_ERROR));
            out.push(Out::Client(Delivery::one(error.into_bytes(), about)));
        }
        for (_, batch) in std::mem::take(&mut self.batches) {
            out.push(Out::Client(Delivery::batch(batch.answers)));
        }
        self.with_notes(out)
    }
}

/// The request a response the proxy makes to the client's `read` answers: its id, when
/// it could be read.
fn answered<'a>(read: &'a Read) -> Option<&'a Id> {
    match &read.message {
        Ok(Message::Request { id, .. }) => Some(id),
        Err(refusal) => refusal.id.as_ref(),
        _ => None,
    }
}

/// Whether the answer to a request of `method` reaches its client as the server sent
/// it: all but a listing's and an `initialize`'s, which the proxy reads to decide.
pub fn answered_as_read(method: &str) -> bool {
    !matches!(method, "tools/list" | "initialize")
}

/// Tells the transport the protocol version an answer to `initialize` (its `result`)
/// settled.
fn settled(result: Option<&str>, out: &mut Vec<Out>) {
    let version = result.and_then(|result| jsonrpc::at(result, &["protocolVersion"]));
    if let Some(version) = version.and_then(json::string) {
        out.push(Out::Learnt(Learnt::Version(version)));
    }
}

/// Whether a `tools/call` result says `isError: true`.
fn is_error(result: &str) -> bool {
    jsonrpc::unique(result)
        .ok()
        .and_then(|members| jsonrpc::member(&members, "isError").map(|value| value == "true"))
        .unwrap_or(false)
}

/// The `error` member of a response's text.
fn error_of(text: &str) -> &str {
    jsonrpc::unique(text)
        .ok()
        .and_then(|members| jsonrpc::member(&members, "error"))
        .unwrap_or("null")
}

/// The text of a layer's answer: its content is JSON, a string when it is a message.
fn answer_text(content: &str) -> String {
    json::string(content).unwrap_or_else(|| content.to_string())
}

#[cfg(test)]
mod properties;
#[cfg(test)]
mod tests;
