//! `reasons mcp --url`: Streamable HTTP to the server, in both eras of MCP, against the
//! tests' own server (`tests/mcp/http-echo.mjs`), which logs every HTTP request it gets:
//! its headers and its body. The oracle is that log, read with serde_json.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::path::Path;
use std::process::Stdio;

/// The text of a `tools/call` answer's first content item.
fn text(answer: &str) -> String {
    let answer: Value = serde_json::from_str(answer).unwrap();
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {answer}"))
        .to_string()
}

#[test]
fn a_legacy_session_carries_its_session_and_version_and_no_reason_arrives() {
    // R9 R5, over Streamable HTTP in a 2025 session.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    // What the server sends on its own, on the GET stream, reaches the client; when the
    // server hangs the stream up, the proxy comes back for the rest, from where it was.
    let pushed = session.next_line().unwrap();
    assert!(pushed.contains("from the GET stream"), "{pushed}");
    let resumed = session.next_line().unwrap();
    assert!(resumed.contains("resumed after event 1"), "{resumed}");
    let listed: Value = serde_json::from_str(&session.ask(&list(2, false))).unwrap();
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), HTTP_ECHO_TOOLS);
    assert!(tools[1]["inputSchema"]["properties"]["reason"].is_object());
    let got = text(&session.ask(&call(
        3,
        "record",
        r#"{"text":"hi","reason":"to test"}"#,
        false,
    )));
    assert_eq!(got, r#"{"text":"hi"}"#);
    let own = text(&session.ask(&call(4, "note", r#"{"reason":"the tool's own"}"#, false)));
    assert_eq!(own, r#"{"reason":"the tool's own"}"#);
    // An answer on an SSE stream, after a notification that relates to it.
    let streamed = text(&session.ask(&call(5, "stream", r#"{"text":"s","reason":"r"}"#, false)));
    assert_eq!(streamed, r#"{"text":"s"}"#);
    drop(session);

    let received = http_received(&log);
    let gets: Vec<&Value> = received.iter().filter(|r| r["method"] == "GET").collect();
    assert_eq!(gets.len(), 2, "{gets:#?}");
    assert_eq!(gets[0]["headers"].get("last-event-id"), None);
    assert_eq!(gets[1]["headers"]["last-event-id"], "1");
    for get in &gets {
        assert_eq!(get["headers"]["mcp-session-id"], "session-1f2e", "{get}");
    }
    let posts: Vec<&Value> = received.iter().filter(|r| r["method"] == "POST").collect();
    assert!(posts.len() >= 6, "{received:#?}");
    for post in &posts[1..] {
        // Everything after `initialize` carries the session and the version it settled.
        assert_eq!(post["headers"]["mcp-session-id"], "session-1f2e", "{post}");
        assert_eq!(
            post["headers"]["mcp-protocol-version"], "2025-06-18",
            "{post}"
        );
    }
    let calls = calls_received(&log);
    assert_eq!(calls.len(), 3, "{calls:#?}");
    for call in &calls {
        let body: Value = serde_json::from_str(call["body"].as_str().unwrap()).unwrap();
        let name = body["params"]["name"].as_str().unwrap();
        let reaches = name == "note";
        assert_eq!(
            body["params"]["arguments"].get("reason").is_some(),
            reaches,
            "{call}"
        );
        assert!(
            !call["headers"].to_string().contains("to test"),
            "a header carried the reason: {call}"
        );
    }
}

#[test]
fn a_2026_request_carries_its_headers_and_none_carries_the_reason() {
    // R9 over Streamable HTTP in the 2026-07-28 era: no initialize, `_meta` on every
    // request, MCP-Protocol-Version, Mcp-Method, Mcp-Name and Mcp-Param-* from the
    // arguments as forwarded.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    let listed: Value = serde_json::from_str(&session.ask(&list(1, true))).unwrap();
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        HTTP_ECHO_TOOLS
    );
    let got = text(&session.ask(&call(
        2,
        "record",
        r#"{"text":"hi","region":"eu-west","reason":"Mcp-Param-Reason: leaked"}"#,
        true,
    )));
    assert_eq!(got, r#"{"text":"hi","region":"eu-west"}"#);
    let unicode = text(&session.ask(&call(
        3,
        "record",
        r#"{"region":"Zürich","reason":"r"}"#,
        true,
    )));
    assert_eq!(unicode, r#"{"region":"Zürich"}"#);
    // R5 in this era too: a tool's own `reason` reaches it.
    let own = text(&session.ask(&call(4, "note", r#"{"reason":"the tool's own"}"#, true)));
    assert_eq!(own, r#"{"reason":"the tool's own"}"#);
    drop(session);

    let calls = calls_received(&log);
    assert_eq!(calls.len(), 3, "{calls:#?}");
    let headers = &calls[0]["headers"];
    assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
    assert_eq!(headers["mcp-method"], "tools/call");
    assert_eq!(headers["mcp-name"], "record");
    assert_eq!(headers["mcp-param-region"], "eu-west");
    assert!(headers.get("mcp-session-id").is_none());
    assert!(!calls[0].to_string().contains("leaked"), "{}", calls[0]);
    // A value outside plain ASCII travels in the specification's base64 sentinel.
    assert_eq!(
        calls[1]["headers"]["mcp-param-region"],
        "=?base64?WsO8cmljaA==?="
    );
}

#[test]
fn a_request_the_server_does_not_answer_gets_an_error_naming_it() {
    // R19 over HTTP: an error status, a stream that ends first, a server that is gone.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(&list(1, true));
    for (id, tool, says) in [
        (2, "fail", "answered HTTP 500"),
        (3, "drop", "event stream ended first"),
    ] {
        let answer: Value =
            serde_json::from_str(&session.ask(&call(id, tool, "{}", true))).unwrap();
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&server.url) && message.contains(says),
            "{answer}"
        );
    }
    // A JSON-RPC error in an error status's body is the answer passed on.
    let unknown: Value = serde_json::from_str(&session.ask(&format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"no/such","params":{{{MODERN}}}}}"#
    )))
    .unwrap();
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
    let url = server.url.clone();
    drop(server);
    let gone: Value = serde_json::from_str(&session.ask(&call(5, "record", "{}", true))).unwrap();
    let message = gone["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("cannot reach the MCP server at") && message.contains(&url),
        "{gone}"
    );
}

#[test]
fn a_call_any_server_takes_carries_its_headers_and_is_answered() {
    // R19, R20 over HTTP: arguments holding a lone surrogate escape and nesting 200 deep
    // are what the proxy relays and a server takes; the request still carries its
    // era's headers, and the server's error status still answers it.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(&list(1, true));
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let arguments = format!(r#"{{"text":"\ud800","deep":{deep}}}"#);
    // serde_json, which `ask` reads the request with, refuses both: the answer is found
    // by hand.
    session.send(&call(2, "fail", &arguments, true));
    let answer: Value = loop {
        let message: Value =
            serde_json::from_str(&session.next_line().expect("an answer")).unwrap();
        if message["id"] == 2 {
            break message;
        }
    };
    assert_eq!(answer["id"], 2, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("answered HTTP 500"), "{answer}");
    let calls = calls_received(&log);
    assert_eq!(calls.len(), 1, "{calls:#?}");
    let headers = &calls[0]["headers"];
    assert_eq!(headers["mcp-method"], "tools/call", "{headers}");
    assert_eq!(headers["mcp-name"], "fail", "{headers}");
    assert_eq!(headers["mcp-protocol-version"], "2026-07-28", "{headers}");
}

#[test]
fn headers_come_from_flags_and_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let command = proxied_url(
        &[
            "--header",
            "X-Team: tools",
            "--header-env",
            "Authorization=REASONS_TEST_TOKEN",
        ],
        &server.url,
    );
    let secret = Path::new("Bearer s3cret");
    let mut session = Session::start_env(
        &command,
        Stdio::inherit(),
        &[("REASONS_TEST_TOKEN", secret)],
    );
    session.ask(&list(1, true));
    drop(session);
    let received = http_received(&log);
    assert_eq!(received.len(), 1, "{received:#?}");
    assert_eq!(received[0]["headers"]["x-team"], "tools");
    assert_eq!(received[0]["headers"]["authorization"], "Bearer s3cret");
}

#[test]
fn a_bad_flag_is_refused_before_anything_starts() {
    for (flags, says) in [
        (vec!["--url", "ftp://example.com/mcp"], "not an http"),
        (
            vec!["--url", "http://127.0.0.1:9/mcp", "--header", "Mcp-Name: x"],
            "set by the transport",
        ),
        (
            vec![
                "--url",
                "http://127.0.0.1:9/mcp",
                "--header-env",
                "A=REASONS_NO_SUCH",
            ],
            "REASONS_NO_SUCH",
        ),
        // A secret for a server reached in clear off this machine (PATH stands in for
        // a token): refused before anything is sent.
        (
            vec![
                "--url",
                "http://mcp.example.com/mcp",
                "--bearer-env",
                "PATH",
            ],
            "--bearer-env PATH would travel in clear",
        ),
        (
            vec!["--url", "http://10.0.0.5/mcp", "--header-env", "X-Key=PATH"],
            "would travel in clear",
        ),
    ] {
        let output = std::process::Command::new(reasons())
            .arg("mcp")
            .args(&flags)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(!output.status.success(), "{flags:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(says), "{flags:?}: {stderr}");
    }
}

#[test]
fn server_everything_over_http_answers_through_the_proxy_as_it_does_directly() {
    // R9 with real peers: server-everything (the TypeScript SDK's server) over Streamable
    // HTTP, reached directly by the TypeScript SDK's HTTP client and through
    // `reasons mcp --url` by the Python SDK's stdio client. The two sessions see the same
    // tools (less the added `reason`) and the same results.
    let server = everything_http();
    let calls = |reason: bool| {
        let mut arguments = serde_json::json!({"message": "over http"});
        if reason {
            arguments["reason"] = "to test".into();
        }
        serde_json::json!([{"name": "echo", "arguments": arguments}])
    };
    let url = vec!["--url".to_string(), server.url.clone()];
    let direct = sdk_client_over("node", calls(false), url);
    let through = sdk_client("python", calls(true), proxied_url(&[], &server.url));
    let tools = |session: &Value| session["tools"].as_array().unwrap().clone();
    let (direct_tools, through_tools) = (tools(&direct), tools(&through));
    assert!(!direct_tools.is_empty());
    assert_eq!(direct_tools.len(), through_tools.len());
    for (direct, mut through) in direct_tools.into_iter().zip(through_tools) {
        let properties = &mut through["inputSchema"]["properties"];
        assert!(properties["reason"].is_object(), "{through}");
        properties.as_object_mut().unwrap().remove("reason");
        assert_eq!(direct["name"], through["name"]);
        assert_eq!(
            direct["inputSchema"]["properties"],
            through["inputSchema"]["properties"]
        );
    }
    assert_eq!(direct["results"].as_array().unwrap().len(), 1);
    assert_eq!(
        direct["results"][0]["content"],
        through["results"][0]["content"]
    );
    assert!(
        direct["results"][0]["content"]
            .to_string()
            .contains("over http"),
        "{direct}"
    );
}

#[test]
fn a_line_break_in_an_answer_never_makes_a_second_message_for_the_client() {
    // R19: an answer whose whitespace hides a second, forged answer behind carriage
    // returns reaches the client as one line: the client gets the real answer and no
    // answer to a request it never made.
    let dir = tempfile::tempdir().unwrap();
    let server = http_echo(&dir.path().join("http.jsonl"));
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(&list(1, true));
    let answer = session.ask(&call(2, "crlf", "{}", true));
    assert!(!answer.contains('\r'), "{answer:?}");
    assert_eq!(text(&answer), "real");
    let ping = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"ping","params":{{{MODERN}}}}}"#);
    session.send(&ping);
    let mut seen = Vec::new();
    while let Some(line) = session.next_line() {
        let message: Value = serde_json::from_str(&line).unwrap();
        seen.push(line);
        if message["id"] == 3 {
            break;
        }
    }
    assert!(!seen.is_empty());
    assert!(seen.iter().all(|line| !line.contains('\r')), "{seen:#?}");
}

#[test]
fn a_batch_the_server_answers_with_reaches_the_client_without_its_forged_answer() {
    // R19: a server answers a call with a batch of its answer and an answer to id 99,
    // which the client never sent: the client gets its answer and nothing for id 99.
    let dir = tempfile::tempdir().unwrap();
    let server = http_echo(&dir.path().join("http.jsonl"));
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(&list(1, true));
    session.send(&call(2, "batch", "{}", true));
    let line = session.next_line().expect("an answer");
    assert!(!line.contains("forged"), "{line}");
    // Relayed as the one message the client's request was, less what no request of the
    // client's is owed.
    let message: Value = serde_json::from_str(&line).unwrap();
    assert!(message.is_object(), "{message}");
    assert_eq!(message["id"], 2);
    assert_eq!(message["result"]["content"][0]["text"], "real");
}

#[test]
fn a_server_that_hangs_up_its_stream_each_time_is_asked_a_bounded_number_of_times() {
    // R20: the GET stream is asked for again when it ends, but a server whose stream
    // ends at once, every time, without an event, does not keep the proxy asking: five
    // fruitless tries (a second apart, as no `retry` is named) and it stops.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo_with(&log, &["--hang-up"]);
    let mut session = Session::start_heard(&proxied_url(&[], &server.url));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    // The proxy says when it stops asking; the server logged each GET before it ended it.
    session.hear("not asked for again this session");
    let listed: Value = serde_json::from_str(&session.ask(&list(2, false))).unwrap();
    assert_eq!(
        listed["result"]["tools"].as_array().unwrap().len(),
        HTTP_ECHO_TOOLS
    );
    drop(session);
    let gets = http_received(&log)
        .into_iter()
        .filter(|request| request["method"] == "GET")
        .count();
    assert_eq!(gets, 5);
}

#[test]
fn a_redirect_is_answered_by_the_proxy_and_never_followed() {
    // R9 R18: an upstream's 307 (`/mcp` to `/mcp/`) is no answer to follow or pass on,
    // over stdio or through the HTTP front: the client is told the status, the target
    // and the flag that fixes it, and nothing reaches `/mcp/`.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo_with(&log, &["--redirect"]);
    let record = call(1, "record", r#"{"text":"x","reason":"secret"}"#, true);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    let front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    let (status, through_front) = post(&front.url, &[], &record);
    assert!(!(300..400).contains(&status), "{status}");
    let answers = [
        serde_json::from_str::<Value>(&session.ask(&record)).unwrap(),
        through_front[0].clone(),
    ];
    assert_eq!(through_front.len(), 1, "{through_front:?}");
    for answer in &answers {
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        for named in ["HTTP 307", r#""/mcp/""#, "set --url", "not sent"] {
            assert!(message.contains(named), "{named}: {answer}");
        }
    }
    let received = http_received(&log);
    assert!(received.len() >= 2, "{received:#?}");
    for request in &received {
        assert_eq!(request["url"], "/mcp", "followed: {request}");
        assert!(!request["body"].as_str().unwrap().contains("tools/call"));
    }
}

#[test]
fn a_server_silent_on_a_request_past_the_read_timeout_has_it_answered() {
    // R19: a call the server never answers, far past a 1 s --read-timeout, is answered
    // with an error that says why; the session goes on.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let mut session = Session::start(&proxied_url(&["--read-timeout", "1"], &server.url));
    session.ask(&list(1, true));
    let answer: Value = serde_json::from_str(&session.ask(&call(2, "hang", "{}", true))).unwrap();
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("sent nothing for 1 s") && message.contains("--read-timeout"),
        "{answer}"
    );
    let after = session.ask(&call(3, "record", r#"{"text":"after"}"#, true));
    assert_eq!(text(&after), r#"{"text":"after"}"#);
}

#[test]
fn a_server_that_never_answers_delete_does_not_hold_the_proxy_s_exit() {
    // Bounded: ending a legacy session DELETEs it; a server that never answers the
    // DELETE does not keep the proxy running, whether the client closed its stdin, the
    // proxy got SIGTERM, or the proxy serves clients at --listen. `wait` fails the test
    // past 30 s; the DELETE may take 3.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo_with(&log, &["--hang-delete"]);
    let deletes = || {
        http_received(&log)
            .iter()
            .filter(|request| request["method"] == "DELETE")
            .count()
    };
    let mut closed = Session::start(&proxied_url(&[], &server.url));
    closed.ask(INITIALIZE);
    assert!(closed.finish().1.success());
    let mut signalled = Session::start(&proxied_url(&[], &server.url));
    signalled.ask(INITIALIZE);
    // SAFETY: signalling a child of this test by its pid.
    unsafe { libc::kill(signalled.pid() as i32, libc::SIGTERM) };
    signalled.wait();
    let mut front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let mut answer = agent
        .post(&front.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .send(INITIALIZE)
        .unwrap();
    assert_eq!(answer.status(), 200);
    // Its stream ends with the server's answer, which gave the session its id.
    let answered = answer.body_mut().read_to_string().unwrap();
    assert!(answered.contains("protocolVersion"), "{answered}");
    // SAFETY: as above.
    unsafe { libc::kill(front.pid() as i32, libc::SIGTERM) };
    front.wait();
    assert_eq!(deletes(), 3, "each session was ended with a DELETE");
}

/// The most memory `pid` has held, in KiB (`VmHWM`).
fn peak_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|kib| kib.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

#[test]
fn what_a_server_does_to_a_call_through_the_front_still_answers_it() {
    // R19 through the front and --url: an error status, and an SSE event whose data never
    // ends (past a 1 MiB --max-message-mib, which bounds what the proxy holds), each
    // answer their POST with an error saying what happened; the proxy's peak memory stays
    // far under what the endless event would grow it to. A batch of the call's answer and
    // a forged one (to id 99) answers the POST with its own answer alone.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let front = Listening::front_to(
        &["--max-message-mib", "1"],
        vec!["--url".into(), server.url.clone()],
    );
    for (id, tool, says) in [
        (2, "fail", "answered HTTP 500"),
        (3, "endless", "1 MiB cap"),
        (4, "batch", "real"),
    ] {
        let (status, answers) = post(&front.url, &[], &call(id, tool, "{}", true));
        assert_eq!(status, 200, "{tool}");
        let text = format!("{answers:?}");
        assert_eq!(answers.len(), 1, "{tool}: {text}");
        assert_eq!(answers[0]["id"], id, "{tool}: {text}");
        let message = answers[0]["error"]["message"]
            .as_str()
            .or(answers[0]["result"]["content"][0]["text"].as_str())
            .unwrap_or_default();
        assert!(message.contains(says), "{tool}: {message}");
    }
    let peak = peak_kib(front.pid());
    assert!(peak < 256 * 1024, "the proxy held {peak} KiB");
}

#[test]
fn a_session_the_server_forgot_goes_on_in_a_new_one_as_the_new_tools_say() {
    // R18, R19: a refused probe's session id is no session: `initialize` carries none.
    // When the server forgets the session (it restarted, here as a new version whose
    // `note` no longer owns a `reason` and whose `record` does), the request it refused
    // with 404 is sent again in a new session, begun with the client's own `initialize`,
    // once the proxy has listed the new server: the model's reason to `note` is stripped
    // (the old listing called it the tool's own), `record`'s goes to it as its own. The
    // client's session goes on, over stdio and through --listen.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let flags = ["--expiring", "--refuse-discover", "--redeploying"];
    let server = http_echo_with(&log, &flags);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    let probe = r#"{"jsonrpc":"2.0","id":"p","method":"server/discover","params":{}}"#;
    let refused: Value = serde_json::from_str(&session.ask(probe)).unwrap();
    assert_eq!(refused["error"]["code"], -32601, "{refused}");
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    assert_eq!(
        text(&session.ask(&call(2, "expire", "{}", false))),
        "expired"
    );
    let note = call(3, "note", r#"{"text":"a","reason":"the model's"}"#, false);
    assert_eq!(text(&session.ask(&note)), r#"{"text":"a"}"#);
    let record = call(4, "record", r#"{"text":"b","reason":"its own"}"#, false);
    assert_eq!(
        text(&session.ask(&record)),
        r#"{"text":"b","reason":"its own"}"#
    );
    let (_, status) = session.finish();
    assert!(status.success());
    let posts: Vec<Value> = http_received(&log)
        .into_iter()
        .filter(|request| request["method"] == "POST")
        .collect();
    let carried = |request: &Value| {
        request["headers"]["mcp-session-id"]
            .as_str()
            .map(str::to_string)
    };
    let method = |request: &Value| {
        let body: Value = serde_json::from_str(request["body"].as_str().unwrap()).unwrap();
        (body["method"].clone(), body["params"]["name"].clone())
    };
    // The probe, initialize, initialized, the proxy's own listing, `expire`, `note`
    // refused; then initialize, initialized, the listing, `note` and `record`.
    assert_eq!(posts.len(), 11, "{posts:#?}");
    let seen: Vec<_> = posts
        .iter()
        .map(|post| (method(post), carried(post)))
        .collect();
    let session = |n: u32| Some(format!("session-{n}"));
    let expected = [
        (("server/discover", Value::Null), None),
        (("initialize", Value::Null), None),
        (("notifications/initialized", Value::Null), session(1)),
        (("tools/list", Value::Null), session(1)),
        (("tools/call", "expire".into()), session(1)),
        (("tools/call", "note".into()), session(1)),
        (("initialize", Value::Null), None),
        (("notifications/initialized", Value::Null), session(2)),
        (("tools/list", Value::Null), session(2)),
        (("tools/call", "note".into()), session(2)),
        (("tools/call", "record".into()), session(2)),
    ];
    let expected: Vec<_> = (expected.into_iter())
        .map(|((method, name), session)| ((Value::from(method), name), session))
        .collect();
    assert_eq!(seen, expected);
    // The new session began with the client's own initialize, under another id.
    let body =
        |at: usize| -> Value { serde_json::from_str(posts[at]["body"].as_str().unwrap()).unwrap() };
    let client: Value = serde_json::from_str(INITIALIZE).unwrap();
    assert_eq!(body(6)["params"], client["params"]);
    assert_ne!(body(6)["id"], client["id"]);

    // Through --listen: the client's session outlives the server's.
    let front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    let first = legacy_session(&front.url);
    let in_session = |body: &str| {
        post(
            &front.url,
            &[
                ("Mcp-Session-Id", first.as_str()),
                ("MCP-Protocol-Version", "2025-06-18"),
            ],
            body,
        )
    };
    let (status, answer) = in_session(&call(2, "expire", "{}", false));
    assert_eq!(status, 200, "{answer:?}");
    let (status, answer) = in_session(&call(3, "record", r#"{"text":"c"}"#, false));
    assert_eq!(status, 200, "{answer:?}");
    let answered = answer.iter().find(|message| message["id"] == 3).unwrap();
    assert_eq!(text(&answered.to_string()), r#"{"text":"c"}"#, "{answer:?}");
}

#[test]
fn a_call_whose_stream_the_server_closes_is_resumed_from_its_last_event() {
    // R19 (2025-11-25's SSE polling): the server ends a call's stream after an event id,
    // for the client to come back for the answer with `Last-Event-ID`; the proxy does,
    // and the call that ran is answered, where it was told "its event stream ended
    // first" and the result lost.
    let server = conformance_server_http();
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(&INITIALIZE.replace("2025-06-18", "2025-11-25"));
    session.send(INITIALIZED);
    let call = call(2, "test_reconnection", r#"{"reason":"why"}"#, false);
    let answer: Value = serde_json::from_str(&session.ask(&call)).unwrap();
    assert_eq!(
        answer["result"]["content"][0]["text"], "Reconnection test completed successfully.",
        "{answer}"
    );
}

#[test]
fn a_server_that_polls_is_asked_again_for_as_long_as_it_answers() {
    // R20 (2025-11-25's SSE polling): a GET stream that gives an event id and ends is a
    // server asking to be asked again, not a stream that brought nothing: the proxy goes
    // on past the five tries it gives a stream that ends with no event, and the note the
    // eighth poll carries reaches the client.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo_with(&log, &["--poll"]);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let note: Value = loop {
        let line = session.next_line().expect("the note, before the end");
        let message: Value = serde_json::from_str(&line).unwrap();
        if message["method"] == "notifications/message" {
            break message;
        }
    };
    assert_eq!(note["params"]["data"], "after seven polls");
    let polls: Vec<Value> = http_received(&log)
        .into_iter()
        .filter(|request| request["method"] == "GET")
        .collect();
    assert!(polls.len() >= 8, "{polls:#?}");
    // Each poll after the first resumes from the id the one before gave.
    assert_eq!(
        polls[7]["headers"]["last-event-id"], "p7",
        "{:#?}",
        polls[7]
    );
}

#[test]
fn a_server_that_asks_for_credentials_is_named_with_the_way_out() {
    // R19: a server that signs its users in answers 401 with a Bearer challenge; every
    // request is answered with an error naming the status, the challenge and what the
    // user can do, where it was "the MCP server exited before answering".
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.jsonl");
    let server = http_echo_with(&log, &["--unauthorized"]);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    for request in [INITIALIZE.to_string(), call(2, "record", "{}", true)] {
        let answer: Value = serde_json::from_str(&session.ask(&request)).unwrap();
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        for named in [
            "answered HTTP 401",
            "asks for credentials",
            "resource_metadata=",
            "--bearer-env",
        ] {
            assert!(message.contains(named), "{named}: {answer}");
        }
    }
}

/// A private CA, and a certificate for `localhost` it signs: the CA's PEM, the
/// certificate's and its key's, written in `dir`.
fn private_ca(
    dir: &std::path::Path,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    use rcgen::{BasicConstraints, CertificateParams, IsCa, Issuer, KeyPair};
    let ca_key = KeyPair::generate().unwrap();
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let ca = ca_params.self_signed(&ca_key).unwrap();
    let issuer = Issuer::from_params(&ca_params, &ca_key);
    let key = KeyPair::generate().unwrap();
    let leaf = CertificateParams::new(vec!["localhost".to_string()])
        .unwrap()
        .signed_by(&key, &issuer)
        .unwrap();
    let write = |name: &str, pem: String| {
        let path = dir.join(name);
        std::fs::write(&path, pem).unwrap();
        path
    };
    (
        write("ca.pem", ca.pem()),
        write("cert.pem", leaf.pem()),
        write("key.pem", key.serialize_pem()),
    )
}

#[test]
fn a_server_a_private_ca_vouches_for_is_trusted_as_the_platform_trusts_it() {
    // The platform's trust, as curl and openssl read it: with SSL_CERT_FILE naming the
    // organisation's CA, a server whose certificate it signed is reached; without, the
    // proxy refuses it, naming the certificate, and sends it nothing.
    let dir = tempfile::tempdir().unwrap();
    let (ca, cert, key) = private_ca(dir.path());
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let port = port_of(&server.url).to_string();
    let front = Listening::start(
        &node(
            "tls-front.mjs",
            &[cert.to_str().unwrap(), key.to_str().unwrap(), &port],
        ),
        "/mcp",
    );
    let url = front.url.replace("http://127.0.0.1", "https://localhost");
    let initialize = |trust: Option<&std::path::Path>| {
        let mut command = std::process::Command::new(reasons());
        command.args(["mcp", "--url", &url]);
        command
            .env_remove("SSL_CERT_FILE")
            .env_remove("SSL_CERT_DIR");
        if let Some(ca) = trust {
            command.env("SSL_CERT_FILE", ca);
        }
        let mut session = Session::start_command(command);
        let answer: Value = serde_json::from_str(&session.ask(INITIALIZE)).unwrap();
        session.finish();
        answer
    };
    let refused = initialize(None);
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(message.to_lowercase().contains("certificate"), "{refused}");
    assert!(!log.exists(), "the server was sent something");
    let trusted = initialize(Some(&ca));
    assert_eq!(
        trusted["result"]["serverInfo"]["name"], "http-echo",
        "{trusted}"
    );
}
