//! One client request, driven through a fresh [`Proxy`] from start to end: the gateway
//! keeps nothing between requests, so that an engine may give each one a fresh instance
//! and replicas need no sticky sessions.
//!
//! A POST's message goes to the proxy as the client's line. Every line the proxy sends
//! the server is POSTed upstream with the client's own headers (its `Authorization`, its
//! `Mcp-Session-Id`) and the 2026-07-28 request headers rebuilt from the message as
//! forwarded; every message that comes back (a JSON body, or an SSE stream's events) goes
//! to the proxy as the server's. A fresh proxy knows no tools, so a `tools/call` waits
//! for the proxy's own `tools/list`, made for this caller with its headers, before it
//! is stripped and sent, or refused (R18). That listing is answered from the listings
//! kept for reuse when one allows it ([`crate::listings`]).

use crate::listings::{Key, Listings};
use crate::settings::Settings;
use crate::wire::{self, Answer, Body, Reply};
use reasons_mcp::headers;
use reasons_mcp::jsonrpc;
use reasons_mcp::{Audit, Delivery, Learnt, NativeLayer, Now, Out, Outline, Proxy, Reuse, sse};
use std::cell::RefCell;
use std::collections::VecDeque;
use std::time::Instant;
use wasip2::http::types::{IncomingRequest, Method, ResponseOutparam};

thread_local! {
    /// The listings kept for reuse, for as long as the engine keeps this instance.
    static LISTINGS: RefCell<Listings> = RefCell::default();
}

