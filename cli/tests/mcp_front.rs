//! `reasons mcp --listen`: the proxy served over Streamable HTTP to clients that take only
//! a URL, with real SDK clients, raw 2026-07-28 requests, and the hostile requests a page
//! in a browser could make. What the server received is read from its own log.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};

/// The text of a `tools/call` result's first content item.
fn text(result: &Value) -> &str {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {result}"))
}

/// Every `tools/call` the server received, as the arguments it got.
fn arguments_received(log: &Path) -> Vec<Value> {
    received(log)
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message["method"] == "tools/call")
        .map(|message| message["params"]["arguments"].clone())
        .collect()
}

#[test]
fn sdk_clients_over_http_are_served_and_no_reason_reaches_the_server() {
    // R9 R5 through the front, with both SDKs' Streamable HTTP clients (each a legacy
    // session of its own) in front of a stdio server of the tests' own.
    let (_dir, log, front) = front_logging();
    let calls = json!([
        {"name": "record", "arguments": {"text": "hi", "reason": "to test"}},
        {"name": "note", "arguments": {"reason": "the tool's own"}}
    ]);
    for client in ["node", "python"] {
        let session = sdk_client_over(
            client,
            calls.clone(),
            vec!["--url".into(), front.url.clone()],
        );
        let tools = session["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 5, "{client}: {session}");
        let record = tools.iter().find(|tool| tool["name"] == "record").unwrap();
        assert!(
            record["inputSchema"]["properties"]["reason"].is_object(),
            "{client}"
        );
        let results = session["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{client}: {session}");
        assert_eq!(text(&results[0]), r#"{"text":"hi"}"#, "{client}");
        assert_eq!(
            text(&results[1]),
            r#"{"reason":"the tool's own"}"#,
            "{client}"
        );
    }
    let got = arguments_received(&log);
    assert_eq!(
        got,
        [
            json!({"text": "hi"}),
            json!({"reason": "the tool's own"}),
            json!({"text": "hi"}),
            json!({"reason": "the tool's own"})
        ]
    );
}

/// A front in front of the tests' own stdio server, whose input is logged; the log's
/// folder lives as long as the first of the three.
fn front_logging() -> (tempfile::TempDir, std::path::PathBuf, Listening) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(&[], teed(&log, own_server()));
    (dir, log, front)
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn stateless_2026_requests_keep_their_own_ids_and_lose_the_reason() {
    // R9 R19 for 2026-07-28 clients: no session; two clients that both use id 1 each get
    // their own answer under their own id.
    let (_dir, log, front) = front_logging();
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    let (status, listed) = post(&front.url, &[], &list);
    assert_eq!(status, 200);
    assert_eq!(listed.len(), 1, "{listed:?}");
    assert_eq!(listed[0]["id"], 1);
    assert_eq!(listed[0]["result"]["tools"].as_array().unwrap().len(), 5);
    for (id, text_sent) in [("1", "first"), ("\"one\"", "second")] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"record","arguments":{{"text":"{text_sent}","reason":"to test"}},{META}}}}}"#
        );
        let (status, answered) = post(&front.url, &[], &call);
        assert_eq!(status, 200);
        let answer = answered.last().unwrap();
        assert_eq!(
            answer["id"],
            serde_json::from_str::<Value>(id).unwrap(),
            "{answer}"
        );
        assert_eq!(
            text(&answer["result"]),
            format!(r#"{{"text":"{text_sent}"}}"#)
        );
    }
    assert_eq!(
        arguments_received(&log),
        [json!({"text": "first"}), json!({"text": "second"})]
    );
}

#[test]
fn a_2026_answer_goes_under_the_status_its_error_is_given() {
    // R19 for 2026-07-28 clients: a method the server does not have is answered 404 (the
    // status a server over HTTP gives it, which one on stdio cannot), with the server's
    // own error as the body; an error a handler gives is an answer, under 200.
    let (_dir, _log, front) = front_logging();
    let unknown = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"no/such","params":{{{META}}}}}"#);
    let (status, answered) = post(&front.url, &[], &unknown);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(
        (status, &answered[0]["error"]["code"]),
        (404, &json!(-32601))
    );
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"no-such-tool","arguments":{{}},{META}}}}}"#
    );
    let (status, answered) = post(&front.url, &[], &call);
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert_eq!(
        (status, &answered[0]["id"]),
        (200, &json!(4)),
        "{answered:?}"
    );
}

