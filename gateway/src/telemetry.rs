//! Each request's spans and metrics, sent to the collector once the client has its
//! answer, so that the collector's time is never the client's. The gateway keeps
//! nothing between requests, so its metrics are each request's own (delta temporality):
//! the collector adds them up. A collector that cannot be reached is told on the
//! engine's stderr; the request it was for has been answered already.

use crate::settings::{Collector, Telemetry};
use crate::wire::{self, Deadline};
use reasons_mcp::shown;
use reasons_mcp::telemetry::otlp::{self, Temporality};
use reasons_mcp::telemetry::{Metrics, Span};
use std::time::SystemTime;
use wasip2::http::types::Method;

/// Sends `spans`, of a request that began at `began`, and their metrics, both within one
/// timeout: the instance is the next request's on an engine that reuses it (jco).
pub fn send(telemetry: &Telemetry, spans: &[Span], began: SystemTime) {
    if spans.is_empty() {
        return;
    }
    let deadline = Deadline::after(telemetry.timeout);
    if let Some(traces) = &telemetry.traces {
        let body = otlp::traces(&telemetry.resource, spans);
        post(telemetry, traces, body, &deadline);
    }
    if let Some(to) = &telemetry.metrics {
        let mut metrics = Metrics::new(began);
        spans.iter().for_each(|span| metrics.observe(span));
        let now = SystemTime::now();
        let body = otlp::metrics(&telemetry.resource, &metrics, now, Temporality::Delta);
        post(telemetry, to, body, &deadline);
    }
}

/// POSTs `body` to `collector` with its own headers by `deadline`.
fn post(telemetry: &Telemetry, collector: &Collector, body: String, deadline: &Deadline) {
    let to = &collector.to;
    let mut headers: Vec<(String, Vec<u8>)> = (collector.headers.iter())
        .map(|(name, value)| (name.clone(), value.clone().into_bytes()))
        .collect();
    headers.push(("content-type".into(), b"application/json".to_vec()));
    headers.push(("content-length".into(), body.len().to_string().into_bytes()));
    let sent = wire::request(
        to,
        Method::Post,
        &headers,
        Some(body.as_bytes()),
        telemetry.timeout,
        deadline,
    );
    let failed = match sent {
        Ok(answer) if (200..300).contains(&answer.status) => return,
        Ok(answer) => format!("it answered HTTP {}", answer.status),
        // The engine's errors are told of the upstream's; here the collector is the other side.
        Err(why) => why.replace("the MCP server", "the collector"),
    };
    let scheme = if to.https { "https" } else { "http" };
    let url = shown::url(&format!("{scheme}://{}{}", to.authority, to.path));
    eprintln!("reasons-gateway: telemetry: cannot send to {url}: {failed}");
}
