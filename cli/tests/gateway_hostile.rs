//! The wasi:http gateway against a hostile round: an upstream that redirects, a change of
//! tools announced where the gateway cannot see it, listings that differ by the caller's
//! `_meta`, a client that shadows the operator's headers, waits that comments or unread
//! bodies would stretch, and streams that must be relayed as they come. Each case runs
//! on `wasmtime serve` (fresh instances, reused ones, two replicas) and on jco. The
//! oracle is the server's log (`tests/mcp/http-echo.mjs`), read with serde_json: no reason
//! at the server, the tool's own reason kept, one answer per request, bounded time.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use std::io::BufRead;
use std::path::Path;
use std::time::Duration;

/// Runs `test` on each of `engines`, with a folder of its own, saying which on failure.
fn on(engines: &[Engine], test: impl Fn(Engine, &Path)) {
    assert!(!engines.is_empty());
    for &engine in engines {
        eprintln!("on {engine:?}");
        let dir = tempfile::tempdir().unwrap();
        test(engine, dir.path());
    }
}

/// An answer as the client got it, redirects not followed: status, headers, body.
struct Raw {
    status: u16,
    headers: ureq::http::HeaderMap,
    body: String,
}

/// An HTTP agent that follows no redirect, so that a test sees what it was answered, and
/// gives up far past any answer's time.
fn agent() -> ureq::Agent {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .timeout_global(Some(Duration::from_secs(120)))
        .build()
        .new_agent()
}