#[test]
fn what_a_hostile_page_or_a_broken_client_sends_is_refused() {
    // DNS rebinding: a page whose name now resolves to 127.0.0.1 sends its own Host and
    // Origin; both are refused before anything reaches a session.
    let (_dir, log, front) = front_logging();
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"x"}},{META}}}}}"#
    );
    let port = port_of(&front.url);
    let evil_host = format!("evil.example:{port}");
    let refused = [
        (vec![("Host", "evil.example")], 403),
        (vec![("Host", evil_host.as_str())], 403),
        (vec![("Origin", "http://evil.example")], 403),
        (vec![("Origin", "null")], 403),
        (vec![("Mcp-Session-Id", "no-such-session")], 404),
    ];
    for (headers, expected) in &refused {
        let (status, answer) = post(&front.url, headers, &call);
        assert_eq!(status, *expected, "{headers:?}: {answer:?}");
        assert!(
            answer[0]["error"]["message"].is_string() || status == 404,
            "{answer:?}"
        );
    }
    for (body, expected) in [
        (
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"",
            400,
        ),
        (r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#, 400),
        // Neither `initialize` nor a 2026-07-28 request: no session to put it in.
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#, 400),
    ] {
        let (status, answer) = post(&front.url, &[], body);
        assert_eq!(status, expected, "{body}: {answer:?}");
        assert!(
            answer[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("reasons mcp")
        );
    }
    // A page of another loopback port is no more this listener than evil.example is.
    let (status, _) = post(&front.url, &[("Origin", "http://localhost:3000")], &call);
    assert_eq!(status, 403);
    // The listener's own origin is served.
    let own = format!("http://127.0.0.1:{port}");
    let (status, _) = post(&front.url, &[("Origin", own.as_str())], &call);
    assert_eq!(status, 200);
    assert_eq!(arguments_received(&log), [json!({"text": "x"})]);
}

/// Sends `method` to the front at `url` with exactly `headers` (and `Host`,
/// `Content-Length`), as a browser writes a request; the status and the answer's headers
/// and body.
fn raw(url: &str, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut request = format!("{method} /mcp HTTP/1.1\r\n");
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    // A 2026-07-28 page's request carries the headers its body asks for, as a client's.
    for (name, value) in mirrored(body, headers) {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    raw_with(url, &request, body)
}

/// [`exchange`] with `body`'s `Content-Length` added to `head`.
fn raw_with(url: &str, head: &str, body: &str) -> (u16, String) {
    exchange(
        url,
        &format!("{head}Content-Length: {}\r\n", body.len()),
        body,
    )
}

/// Sends the request `head` (its first line and headers, without `Host`) and `body` to
/// the front at `url` over a connection of its own, and reads until the front closes it
/// (at most 20 s: a stream left open is read until then); the status and the answer.
fn exchange(url: &str, head: &str, body: &str) -> (u16, String) {
    use std::io::Read;
    let mut stream = sent(url, &format!("{head}Connection: close\r\n"), body);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    let answer = String::from_utf8_lossy(&answer).into_owned();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or(0);
    (status, answer)
}

/// A page's request refused: 403, and no origin named back for its script to read it.
fn assert_refused_with_no_cors(status: u16, answer: &str) {
    assert_eq!(status, 403, "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(!lower.contains("access-control-allow-origin"), "{answer}");
}

#[test]
fn a_page_of_another_origin_runs_no_tool_as_a_browser_sends_it() {
    // Only what a client means to send runs: a no-cors fetch and an HTML form (no CORS
    // preflight for either) from another port of this machine, sent with a browser's
    // exact headers, reach no session; nor does a request that is not JSON or does not
    // accept a client's answers. The oracle is the server's own log.
    let (_dir, log, front) = front_logging();
    let call = |text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"{text}"}},{META}}}}}"#
        )
    };
    let page = "http://localhost:5173";
    let fetch = [
        ("Accept", "*/*"),
        ("Accept-Language", "en-US,en;q=0.9"),
        ("Content-Type", "text/plain;charset=UTF-8"),
        ("Origin", page),
        ("Referer", "http://localhost:5173/"),
        ("Sec-Fetch-Dest", "empty"),
        ("Sec-Fetch-Mode", "no-cors"),
        ("Sec-Fetch-Site", "same-site"),
        (
            "User-Agent",
            "Mozilla/5.0 (X11; Linux x86_64) Chrome/156.0.0.0 Safari/537.36",
        ),
    ];
    let form = [
        (
            "Accept",
            "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
        ),
        ("Cache-Control", "max-age=0"),
        ("Content-Type", "text/plain"),
        ("Origin", page),
        ("Sec-Fetch-Dest", "document"),
        ("Sec-Fetch-Mode", "navigate"),
        ("Sec-Fetch-Site", "same-site"),
        ("Sec-Fetch-User", "?1"),
        ("Upgrade-Insecure-Requests", "1"),
    ];
    let urlencoded = [
        ("Content-Type", "application/x-www-form-urlencoded"),
        ("Origin", "http://127.0.0.1:8080"),
    ];
    for (headers, text, status) in [
        (&fetch[..], "no-cors fetch", 403),
        (&form[..], "form post", 403),
        (&urlencoded[..], "urlencoded form", 403),
        (
            &[
                ("Content-Type", "text/plain"),
                ("Accept", "application/json, text/event-stream"),
            ][..],
            "not JSON",
            415,
        ),
        (
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json"),
            ][..],
            "no event stream",
            406,
        ),
        (
            &[("Content-Type", "application/json")][..],
            "no accept",
            406,
        ),
    ] {
        let (got, answer) = raw(&front.url, "POST", headers, &call(text));
        assert_eq!(got, status, "{text}: {answer}");
        assert!(answer.contains("reasons mcp: "), "{text}: {answer}");
    }
    // A preflight from a page that may not call is refused, and names no origin back.
    let (status, answer) = raw(
        &front.url,
        "OPTIONS",
        &[("Origin", page), ("Access-Control-Request-Method", "POST")],
        "",
    );
    assert_refused_with_no_cors(status, &answer);
    // No session started its server, or none ran a tool.
    assert!(
        !log.exists() || arguments_received(&log).is_empty(),
        "a tool ran"
    );
    // What a native client sends is served.
    let native = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, answer) = raw(&front.url, "POST", &native, &call("native"));
    assert_eq!(status, 200, "{answer}");
    assert_eq!(arguments_received(&log), [json!({"text": "native"})]);
}

#[test]
fn a_page_named_with_allow_origin_is_served_and_only_it_is_answered_cors() {
    // --allow-origin: that page's preflight is answered for it alone, and its requests
    // run; another page's are refused as before.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(
        &["--allow-origin", "http://localhost:5173"],
        teed(&log, own_server()),
    );
    let preflight = |origin: &str| {
        raw(
            &front.url,
            "OPTIONS",
            &[
                ("Origin", origin),
                ("Access-Control-Request-Method", "POST"),
                (
                    "Access-Control-Request-Headers",
                    "content-type,mcp-protocol-version,mcp-method,mcp-name,mcp-param-region",
                ),
            ],
            "",
        )
    };
    let (status, answer) = preflight("http://localhost:5173");
    assert_eq!(status, 204, "{answer}");
    let lower = answer.to_ascii_lowercase();
    assert!(
        lower.contains("access-control-allow-origin: http://localhost:5173\r\n"),
        "{answer}"
    );
    // What a 2026-07-28 request carries beside its body, a tool's own param header
    // among it, is allowed (a preflight that left one out would stop the request).
    let allowed = lower
        .lines()
        .find_map(|line| line.strip_prefix("access-control-allow-headers: "))
        .unwrap_or_else(|| panic!("{answer}"));
    let allowed: Vec<&str> = allowed.trim().split(", ").collect();
    for header in [
        "content-type",
        "mcp-protocol-version",
        "mcp-method",
        "mcp-name",
        "mcp-param-region",
    ] {
        assert!(allowed.contains(&header), "{header}: {answer}");
    }
    let (status, answer) = preflight("http://localhost:5174");
    assert_refused_with_no_cors(status, &answer);

    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"page","reason":"why"}},{META}}}}}"#
    );
    let sent = [
        ("Origin", "http://localhost:5173"),
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let (status, answer) = raw(&front.url, "POST", &sent, &call);
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer
            .to_ascii_lowercase()
            .contains("access-control-allow-origin: http://localhost:5173"),
        "{answer}"
    );
    assert_eq!(arguments_received(&log), [json!({"text": "page"})]);
}

