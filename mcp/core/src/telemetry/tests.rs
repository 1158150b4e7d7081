use super::otlp::{self, Resource, Temporality};
use super::*;
use serde_json::Value;

#[test]
fn a_traceparent_is_read_as_w3c_trace_context_writes_it() {
    let valid = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let parsed = TraceParent::parse(valid).unwrap();
    assert_eq!(parsed.trace_id[0], 0x0a);
    assert_eq!(parsed.trace_id[15], 0x9c);
    assert_eq!(parsed.flags, 1);
    // A later version may add fields after the flags; version 00 may not.
    assert!(
        TraceParent::parse("01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x").is_some()
    );
    for invalid in [
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01-x",
        "00-0AF7651916CD43DD8448EB211C80319C-b7ad6b7169203331-01",
        "00-00000000000000000000000000000000-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000000-01",
        "ff-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319-b7ad6b7169203331-01",
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331",
        "00-+af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        "",
    ] {
        assert_eq!(TraceParent::parse(invalid), None, "{invalid}");
    }
}

fn span(tool: Option<&str>, took_ms: u64, call: Option<CallFacts>, held: bool) -> Span {
    Span {
        method: "tools/call".into(),
        request_id: "\"a\"".into(),
        tool: tool.map(str::to_string),
        parent: TraceParent::parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"),
        start: SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000),
        took: Duration::from_millis(took_ms),
        upstream: None,
        error: None,
        call,
        held,
    }
}

fn attributes(value: &Value) -> Vec<(String, Value)> {
    let attributes = value["attributes"].as_array().unwrap();
    attributes
        .iter()
        .map(|attribute| {
            let value = attribute["value"].as_object().unwrap();
            assert_eq!(value.len(), 1, "{attribute}");
            let (_, value) = value.iter().next().unwrap();
            (
                attribute["key"].as_str().unwrap().to_string(),
                value.clone(),
            )
        })
        .collect()
}