/// `request` with `headers` added.
fn with<B>(
    mut request: ureq::RequestBuilder<B>,
    headers: &[(&str, &str)],
) -> ureq::RequestBuilder<B> {
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

/// A POST of the message `body` to `url` with `headers`, as an MCP client makes it (with
/// the 2026-07-28 request headers of `body` that `headers` does not give).
fn posting(
    url: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> ureq::RequestBuilder<ureq::typestate::WithBody> {
    let request = agent()
        .post(url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream");
    let mirrored = mirrored(body, headers);
    let request = mirrored.iter().fold(request, |request, (name, value)| {
        request.header(*name, value)
    });
    with(request, headers)
}

/// A request to `url` with `headers`: a POST of `body`, or a GET when it is empty.
fn raw(url: &str, headers: &[(&str, &str)], body: &str) -> Raw {
    let mut answer = match body.is_empty() {
        true => with(
            agent().get(url).header("Accept", "text/event-stream"),
            headers,
        )
        .call(),
        false => posting(url, headers, body).send(body),
    }
    .unwrap();
    Raw {
        status: answer.status().as_u16(),
        headers: answer.headers().clone(),
        body: answer.body_mut().read_to_string().unwrap(),
    }
}

/// The bodies of the `tools/call`s the server got, in order.
fn call_bodies(log: &Path) -> Vec<String> {
    calls_received(log)
        .iter()
        .map(|request| request["body"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_redirect_is_answered_by_the_gateway_and_never_relayed() {
    // R9 R18: an upstream's 307 (`/mcp` to `/mcp/`) would have a client that follows it
    // re-send its call, reason and all, to the server itself. The gateway answers every
    // redirect itself, naming the status, the target and the setting that fixes it.
    on(&ENGINES, |engine, dir| {
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &["--redirect"], &[]);
        let record = call(1, "record", r#"{"text":"x","reason":"secret"}"#, true);
        // A call, an `initialize` and a GET (the empty body).
        for body in [record.as_str(), INITIALIZE, ""] {
            let answer = raw(&gateway.url, &[("Mcp-Session-Id", "s")], body);
            assert!(!(300..400).contains(&answer.status), "{body}");
            assert!(answer.headers.get("location").is_none(), "{body}");
            for named in ["307", "/mcp/", "REASONS_UPSTREAM"] {
                assert!(answer.body.contains(named), "{body}: {}", answer.body);
            }
        }
        assert_eq!(call_bodies(&log).len(), 0);
        let received = http_received(&log);
        assert!(received.len() >= 3, "{received:#?}");
        for request in &received {
            assert_eq!(request["url"], "/mcp", "followed: {request}");
        }
    });
}

/// A `tools/call` POSTed to the server itself, past every gateway.
fn directly(server: &Listening, tool: &str) {
    let (status, messages) = post(
        &server.url,
        &[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", tool),
            ("MCP-Protocol-Version", "2026-07-28"),
        ],
        &call(90, tool, "{}", true),
    );
    assert_eq!(status, 200, "{messages:?}");
}

#[test]
fn a_change_announced_where_the_gateway_cannot_see_it_is_stripped_on_as_it_is_now() {
    // R5 R9 R18: two replicas, in front of a server whose listings say every caller may
    // reuse them for ten minutes. The tools change by calls made to the server itself:
    // `note` stops owning `reason`, `record` starts. Neither replica saw it said, and each
    // strips as the tools are now: the model's reason never reaches `note`, and
    // `record`'s own reason reaches it.
    on(
        &[Engine::Wasmtime, Engine::WasmtimeReusing, Engine::Jco],
        |engine, dir| {
            let flags = ["--cacheable=600000,public"];
            let (server, one, log) = behind_gateway_of(engine, dir, &flags, &[]);
            let wasm = dir.join("reasons-gateway.wasm");
            let two = Listening::gateway(engine, &wasm, &[("REASONS_UPSTREAM", &server.url)]);
            let before = [
                (
                    &one,
                    call(1, "note", r#"{"reason":"the note's own"}"#, true),
                ),
                (
                    &two,
                    call(2, "record", r#"{"text":"a","reason":"the model's"}"#, true),
                ),
            ];
            for (gateway, body) in &before {
                let (status, messages) = post(&gateway.url, &[], body);
                assert_eq!(status, 200, "{messages:?}");
            }
            directly(&server, "change");
            directly(&server, "grant");
            let after = [
                (
                    &two,
                    call(3, "note", r#"{"text":"b","reason":"the model's"}"#, true),
                ),
                (
                    &one,
                    call(
                        4,
                        "record",
                        r#"{"text":"c","reason":"the record's own"}"#,
                        true,
                    ),
                ),
            ];
            let mut answers = Vec::new();
            for (gateway, body) in &after {
                let (status, messages) = post(&gateway.url, &[], body);
                assert_eq!(status, 200, "{messages:?}");
                answers.push(result_text(the_answer(&messages)).to_string());
            }
            assert_eq!(
                answers,
                [
                    r#"{"text":"b"}"#,
                    r#"{"text":"c","reason":"the record's own"}"#
                ]
            );
            let bodies = call_bodies(&log);
            // The two calls before, the two made directly, the two after.
            assert_eq!(bodies.len(), 6, "{bodies:#?}");
            assert!(bodies[0].contains("the note's own"), "{}", bodies[0]);
            assert!(
                !bodies.iter().any(|body| body.contains("the model's")),
                "{bodies:#?}"
            );
            assert!(bodies[5].contains("the record's own"), "{}", bodies[5]);
        },
    );
}

/// A 2026-07-28 `tools/call` whose `_meta` gives the client `capabilities`.
fn call_with_capabilities(id: u32, arguments: &str, capabilities: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"record","arguments":{arguments},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{{"name":"reasons-tests","version":"1"}},"io.modelcontextprotocol/clientCapabilities":{capabilities}}}}}}}"#
    )
}

#[test]
fn each_call_is_stripped_on_a_listing_made_with_its_own_meta() {
    // R5 R9: the server declares `record` with a `reason` of its own to a client that can
    // elicit. The same caller, with and without that capability, in turn, on instances
    // fresh and reused, in front of listings that say they may be reused.
    let engines = [Engine::Wasmtime, Engine::WasmtimeReusing, Engine::Jco];
    on(&engines, |engine, dir| {
        let flags = ["--cacheable=600000,public"];
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &flags, &[]);
        let arguments = r#"{"text":"t","reason":"why"}"#;
        let cases = [
            ("{}", false),
            (r#"{"elicitation":{}}"#, true),
            ("{}", false),
        ];
        for (id, (capabilities, owns)) in (1..).zip(cases) {
            let body = call_with_capabilities(id, arguments, capabilities);
            let (status, messages) = post(&gateway.url, &[], &body);
            assert_eq!(status, 200, "{messages:?}");
            let expected = match owns {
                true => arguments,
                false => r#"{"text":"t"}"#,
            };
            assert_eq!(
                result_text(the_answer(&messages)),
                expected,
                "{capabilities}"
            );
        }
        assert_eq!(call_bodies(&log).len(), 3);
    });
}

#[test]
fn the_operators_headers_replace_the_clients_and_hop_by_hop_ones_stay() {
    // A server that reads a header's first value reads the operator's: the client's of
    // the same name never go. A header the server's `Connection` names stays off the
    // client's answer.
    let operator = "X-Tenant: acme\nAuthorization: Bearer the-operators";
    on(&ENGINES, |engine, dir| {
        let (_server, gateway, log) =
            behind_gateway_of(engine, dir, &[], &[("REASONS_HEADERS", operator)]);
        let shadows = [
            ("X-Tenant", "evil"),
            ("authorization", "Bearer the-clients"),
        ];
        let record = call(1, "record", r#"{"text":"x","reason":"r"}"#, true);
        let (status, messages) = post(&gateway.url, &shadows, &record);
        assert_eq!(status, 200, "{messages:?}");
        let received = http_received(&log);
        assert_eq!(received.len(), 2, "a listing and the call: {received:#?}");
        for request in &received {
            let headers = &request["headers"];
            assert_eq!(headers["x-tenant"], "acme", "{headers}");
            assert_eq!(
                headers["authorization"], "Bearer the-operators",
                "{headers}"
            );
        }
        let hop = raw(&gateway.url, &[], &call(2, "hop", "{}", true));
        assert_eq!(hop.status, 200, "{}", hop.body);
        assert_eq!(
            result_text(&serde_json::from_str(&hop.body).unwrap()),
            "hop"
        );
        // `wasmtime serve` drops `Connection` before the component sees the answer, and
        // with it the names it gives (docs/gateway.md): there the header passes.
        if !matches!(engine, Engine::Wasmtime) {
            assert!(hop.headers.get("x-hop").is_none(), "{:?}", hop.headers);
        }
    });
}

#[test]
fn a_listing_of_comments_alone_ends_at_the_deadline() {
    // R18: a listing answered with an SSE stream of `: ping` comments, one every 100 ms,
    // for ever. Comments are no message: the call waiting on it is refused when the
    // read timeout (2 s) ends, never sent, however long the comments go on.
    on(&ENGINES, |engine, dir| {
        let env = [("REASONS_READ_TIMEOUT_SECS", "2")];
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &["--ping-list"], &env);
        let record = call(1, "record", r#"{"text":"x","reason":"secret"}"#, true);
        let (status, messages) = post(&gateway.url, &[], &record);
        assert_eq!(status, 200, "{messages:?}");
        assert_not_sent(&messages, "REASONS_READ_TIMEOUT_SECS");
        assert_eq!(call_bodies(&log).len(), 0);
    });
}

#[test]
fn a_body_dripped_a_byte_at_a_time_ends_at_the_deadline() {
    // A client that sends its POST's 100 bytes one every 300 ms (30 s in all) is answered
    // 408 when the read timeout (2 s) ends: each byte is no message, and moves nothing.
    on(&ENGINES, |engine, dir| {
        let env = [("REASONS_READ_TIMEOUT_SECS", "2")];
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &[], &env);
        let address = gateway
            .url
            .trim_start_matches("http://")
            .trim_end_matches("/mcp");
        let mut stream = std::net::TcpStream::connect(address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(120)))
            .unwrap();
        let head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {address}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"
        );
        std::io::Write::write_all(&mut stream, head.as_bytes()).unwrap();
        let reader = stream.try_clone().unwrap();
        // Left to end on its own: a write after the gateway closed fails.
        let _drip = std::thread::spawn(move || {
            for _ in 0..100 {
                if std::io::Write::write_all(&mut stream, b" ").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(300));
            }
        });
        let mut status = String::new();
        std::io::BufReader::new(reader)
            .read_line(&mut status)
            .unwrap();
        assert!(status.starts_with("HTTP/1.1 408"), "{status:?}");
        assert!(!log.exists(), "{:?}", http_received(&log));
    });
}

