//! What the proxy tells an OpenTelemetry collector, in the MCP semantic conventions: a
//! span for each request a client makes (`mcp.method.name`, `gen_ai.tool.name`,
//! `jsonrpc.request.id`, `error.type`), its duration for `mcp.server.operation.duration`,
//! and, for each call, what the layer did: whether the tool was augmented, whether a
//! reason was given and how long it was, and whether the call was stripped, forwarded as
//! it came, refused, or held for a listing; and for what went on to the server, its
//! time for `mcp.client.operation.duration`. Never an argument's value, never the reason's
//! text: the collector is one more party the reason must not reach.
//!
//! Sans I/O, as the rest of the core: the [`Proxy`](crate::Proxy) opens a span when a
//! client's request arrives and hands it out ([`Out::Span`](crate::Out::Span)) when the
//! request is answered; [`otlp`] writes spans and [`Metrics`] as OTLP/JSON bodies for a
//! transport to POST. A span's parent is the client's W3C trace context, from the
//! request's `_meta.traceparent`, which goes on to the server as it came.

pub mod config;
pub mod otlp;

use crate::jsonrpc::{self, Id, Line, Message, Params};
use crate::{About, Delivery};
use reasons_transform::json;
use std::collections::HashMap;
use std::time::{Duration, Instant, SystemTime};

/// A client's request, from its arrival to its answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Span {
    /// `mcp.method.name`.
    pub method: String,
    /// `jsonrpc.request.id`: the id's JSON text.
    pub request_id: String,
    /// `gen_ai.tool.name`, for a `tools/call`.
    pub tool: Option<String>,
    /// The client's trace context, when its request carried a valid one.
    pub parent: Option<TraceParent>,
    /// When the request arrived.
    pub start: SystemTime,
    /// How long it took to answer.
    pub took: Duration,
    /// How long the server took to answer it, when it was sent on (the proxy as the
    /// server's client: `mcp.client.operation.duration`).
    pub upstream: Option<Duration>,
    /// `error.type`: how the request failed, if it did.
    pub error: Option<Failure>,
    /// What the layer did with a call.
    pub call: Option<CallFacts>,
    /// Whether it waited for the server's tools to be listed.
    pub held: bool,
}

/// What the layer did with one `tools/call`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CallFacts {
    /// Whether the tool is one the layer augments (its reason is the model's).
    pub augmented: bool,
    /// The model's reason's length in characters, when the call carried one.
    pub reason: Option<usize>,
    /// What became of it.
    pub fate: Fate,
}

/// How a request failed: its `error.type`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Failure {
    /// Its answer was an error with this JSON-RPC code.
    Code(i64),
    /// The client cancelled it (`notifications/cancelled`): no answer is owed.
    Cancelled,
}

impl Failure {
    /// Its `error.type`: the code, or `cancelled`.
    pub fn error_type(self) -> String {
        match self {
            Failure::Code(code) => code.to_string(),
            Failure::Cancelled => "cancelled".into(),
        }
    }
}

/// What became of a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fate {
    /// Sent on with the reason taken out.
    Stripped,
    /// Sent on as it came: nothing of the layer's in it.
    Forwarded,
    /// Answered here and never sent.
    Refused,
}

impl Fate {
    /// Its name, as the attribute gives it.
    pub fn name(self) -> &'static str {
        match self {
            Fate::Stripped => "stripped",
            Fate::Forwarded => "forwarded",
            Fate::Refused => "refused",
        }
    }
}

/// A W3C trace context (`traceparent`): the trace, and the client's span in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TraceParent {
    /// The trace's id.
    pub trace_id: [u8; 16],
    /// The parent span's id.
    pub span_id: [u8; 8],
    /// The trace flags (`01`: sampled).
    pub flags: u8,
}

impl TraceParent {
    /// Reads a `traceparent` value (version `00`, or a later one read as `00` reads it),
    /// or `None` when it is not one: an all-zero trace or span id is invalid.
    pub fn parse(text: &str) -> Option<TraceParent> {
        let mut parts = text.trim().split('-');
        let version = hex::<1>(parts.next()?)?;
        let trace_id = hex::<16>(parts.next()?)?;
        let span_id = hex::<8>(parts.next()?)?;
        let flags = hex::<1>(parts.next()?)?;
        let valid = version != [0xff]
            && (version != [0] || parts.next().is_none())
            && trace_id != [0; 16]
            && span_id != [0; 8];
        valid.then_some(TraceParent {
            trace_id,
            span_id,
            flags: flags[0],
        })
    }
}

/// `text` as `N` bytes in lower-case hex, as W3C trace context writes them.
fn hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let lower = |byte: u8| matches!(byte, b'0'..=b'9' | b'a'..=b'f');
    if text.len() != N * 2 || !text.bytes().all(lower) {
        return None;
    }
    let mut bytes = [0; N];
    for (at, byte) in bytes.iter_mut().enumerate() {
        *byte = u8::from_str_radix(&text[at * 2..at * 2 + 2], 16).ok()?;
    }
    Some(bytes)
}