#[test]
fn only_loopback_is_served() {
    let output = std::process::Command::new(reasons())
        .args(["mcp", "--listen", "0.0.0.0:0", "--", "true"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("only a loopback address"), "{stderr}");
}

#[test]
fn a_signal_ends_every_session_s_server() {
    // R20 through the front: SIGTERM ends the proxy with 143 and each session's server.
    let dir = tempfile::tempdir().unwrap();
    let life = dir.path().join("life");
    let mut server = own_server();
    server.insert(0, format!("REASONS_TEST_LIFE={}", life.display()));
    server.insert(0, "env".into());
    let mut front = Listening::front(&[], server);
    let initialize = INITIALIZE.to_string();
    let (status, _) = post(&front.url, &[], &initialize);
    assert_eq!(status, 200);
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(front.pid() as libc::pid_t, libc::SIGTERM);
    }
    let status = front.wait();
    assert_eq!(status.code(), Some(143));
    let pid: i32 = std::fs::read_to_string(&life)
        .unwrap()
        .lines()
        .next()
        .unwrap()
        .parse()
        .unwrap();
    // SAFETY: signal 0 only asks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "the server {pid} outlived the proxy");
}

#[test]
fn clients_of_the_shared_session_see_only_their_own_messages() {
    // R19 across clients: two 2026-07-28 clients share the front's stateless session and
    // both use id 1; each gets its own progress notes (by their tokens) and its own
    // answer, never the other's.
    let front = Listening::front(&[], everything());
    let call = |token: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"trigger-long-running-operation","arguments":{{"duration":1,"steps":4}},"_meta":{{"progressToken":"{token}","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    assert_eq!(post(&front.url, &[], &list).0, 200);
    let clients: Vec<_> = ["a", "b"]
        .map(|token| {
            let (url, body) = (front.url.clone(), call(token));
            std::thread::spawn(move || post(&url, &[], &body))
        })
        .into_iter()
        .collect();
    for (client, token) in clients.into_iter().zip(["a", "b"]) {
        let (status, messages) = client.join().unwrap();
        assert_eq!(status, 200);
        assert!(messages.len() >= 2, "{token}: {messages:#?}");
        let (answer, notes) = messages.split_last().unwrap();
        assert_eq!(answer["id"], 1, "{token}: {answer}");
        assert!(answer["result"]["content"].is_array(), "{token}: {answer}");
        for note in notes {
            assert_eq!(note["method"], "notifications/progress", "{token}: {note}");
            assert_eq!(note["params"]["progressToken"], token, "{token}: {note}");
        }
    }
}

#[test]
fn what_the_strict_reading_refuses_is_answered_and_reaches_no_session() {
    // R18 through the front: a repeated key (parsers disagree on which counts) is refused
    // before any session sees it.
    let (_dir, log, front) = front_logging();
    // At the envelope, the front refuses it itself; in a call's params, the proxy does.
    let in_envelope = format!(
        r#"{{"jsonrpc":"2.0","id":7,"id":8,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"x"}},{META}}}}}"#
    );
    let says_repeats = |answer: &[Value]| {
        assert_eq!(answer.len(), 1, "{answer:?}");
        let message = answer[0]["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("repeats"), "{answer:?}");
    };
    let (status, answer) = post(&front.url, &[], &in_envelope);
    assert_eq!(status, 400, "{answer:?}");
    says_repeats(&answer);
    let in_params = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"record","name":"note","arguments":{{"text":"x"}},{META}}}}}"#
    );
    let (_, answer) = post(&front.url, &[], &in_params);
    says_repeats(&answer);
    assert_eq!(answer[0]["id"], 7, "{answer:?}");
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    assert_eq!(post(&front.url, &[], &list).0, 200);
    assert_eq!(arguments_received(&log), Vec::<Value>::new());
}

#[test]
fn sdk_clients_over_http_send_the_server_what_they_send_it_directly() {
    // The transparency test through the front, for both SDKs' clients: the server's
    // transcript of a session over HTTP through `--listen` is the one the same client
    // makes directly over stdio, message by message, less the model's reason.
    let calls = json!([
        {"name": "record", "arguments": {"text": "hi", "reason": "to test"}},
        {"name": "note", "arguments": {"reason": "the tool's own"}}
    ]);
    for client in ["node", "python"] {
        let dir = tempfile::tempdir().unwrap();
        let direct_log = dir.path().join("direct");
        sdk_client(client, calls.clone(), teed(&direct_log, own_server()));
        let (_dir, proxied_log, front) = front_logging();
        sdk_client_over(
            client,
            calls.clone(),
            vec!["--url".into(), front.url.clone()],
        );
        let (direct, proxied) = (received(&direct_log), received(&proxied_log));
        assert_transcript_less_the_reason(client, &direct, &proxied);
    }
}

#[test]
fn clients_of_the_shared_session_that_pick_the_same_progress_token_keep_their_notes() {
    // R19 across clients, when they choose the same progress token as well as the same
    // id: each gets only the notes of its own operation (told apart by their totals),
    // under the token it chose, and its own answer.
    let front = Listening::front(&[], everything());
    let call = |steps: u32| {
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"trigger-long-running-operation","arguments":{{"duration":1,"steps":{steps}}},"_meta":{{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
        )
    };
    let list = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}"#);
    assert_eq!(post(&front.url, &[], &list).0, 200);
    let clients: Vec<_> = [3, 5]
        .map(|steps| {
            let (url, body) = (front.url.clone(), call(steps));
            std::thread::spawn(move || (steps, post(&url, &[], &body)))
        })
        .into_iter()
        .collect();
    for client in clients {
        let (steps, (status, messages)) = client.join().unwrap();
        assert_eq!(status, 200);
        let (answer, notes) = messages.split_last().unwrap();
        assert_eq!(answer["id"], 1, "{steps}: {answer}");
        let text = answer["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert!(
            text.contains(&format!("Steps: {steps}")),
            "{steps}: {answer}"
        );
        assert_eq!(notes.len(), steps as usize, "{steps}: {notes:#?}");
        for note in notes {
            assert_eq!(note["params"]["progressToken"], "p", "{steps}: {note}");
            assert_eq!(note["params"]["total"], steps, "{steps}: {note}");
        }
    }
}

/// DELETEs the session `session` at `url`; the status.
fn delete(url: &str, session: &str) -> u16 {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let answer = agent.delete(url).header("Mcp-Session-Id", session).call();
    answer.unwrap().status().as_u16()
}

