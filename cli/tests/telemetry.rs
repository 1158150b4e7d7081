//! OpenTelemetry from `reasons mcp`, over stdio and through the HTTP front, received by a
//! real collector (rotel, from PyPI) and read back from its debug log: a span per
//! request in the MCP conventions, under the client's trace, with what the layer did
//! and never the reason's text; the metrics; and what a collector that is set wrong or
//! gone does to the proxy (nothing: it says so).

use reasons_test_support::mcp::*;
use std::collections::HashMap;
use std::process::{Command, Stdio};

/// The client's trace context, and the span id and trace id in it.
const TRACEPARENT: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
const TRACE_ID: &str = "0af7651916cd43dd8448eb211c80319c";
const CLIENT_SPAN: &str = "b7ad6b7169203331";

/// The model's reason the calls carry: its length in characters is 22.
const REASON: &str = "to test the telemetry!";

/// The turn and the model the client's own SEP-2817 `aiInvocation` names: client-asserted
/// text, which no span carries.
const TURN: &str = "turn-of-the-client";
const MODEL: &str = "model-of-the-client";

/// A call to `record` with the reason, under the client's trace, with the client's
/// `aiInvocation`.
fn traced_call(id: u32) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"record","arguments":{{"text":"hi","reason":"{REASON}"}},"_meta":{{"traceparent":"{TRACEPARENT}","io.modelcontextprotocol/aiInvocation":{{"turnId":"{TURN}","model":{{"name":"{MODEL}"}}}}}}}}}}"#
    )
}

/// Whether `received` holds nothing a span must not carry: the reason, or the client's
/// `_meta` values.
fn carries_nothing_private(received: &str) -> bool {
    ![REASON, TURN, MODEL]
        .iter()
        .any(|private| received.contains(private))
}

/// One span as the collector's debug log prints it: its name, ids and attributes.
#[derive(Debug)]
struct Received {
    name: String,
    trace: String,
    parent: String,
    attributes: HashMap<String, String>,
}

/// The spans in the collector's debug log.
fn spans(log: &str) -> Vec<Received> {
    log.split("Span #")
        .skip(1)
        .map(|block| {
            // A span's lines end where the next resource, scope or metric begins.
            let block = ["\nResource", "\nScope", "\nMetric"]
                .iter()
                .fold(block, |block, next| {
                    block.split(next).next().unwrap_or(block)
                });
            let field = |name: &str| {
                block
                    .lines()
                    .find_map(|line| line.trim().strip_prefix(name))
                    .and_then(|rest| rest.trim().strip_prefix(':'))
                    .map_or(String::new(), |value| value.trim().to_string())
            };
            let attributes = block
                .lines()
                .filter_map(|line| line.trim().strip_prefix("-> "))
                .filter_map(|line| line.split_once(": "))
                .map(|(key, value)| (key.to_string(), value.to_string()))
                .collect();
            Received {
                name: field("Name"),
                trace: field("Trace ID"),
                parent: field("Parent ID"),
                attributes,
            }
        })
        .collect()
}

/// `reasons mcp` over the tests' own server, sending to `collector` (spans at once).
fn proxy_sending_to(collector: &Collector, flags: &[&str]) -> Command {
    let mut command = Command::new(reasons());
    command.arg("mcp").args(flags).arg("--").args(own_server());
    command
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint)
        .env("OTEL_BSP_SCHEDULE_DELAY", "50")
        .env("OTEL_SERVICE_NAME", "reasons-under-test");
    command
}

/// `reasons mcp` over stdio in front of the tests' own server with the `OTEL_*` variables
/// `env`, once initialized, and the file in `dir` its stderr goes to.
fn initialized_with(env: &[(&str, &str)], dir: &std::path::Path) -> (Session, std::path::PathBuf) {
    let mut command = Command::new(reasons());
    command
        .args(["mcp", "--"])
        .args(own_server())
        .envs(env.iter().copied());
    let stderr = dir.join("stderr");
    command.stderr(std::fs::File::create(&stderr).unwrap());
    let mut session = Session::start_command(command);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    (session, stderr)
}

