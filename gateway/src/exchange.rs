//! One client request, driven through a fresh [`Proxy`] from start to end: the gateway
//! keeps nothing between requests, so that an engine may give each one a fresh instance
//! and replicas need no sticky sessions.
//!
//! A POST's message goes to the proxy as the client's line. Every line the proxy sends
//! the server is POSTed upstream with the client's own headers (its `Authorization`, its
//! `Mcp-Session-Id`), the operator's in place of any of the same name, and the 2026-07-28
//! request headers rebuilt from the message as forwarded; every message that comes back
//! (a JSON body, or an SSE stream's events) goes to the proxy as the server's, and what
//! the proxy has for the client goes to it at once: a progress notification, a server's
//! request in the middle of a call, a subscription's events, each as it comes.
//!
//! A fresh proxy knows no tools, so a `tools/call` waits for the proxy's own
//! `tools/list`, made for this caller with its headers and `_meta`, before it is stripped
//! and sent, or refused (R18). No listing is kept for a later request, however long it
//! says it may be reused: a change of tools may be announced to another instance or
//! replica (a `subscriptions/listen` stream is served by one), and no instance can learn
//! of it, so a kept listing could strip a tool's own reason (R5) or send the model's
//! to a tool that no longer owns one.
//!
//! Every wait ends at a deadline that only a message moves ([`Deadline`]): the upstream's
//! silence, a stream of comments, a body that is not read or a client that stops reading
//! end it alike, within `REASONS_READ_TIMEOUT_SECS`, and a listing a call waits for within
//! the proxy's own hold.

use crate::settings::Settings;
use crate::wire::{self, Answer, Body, Deadline, Reply};
use crate::{resumption, telemetry};
use reasons_mcp::http::answered::{self, Kind};
use reasons_mcp::http::{headers, inbound, intake, sse};
use reasons_mcp::jsonrpc::Id;
use reasons_mcp::proxy::answered_as_read;
use reasons_mcp::telemetry::Span;
use reasons_mcp::{Audit, Delivery, NativeLayer, Now, Out, Outline, Proxy};
use std::collections::VecDeque;
use std::time::Instant;
use wasip2::http::types::{IncomingRequest, Method, ResponseOutparam};