#[test]
fn sessions_are_bounded_by_ending_the_one_used_least_recently() {
    // R20 through the front: each legacy session starts a server of its own, so clients
    // that initialize without end (and without DELETE, as the conformance suite does)
    // would start servers without end. Past the limit a new session ends the one used
    // least recently, after any whose server has exited; none is refused.
    let front = Listening::front(&["--max-sessions", "2"], own_server());
    let open = || {
        let (status, session, answer) = initialize(&front.url);
        assert_eq!(status, 200, "{answer:?}");
        assert!(!session.is_empty());
        session
    };
    let list = |session: &str| {
        let (status, answer) = post(
            &front.url,
            &[("Mcp-Session-Id", session)],
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        );
        if status == 200 {
            assert_eq!(answer.len(), 1, "{answer:?}");
            assert!(answer[0]["result"]["tools"].is_array(), "{answer:?}");
        }
        status
    };
    let first = open();
    let second = open();
    assert_eq!(list(&first), 200);
    // `second` is now the least recently used: a third session ends it.
    let third = open();
    assert_eq!(list(&second), 404);
    assert_eq!(list(&first), 200);
    assert_eq!(list(&third), 200);
    // A session whose server exits gives its place back first: `first`, used before
    // `third`, survives a fourth session once `third`'s server is gone.
    let (status, _) = post(
        &front.url,
        &[("Mcp-Session-Id", &third)],
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"die","arguments":{}}}"#,
    );
    assert_eq!(status, 200);
    let until = std::time::Instant::now() + std::time::Duration::from_secs(30);
    // While it ends, a request it took is answered with an error saying so.
    let ending = |session: &str| {
        let listing = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        post(&front.url, &[("Mcp-Session-Id", session)], listing).0
    };
    while ending(&third) != 404 {
        assert!(std::time::Instant::now() < until, "the session never ended");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let fourth = open();
    assert_eq!(list(&first), 200);
    assert_eq!(list(&fourth), 200);
    // DELETE gives a place back too. A session the front no longer has is 404 to every
    // method, its GET stream's too, as the spec says, so that the client starts another.
    assert_eq!(delete(&front.url, &fourth), 200);
    let stream = [
        ("Mcp-Session-Id", fourth.as_str()),
        ("Accept", "text/event-stream"),
    ];
    let (status, head) = raw(&front.url, "GET", &stream, "");
    assert_eq!(status, 404, "{head}");
    let fifth = open();
    assert_eq!(list(&first), 200);
    assert_eq!(list(&fifth), 200);
}

#[test]
fn the_front_refuses_nothing_stdio_relays() {
    // R20: a body over axum's default 2 MiB, a lone surrogate escape and nesting 200
    // deep are read as a server reads them (the proxy's strict reader, not a value type)
    // and reach the server; past the one cap (--max-message-mib) a body is refused with
    // a JSON-RPC error that names it.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(&["--max-message-mib", "8"], teed(&log, own_server()));
    let call = |id: u32, text: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"record","arguments":{{"text":"{text}","reason":"why"}},{META}}}}}"#
        )
    };
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let nested = call(2, "nested").replace(
        r#""reason":"why""#,
        &format!(r#""deep":{deep},"reason":"why""#),
    );
    // Given, as serde_json (which mirrored() reads bodies with) refuses a lone surrogate.
    let headers = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "record"),
    ];
    for (body, mark) in [
        (call(1, &format!("big{}", "a".repeat(3 << 20))), "big"),
        (call(3, r"cut \ud83d"), r"cut \ud83d"),
        (nested, "nested"),
    ] {
        let (status, answer) = post(&front.url, &headers, &body);
        assert_eq!(status, 200, "{mark}: {answer:?}");
        assert!(answer[0]["result"].is_object(), "{mark}: {answer:?}");
    }
    let received = received(&log);
    for mark in ["\"big", r"cut \ud83d", "\"nested"] {
        let calls: Vec<&String> = received.iter().filter(|line| line.contains(mark)).collect();
        assert_eq!(calls.len(), 1, "{mark} reached the server once");
        assert!(
            !calls[0].contains("\"reason\""),
            "{mark}: no reason reached the server"
        );
    }
    let (status, answer) = over_cap_post(&front.url, (8 << 20) + 1);
    assert_eq!(status, 413, "{answer}");
    assert!(answer.contains("over the 8 MiB cap"), "{answer}");
}

/// A POST of a body of `length` bytes; the status and answer. Past the cap by one byte, it
/// is read whole before it is refused, so no unread byte can reset the connection before
/// the answer is read.
fn over_cap_post(url: &str, length: usize) -> (u16, String) {
    let head = "POST /mcp HTTP/1.1\r\nContent-Type: application/json\r\n\
                Accept: application/json, text/event-stream\r\n";
    raw_with(url, head, &"a".repeat(length))
}

#[test]
fn a_reused_pending_id_is_refused_under_that_id_and_never_replaces_the_first() {
    // R19: a legacy client sends id 5 while its first id 5 still waits (a tool that
    // never answers); the second is answered with an error under 5 and never sent on,
    // so the first keeps its place for its answer.
    let (_dir, log, front) = front_logging();
    let session = legacy_session(&front.url);
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let hang =
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"hang","arguments":{}}}"#;
    let (url, first_session) = (front.url.clone(), session.clone());
    // Its POST waits for ever; the thread ends when the front does.
    std::thread::spawn(move || post(&url, &[("Mcp-Session-Id", first_session.as_str())], hang));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !received(&log).iter().any(|line| line.contains("\"hang\"")) {
        assert!(
            std::time::Instant::now() < until,
            "the server never got the first call"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let again = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"record","arguments":{"text":"second"}}}"#;
    let (status, answer) = post(&front.url, &with_session, again);
    assert_eq!(status, 400, "{answer:?}");
    assert_eq!(answer.len(), 1, "{answer:?}");
    assert_eq!(answer[0]["id"], 5);
    let message = answer[0]["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("still waiting for its answer"),
        "{message}"
    );
    assert!(
        received(&log).iter().all(|line| !line.contains("second")),
        "the second was sent on"
    );
}

#[test]
fn a_session_whose_server_is_gone_takes_no_request_and_opens_no_stream() {
    // R19: the server exits (a tool that exits); the request it owed is answered, and
    // after that a GET or a POST to the session is refused with 404 (initialize again),
    // never a stream that cannot end.
    let (_dir, _log, front) = front_logging();
    let session = legacy_session(&front.url);
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let die =
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"die","arguments":{}}}"#;
    let (_, answer) = post(&front.url, &with_session, die);
    assert_eq!(answer.len(), 1, "{answer:?}");
    assert!(
        answer[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exited"),
        "{answer:?}"
    );
    let get = |session: &str| {
        let head = format!(
            "GET /mcp HTTP/1.1\r\nAccept: text/event-stream\r\nMcp-Session-Id: {session}\r\n"
        );
        exchange(&front.url, &head, "").0
    };
    // The session's loop ends once its server has: until then a GET may still open.
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let mut status = get(&session);
    while status != 404 && std::time::Instant::now() < until {
        std::thread::sleep(std::time::Duration::from_millis(50));
        status = get(&session);
    }
    assert_eq!(status, 404, "a GET to the gone session");
    let list = r#"{"jsonrpc":"2.0","id":4,"method":"tools/list"}"#;
    assert_eq!(post(&front.url, &with_session, list).0, 404);
}