/// The call's span, once it is asserted: its name, its client's trace, what the layer
/// did.
fn call_span(spans: &[Received]) -> &Received {
    let calls: Vec<&Received> = spans
        .iter()
        .filter(|span| span.name == "tools/call record")
        .collect();
    assert_eq!(calls.len(), 1, "{spans:#?}");
    let call = calls[0];
    assert_eq!(
        (call.trace.as_str(), call.parent.as_str()),
        (TRACE_ID, CLIENT_SPAN)
    );
    let attribute = |key: &str| call.attributes.get(key).map(String::as_str);
    assert_eq!(attribute("mcp.method.name"), Some("Str(tools/call)"));
    assert_eq!(attribute("gen_ai.tool.name"), Some("Str(record)"));
    assert_eq!(attribute("reasons.tool.augmented"), Some("Bool(true)"));
    assert_eq!(attribute("reasons.reason.given"), Some("Bool(true)"));
    assert_eq!(attribute("reasons.reason.length"), Some("Int(22)"));
    assert_eq!(attribute("reasons.call.fate"), Some("Str(stripped)"));
    call
}

#[test]
fn every_request_over_stdio_reaches_the_collector_as_a_span_and_the_reason_never_does() {
    // R9: the collector is one more party the reason must not reach.
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path());
    let mut session = Session::start_command(proxy_sending_to(&collector, &[]));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    let answer = session.ask(&traced_call(3));
    assert!(answer.contains(r#"{\"text\":\"hi\"}"#), "{answer}");
    let (_, status) = session.finish();
    assert!(status.success());
    // The metrics go when the proxy ends, after its last spans.
    let received = collector.until("reasons.calls.stripped");
    assert!(
        carries_nothing_private(&received),
        "the reason or the client's _meta reached the collector"
    );
    let spans = spans(&received);
    let named: Vec<(&str, &str)> = (spans.iter())
        .map(|span| {
            let id = span.attributes.get("jsonrpc.request.id");
            (span.name.as_str(), id.map_or("", String::as_str))
        })
        .collect();
    assert_eq!(
        named,
        [
            ("initialize", "Str(1)"),
            ("tools/list", "Str(2)"),
            ("tools/call record", "Str(3)")
        ]
    );
    call_span(&spans);
    assert!(received.contains("service.name: Str(reasons-under-test)"));
    assert!(
        received.contains("mcp.server.operation.duration"),
        "{received}"
    );
}

#[test]
fn requests_through_the_http_front_reach_the_collector_too() {
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path());
    let front = Listening::serving(proxy_sending_to(&collector, &["--listen", "127.0.0.1:0"]));
    let (status, session, _) = initialize(&front.url);
    assert_eq!(status, 200);
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let (status, messages) = post(&front.url, &with_session, &traced_call(3));
    assert_eq!(status, 200, "{messages:?}");
    let received = collector.until("tools/call record");
    assert!(
        carries_nothing_private(&received),
        "the reason or the client's _meta reached the collector"
    );
    call_span(&spans(&received));
}

#[test]
fn a_collector_variable_set_wrong_stops_the_proxy_before_it_starts_anything() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let output = Command::new(reasons())
        .args(["mcp", "--"])
        .args(teed(&log, own_server()))
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=\"grpc\": only http/json is sent"),
        "{stderr}"
    );
    assert!(!log.exists(), "the server was started");
}

#[test]
fn a_collector_that_is_gone_costs_the_session_nothing_and_is_told_once() {
    let port = free_port();
    let endpoint = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_BSP_SCHEDULE_DELAY", "20"),
    ];
    let (mut session, stderr) = initialized_with(&env, dir.path());
    for id in 0..20 {
        let answer = session.ask(&format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"tools/list"}}"#,
            id + 10
        ));
        assert!(answer.contains("\"tools\""), "{answer}");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (_, status) = session.finish();
    assert!(status.success());
    let said = std::fs::read_to_string(&stderr).unwrap();
    let told = said.matches("telemetry: cannot send to").count();
    assert_eq!(told, 1, "{said}");
}