/// The spans open in one proxy: each client request not yet answered, by its id.
#[derive(Default)]
pub(crate) struct Spans {
    /// Each open span, with when its request arrived and when it was sent on.
    open: HashMap<Id, Open>,
    /// Spans ended with no answer of their own, to hand out with what the proxy writes.
    ended: Vec<Span>,
}

struct Open {
    arrived: Instant,
    sent: Option<Instant>,
    span: Span,
    /// Answers on their way that are not this request's: the refusals of later requests
    /// that reused its id while it was in flight.
    twins: usize,
}

impl Spans {
    /// Opens a span for each request in `line`, arriving `now`; a request whose id is
    /// one already open keeps the first's span (the proxy refuses it).
    pub(crate) fn arrived(&mut self, line: &Line, now: crate::Now) {
        for read in line.reads() {
            if let About::Cancelled { id, .. } = About::of(read) {
                self.cancelled(&id, now.instant);
                continue;
            }
            let Ok(Message::Request {
                id, method, params, ..
            }) = &read.message
            else {
                continue;
            };
            if self.open.len() >= OPEN_AT_MOST {
                // Requests a server never answers (cancelled ones, say) keep their
                // spans open: past this many, no more are opened.
                continue;
            }
            let open = Open {
                arrived: now.instant,
                sent: None,
                span: begun(id, method, params.as_ref(), now.wall),
                twins: 0,
            };
            self.open.entry(id.clone()).or_insert(open);
        }
    }

    /// The request `id` (`method`, `params`) was refused `now` because its id is that of
    /// one in flight: it gets a span of its own, ended at once, and its refusal is not
    /// taken for the answer that ends the first's.
    pub(crate) fn twin_refused(
        &mut self,
        id: &Id,
        method: &str,
        params: Option<&Params<'_>>,
        now: crate::Now,
    ) {
        let Some(first) = self.open.get_mut(id) else {
            return;
        };
        first.twins += 1;
        let mut span = begun(id, method, params, now.wall);
        span.error = Some(Failure::Code(jsonrpc::INVALID_REQUEST));
        self.ended.push(span);
    }

    /// The client cancelled the request `id` `now`: its span ends, as no answer is owed
    /// (and one that comes anyway ends nothing), so that a client's cancelled requests
    /// never hold spans open.
    fn cancelled(&mut self, id: &Id, now: Instant) {
        if let Some(mut span) = self.end(id, now) {
            span.error = Some(Failure::Cancelled);
            self.ended.push(span);
        }
    }

    /// The span of the request `id`, ended `now`, if it is open.
    fn end(&mut self, id: &Id, now: Instant) -> Option<Span> {
        let Open {
            arrived, mut span, ..
        } = self.open.remove(id)?;
        span.took = now.saturating_duration_since(arrived);
        Some(span)
    }

    /// Marks the requests of `line` as held for a listing.
    pub(crate) fn held(&mut self, line: &Line) {
        for read in line.reads() {
            if let Ok(Message::Request { id, .. }) = &read.message
                && let Some(open) = self.open.get_mut(id)
            {
                open.span.held = true;
            }
        }
    }

    /// What the layer did with the call `id`.
    pub(crate) fn call(&mut self, id: &Id, facts: CallFacts) {
        if let Some(open) = self.open.get_mut(id) {
            open.span.call = Some(facts);
        }
    }

    /// The request `id` went on to the server `now`.
    pub(crate) fn sent(&mut self, id: &Id, now: Instant) {
        if let Some(open) = self.open.get_mut(id) {
            open.sent = Some(now);
        }
    }

    /// The server answered the request `id` `now`.
    pub(crate) fn answered_upstream(&mut self, id: &Id, now: Instant) {
        if let Some(open) = self.open.get_mut(id) {
            let sent = open.sent.unwrap_or(open.arrived);
            open.span.upstream = Some(now.saturating_duration_since(sent));
        }
    }

    /// The spans no answer ends: a request its client cancelled, and one refused for
    /// reusing the id of a request in flight.
    pub(crate) fn ended_unanswered(&mut self) -> Vec<Span> {
        std::mem::take(&mut self.ended)
    }

    /// The spans `delivery` ends, as it goes to the client `now`: each answer it holds
    /// ends its request's.
    pub(crate) fn delivered(&mut self, delivery: &Delivery, now: Instant) -> Vec<Span> {
        let mut ended = Vec::new();
        for part in &delivery.parts {
            let About::Answer { id, .. } = &part.about else {
                continue;
            };
            if let Some(open) = self.open.get_mut(id)
                && open.twins > 0
            {
                open.twins -= 1;
                continue;
            }
            let Some(mut span) = self.end(id, now) else {
                continue;
            };
            let text = delivery.line.get(part.text.clone()).unwrap_or_default();
            span.error = (std::str::from_utf8(text).ok())
                .and_then(error_code)
                .map(Failure::Code);
            ended.push(span);
        }
        ended
    }
}