#[test]
fn a_server_s_batched_answers_reach_each_request_s_own_post() {
    // R19: the server answers two calls in one batch; each POST gets its own answer and
    // ends, in a legacy session and in the shared one (where both clients use id 1).
    let front = Listening::front(&[], batching_server());
    let call = |id: u8, text: &str, extra: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{text}","reason":"SECRET"}}{extra}}}}}"#
        )
    };
    let session = legacy_session(&front.url);
    let shared_meta = format!(",{META}");
    let pairs = [
        (vec![("Mcp-Session-Id".to_string(), session)], [1, 2], ""),
        (Vec::new(), [1, 1], shared_meta.as_str()),
    ];
    for (headers, ids, extra) in pairs {
        // The shared session lists first, with the first call's _meta.
        let clients: Vec<_> = ids
            .iter()
            .zip(["first", "second"])
            .map(|(id, text)| {
                let (url, body, headers) =
                    (front.url.clone(), call(*id, text, extra), headers.clone());
                let thread = std::thread::spawn(move || {
                    let headers: Vec<(&str, &str)> = headers
                        .iter()
                        .map(|(n, v)| (n.as_str(), v.as_str()))
                        .collect();
                    post(&url, &headers, &body)
                });
                (*id, text, thread)
            })
            .collect();
        for (id, text, client) in clients {
            let (status, messages) = client.join().unwrap();
            assert_eq!(status, 200, "{text}");
            assert_eq!(messages.len(), 1, "{text}: {messages:#?}");
            assert_eq!(messages[0]["id"], id, "{text}: {messages:#?}");
            let got = messages[0]["result"]["content"][0]["text"]
                .as_str()
                .unwrap();
            assert_eq!(
                serde_json::from_str::<Value>(got).unwrap(),
                json!({"text": text})
            );
        }
    }
}

/// Sends a POST of `body` to `url` and returns its connection, for the test to hold open
/// or close. (A 2026-07-28 answer's head waits for its first message, which says
/// whether it is one JSON body or a stream.)
fn open_post(url: &str, body: &str) -> std::net::TcpStream {
    use std::io::Write;
    let port = port_of(url);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    let mirrored: String = mirrored(body, &[])
        .into_iter()
        .map(|(name, value)| format!("{name}: {value}\r\n"))
        .collect();
    let request = format!(
        "POST {} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\n{mirrored}Content-Length: {}\r\n\r\n{body}",
        target_of(url),
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    stream
}

/// Waits, at most 10 s, for a line the server received that holds `text`; that line.
fn awaited(log: &Path, text: &str) -> String {
    let until = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        // The server writes its log once it has started.
        let lines = std::fs::read_to_string(log).unwrap_or_default();
        if let Some(line) = lines.lines().find(|line| line.contains(text)) {
            return line.to_string();
        }
        assert!(
            std::time::Instant::now() < until,
            "the server never got {text}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_shared_session_s_client_cancels_only_its_own_request_by_closing_its_stream() {
    // Clients of the shared session are strangers: a notifications/cancelled names an id
    // the server never saw (the front gave the request its own), and could name another
    // client's, so it is refused and never sent. Closing a request's stream cancels it,
    // as 2026-07-28 says: the server is told under the front's id.
    let (_dir, log, front) = front_logging();
    let hang = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"hang","arguments":{{}},{META}}}}}"#
    );
    let stream = open_post(&front.url, &hang);
    let sent: Value = serde_json::from_str(&awaited(&log, "\"hang\"")).unwrap();
    let front_id = sent["id"].clone();
    assert!(
        front_id.as_str().unwrap().starts_with("reasons-front/"),
        "{sent}"
    );
    for named in [json!(1), front_id.clone()] {
        let cancel = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{named},{META}}}}}"#
        );
        let (status, answer) = post(&front.url, &[], &cancel);
        assert_eq!(status, 400, "{answer:?}");
        let message = answer[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("closing its stream"), "{message}");
    }
    assert!(
        received(&log)
            .iter()
            .all(|line| !line.contains("notifications/cancelled")),
        "a client's cancellation was sent on"
    );
    drop(stream);
    let cancelled: Value = serde_json::from_str(&awaited(&log, "notifications/cancelled")).unwrap();
    assert_eq!(cancelled["params"]["requestId"], front_id, "{cancelled}");
}

/// Servers (alive now, most alive at once, started).
type Counts = (usize, usize, usize);

/// The most servers alive at once, and how many started: each server connects to the
/// socket `REASONS_TEST_ALIVE` names when it starts (`tests/mcp/own-server.mjs`), and
/// the kernel ends the connection when it ends, so each change is an event, not a
/// sample.
struct Census {
    /// (alive now, most alive at once, started), and word of each change.
    counts: Arc<(Mutex<Counts>, Condvar)>,
    path: std::path::PathBuf,
}