/// The time, read from the engine's clocks for one step of the proxy.
fn now() -> Now {
    Now {
        instant: Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

/// A POST: one message from the client.
pub fn post(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let content_type = wire::joined(&request, "content-type");
    let accept = wire::joined(&request, "accept");
    if let Some((status, why)) = reasons_mcp::http::admission::refused_post(&content_type, &accept)
    {
        return wire::refuse(out, status, &why);
    }
    let client = wire::client_headers(&request);
    let said = request.headers().entries();
    let Ok(body) = request.consume() else {
        return wire::refuse(out, 400, "the request's body could not be read");
    };
    let deadline = Deadline::after(settings.read_timeout);
    let message = match wire::read_whole(body, settings.max_message, &deadline) {
        Ok(message) => message,
        Err(unread) => return wire::refuse(out, unread.status, &unread.why),
    };
    // The intake `reasons mcp --listen` takes its POSTs in by: the message read once,
    // and what no server edge takes (not JSON, a batch, headers that disagree with the
    // body) refused before anything routes by it.
    let header = |name: &str| {
        let values = said
            .iter()
            .filter(|(given, _)| given.eq_ignore_ascii_case(name));
        inbound::joined(values.map(|(_, value)| value.as_slice()))
    };
    let posted = match intake::take(message, header) {
        Ok(posted) => posted,
        Err(rejected) => {
            let answer = rejected.refusal.answer();
            return wire::json(out, rejected.status, &[], answer.as_bytes());
        }
    };
    // A stream whose answer is relayed as read is one any instance can resume.
    let resumable =
        (posted.id.clone()).filter(|_| posted.method.as_deref().is_some_and(answered_as_read));
    let began = now();
    // A client's first page of tools is answered whole: each page it asked for would
    // cost the server a whole listing, as this instance keeps none.
    let mut proxy = Proxy::new(layer(settings), Audit::default(), began)
        .over_http()
        .answering_whole_listings();
    if settings.telemetry.is_some() {
        proxy = proxy.with_telemetry();
    }
    let mut exchange = Exchange {
        settings,
        client,
        proxy,
        reply: Pending::Waiting(out, None),
        relayed: None,
        failed: None,
        spans: Vec::new(),
        resumable,
        upstream_id: None,
        primed: false,
    };
    let lines = exchange.proxy.client_read(Ok(posted.line), now());
    exchange.run(lines);
    let spans = exchange.finish();
    if let Some(to) = &settings.telemetry {
        telemetry::send(to, &spans, began.wall);
    }
}

/// The layer the settings say.
fn layer(settings: &Settings) -> NativeLayer {
    let Ok(layer) = NativeLayer::new(settings.options.clone()) else {
        unreachable!("the settings' options were accepted by the same layer")
    };
    layer
}

/// A GET: the stream the server opens for what it sends on its own, relayed event by
/// event through the proxy, for as long as a message comes within the read timeout.
pub fn stream(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let mut client = wire::client_headers(&request);
    // A client back for a request's stream, with an id of the gateway's: the server is
    // asked for its own stream from the place the id names, and the answer is relayed.
    let resumed = wire::header(&client, "last-event-id")
        .and_then(|id| std::str::from_utf8(id).ok())
        .and_then(resumption::read);
    if let Some((_, upstream)) = &resumed {
        client.retain(|(name, _)| !name.eq_ignore_ascii_case("last-event-id"));
        client.push(("Last-Event-ID".into(), upstream.clone().into_bytes()));
    }
    let deadline = Deadline::after(settings.read_timeout);
    let answer = match wire::send(settings, Method::Get, &client, None, &deadline) {
        Ok(answer) => answer,
        Err(why) => return wire::refuse(out, 502, &why),
    };
    if answer.status != 200 || !answer.is_stream() {
        return relay_as_is(settings, answer, out);
    }
    let mut proxy = Proxy::new(layer(settings), Audit::default(), now()).over_http();
    let request = resumed.map(|(request, _)| request);
    if let Some(request) = &request {
        proxy.resumed(request);
    }
    let headers = wire::response_headers(&answer.headers, "text/event-stream");
    let Some(mut reply) = Reply::open(out, 200, &headers, settings.read_timeout) else {
        return;
    };
    let Ok(body) = answer.response.consume() else {
        return reply.finish();
    };
    let Ok(reader) = Body::new(&body, &deadline) else {
        return reply.finish();
    };
    let mut place = sse::Place::default();
    let mut open = true;
    // Whatever the stream carries, the proxy reads: a server's request to the client or
    // a notification goes on as the proxy relays it; nothing goes the other way here.
    let _ = sse::read_while(reader, &mut place, settings.max_message, |event| {
        deadline.set(Instant::now() + settings.read_timeout);
        let id = (request.as_ref().zip(event.id.as_deref()))
            .map(|(request, upstream)| resumption::event_id(request, upstream));
        if event.data.is_empty() {
            if let Some(id) = &id {
                open = open && reply.write(&resumption::place_event(id, event.retry));
            }
            return open;
        }
        for line in proxy.server_sent(event.data.into_bytes(), now()) {
            match line {
                Out::Client(Delivery { line, .. }) => {
                    open = open && reply.write(&wire::event(&line, id.as_deref()));
                }
                Out::Note(note) => eprintln!("reasons-gateway: {note}"),
                // A fresh proxy sends the server nothing of its own for what it relays.
                Out::Server { .. } | Out::Learnt(_) | Out::Record(_) | Out::Span(_) => {}
            }
        }
        open
    });
    reply.finish();
}

/// A DELETE: the client ending its session, relayed.
pub fn delete(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let client = wire::client_headers(&request);
    let deadline = Deadline::after(settings.read_timeout);
    match wire::send(settings, Method::Delete, &client, None, &deadline) {
        Ok(answer) => relay_as_is(settings, answer, out),
        Err(why) => wire::refuse(out, 502, &why),
    }
}

/// The upstream's status and headers, relayed with no body: a GET the server does not
/// offer (405), a DELETE's answer, an error. A body would be text the proxy did not read.
fn relay_as_is(settings: &Settings, answer: Answer, out: ResponseOutparam) {
    let headers = wire::response_headers(&answer.headers, "");
    if let Some(reply) = Reply::open(out, answer.status, &headers, settings.read_timeout) {
        reply.finish();
    }
}

/// The answer to the client, as far as it is known.
enum Pending {
    /// Nothing sent yet: the one line for the client so far, if any. A second opens an
    /// event stream, so that nothing is kept back.
    Waiting(ResponseOutparam, Option<Vec<u8>>),
    /// An event stream, open.
    Streaming(Reply),
    /// Answered.
    Done,
}

/// What the upstream answered the client's own message with, for the client's answer.
struct Relayed {
    status: u16,
    headers: Vec<(String, Vec<u8>)>,
}

/// A line for the server, with what its transport needs to know of it.
type ForServer = (Vec<u8>, Outline);

struct Exchange<'a> {
    settings: &'a Settings,
    /// The client's end-to-end headers, passed upstream with every request.
    client: Vec<(String, Vec<u8>)>,
    proxy: Proxy<NativeLayer>,
    reply: Pending,
    relayed: Option<Relayed>,
    /// Why the client's own message got no answer from upstream, for a client that is
    /// owed no JSON-RPC answer to say it in.
    failed: Option<String>,
    /// The spans of the client's requests answered, for the collector.
    spans: Vec<Span>,
    /// The client's request, when its stream is one any instance may resume
    /// (`resumption.rs`): its events carry ids once the server gives its own.
    resumable: Option<Id>,
    /// The server's last event id on the stream of the client's request.
    upstream_id: Option<String>,
    /// Whether the client's stream has said where it is, with the wait before coming
    /// back: its priming event.
    primed: bool,
}

impl Exchange<'_> {
    /// Carries out what the proxy says, and what that brings back, until nothing is left.
    fn run(&mut self, lines: Vec<Out>) {
        let mut queue: VecDeque<ForServer> = self.take(lines).into();
        while let Some((line, outline)) = queue.pop_front() {
            let more = self.upstream(&line, &outline);
            queue.extend(more);
        }
    }

    /// Carries out at once what `out` has for the client and for the human running the
    /// gateway; what is for the server, to send.
    fn take(&mut self, out: Vec<Out>) -> Vec<ForServer> {
        let mut upstream = Vec::new();
        for out in out {
            match out {
                // One client: every message is its, whatever it is about.
                Out::Client(Delivery { line, .. }) => self.for_client(line),
                Out::Note(note) => eprintln!("reasons-gateway: {note}"),
                Out::Server { line, outline } => upstream.push((line, outline)),
                Out::Span(span) => self.spans.push(span),
                // The version a session settled: each request carries its own.
                Out::Learnt(_) | Out::Record(_) => {}
            }
        }
        upstream
    }

    /// When a wait for the server ends, from now: its silence, or sooner, when what
    /// waits on the proxy's own listing must be refused.
    fn deadline(&self) -> Instant {
        let silence = Instant::now() + self.settings.read_timeout;
        self.proxy
            .wake_at()
            .map_or(silence, |hold| hold.min(silence))
    }

    /// Sends `line` upstream, what the server answers going to the proxy as it comes;
    /// what that has for the server next.
    fn upstream(&mut self, line: &[u8], outline: &Outline) -> Vec<ForServer> {
        let deadline = Deadline::at(self.deadline());
        let headers = self.headers(outline);
        let sent = wire::send(self.settings, Method::Post, &headers, Some(line), &deadline);
        let answer = match sent {
            Ok(answer) => answer,
            Err(why) => {
                if !outline.own {
                    self.failed = Some(why.clone());
                }
                return self.unanswered(outline, &why);
            }
        };
        // Read as the client edge's table says: a 404 for a session the gateway relays as
        // the error it is, for the client whose session it is to start another.
        let header = |name: &str| wire::header(&answer.headers, name);
        let asked = answered::Asked::default();
        let kind = answered::kind(
            answer.status,
            header("content-type"),
            header("location"),
            asked,
            "REASONS_UPSTREAM",
        );
        // The client hears what the upstream answered its own message, and an error
        // status its listing got (a 401's challenge, a 404 for a session that ended).
        let failed = !matches!(kind, Kind::Stream | Kind::Body);
        if !outline.own || failed {
            self.relayed = Some(Relayed {
                status: answer.status,
                headers: answer.headers.clone(),
            });
        }
        if failed {
            // What was owed an answer gets an error naming the status, unless the body
            // is the server's own JSON-RPC answer (a 404 for a method it lacks, a 400
            // for a revision it does not serve), which the proxy reads as it reads any.
            let why = format!("the MCP server answered HTTP {}", answer.status);
            let json = kind == Kind::Failed { json: true };
            let mut next = Vec::new();
            if json
                && self.proxy.awaits(outline.exchange)
                && let Ok(body) = answer.response.consume()
                && let Ok(text) = wire::read_whole(body, self.settings.max_message, &deadline)
            {
                let out = self.proxy.server_sent(text, now());
                next.extend(self.take(out));
            }
            if self.proxy.awaits(outline.exchange) {
                next.extend(self.unanswered(outline, &why));
            }
            return next;
        }
        if !self.proxy.awaits(outline.exchange) {
            // A notification or a response: the server owes nothing (202).
            return Vec::new();
        }
        let stream = kind == Kind::Stream;
        let Ok(body) = answer.response.consume() else {
            return self.unanswered(outline, "the MCP server's answer could not be read");
        };
        let mut next = Vec::new();
        let ended = if stream {
            if !outline.own {
                self.stream_to_client();
            }
            let mut place = sse::Place::default();
            self.read_stream(&body, &mut place, outline, &mut next, &deadline)
                .and_then(|()| self.resume(&mut place, outline, &mut next, &deadline))
        } else {
            let cap = self.settings.max_message;
            wire::read_whole(body, cap, &deadline)
                .map(|text| {
                    let out = self.proxy.server_sent(text, now());
                    next.extend(self.take(out));
                })
                .map_err(|unread| unread.why)
        };
        if self.proxy.awaits(outline.exchange) {
            let why = match ended {
                Err(why) => why,
                Ok(()) if self.client_gone() => "the client stopped reading".to_string(),
                Ok(()) => "the MCP server's answer ended before it answered".to_string(),
            };
            next.extend(self.unanswered(outline, &why));
        }
        next
    }

    /// Reads an event stream of the server's for `outline`'s line, each message going to
    /// the proxy as it comes (what that has for the server next, to `next`), until the
    /// line is answered, the client is gone, or the stream ends: why it broke off, if it
    /// did; `place` keeps where it was.
    fn read_stream(
        &mut self,
        body: &wasip2::http::types::IncomingBody,
        place: &mut sse::Place,
        outline: &Outline,
        next: &mut Vec<ForServer>,
        deadline: &Deadline,
    ) -> Result<(), String> {
        let Ok(reader) = Body::new(body, deadline) else {
            return Err("the MCP server's answer could not be read".into());
        };
        sse::read_while(reader, place, self.settings.max_message, |event| {
            if !outline.own {
                self.upstream_id = event.id;
            }
            if event.data.is_empty() {
                self.say_where(event.retry);
            } else {
                let out = self.proxy.server_sent(event.data.into_bytes(), now());
                next.extend(self.take(out));
            }
            deadline.set(self.deadline());
            self.proxy.awaits(outline.exchange) && !self.client_gone()
        })
        .map_err(|broken| match broken {
            sse::Broken::Silent => wire::SILENT.to_string(),
            sse::Broken::Other(why) => format!("the MCP server's answer broke off: {why}"),
        })
    }

    /// Comes back for the rest of a stream the server ended while it still owed
    /// `outline`'s line an answer, as 2025-11-25's polling has a server end one: where
    /// it gave its events ids, a GET with `Last-Event-ID` (after the wait it named)
    /// has it send what came since, read as the stream was, until the line is
    /// answered, the server refuses, or [`sse::RECONNECTS`] tries in a row bring no
    /// event. The gateway comes back itself, within the client's one request: the
    /// client's stream stays open, and no other instance need know what it waits for.
    fn resume(
        &mut self,
        place: &mut sse::Place,
        outline: &Outline,
        next: &mut Vec<ForServer>,
        deadline: &Deadline,
    ) -> Result<(), String> {
        let mut fruitless = 0;
        while self.proxy.awaits(outline.exchange) && !self.client_gone() {
            let Some(last) = place.last_event_id.clone() else {
                return Ok(());
            };
            if fruitless == sse::RECONNECTS {
                return Err(format!(
                    "the MCP server's answer ended first, and {} resumptions \
                     (Last-Event-ID) in a row brought nothing",
                    sse::RECONNECTS
                ));
            }
            std::thread::sleep(place.wait_before_coming_back());
            deadline.set(self.deadline());
            let mut headers = self.client.clone();
            headers.retain(|(name, _)| !name.eq_ignore_ascii_case("last-event-id"));
            headers.push(("Last-Event-ID".into(), last.clone().into_bytes()));
            let answer = wire::send(self.settings, Method::Get, &headers, None, deadline)?;
            if answer.status != 200 || !answer.is_stream() {
                return Err(format!(
                    "the MCP server's answer ended first, and resuming it \
                     (Last-Event-ID) got HTTP {}",
                    answer.status
                ));
            }
            let Ok(body) = answer.response.consume() else {
                return Err("the MCP server's resumed answer could not be read".into());
            };
            self.read_stream(&body, place, outline, next, deadline)?;
            fruitless = match place.last_event_id.as_ref() == Some(&last) {
                true => fruitless + 1,
                false => 0,
            };
        }
        Ok(())
    }

    /// What the proxy makes of `outline`'s requests going unanswered for `why`: each
    /// gets a JSON-RPC error, as the server's, so that a call waiting on a listing of
    /// the proxy's own is refused.
    fn unanswered(&mut self, outline: &Outline, why: &str) -> Vec<ForServer> {
        let why = format!("reasons-gateway: {why}");
        let out = self.proxy.unanswered(outline.exchange, &why, now());
        self.take(out)
    }

    /// The headers of a POST of `outline`'s message: the client's, and the 2026-07-28
    /// request headers of the message as forwarded (the operator's join them in
    /// [`wire::send`]).
    fn headers(&self, outline: &Outline) -> Vec<(String, Vec<u8>)> {
        let mut all: Vec<(String, Vec<u8>)> = self.client.clone();
        if let Some(version) = &outline.version {
            all.retain(|(name, _)| !name.eq_ignore_ascii_case("mcp-protocol-version"));
            all.push(("MCP-Protocol-Version".into(), version.clone().into_bytes()));
        }
        let rebuilt = headers::standard(outline).into_iter();
        all.extend(rebuilt.map(|(name, value)| (name, value.into_bytes())));
        all
    }

    /// Opens the client's answer as an event stream, with what waited for it.
    fn stream_to_client(&mut self) {
        let Pending::Waiting(out, line) = std::mem::replace(&mut self.reply, Pending::Done) else {
            return;
        };
        if let Some(reply) = self.open_stream(out, line.as_deref()) {
            self.reply = Pending::Streaming(reply);
        }
    }

    /// The client's answer opened as an event stream, under the upstream's headers, with
    /// `line` sent on it first.
    fn open_stream(&self, out: ResponseOutparam, line: Option<&[u8]>) -> Option<Reply> {
        let upstream = self
            .relayed
            .as_ref()
            .map(|relayed| relayed.headers.as_slice());
        let headers = wire::response_headers(upstream.unwrap_or_default(), "text/event-stream");
        let mut reply = Reply::open(out, 200, &headers, self.settings.read_timeout)?;
        if let Some(line) = line {
            reply.write(&wire::event(line, self.event_id().as_deref()));
        }
        Some(reply)
    }

    /// The id the client's next event carries: where its stream may be resumed from, once
    /// the server gave an id of its own on a stream any instance may resume.
    fn event_id(&self) -> Option<String> {
        let (request, upstream) = self.resumable.as_ref().zip(self.upstream_id.as_deref())?;
        Some(resumption::event_id(request, upstream))
    }

    /// Tells the client where its stream is, where the server said where its own is and
    /// the client's may be resumed: the first time with the wait before coming back (the
    /// server's, or the gateway's own), its priming event.
    fn say_where(&mut self, retry: Option<std::time::Duration>) {
        let Some(id) = self.event_id() else {
            return;
        };
        let retry = match self.primed {
            true => retry,
            false => Some(retry.unwrap_or(sse::Place::default().wait_before_coming_back())),
        };
        if let Pending::Streaming(reply) = &mut self.reply {
            self.primed = reply.write(&resumption::place_event(&id, retry));
        }
    }

    /// A line for the client: sent at once on its stream, or kept while it is the only
    /// one (it may be the whole answer, as JSON).
    fn for_client(&mut self, line: Vec<u8>) {
        if let Pending::Waiting(_, Some(_)) = self.reply {
            self.stream_to_client();
        }
        let id = self.event_id();
        match &mut self.reply {
            Pending::Waiting(_, waiting) => *waiting = Some(line),
            Pending::Streaming(reply) => {
                reply.write(&wire::event(&line, id.as_deref()));
            }
            Pending::Done => {}
        }
    }

    /// Whether the client's stream is open no more: it went, or stopped reading.
    fn client_gone(&self) -> bool {
        match &self.reply {
            Pending::Streaming(reply) => !reply.is_open(),
            Pending::Waiting(..) => false,
            Pending::Done => true,
        }
    }

    /// Answers the client with what it is owed: the line kept for it as one JSON body,
    /// under the upstream's status when its own message went no further; anything still
    /// waiting on the server is refused. The spans of what was answered.
    fn finish(mut self) -> Vec<Span> {
        if !self.proxy.idle() {
            let lines = self.proxy.server_gone("it sent no more", now());
            self.run(lines);
        }
        let spans = std::mem::take(&mut self.spans);
        self.answer();
        spans
    }

    /// The client's answer, sent.
    fn answer(mut self) {
        let wait = self.settings.read_timeout;
        let (out, line) = match std::mem::replace(&mut self.reply, Pending::Done) {
            Pending::Waiting(out, line) => (out, line),
            Pending::Streaming(reply) => return reply.finish(),
            Pending::Done => return,
        };
        let (status, upstream) = match &self.relayed {
            Some(relayed) => (relayed.status, relayed.headers.as_slice()),
            None => (200, &[][..]),
        };
        match (line, &self.failed) {
            (None, Some(why)) => wire::refuse(out, 502, why),
            (None, None) => {
                let headers = wire::response_headers(upstream, "");
                let status = if status == 200 { 202 } else { status };
                if let Some(reply) = Reply::open(out, status, &headers, wait) {
                    reply.finish();
                }
            }
            (Some(line), _) => {
                let status = if status == 202 { 200 } else { status };
                let headers = wire::response_headers(upstream, "application/json");
                if let Some(mut reply) = Reply::open(out, status, &headers, wait) {
                    reply.write(&line);
                    reply.finish();
                }
            }
        }
    }
}