/// The span of the request `id` (`method`, `params`), begun at `start`.
fn begun(id: &Id, method: &str, params: Option<&Params<'_>>, start: SystemTime) -> Span {
    let parent = params
        .and_then(|params| params.in_meta("traceparent"))
        .and_then(json::string)
        .and_then(|text| TraceParent::parse(&text));
    let tool = (method == "tools/call")
        .then(|| params?.get("name").and_then(json::string))
        .flatten();
    Span {
        method: clipped(method),
        request_id: clipped(id.json()),
        tool: tool.as_deref().map(clipped),
        parent,
        start,
        took: Duration::ZERO,
        upstream: None,
        error: None,
        call: None,
        held: false,
    }
}

/// The most spans open in one proxy.
const OPEN_AT_MOST: usize = 10_000;

/// The most characters of a name or id a span carries: what a client names is its own
/// choice, and a collector is sent no megabyte of it.
const NAME_AT_MOST: usize = 128;

/// `text`, at most [`NAME_AT_MOST`] characters of it.
fn clipped(text: &str) -> String {
    text.chars().take(NAME_AT_MOST).collect()
}

/// The most distinct operations (method, tool, error) the metrics count on their own:
/// clients name methods and tools at will, and each would be kept for the proxy's life.
/// Past it, an operation is counted under [`OTHER`].
pub const OPERATIONS_AT_MOST: usize = 256;

/// The method the conventions give what is not counted on its own.
pub const OTHER: &str = "_OTHER";

/// The code of the error a response's `text` carries, if it carries one.
fn error_code(text: &str) -> Option<i64> {
    let code = jsonrpc::at(text, &["error", "code"])?;
    code.parse().ok()
}

/// The metrics of the spans seen so far, cumulative from `since`: each operation's
/// duration by method, tool and error, and the calls stripped, refused and held.
pub struct Metrics {
    since: SystemTime,
    /// `mcp.server.operation.duration`, by its attributes.
    durations: HashMap<Operation, Histogram>,
    /// `mcp.client.operation.duration`: the server's time, for what was sent on.
    upstream: HashMap<Operation, Histogram>,
    stripped: u64,
    refused: u64,
    held: u64,
}

/// The attributes a duration is kept under.
#[derive(Clone, Debug, Hash, PartialEq, Eq)]
struct Operation {
    method: String,
    tool: Option<String>,
    error: Option<Failure>,
}

/// The bucket bounds of `mcp.server.operation.duration`, in seconds, as the MCP semantic
/// conventions advise.
pub const BOUNDS: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// One histogram's counts.
#[derive(Clone, Debug, Default)]
struct Histogram {
    count: u64,
    sum: f64,
    min: f64,
    max: f64,
    /// Per bucket: `BOUNDS.len() + 1` of them.
    buckets: Vec<u64>,
}

impl Histogram {
    fn add(&mut self, seconds: f64) {
        if self.count == 0 {
            self.buckets = vec![0; BOUNDS.len() + 1];
            self.min = seconds;
            self.max = seconds;
        }
        self.count += 1;
        self.sum += seconds;
        self.min = self.min.min(seconds);
        self.max = self.max.max(seconds);
        let bucket = BOUNDS.iter().take_while(|bound| seconds > **bound).count();
        self.buckets[bucket] += 1;
    }
}

impl Metrics {
    /// No observation yet, counted from `since`.
    pub fn new(since: SystemTime) -> Metrics {
        Metrics {
            since,
            durations: HashMap::new(),
            upstream: HashMap::new(),
            stripped: 0,
            refused: 0,
            held: 0,
        }
    }

    /// Counts `span`.
    pub fn observe(&mut self, span: &Span) {
        let mut operation = Operation {
            method: span.method.clone(),
            tool: span.tool.clone(),
            error: span.error,
        };
        let full = self.durations.len() >= OPERATIONS_AT_MOST;
        if full && !self.durations.contains_key(&operation) {
            operation = Operation {
                method: OTHER.to_string(),
                tool: None,
                error: None,
            };
        }
        if let Some(upstream) = span.upstream {
            let histogram = self.upstream.entry(operation.clone()).or_default();
            histogram.add(upstream.as_secs_f64());
        }
        self.durations
            .entry(operation)
            .or_default()
            .add(span.took.as_secs_f64());
        match span.call.map(|call| call.fate) {
            Some(Fate::Stripped) => self.stripped += 1,
            Some(Fate::Refused) => self.refused += 1,
            Some(Fate::Forwarded) | None => {}
        }
        self.held += u64::from(span.held && span.call.is_some());
    }

    /// Whether nothing was observed.
    pub fn is_empty(&self) -> bool {
        self.durations.is_empty()
    }
}

#[cfg(test)]
mod tests;