impl Census {
    fn open(dir: &Path) -> Census {
        use std::io::Read;
        let path = dir.join("alive.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let counts = Arc::new((Mutex::new((0, 0, 0)), Condvar::new()));
        let shared = counts.clone();
        std::thread::spawn(move || {
            for mut server in listener.incoming().map_while(Result::ok) {
                {
                    let mut counts = shared.0.lock().unwrap();
                    counts.0 += 1;
                    counts.1 = counts.1.max(counts.0);
                    counts.2 += 1;
                    shared.1.notify_all();
                }
                let shared = shared.clone();
                std::thread::spawn(move || {
                    // Nothing is written: the read ends when the server does.
                    let _ = server.read(&mut [0; 1]);
                    shared.0.lock().unwrap().0 -= 1;
                });
            }
        });
        Census { counts, path }
    }

    /// The tests' own server, counted.
    fn server(&self) -> Vec<String> {
        let mut line = vec![
            "env".to_string(),
            format!("REASONS_TEST_ALIVE={}", self.path.display()),
        ];
        line.extend(own_server());
        line
    }

    /// The most alive at once, once at least `started` have started. A server connects
    /// before it answers anything, so one that answered is in the listener's backlog
    /// at worst: this waits for the accept, not for time to pass.
    fn most_once(&self, started: usize) -> usize {
        let (counts, changed) = &*self.counts;
        let patience = std::time::Duration::from_secs(30);
        let (counts, waited) = changed
            .wait_timeout_while(counts.lock().unwrap(), patience, |counts| {
                counts.2 < started
            })
            .unwrap();
        assert!(
            !waited.timed_out(),
            "{} servers started, not {started}",
            counts.2
        );
        counts.1
    }
}

#[test]
fn a_burst_of_sessions_never_runs_more_servers_than_the_limit_and_one() {
    // Bounded: sixteen initializes at once with --max-sessions 2. Each new session past
    // the limit ends the one used least recently, and its server starts only once the
    // ended ones' are gone: the servers alive at once, counted as each starts and ends,
    // never number more than 3, though each one asked to end lives on for the grace
    // period. Every initialize is answered: 200, or 503 when no place came in time.
    let dir = tempfile::tempdir().unwrap();
    let census = Census::open(dir.path());
    let front = Listening::front(&["--max-sessions", "2"], census.server());
    let clients: Vec<_> = (0..16)
        .map(|_| {
            let url = front.url.clone();
            std::thread::spawn(move || initialize(&url).0)
        })
        .collect();
    let statuses: Vec<u16> = clients.into_iter().map(|c| c.join().unwrap()).collect();

    assert_eq!(statuses.len(), 16);
    assert!(
        statuses.iter().all(|status| [200, 503].contains(status)),
        "{statuses:?}"
    );
    assert!(
        statuses.iter().filter(|status| **status == 200).count() >= 2,
        "{statuses:?}"
    );
    let most = census.most_once(statuses.iter().filter(|status| **status == 200).count());
    assert!(most <= 3, "{most} servers ran at once");
}

#[test]
fn a_client_that_sends_half_a_request_is_not_held_open() {
    // Bounded: half the headers, or the headers and half the body, then nothing. The
    // front ends each connection itself (10 s for headers, 10 s between a body's bytes);
    // the test waits 120 s, far over, before it would call the connection held.
    use std::io::{Read, Write};
    let (_dir, log, front) = front_logging();
    let port = port_of(&front.url);
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"x"}},{META}}}}}"#
    );
    let target = target_of(&front.url);
    let half_headers = format!("POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Ty");
    let half_body = format!(
        "POST {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{}",
        body.len(),
        &body[..body.len() / 2]
    );
    let connections: Vec<_> = [half_headers, half_body]
        .into_iter()
        .map(|request| {
            std::thread::spawn(move || {
                let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
                stream
                    .set_read_timeout(Some(std::time::Duration::from_secs(120)))
                    .unwrap();
                stream.write_all(request.as_bytes()).unwrap();
                let mut answer = Vec::new();
                // Ends when the front closes the connection; an error when it never does.
                let ended = stream.read_to_end(&mut answer);
                (ended.is_ok(), String::from_utf8_lossy(&answer).into_owned())
            })
        })
        .collect();
    for connection in connections {
        let (ended, answer) = connection.join().unwrap();
        assert!(ended, "the connection was held open: {answer}");
        assert!(!answer.contains(" 200 "), "{answer}");
    }
    assert!(
        !log.exists() || arguments_received(&log).is_empty(),
        "half a call ran"
    );
}

#[test]
fn a_legacy_event_stream_ends_with_the_session_that_opened_it() {
    // On the legacy HTTP+SSE transport the event stream is the session, and the server
    // keeps it open until the client closes it. A front session over it that is DELETEd
    // or evicted closes its stream at once; left open, every session a client opened and
    // left would hold a connection of the proxy and a stream of the server for ever.
    let dir = tempfile::tempdir().unwrap();
    let server = sse_server(&dir.path().join("server.log"));
    let front = Listening::front_to(
        &["--max-sessions", "1"],
        vec!["--url".into(), server.url.clone()],
    );
    let streams_at = server.url.replace("/sse", "/streams");
    let streams = || -> u32 {
        let mut answer = ureq::get(&streams_at).call().unwrap();
        answer.body_mut().read_to_string().unwrap().parse().unwrap()
    };
    // Far more time than closing a socket takes; a stream left open stays open.
    let until_streams = |count: u32| {
        let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while streams() != count {
            assert!(
                std::time::Instant::now() < until,
                "a stream outlived its session"
            );
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    };
    let first = legacy_session(&front.url);
    until_streams(1);
    assert_eq!(delete(&front.url, &first), 200);
    until_streams(0);
    // A second session past --max-sessions 1 ends the first, and the first's stream.
    legacy_session(&front.url);
    legacy_session(&front.url);
    until_streams(1);
}

#[test]
fn only_a_client_with_the_proxy_s_token_is_served_and_no_other_starts_a_server() {
    // Loopback is every local user's: a request without the token the proxy drew at
    // start (in the URL it printed, or as a bearer token) is answered 403, naming what to
    // send, and starts no server; the same token either way is served. Not 401 with a
    // Bearer challenge: a client that follows the authorization spec would take that
    // for a server to sign in to, and look for an authorization server the proxy is not.
    let (_dir, log, front) = front_logging();
    let (bare, token) = front
        .url
        .split_once("?token=")
        .expect("the URL carries its token");
    assert_eq!(token.len(), 32, "{token}");
    let wrong = "0".repeat(32);
    let refused: [(String, Vec<(&str, String)>); 4] = [
        (bare.to_string(), vec![]),
        (format!("{bare}?token={wrong}"), vec![]),
        (
            bare.to_string(),
            vec![("Authorization", format!("Bearer {wrong}"))],
        ),
        (
            bare.to_string(),
            vec![("Authorization", format!("Basic {token}"))],
        ),
    ];
    for (url, headers) in &refused {
        let headers: Vec<(&str, &str)> = headers.iter().map(|(n, v)| (*n, v.as_str())).collect();
        let (status, answer) = post(url, &headers, INITIALIZE);
        assert_eq!(status, 403, "{url} {headers:?}: {answer:?}");
        assert_eq!(answer.len(), 1, "{answer:?}");
        let message = answer[0]["error"]["message"].as_str().unwrap();
        assert!(message.contains("Authorization: Bearer TOKEN"), "{message}");
    }
    let (status, head) = raw(bare, "GET", &[("Accept", "text/event-stream")], "");
    assert_eq!(status, 403, "{head}");
    assert!(
        !head.to_ascii_lowercase().contains("www-authenticate"),
        "{head}"
    );
    assert!(!log.exists(), "a refused request started a server");
    let bearer = format!("Bearer {token}");
    let (status, answer) = post(bare, &[("Authorization", &bearer)], INITIALIZE);
    assert_eq!(status, 200, "{answer:?}");
    assert!(answer[0]["result"]["serverInfo"].is_object(), "{answer:?}");
    let (status, answer) = post(&front.url, &[], INITIALIZE);
    assert_eq!(status, 200, "{answer:?}");
}

#[test]
fn a_token_file_keeps_the_token_for_its_owner_alone_across_restarts() {
    use std::os::unix::fs::PermissionsExt;
    // With --token-file the token outlives the proxy, so a client's config does too: the
    // file is made for its owner alone, the URL printed does not carry it, and a file
    // others may read is refused before anything is served.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("listen.token");
    let flags = ["--token-file", file.to_str().unwrap()];
    let first = Listening::front(&flags, own_server());
    assert!(!first.url.contains("token"), "{}", first.url);
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let token = std::fs::read_to_string(&file).unwrap().trim().to_string();
    let with_token = format!("{}?token={token}", first.url);
    assert_eq!(post(&first.url, &[], INITIALIZE).0, 403);
    assert_eq!(post(&with_token, &[], INITIALIZE).0, 200);
    drop(first);
    let again = Listening::front(&flags, own_server());
    let bearer = format!("Bearer {token}");
    assert_eq!(
        post(&again.url, &[("Authorization", &bearer)], INITIALIZE).0,
        200
    );
    drop(again);
    std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
    let output = std::process::Command::new(reasons())
        .args(["mcp", "--listen", "127.0.0.1:0", "--token-file"])
        .arg(&file)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(!output.status.success());
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("others may read or write it (mode 644)"),
        "{said}"
    );
}

