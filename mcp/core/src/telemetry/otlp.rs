//! Spans and metrics as OTLP/JSON (OpenTelemetry's protocol over HTTP, its JSON
//! encoding: ids in hex, 64-bit numbers as strings), the bodies a transport POSTs to a
//! collector's `/v1/traces` and `/v1/metrics`.
//!
//! Written with serde_json rather than the OpenTelemetry SDK: the SDK's exporters bring
//! an async runtime and an HTTP client of their own, which the wasi:http gateway cannot
//! run, and both fronts must send the same thing; the encoding is a small, stable part
//! of the specification.

use super::{BOUNDS, Failure, Histogram, Metrics, Operation, Span};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::time::SystemTime;

/// Who sends: the resource every span and metric belongs to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resource {
    /// `service.name`: `OTEL_SERVICE_NAME`, or the sender's own.
    pub service: String,
    /// Attributes besides it (`OTEL_RESOURCE_ATTRIBUTES`), as given.
    pub attributes: Vec<(String, String)>,
}

/// How a body's metrics count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Temporality {
    /// Since the last body: what one gateway request saw, with nothing kept.
    Delta,
    /// Since the sender started: a proxy that lives for its session.
    Cumulative,
}

/// The instrumentation scope: this crate.
fn scope() -> Value {
    json!({"name": "reasons", "version": env!("CARGO_PKG_VERSION")})
}

fn resource(resource: &Resource) -> Value {
    let mut attributes = vec![
        text("service.name", &resource.service),
        text("service.version", env!("CARGO_PKG_VERSION")),
    ];
    let given = resource.attributes.iter();
    attributes.extend(given.map(|(key, value)| text(key, value)));
    json!({ "attributes": attributes })
}

fn text(key: &str, value: &str) -> Value {
    json!({"key": key, "value": {"stringValue": value}})
}

fn int(key: &str, value: i64) -> Value {
    json!({"key": key, "value": {"intValue": value.to_string()}})
}

fn boolean(key: &str, value: bool) -> Value {
    json!({"key": key, "value": {"boolValue": value}})
}