#[test]
fn a_call_its_server_does_not_read_holds_no_other_client() {
    // A 24 MiB call to a server that stops reading after 1 MiB and never answers: its
    // client is answered when the read timeout (2 s) ends, and a client that came after
    // it is answered too, on jco's one instance as on wasmtime's many.
    on(&ENGINES, |engine, dir| {
        let env = [("REASONS_READ_TIMEOUT_SECS", "2")];
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &["--deaf"], &env);
        let large = format!(r#"{{"text":"{}","reason":"r"}}"#, "x".repeat(24 << 20));
        let url = gateway.url.clone();
        let first = std::thread::spawn(move || post(&url, &[], &call(1, "record", &large, true)));
        // The small call is sent while the large one is under way (or after it): either
        // way, both are answered.
        std::thread::sleep(Duration::from_millis(500));
        let (status, messages) = post(&gateway.url, &[], &call(2, "note", r#"{"text":"y"}"#, true));
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(result_text(the_answer(&messages)), r#"{"text":"y"}"#);
        let (status, messages) = first.join().unwrap();
        assert_eq!(status, 200, "{messages:?}");
        let error = &the_answer(&messages)["error"]["message"];
        assert!(
            error.as_str().unwrap().contains("could not be sent"),
            "{error}"
        );
        // The server logs a request once it has read it all: the large call never.
        assert_eq!(call_bodies(&log).len(), 1);
    });
}

/// The events of an SSE answer, read as they come: each message's data, parsed.
struct Events(Box<dyn BufRead + Send>);

impl Events {
    /// POSTs `body` to `url` with `headers`, its answer to be read as an event stream.
    fn of(url: &str, headers: &[(&str, &str)], body: &str) -> Events {
        let answer = posting(url, headers, body).send(body).unwrap();
        assert_eq!(answer.status(), 200);
        let kind = answer.headers().get("content-type").unwrap();
        assert_eq!(kind, "text/event-stream");
        Events(Box::new(std::io::BufReader::new(
            answer.into_body().into_reader(),
        )))
    }

    /// The next message, or `None` when the stream ended.
    fn next(&mut self) -> Option<Value> {
        let mut line = String::new();
        loop {
            line.clear();
            if self.0.read_line(&mut line).unwrap() == 0 {
                return None;
            }
            if let Some(data) = line.trim_end().strip_prefix("data: ") {
                return Some(serde_json::from_str(data).unwrap());
            }
        }
    }
}

#[test]
fn a_servers_request_in_the_middle_of_a_call_reaches_the_client_while_the_call_waits() {
    // The server asks the client (elicitation/create) and answers the call only once the
    // client has answered. Held until the call's end, the question would reach the
    // client after the server gave up. The client's answer is a second request while
    // the first is open: jco's one instance serves one at a time, so jco runs with a
    // worker per request, as docs/gateway.md says to.
    on(&[Engine::Wasmtime, Engine::JcoIsolated], |engine, dir| {
        let (_server, gateway, _log) = behind_gateway_of(engine, dir, &[], &[]);
        let (status, session, _) = initialize(&gateway.url);
        assert_eq!(status, 200);
        let legacy = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let (status, _) = post(&gateway.url, &legacy, INITIALIZED);
        assert_eq!(status, 202);
        let mut events = Events::of(&gateway.url, &legacy, &call(2, "ask", "{}", false));
        let asked = events.next().expect("the server's question");
        assert_eq!(asked["method"], "elicitation/create", "{asked}");
        let answer = json!({"jsonrpc": "2.0", "id": asked["id"],
            "result": {"action": "accept", "content": {"x": "this one"}}});
        let (status, _) = post(&gateway.url, &legacy, &answer.to_string());
        assert_eq!(status, 202);
        let result = events.next().expect("the call's answer");
        assert_eq!(
            result_text(&result),
            r#"accepted: {"x":"this one"}"#,
            "{result}"
        );
    });
}

#[test]
fn a_subscription_and_an_endless_answer_are_relayed_as_they_come() {
    // A `subscriptions/listen` stream that stays open, and a call whose answer is an
    // endless stream of notifications: each message reaches the client while the server
    // is still sending, and the gateway keeps none of them back. jco runs with a worker
    // per request: its one instance is not told that a client left (docs/gateway.md), so
    // the endless stream would hold every request after it.
    on(&[Engine::Wasmtime, Engine::JcoIsolated], |engine, dir| {
        let (_server, gateway, _log) = behind_gateway_of(engine, dir, &[], &[]);
        let mut flood = Events::of(&gateway.url, &[], &call(2, "flood", "{}", true));
        const READ: usize = 2_000;
        for n in 0..READ {
            let message = flood.next().expect("the flood goes on");
            assert_eq!(message["params"]["data"], format!("flood {n}"), "{message}");
        }
        drop(flood);
        let listen = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"subscriptions/listen","params":{{{MODERN}}}}}"#
        );
        let mut events = Events::of(&gateway.url, &[], &listen);
        let first = events.next().expect("the subscription's first event");
        assert_eq!(
            first["method"], "notifications/tools/list_changed",
            "{first}"
        );
    });
}

#[test]
fn an_answer_to_a_request_sent_alone_is_one_message() {
    // A server that answers a single request with a one-element batch: the client that
    // sent one message is answered with one, not an array it never asked for.
    on(&ENGINES, |engine, dir| {
        let (_server, gateway, _log) = behind_gateway_of(engine, dir, &[], &[]);
        let answer = raw(&gateway.url, &[], &call(1, "batch1", "{}", true));
        assert_eq!(answer.status, 200, "{}", answer.body);
        let message: Value = serde_json::from_str(&answer.body).unwrap();
        assert!(message.is_object(), "{message}");
        assert_eq!(result_text(&message), "alone");
    });
}