#[test]
fn the_token_goes_to_no_server_and_into_no_record() {
    // The token is the user's secret for this listener alone: in front of a server at a
    // URL, neither the client's bearer token nor the one in its URL reaches that server,
    // in a header, the URL or a body, nor the audit log.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("http.log");
    let audit = dir.path().join("audit.jsonl");
    let server = http_echo(&log);
    let flags = ["--audit", audit.to_str().unwrap()];
    let front = Listening::front_to(&flags, vec!["--url".into(), server.url.clone()]);
    let (bare, token) = front.url.split_once("?token=").unwrap();
    let bearer = format!("Bearer {token}");
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"x","reason":"why"}},{META}}}}}"#
    );
    assert_eq!(post(bare, &[("Authorization", &bearer)], &call).0, 200);
    assert_eq!(post(&front.url, &[], &call).0, 200);
    let received = http_received(&log);
    assert!(!received.is_empty(), "the server got nothing");
    for request in &received {
        assert!(!request.to_string().contains(token), "{request}");
    }
    let audited = std::fs::read_to_string(&audit).unwrap();
    assert_eq!(audited.lines().count(), 2, "{audited}");
    assert!(!audited.contains(token), "{audited}");
}

/// The legacy HTTP+SSE transport's URL of `front`, the token in it as in the URL it printed.
fn sse_url(front: &Listening) -> String {
    let url = front.url.replacen("/mcp?", "/sse?", 1);
    assert_ne!(
        url, front.url,
        "the printed URL carries the token: {}",
        front.url
    );
    url
}

#[test]
fn a_legacy_http_sse_client_is_served_and_no_reason_reaches_the_server() {
    // R9 R5 for clients that speak only the 2024-11-05 transport: the Python SDK's SSE
    // client opens /sse, POSTs to the endpoint it names, and reads every answer on its
    // stream; twice, each a session of its own.
    let (_dir, log, front) = front_logging();
    let calls = json!([
        {"name": "record", "arguments": {"text": "hi", "reason": "to test"}},
        {"name": "note", "arguments": {"reason": "the tool's own"}}
    ]);
    for _ in 0..2 {
        let session = sdk_client_over(
            "python",
            calls.clone(),
            vec!["--sse".into(), sse_url(&front)],
        );
        let tools = session["tools"].as_array().unwrap();
        assert_eq!(tools.len(), 5, "{session}");
        let record = tools.iter().find(|tool| tool["name"] == "record").unwrap();
        assert!(record["inputSchema"]["properties"]["reason"].is_object());
        let results = session["results"].as_array().unwrap();
        assert_eq!(results.len(), 2, "{session}");
        assert_eq!(text(&results[0]), r#"{"text":"hi"}"#);
        assert_eq!(text(&results[1]), r#"{"reason":"the tool's own"}"#);
    }
    let got = arguments_received(&log);
    assert_eq!(got.len(), 4, "{got:?}");
    for pair in got.chunks(2) {
        assert_eq!(
            pair,
            [json!({"text": "hi"}), json!({"reason": "the tool's own"})]
        );
    }
}

/// A legacy session's stream, opened with a GET of `url` on a connection of its own
/// (`headers` beside `Host`): the connection, read line by line, and the endpoint its
/// first event names; or the status and answer of a GET refused.
fn legacy_stream(
    url: &str,
    headers: &[(&str, &str)],
) -> Result<(std::io::BufReader<std::net::TcpStream>, String), (u16, String)> {
    use std::io::{BufRead, Write};
    let port = port_of(url);
    let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    stream
        .set_read_timeout(Some(std::time::Duration::from_secs(20)))
        .unwrap();
    let mut request = format!(
        "GET {} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n",
        target_of(url)
    );
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("Accept: text/event-stream\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut said = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            let status = said.split(' ').nth(1).and_then(|code| code.parse().ok());
            return Err((status.unwrap_or(0), said));
        }
        said.push_str(&line);
        if let Some(endpoint) = line.trim_end().strip_prefix("data: ") {
            assert!(said.contains("event: endpoint"), "{said}");
            return Ok((reader, endpoint.to_string()));
        }
    }
}

#[test]
fn the_legacy_transport_admits_as_the_streamable_one_and_ends_with_its_stream() {
    // The same admission as /mcp: no token, or a page's foreign origin, opens no session
    // and starts no server; a body that does not say it is JSON, or a session no stream
    // opened, is refused; a request's answer comes on the stream, not in the POST; and
    // when the client closes its stream, its session is over.
    let (_dir, log, front) = front_logging();
    let url = sse_url(&front);
    let (bare, token) = url.split_once("?token=").unwrap();
    let refused = legacy_stream(bare, &[]).map(|_| ()).unwrap_err();
    assert_eq!(refused.0, 403, "{}", refused.1);
    let refused = legacy_stream(&url, &[("Origin", "http://evil.example")])
        .map(|_| ())
        .unwrap_err();
    assert_eq!(refused.0, 403, "{}", refused.1);
    assert!(!log.exists(), "a refused stream started a server");

    let (mut stream, endpoint) =
        legacy_stream(bare, &[("Authorization", &format!("Bearer {token}"))]).unwrap();
    assert!(
        endpoint.starts_with("/messages?sessionId=") && !endpoint.contains("token"),
        "a token sent as a header is not written back: {endpoint}"
    );
    let messages = format!("{}{endpoint}", bare.strip_suffix("/sse").unwrap());
    let bearer = format!("Bearer {token}");
    let auth = [("Authorization", bearer.as_str())];
    let (status, _) = raw(
        &messages,
        "POST",
        &[("Content-Type", "text/plain"), auth[0]],
        INITIALIZE,
    );
    assert_eq!(status, 415);
    let (status, _) = raw(&messages, "POST", &[], INITIALIZE);
    assert_eq!(
        status, 403,
        "the endpoint asks for the token as every request does"
    );
    let elsewhere = messages.replace("sessionId=", "sessionId=0");
    let json = ("Content-Type", "application/json");
    let (status, _) = raw(&elsewhere, "POST", &[json, auth[0]], INITIALIZE);
    assert_eq!(status, 404);
    let (status, body) = raw(&messages, "POST", &[json, auth[0]], INITIALIZE);
    assert_eq!(status, 202, "{body}");
    // The answer, on the stream.
    let answer = loop {
        let mut line = String::new();
        assert!(std::io::BufRead::read_line(&mut stream, &mut line).unwrap() > 0);
        if let Some(data) = line.trim_end().strip_prefix("data: ") {
            break serde_json::from_str::<Value>(data).unwrap();
        }
    };
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(answer["result"]["serverInfo"].is_object(), "{answer}");
    drop(stream);
    // Its stream closed, the session is over (its end is told to the session at once;
    // the server's own ending is not waited for).
    let until = std::time::Instant::now() + std::time::Duration::from_secs(20);
    loop {
        let (status, _) = raw(&messages, "POST", &[json, auth[0]], INITIALIZED);
        if status == 404 {
            break;
        }
        assert_eq!(status, 202);
        assert!(
            std::time::Instant::now() < until,
            "the session outlived its stream"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn a_2026_request_whose_headers_disagree_with_its_body_reaches_no_server() {
    // R18 (2026-07-28, Streamable HTTP): the front rebuilds the headers the server sees
    // from the body, so a disagreement would never reach it; the front refuses it as the
    // server would, with 400 and its error, under the request's id, and nothing is sent.
    // A revision the proxy does not read is refused alike, naming the ones it does.
    let (_dir, log, front) = front_logging();
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"t","reason":"why"}},{META}}}}}"#
    );
    let cases = [
        (vec![("Mcp-Name", "note")], -32020),
        (vec![("Mcp-Method", "tools/list")], -32020),
        (vec![("MCP-Protocol-Version", "2025-11-25")], -32020),
    ];
    assert_eq!(cases.len(), 3);
    for (headers, code) in &cases {
        let (status, answer) = post(&front.url, headers, &call);
        assert_eq!(status, 400, "{headers:?}: {answer:?}");
        assert_eq!(answer[0]["id"], 5, "{answer:?}");
        assert_eq!(answer[0]["error"]["code"], *code, "{answer:?}");
    }
    let future = call.replace("2026-07-28", "2099-01-01");
    let (status, answer) = post(&front.url, &[], &future);
    assert_eq!(status, 400, "{answer:?}");
    assert_eq!(answer[0]["error"]["code"], -32022, "{answer:?}");
    assert_eq!(
        answer[0]["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    assert!(
        !log.exists()
            || received(&log)
                .iter()
                .all(|line| !line.contains("tools/call")),
        "a call reached the server"
    );
    // The same call with its headers agreeing is served.
    let (status, answer) = post(&front.url, &[], &call);
    assert_eq!(status, 200, "{answer:?}");
    assert_eq!(arguments_received(&log), [json!({"text": "t"})]);
}