#[test]
fn a_collector_that_takes_nothing_holds_the_proxy_s_end_one_timeout_at_most() {
    // A collector that accepts and never answers, a 3 s OTEL_EXPORTER_OTLP_TIMEOUT and
    // some 2,500 spans waiting (five batches and the metrics): sent one after another,
    // each waiting its timeout, they held the proxy's end for 15 s and more; what is left
    // goes within one timeout of the end, or not at all, and the proxy says so.
    let collector = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = collector.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let held: Vec<_> = collector.incoming().collect();
        drop(held);
    });
    let endpoint = format!("http://127.0.0.1:{port}");
    let dir = tempfile::tempdir().unwrap();
    let env = [
        ("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint.as_str()),
        ("OTEL_EXPORTER_OTLP_TIMEOUT", "3000"),
        ("OTEL_BSP_SCHEDULE_DELAY", "60000"),
    ];
    let (mut session, stderr) = initialized_with(&env, dir.path());
    let list = |id: u32| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#);
    for id in 10..2510 {
        session.send(&list(id));
    }
    assert!(session.ask(&list(9)).contains("\"tools\""));
    let ending = std::time::Instant::now();
    let (_, status) = session.finish();
    let took = ending.elapsed();
    assert!(status.success());
    assert!(took.as_secs() < 10, "the proxy took {took:?} to end");
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        said.contains("spans left at the end were not sent"),
        "{said}"
    );
}

#[test]
fn a_collector_that_redirects_is_not_followed_by_the_proxy_or_the_gateway() {
    // A 3xx from what OTEL_EXPORTER_OTLP_* names could take the headers set for the
    // collector (an API key) to a place nobody named (a 303 is followed with a GET that
    // carries them): the proxy says what the collector answered, and nothing reaches the
    // redirect's target.
    let dir = tempfile::tempdir().unwrap();
    let redirected = |name: &str| {
        let log = dir.path().join(name);
        (http_echo_with(&log, &["--redirect=303"]), log)
    };
    let (to_proxy, proxy_log) = redirected("proxy-collector.jsonl");
    let (to_gateway, gateway_log) = redirected("gateway-collector.jsonl");
    let headers = "api-key=collector-secret";
    let env = [
        ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", to_proxy.url.as_str()),
        ("OTEL_EXPORTER_OTLP_HEADERS", headers),
        ("OTEL_BSP_SCHEDULE_DELAY", "20"),
    ];
    let (mut session, stderr) = initialized_with(&env, dir.path());
    assert!(session.ask(&traced_call(2)).contains("\"result\""));
    let (_, status) = session.finish();
    assert!(status.success());
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        said.contains("telemetry: cannot send to") && said.contains("HTTP 303"),
        "{said}"
    );

    let env = [
        (
            "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            to_gateway.url.as_str(),
        ),
        ("OTEL_EXPORTER_OTLP_HEADERS", headers),
    ];
    let (_server, gateway, _) = behind_gateway_of(Engine::Wasmtime, dir.path(), &[], &env);
    // The gateway sends a request's spans after its answer, and would follow a redirect
    // at once: two requests' spans arrived, the first's redirect would have been followed.
    for _ in 0..2 {
        assert_eq!(initialize(&gateway.url).0, 200);
    }
    let sent = std::time::Instant::now();
    let arrived = || gateway_log.exists() && http_received(&gateway_log).len() >= 2;
    while !arrived() && sent.elapsed().as_secs() < 30 {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for log in [proxy_log, gateway_log] {
        let received = http_received(&log);
        assert!(!received.is_empty(), "{}: nothing sent", log.display());
        for request in &received {
            assert_eq!(request["url"], "/mcp", "followed: {request}");
        }
    }
}

#[test]
fn the_gateway_on_each_engine_sends_each_request_s_spans_once_the_client_has_its_answer() {
    // R9 through the gateway: the collector never sees the reason either.
    for engine in ENGINES {
        let dir = tempfile::tempdir().unwrap();
        let collector = Collector::start(dir.path());
        let env = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", collector.endpoint.as_str()),
            ("OTEL_SERVICE_NAME", "gateway-under-test"),
        ];
        let (_server, gateway, _) = behind_gateway_of(engine, dir.path(), &[], &env);
        let (status, session, _) = initialize(&gateway.url);
        assert_eq!(status, 200, "{engine:?}");
        let with_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let (status, messages) = post(&gateway.url, &with_session, &traced_call(3));
        assert_eq!(status, 200, "{engine:?}: {messages:?}");
        let received = collector.until("Name           : tools/call record");
        assert!(
            carries_nothing_private(&received),
            "{engine:?}: the reason or the client's _meta reached the collector"
        );
        let spans = spans(&received);
        let call = call_span(&spans);
        let attribute = |key: &str| call.attributes.get(key).map(String::as_str);
        // A fresh proxy lists before it strips: the call waited for that listing.
        assert_eq!(attribute("reasons.call.held"), Some("Bool(true)"));
        assert!(received.contains("service.name: Str(gateway-under-test)"));
        collector.until("mcp.server.operation.duration");
    }
}