#[test]
fn a_span_is_written_as_otlp_json_under_its_client_s_trace() {
    let facts = CallFacts {
        augmented: true,
        reason: Some(12),
        fate: Fate::Stripped,
    };
    let resource = Resource {
        service: "proxy-a".into(),
        attributes: vec![("deployment.environment".into(), "test".into())],
    };
    let body: Value = serde_json::from_str(&otlp::traces(
        &resource,
        &[span(Some("plain"), 1500, Some(facts), true)],
    ))
    .unwrap();
    let resource_spans = body["resourceSpans"].as_array().unwrap();
    assert_eq!(resource_spans.len(), 1);
    let resource = attributes(&resource_spans[0]["resource"]);
    assert_eq!(resource.len(), 3);
    assert_eq!(resource[0], ("service.name".into(), "proxy-a".into()));
    assert_eq!(
        resource[2],
        ("deployment.environment".into(), "test".into())
    );
    let spans = resource_spans[0]["scopeSpans"][0]["spans"]
        .as_array()
        .unwrap();
    assert_eq!(spans.len(), 1);
    let written = &spans[0];
    assert_eq!(written["name"], "tools/call plain");
    assert_eq!(written["kind"], 2);
    assert_eq!(written["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(written["parentSpanId"], "b7ad6b7169203331");
    let id = written["spanId"].as_str().unwrap();
    assert!(id.len() == 16 && id != "0000000000000000", "{id}");
    assert_eq!(written["startTimeUnixNano"], "1700000000000000000");
    assert_eq!(written["endTimeUnixNano"], "1700000001500000000");
    assert!(written.get("status").is_none());
    let expected: Vec<(String, Value)> = [
        ("mcp.method.name", Value::from("tools/call")),
        ("jsonrpc.request.id", "\"a\"".into()),
        ("gen_ai.tool.name", "plain".into()),
        ("gen_ai.operation.name", "execute_tool".into()),
        ("reasons.tool.augmented", true.into()),
        ("reasons.reason.given", true.into()),
        ("reasons.reason.length", "12".into()),
        ("reasons.call.fate", "stripped".into()),
        ("reasons.call.held", true.into()),
    ]
    .into_iter()
    .map(|(key, value)| (key.to_string(), value))
    .collect();
    assert_eq!(attributes(written), expected);

    // With no trace context, a trace of its own; an error is the span's status.
    let mut failed = span(None, 1, None, false);
    failed.parent = None;
    failed.method = "tools/list".into();
    failed.error = Some(Failure::Code(-32602));
    let body: Value = serde_json::from_str(&otlp::traces(&resource_of(), &[failed])).unwrap();
    let written = &body["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(written["name"], "tools/list");
    assert!(written.get("parentSpanId").is_none());
    assert_eq!(written["traceId"].as_str().unwrap().len(), 32);
    assert_eq!(written["status"]["code"], 2);
    let attributes = attributes(written);
    assert_eq!(attributes.len(), 4, "{attributes:?}");
    assert_eq!(attributes[2], ("error.type".into(), "-32602".into()));

    // A request its client cancelled: no code, the error's type says so.
    let mut cancelled = span(None, 1, None, false);
    cancelled.error = Some(Failure::Cancelled);
    let body: Value = serde_json::from_str(&otlp::traces(&resource_of(), &[cancelled])).unwrap();
    let written = &body["resourceSpans"][0]["scopeSpans"][0]["spans"][0];
    assert_eq!(written["status"]["code"], 2);
    let named = self::attributes(written);
    assert_eq!(named.len(), 3, "{named:?}");
    assert_eq!(named[2], ("error.type".into(), "cancelled".into()));
}

fn resource_of() -> Resource {
    Resource {
        service: "reasons".into(),
        attributes: Vec::new(),
    }
}

#[test]
fn metrics_count_each_operation_s_durations_and_what_became_of_calls() {
    let since = SystemTime::UNIX_EPOCH + Duration::from_secs(1_700_000_000);
    let mut metrics = Metrics::new(since);
    assert!(metrics.is_empty());
    let facts = |fate| CallFacts {
        augmented: true,
        reason: None,
        fate,
    };
    // 5 ms (first bucket), 10 ms (still the first: a bound is inclusive), 700 ms (the
    // 1 s bucket), and 400 s (past the last bound).
    let mut sent = span(Some("a"), 5, Some(facts(Fate::Stripped)), true);
    sent.upstream = Some(Duration::from_millis(2));
    metrics.observe(&sent);
    metrics.observe(&span(Some("a"), 10, Some(facts(Fate::Refused)), false));
    let mut sent = span(Some("a"), 700, Some(facts(Fate::Stripped)), false);
    sent.upstream = Some(Duration::from_millis(300));
    metrics.observe(&sent);
    metrics.observe(&span(
        Some("a"),
        400_000,
        Some(facts(Fate::Forwarded)),
        true,
    ));
    metrics.observe(&span(Some("b"), 1, None, false));
    let now = since + Duration::from_secs(60);
    let body: Value = serde_json::from_str(&otlp::metrics(
        &resource_of(),
        &metrics,
        now,
        Temporality::Cumulative,
    ))
    .unwrap();
    let all = body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"]
        .as_array()
        .unwrap();
    assert_eq!(all.len(), 5);
    let duration = &all[0];
    assert_eq!(duration["name"], "mcp.server.operation.duration");
    assert_eq!(duration["unit"], "s");
    assert_eq!(duration["histogram"]["aggregationTemporality"], 2);
    let points = duration["histogram"]["dataPoints"].as_array().unwrap();
    assert_eq!(points.len(), 2);
    let a = &points[0];
    assert_eq!(a["count"], "4");
    assert_eq!(a["startTimeUnixNano"], "1700000000000000000");
    assert_eq!(a["timeUnixNano"], "1700000060000000000");
    let buckets: Vec<&str> = a["bucketCounts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|count| count.as_str().unwrap())
        .collect();
    assert_eq!(
        buckets,
        [
            "2", "0", "0", "0", "0", "0", "1", "0", "0", "0", "0", "0", "0", "0", "1"
        ]
    );
    assert_eq!(a["explicitBounds"].as_array().unwrap().len(), 14);
    assert_eq!(a["min"], 0.005);
    assert_eq!(a["max"], 400.0);
    assert!((a["sum"].as_f64().unwrap() - 400.715).abs() < 1e-9);
    assert_eq!(points[1]["count"], "1");
    // The server's own time, for what was sent on: the two that were.
    let upstream = &all[1];
    assert_eq!(upstream["name"], "mcp.client.operation.duration");
    let points = upstream["histogram"]["dataPoints"].as_array().unwrap();
    assert_eq!(points.len(), 1);
    assert_eq!(points[0]["count"], "2");
    assert_eq!(points[0]["max"], 0.3);
    let counted: Vec<(&str, &str)> = all[2..]
        .iter()
        .map(|metric| {
            assert_eq!(metric["sum"]["isMonotonic"], true);
            let point = &metric["sum"]["dataPoints"][0];
            (
                metric["name"].as_str().unwrap(),
                point["asInt"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        counted,
        [
            ("reasons.calls.stripped", "2"),
            ("reasons.calls.refused", "1"),
            ("reasons.calls.held", "2")
        ]
    );
    let delta: Value = serde_json::from_str(&otlp::metrics(
        &resource_of(),
        &metrics,
        now,
        Temporality::Delta,
    ))
    .unwrap();
    let temporality = &delta["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][2]["sum"]["aggregationTemporality"];
    assert_eq!(temporality, 1);
}

#[test]
fn what_a_client_names_at_will_is_bounded_in_the_metrics() {
    // A client that names a new tool with every call cannot grow the metrics without end.
    let mut metrics = Metrics::new(SystemTime::UNIX_EPOCH);
    let calls = OPERATIONS_AT_MOST + 50;
    for at in 0..calls {
        metrics.observe(&span(Some(&format!("tool-{at}")), 1, None, false));
    }
    let body: Value = serde_json::from_str(&otlp::metrics(
        &resource_of(),
        &metrics,
        SystemTime::UNIX_EPOCH,
        Temporality::Cumulative,
    ))
    .unwrap();
    let points =
        body["resourceMetrics"][0]["scopeMetrics"][0]["metrics"][0]["histogram"]["dataPoints"]
            .as_array()
            .unwrap();
    assert_eq!(points.len(), OPERATIONS_AT_MOST + 1);
    let other = points
        .iter()
        .find(|point| point["attributes"][0]["value"]["stringValue"] == OTHER)
        .unwrap();
    assert_eq!(other["count"], "50");
}