#[test]
fn a_client_whose_stream_broke_comes_back_for_the_rest_with_its_last_event_id() {
    // R19 (2025-11-25's resumable streams): a session of 2025-11-25 has each request's
    // stream open with an event id and the wait before coming back, and number every
    // event; a client whose connection broke mid-call comes back with a GET carrying the
    // last id it had, and gets what came since, the answer included, once.
    let front = Listening::front(&[], everything());
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .build()
        .new_agent();
    let initialize = INITIALIZE.replace("2025-06-18", "2025-11-25");
    let answer = agent
        .post(&front.url)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .send(&initialize)
        .unwrap();
    let (status, session, _) = answered(answer);
    assert_eq!(status, 200);
    let headers = format!(
        "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
    );
    let with_session = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    assert_eq!(post(&front.url, &with_session, INITIALIZED).0, 202);
    // Once after the call was answered, once while it still runs (what is still to
    // come then comes on the new stream).
    for (id, away) in [(9, 3000), (10, 200)] {
        let call = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"trigger-long-running-operation","arguments":{{"duration":2,"steps":2,"reason":"why"}},"_meta":{{"progressToken":"p{id}"}}}}}}"#
        );
        // The POST's stream: the priming event (an id, a retry, no message); the break.
        let (mut primed, mut retry) = (None, false);
        let post = format!("POST /mcp HTTP/1.1\r\n{headers}");
        read_events(&front.url, &post, &call, |line| {
            retry |= line.starts_with("retry:");
            if let Some(id) = line.strip_prefix("id: ") {
                primed = Some(id.to_string());
            }
            // Until the event with the id has ended.
            primed.is_none() || !line.is_empty()
        });
        let primed = primed.expect("the stream opened with an event id");
        assert!(retry, "the priming event names the wait");
        std::thread::sleep(std::time::Duration::from_millis(away));
        // Back: everything since, the answer once, each with an id.
        let (mut ids, mut messages) = (Vec::new(), Vec::<Value>::new());
        let get = format!("GET /mcp HTTP/1.1\r\n{headers}Last-Event-ID: {primed}\r\n");
        read_events(&front.url, &get, "", |line| {
            if let Some(id) = line.strip_prefix("id: ") {
                ids.push(id.to_string());
            }
            if let Some(data) = line.strip_prefix("data: ") {
                messages.push(serde_json::from_str(data).unwrap());
            }
            // Until the event with the answer has ended.
            !(line.is_empty() && messages.iter().any(|message| message["id"] == id))
        });
        let answers: Vec<&Value> = messages.iter().filter(|m| m["id"] == id).collect();
        assert_eq!(answers.len(), 1, "{messages:#?}");
        assert!(answers[0]["result"]["content"].is_array(), "{messages:#?}");
        let progress = messages
            .iter()
            .filter(|m| m["params"]["progressToken"] == format!("p{id}"))
            .count();
        assert_eq!(progress, 2, "{messages:#?}");
        assert_eq!(ids.len(), messages.len(), "{ids:?} {messages:#?}");
        assert!(!ids.contains(&primed), "{ids:?}");
    }
}