/// The time, read from the engine's clocks for one step of the proxy.
fn now() -> Now {
    Now {
        instant: std::time::Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

/// A POST: one message from the client.
pub fn post(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let content_type = wire::joined(&request, "content-type");
    let accept = wire::joined(&request, "accept");
    if let Some((status, why)) = reasons_mcp::admission::refused_post(&content_type, &accept) {
        return wire::refuse(out, status, &why);
    }
    let client = wire::client_headers(&request);
    let Ok(body) = request.consume() else {
        return wire::refuse(out, 400, "the request's body could not be read");
    };
    let message = match wire::read_whole(body, settings.max_message, settings.read_timeout) {
        Ok(message) => message,
        Err(why) => return wire::refuse(out, 413, &why),
    };
    // Batches left JSON-RPC over HTTP with 2025-06-18; as `reasons mcp --listen`, the
    // gateway serves one message per POST.
    if message.trim_ascii_start().starts_with(b"[") {
        let why = "a batch is not served over HTTP: send each message in a POST of its own";
        return wire::refuse(out, 400, why);
    }
    let Ok(layer) = NativeLayer::new(settings.options.clone()) else {
        unreachable!("the settings' options were accepted by the same layer")
    };
    let mut exchange = Exchange {
        settings,
        client,
        proxy: Proxy::new(layer, Audit::default(), now()),
        reply: Pending::Waiting(out, Vec::new()),
        relayed: None,
    };
    let lines = exchange.proxy.client_sent(message, now());
    exchange.run(lines);
    exchange.finish();
}

/// A GET: the stream the server opens for what it sends on its own, relayed event by
/// event through the proxy.
pub fn stream(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let client = wire::client_headers(&request);
    let answer = match wire::send(settings, Method::Get, &client, None) {
        Ok(answer) => answer,
        Err(why) => return wire::refuse(out, 502, &why),
    };
    if answer.status != 200 || !answer.is_stream() {
        return relay_as_is(answer, out);
    }
    let Ok(layer) = NativeLayer::new(settings.options.clone()) else {
        unreachable!("the settings' options were accepted by the same layer")
    };
    let mut proxy = Proxy::new(layer, Audit::default(), now());
    let headers = wire::response_headers(&answer.headers, "text/event-stream");
    let Some(mut reply) = Reply::open(out, 200, &headers) else {
        return;
    };
    let Ok(body) = answer.response.consume() else {
        return reply.finish();
    };
    let Ok(reader) = Body::new(&body, settings.read_timeout) else {
        return reply.finish();
    };
    let mut place = sse::Place::default();
    let mut open = true;
    // Whatever the stream carries, the proxy reads: a server's request to the client or
    // a notification goes on as the proxy relays it; nothing goes the other way here.
    let _ = sse::read_while(reader, &mut place, settings.max_message, |_, data| {
        for line in proxy.server_sent(data.into_bytes(), now()) {
            match line {
                Out::Client(Delivery { line, .. }) => {
                    open = open && reply.write(&wire::event(&line));
                }
                Out::Note(note) => eprintln!("reasons-gateway: {note}"),
                Out::Learnt(Learnt::ToolsChanged) => forget_listings(),
                // A fresh proxy sends the server nothing of its own for what it relays,
                // and lists nothing of its own.
                Out::Server { .. } | Out::Learnt(_) => {}
            }
        }
        open
    });
    reply.finish();
}

/// Drops every listing kept: the server said its tools changed.
fn forget_listings() {
    LISTINGS.with_borrow_mut(Listings::forget);
}

/// A DELETE: the client ending its session, relayed.
pub fn delete(settings: &Settings, request: IncomingRequest, out: ResponseOutparam) {
    let client = wire::client_headers(&request);
    match wire::send(settings, Method::Delete, &client, None) {
        Ok(answer) => relay_as_is(answer, out),
        Err(why) => wire::refuse(out, 502, &why),
    }
}

/// The upstream's status and headers, relayed with no body: a GET the server does not
/// offer (405), a DELETE's answer, an error. A body would be text the proxy did not read.
fn relay_as_is(answer: Answer, out: ResponseOutparam) {
    let headers = wire::response_headers(&answer.headers, "");
    if let Some(reply) = Reply::open(out, answer.status, &headers) {
        reply.finish();
    }
}

/// The answer to the client, as far as it is known.
enum Pending {
    /// Nothing sent yet: the lines for the client so far.
    Waiting(ResponseOutparam, Vec<Vec<u8>>),
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

struct Exchange<'a> {
    settings: &'a Settings,
    /// The client's end-to-end headers, passed upstream with every request.
    client: Vec<(String, Vec<u8>)>,
    proxy: Proxy<NativeLayer>,
    reply: Pending,
    relayed: Option<Relayed>,
}

impl Exchange<'_> {
    /// Carries out what the proxy says, and what that brings back, until nothing is left.
    fn run(&mut self, lines: Vec<Out>) {
        let mut queue: VecDeque<Out> = lines.into();
        while let Some(line) = queue.pop_front() {
            match line {
                // One client: every message is its, whatever it is about.
                Out::Client(Delivery { line, .. }) => self.for_client(line),
                Out::Note(note) => eprintln!("reasons-gateway: {note}"),
                Out::Server { line, outline } => {
                    let answers = self.upstream(&line, &outline);
                    queue.extend(answers);
                }
                // Taken where the server says it (`server_said`): none comes from here.
                Out::Learnt(_) => {}
            }
        }
    }

    /// Sends `line` upstream; what the proxy makes of the answer.
    fn upstream(&mut self, line: &[u8], outline: &Outline) -> Vec<Out> {
        if let Some(answer) = self.kept_listing(outline) {
            // Not kept again: reuse is no new listing, and its time runs from the one.
            let out = self.proxy.server_sent(answer.into_bytes(), now());
            return self.taken(out, outline, false);
        }
        let headers = self.headers(outline);
        let answer = match wire::send(self.settings, Method::Post, &headers, Some(line)) {
            Ok(answer) => answer,
            Err(why) => return self.unanswered(outline, &why),
        };
        // The client hears what the upstream answered its own message, and an error
        // status its listing got (a 401's challenge, a 404 for a session that ended).
        let failed = !(200..300).contains(&answer.status);
        if !outline.own || failed {
            self.relayed = Some(Relayed {
                status: answer.status,
                headers: answer.headers.clone(),
            });
        }
        if failed {
            // What was owed an answer gets an error naming the status.
            let why = format!("the MCP server answered HTTP {}", answer.status);
            return self.unanswered(outline, &why);
        }
        if !self.proxy.awaits(outline.exchange) {
            // A notification or a response: the server owes nothing (202).
            return Vec::new();
        }
        let stream = answer.is_stream();
        let Ok(body) = answer.response.consume() else {
            return self.unanswered(outline, "the MCP server's answer could not be read");
        };
        let mut out = Vec::new();
        let cap = self.settings.max_message;
        let ended = if stream {
            let Ok(reader) = Body::new(&body, self.settings.read_timeout) else {
                return self.unanswered(outline, "the MCP server's answer could not be read");
            };
            if !outline.own {
                self.stream_to_client();
            }
            let mut place = sse::Place::default();
            sse::read_while(reader, &mut place, cap, |_, data| {
                out.extend(self.server_said(data.into_bytes(), outline));
                self.proxy.awaits(outline.exchange)
            })
            .map_err(|broken| broken.to_string())
        } else {
            wire::read_whole(body, cap, self.settings.read_timeout).map(|text| {
                out.extend(self.server_said(text, outline));
            })
        };
        if self.proxy.awaits(outline.exchange) {
            let why = match ended {
                Err(why) => format!("the MCP server's answer broke off: {why}"),
                Ok(()) => "the MCP server's answer ended before it answered".to_string(),
            };
            out.extend(self.unanswered(outline, &why));
        }
        out
    }

    /// What the proxy makes of one message the server sent in answer to `outline`'s
    /// line, a listing it brings kept for reuse.
    fn server_said(&mut self, message: Vec<u8>, outline: &Outline) -> Vec<Out> {
        let out = self.proxy.server_sent(message, now());
        self.taken(out, outline, true)
    }

    /// `out`, with what the server said that the gateway keeps taken from it: a page of
    /// the proxy's own listing for `outline`, when it is `fresh` from the server, and a
    /// change of tools, which drops every listing kept, one told with it too.
    fn taken(&mut self, out: Vec<Out>, outline: &Outline, fresh: bool) -> Vec<Out> {
        let (mut rest, mut changed) = (Vec::new(), false);
        for out in out {
            match out {
                Out::Learnt(Learnt::OwnPage {
                    exchange,
                    result,
                    reuse,
                }) if fresh && exchange == outline.exchange => self.keep(outline, &result, reuse),
                Out::Learnt(Learnt::ToolsChanged) => changed = true,
                Out::Learnt(_) => {}
                out => rest.push(out),
            }
        }
        if changed {
            forget_listings();
        }
        rest
    }

    /// Keeps `result`, a page of the proxy's own listing for `outline`, for reuse as far
    /// as it allows (`reuse`).
    fn keep(&self, outline: &Outline, result: &str, reuse: Reuse) {
        if let Some(keys) = self.listing_keys(outline) {
            let cap = self.settings.listing_cache;
            let now = Instant::now();
            LISTINGS.with_borrow_mut(|kept| kept.keep(keys, result, reuse, now, cap));
        }
    }

    /// The keys of `outline`'s listing among those kept, when it is the proxy's own
    /// (a client's listing is the client's to make) and any are kept.
    fn listing_keys(&self, outline: &Outline) -> Option<[Key; 2]> {
        let listing = outline.own && outline.method.as_deref() == Some("tools/list");
        (listing && self.settings.listing_cache > 0).then(|| {
            let (version, cursor) = (outline.version.as_deref(), outline.cursor.as_deref());
            Key::both(&self.client, version, cursor)
        })
    }

    /// The answer to `outline`'s listing from one kept for this caller, if one may serve.
    fn kept_listing(&self, outline: &Outline) -> Option<String> {
        let keys = self.listing_keys(outline)?;
        let [id] = outline.ids.as_slice() else {
            return None;
        };
        let result = LISTINGS
            .with_borrow_mut(|kept| kept.find(&keys, Instant::now()).map(str::to_string))?;
        Some(jsonrpc::result(id, &result))
    }

    /// What the proxy makes of `outline`'s requests going unanswered for `why`: each
    /// gets a JSON-RPC error, as the server's, so that a call waiting on a listing of
    /// the proxy's own is refused.
    fn unanswered(&mut self, outline: &Outline, why: &str) -> Vec<Out> {
        let why = format!("reasons-gateway: {why}");
        self.proxy.unanswered(outline.exchange, &why, now())
    }

    /// The headers of a POST of `outline`'s message: the client's, the gateway's own,
    /// and the 2026-07-28 request headers of the message as forwarded.
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
        let Pending::Waiting(out, lines) = std::mem::replace(&mut self.reply, Pending::Done) else {
            return;
        };
        if let Some(reply) = self.open_stream(out, &lines) {
            self.reply = Pending::Streaming(reply);
        }
    }

    /// The client's answer opened as an event stream, under the upstream's headers, with
    /// `lines` sent on it.
    fn open_stream(&self, out: ResponseOutparam, lines: &[Vec<u8>]) -> Option<Reply> {
        let upstream = self
            .relayed
            .as_ref()
            .map(|relayed| relayed.headers.as_slice());
        let headers = wire::response_headers(upstream.unwrap_or_default(), "text/event-stream");
        let mut reply = Reply::open(out, 200, &headers)?;
        for line in lines {
            reply.write(&wire::event(line));
        }
        Some(reply)
    }

    /// A line for the client: streamed when its answer is a stream, else kept for it.
    fn for_client(&mut self, line: Vec<u8>) {
        match &mut self.reply {
            Pending::Waiting(_, lines) => lines.push(line),
            Pending::Streaming(reply) => {
                reply.write(&wire::event(&line));
            }
            Pending::Done => {}
        }
    }

    /// Answers the client with what it is owed: the lines kept for it as one JSON body
    /// (or a stream, when there is more than one), under the upstream's status when its
    /// own message went no further; anything still waiting on the server is refused.
    fn finish(mut self) {
        if !self.proxy.idle() {
            let lines = self.proxy.server_gone("it sent no more", now());
            self.run(lines);
        }
        match std::mem::replace(&mut self.reply, Pending::Done) {
            Pending::Streaming(reply) => reply.finish(),
            Pending::Done => {}
            Pending::Waiting(out, lines) => {
                let (status, upstream) = match &self.relayed {
                    Some(relayed) => (relayed.status, relayed.headers.as_slice()),
                    None => (200, &[][..]),
                };
                match lines.as_slice() {
                    [] => {
                        let headers = wire::response_headers(upstream, "");
                        let status = if status == 200 { 202 } else { status };
                        if let Some(reply) = Reply::open(out, status, &headers) {
                            reply.finish();
                        }
                    }
                    [line] => {
                        let status = if status == 202 { 200 } else { status };
                        let headers = wire::response_headers(upstream, "application/json");
                        if let Some(mut reply) = Reply::open(out, status, &headers) {
                            reply.write(line);
                            reply.finish();
                        }
                    }
                    _ => {
                        if let Some(reply) = self.open_stream(out, &lines) {
                            reply.finish();
                        }
                    }
                }
            }
        }
    }
}