fn nanos(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    since.as_nanos().to_string()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// `N` bytes from the operating system's random source, for a new id.
fn random<const N: usize>() -> [u8; N] {
    let mut bytes = [0; N];
    getrandom::fill(&mut bytes).expect("the operating system's random source cannot be read");
    bytes
}

/// The body of a POST to `/v1/traces` carrying `spans`: each a server span (the proxy
/// serves its client), a child of the client's span when its request named one.
pub fn traces(from: &Resource, spans: &[Span]) -> String {
    let spans: Vec<Value> = spans.iter().map(span).collect();
    json!({"resourceSpans": [{
        "resource": resource(from),
        "scopeSpans": [{"scope": scope(), "spans": spans}],
    }]})
    .to_string()
}

/// One span, named as the MCP conventions name it: the method, and the tool called.
fn span(span: &Span) -> Value {
    let name = match &span.tool {
        Some(tool) => format!("{} {tool}", span.method),
        None => span.method.clone(),
    };
    let mut attributes = vec![
        text("mcp.method.name", &span.method),
        text("jsonrpc.request.id", &span.request_id),
    ];
    if let Some(tool) = &span.tool {
        attributes.push(text("gen_ai.tool.name", tool));
        attributes.push(text("gen_ai.operation.name", "execute_tool"));
    }
    if let Some(failure) = span.error {
        attributes.push(text("error.type", &failure.error_type()));
        if let Failure::Code(code) = failure {
            attributes.push(int("rpc.jsonrpc.error_code", code));
        }
    }
    if let Some(call) = span.call {
        attributes.push(boolean("reasons.tool.augmented", call.augmented));
        attributes.push(boolean("reasons.reason.given", call.reason.is_some()));
        if let Some(length) = call.reason {
            attributes.push(int("reasons.reason.length", length as i64));
        }
        attributes.push(text("reasons.call.fate", call.fate.name()));
        attributes.push(boolean("reasons.call.held", span.held));
    }
    let (trace_id, parent) = match &span.parent {
        Some(parent) => (parent.trace_id, Some(hex(&parent.span_id))),
        None => (random::<16>(), None),
    };
    let mut value = json!({
        "traceId": hex(&trace_id),
        "spanId": hex(&random::<8>()),
        "name": name,
        // SPAN_KIND_SERVER.
        "kind": 2,
        "startTimeUnixNano": nanos(span.start),
        "endTimeUnixNano": nanos(span.start + span.took),
        "attributes": attributes,
    });
    if let Some(parent) = parent {
        value["parentSpanId"] = parent.into();
    }
    if span.error.is_some() {
        // STATUS_CODE_ERROR.
        value["status"] = json!({"code": 2});
    }
    value
}

/// The body of a POST to `/v1/metrics` carrying `metrics` as of `now`.
pub fn metrics(from: &Resource, metrics: &Metrics, now: SystemTime, how: Temporality) -> String {
    let temporality = match how {
        Temporality::Delta => 1,
        Temporality::Cumulative => 2,
    };
    let (start, now) = (nanos(metrics.since), nanos(now));
    let histogram = |name: &str, description: &str, of: &HashMap<Operation, Histogram>| {
        let mut operations: Vec<_> = of.iter().collect();
        operations.sort_by(|(a, _), (b, _)| {
            (&a.method, &a.tool, a.error).cmp(&(&b.method, &b.tool, b.error))
        });
        let points: Vec<Value> = (operations.into_iter())
            .map(|(operation, histogram)| {
                let mut attributes = vec![text("mcp.method.name", &operation.method)];
                if let Some(tool) = &operation.tool {
                    attributes.push(text("gen_ai.tool.name", tool));
                }
                if let Some(failure) = operation.error {
                    attributes.push(text("error.type", &failure.error_type()));
                }
                point(histogram, attributes, &start, &now)
            })
            .collect();
        json!({
            "name": name,
            "description": description,
            "unit": "s",
            "histogram": {"aggregationTemporality": temporality, "dataPoints": points},
        })
    };
    let counter = |name: &str, description: &str, count: u64| {
        json!({
            "name": name,
            "description": description,
            "unit": "{call}",
            "sum": {
                "aggregationTemporality": temporality,
                "isMonotonic": true,
                "dataPoints": [{
                    "startTimeUnixNano": start,
                    "timeUnixNano": now,
                    "asInt": count.to_string(),
                }],
            },
        })
    };
    let all = vec![
        histogram(
            "mcp.server.operation.duration",
            "How long the proxy took to answer a client's MCP request.",
            &metrics.durations,
        ),
        histogram(
            "mcp.client.operation.duration",
            "How long the MCP server took to answer a request the proxy sent on.",
            &metrics.upstream,
        ),
        counter(
            "reasons.calls.stripped",
            "Calls sent on with the model's reason taken out.",
            metrics.stripped,
        ),
        counter(
            "reasons.calls.refused",
            "Calls answered by the proxy and never sent.",
            metrics.refused,
        ),
        counter(
            "reasons.calls.held",
            "Calls that waited for the server's tools to be listed.",
            metrics.held,
        ),
    ];
    json!({"resourceMetrics": [{
        "resource": resource(from),
        "scopeMetrics": [{"scope": scope(), "metrics": all}],
    }]})
    .to_string()
}

fn point(histogram: &Histogram, attributes: Vec<Value>, start: &str, now: &str) -> Value {
    let buckets: Vec<String> = histogram.buckets.iter().map(u64::to_string).collect();
    json!({
        "attributes": attributes,
        "startTimeUnixNano": start,
        "timeUnixNano": now,
        "count": histogram.count.to_string(),
        "sum": histogram.sum,
        "min": histogram.min,
        "max": histogram.max,
        "bucketCounts": buckets,
        "explicitBounds": BOUNDS,
    })
}
