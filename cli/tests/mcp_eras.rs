//! Both eras of MCP with the SDKs people run, each session through `reasons mcp` compared
//! with the same session made directly: the TypeScript SDK's 2.x line (2026-07-28: no
//! handshake, `_meta` on every request) over stdio and through the HTTP front, and the
//! Python SDK's server over Streamable HTTP behind `--url`.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use std::path::PathBuf;

/// The tools of a session, without the `reason` the layer added where it added one.
fn without_added_reason(session: &Value) -> Vec<Value> {
    let mut tools = session["tools"].as_array().unwrap().clone();
    for tool in &mut tools {
        let properties = tool["inputSchema"]["properties"].as_object_mut().unwrap();
        if properties
            .get("reason")
            .and_then(|reason| reason["description"].as_str())
            .is_some_and(|description| description.starts_with("One short sentence"))
        {
            properties.remove("reason");
        }
    }
    tools
}

/// Asserts that a session through the proxy saw what the direct one saw, less the
/// reason: the same tools but for the added `reason`, the call that carried the model's
/// reason answered as if it had none (`record` echoes its arguments), and the tool's own
/// `reason` delivered (`note` echoes it).
fn assert_served_alike(direct: &Value, through: &Value) {
    assert_eq!(without_added_reason(direct), without_added_reason(through));
    assert_eq!(direct["results"].as_array().unwrap().len(), 2, "{direct}");
    assert_eq!(
        through["results"][0]["content"][0]["text"],
        r#"{"text":"hi"}"#
    );
    assert_eq!(
        through["results"][1]["content"][0]["text"],
        r#"{"reason":"the tool's own"}"#
    );
    assert_eq!(direct["results"][1], through["results"][1]);
}

fn calls() -> Value {
    json!([
        {"name": "record", "arguments": {"text": "hi", "reason": "to test"}},
        {"name": "note", "arguments": {"reason": "the tool's own"}}
    ])
}

#[test]
fn the_2026_sdk_line_is_served_as_it_serves_itself_and_no_reason_arrives() {
    // R9 R5 in the 2026-07-28 era: the 2.x client, pinned to 2026-07-28 (no fallback to
    // a handshake), against the 2.x server, directly and through the proxy over stdio;
    // the server's transcripts are compared message by message.
    let dir = tempfile::tempdir().unwrap();
    let (direct_log, proxied_log) = (dir.path().join("direct"), dir.path().join("proxied"));
    let direct = sdk_client("node2", calls(), teed(&direct_log, own_server2()));
    let through = sdk_client(
        "node2",
        calls(),
        proxied(&[], teed(&proxied_log, own_server2())),
    );
    assert_served_alike(&direct, &through);
    let (direct, through) = (received(&direct_log), received(&proxied_log));
    assert_eq!(direct.len(), through.len(), "{through:#?}");
    assert!(
        direct[0].contains("server/discover"),
        "a 2026 session: {direct:#?}"
    );
    for (direct, through) in direct.iter().zip(&through) {
        assert_eq!(&direct.replace(r#","reason":"to test""#, ""), through);
    }
}

#[test]
fn the_2026_sdk_line_is_served_through_the_http_front() {
    // The 2.x client over Streamable HTTP to `reasons mcp --listen`, in front of the 2.x
    // server over stdio: stateless 2026-07-28 requests, each answered under its own id.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(&[], teed(&log, own_server2()));
    let through = sdk_client_over("node2", calls(), vec!["--url".into(), front.url.clone()]);
    let direct = sdk_client("node2", calls(), own_server2());
    assert_served_alike(&direct, &through);
    let calls: Vec<Value> = received(&log)
        .iter()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|message| message["method"] == "tools/call")
        .map(|message| message["params"]["arguments"].clone())
        .collect();
    assert_eq!(
        calls,
        [json!({"text": "hi"}), json!({"reason": "the tool's own"})]
    );
}

#[test]
fn the_python_sdk_server_over_http_answers_through_the_proxy_as_it_does_directly() {
    // R9 R5 with the Python SDK's server over Streamable HTTP (a 2025 session), reached
    // by the TypeScript SDK's 1.x client directly and through `reasons mcp --url`; what
    // the server received is compared message by message, less the reason.
    let (_dir, direct_log, proxied_log) = python_server_served_alike("node");
    let (mut expected, received) = (bodies(&direct_log), bodies(&proxied_log));
    let received: Vec<Value> = received
        .into_iter()
        .filter(|body| !body["id"].to_string().contains("reasons-proxy/"))
        .collect();
    assert!(expected.len() >= 4, "{expected:#?}");
    for body in &mut expected {
        if body["params"]["arguments"]["text"] == "hi" {
            body["params"]["arguments"]
                .as_object_mut()
                .unwrap()
                .remove("reason");
        }
    }
    assert_eq!(expected, received);
}

/// The lines of `log`, as values.
fn bodies(log: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn the_2026_sdk_line_over_http_both_ways_sees_the_same_session_less_the_reason() {
    // R9 over Streamable HTTP on both sides, in the 2026-07-28 era: the 2.x client and
    // the 2.x server, directly, through `reasons mcp --url` (the client on stdio), and
    // through `reasons mcp --listen --url` (HTTP in front and behind). What the server
    // received is compared message by message: byte for byte but the reason behind the
    // stdio proxy; by value, ids aside (the front gives stateless requests its own), behind
    // the front.
    let dir = tempfile::tempdir().unwrap();
    let logs = ["direct", "stdio", "front"].map(|name| dir.path().join(name));
    let servers = logs.clone().map(|log| own_server2_http(&log));
    let direct = sdk_client_over(
        "node2",
        calls(),
        vec!["--url".into(), servers[0].url.clone()],
    );
    let stdio = sdk_client("node2", calls(), proxied_url(&[], &servers[1].url));
    let front = Listening::front_to(&[], vec!["--url".into(), servers[2].url.clone()]);
    let http = sdk_client_over("node2", calls(), vec!["--url".into(), front.url.clone()]);
    for through in [&stdio, &http] {
        assert_served_alike(&direct, through);
    }
    let direct_text = std::fs::read_to_string(&logs[0]).unwrap();
    let stdio_text = std::fs::read_to_string(&logs[1]).unwrap();
    assert_eq!(direct_text.lines().count(), 4, "{direct_text}");
    assert_eq!(
        direct_text.replace(r#","reason":"to test""#, ""),
        stdio_text
    );
    let without_ids = |mut bodies: Vec<Value>| {
        for body in &mut bodies {
            body.as_object_mut().unwrap().remove("id");
        }
        bodies
    };
    let mut expected = without_ids(bodies(&logs[0]));
    expected[2]["params"]["arguments"]
        .as_object_mut()
        .unwrap()
        .remove("reason");
    assert_eq!(expected, without_ids(bodies(&logs[2])));
}

#[test]
fn a_2026_client_whose_first_request_is_a_call_is_served_by_a_server_that_wants_its_version() {
    // R18, R20: the 2.x server answers 400 to a request without a protocol version. The
    // proxy's own listing for a first call carries that call's `_meta`, and over HTTP its
    // `MCP-Protocol-Version`: the call goes on stripped, over stdio and through the front.
    let dir = tempfile::tempdir().unwrap();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record","arguments":{"text":"first","reason":"SECRET"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"t","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    let answered = |answer: &Value| {
        assert_eq!(answer["id"], 1, "{answer}");
        assert_eq!(
            answer["result"]["content"][0]["text"], r#"{"text":"first"}"#,
            "{answer}"
        );
    };
    let log = dir.path().join("stdio");
    let server = own_server2_http(&log);
    let mut session = Session::start(&proxied_url(&[], &server.url));
    answered(&serde_json::from_str(&session.ask(call)).unwrap());
    let log = dir.path().join("front");
    let server = own_server2_http(&log);
    let front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    let (status, messages) = post(&front.url, &[], call);
    assert_eq!(status, 200, "{messages:?}");
    answered(the_answer(&messages));
    for log in ["stdio", "front"] {
        let sent = std::fs::read_to_string(dir.path().join(log)).unwrap();
        assert!(!sent.contains("SECRET"), "{log}: {sent}");
    }
}

#[test]
fn the_python_sdk_client_reaches_a_python_sdk_server_through_the_proxy_as_directly() {
    // The Python SDK's client and server (1.30, a 2025 session), through `reasons mcp
    // --url` over stdio, served as directly. (Its 2.x line probes with server/discover
    // first, which its server refuses with a session id on the answer: that id is no
    // session, as `a_session_the_server_ended_…` in mcp_http.rs proves.)
    python_server_served_alike("python");
}

#[test]
fn the_python_2x_client_settles_the_same_revision_through_every_path_and_loses_only_the_reason() {
    // R9 R5 R20 and the specification's fallback between eras: the Python SDK's 2.x
    // client probes server/discover and falls back to `initialize` when the server
    // answers the probe with an error. Against its own 2.x server (2026-07-28) and the
    // 1.x FastMCP server (which refuses the probe with a session id on the answer: the
    // finding that broke `--url`), through `reasons mcp --url` over stdio, the HTTP
    // front before a server on stdio and the gateway, it settles the revision it settles
    // directly and is answered as directly.
    let alike = |direct: &Value, through: &Value, era: &str| {
        let version = direct["version"].as_str().unwrap_or_default();
        assert!(version.starts_with(era), "{direct}");
        assert_eq!(through["version"], direct["version"]);
        assert_served_alike(direct, through);
    };
    let modern = python2_http();
    let url = |server: &Listening| vec!["--url".to_string(), server.url.clone()];
    alike(
        &sdk_client_over("python2", calls(), url(&modern)),
        &sdk_client("python2", calls(), proxied_url(&[], &modern.url)),
        "2026-07-28",
    );
    let dir = tempfile::tempdir().unwrap();
    let legacy = python_http(&dir.path().join("log"));
    alike(
        &sdk_client_over("python2", calls(), url(&legacy)),
        &sdk_client("python2", calls(), proxied_url(&[], &legacy.url)),
        "2025-",
    );
    let front = Listening::front(&[], python2_server());
    alike(
        &sdk_client("python2", calls(), python2_server()),
        &sdk_client_over("python2", calls(), url(&front)),
        "2026-07-28",
    );
    // And through the gateway, before either server.
    let wasm = gateway_wasm(dir.path());
    for (server, era) in [(&modern, "2026-07-28"), (&legacy, "2025-")] {
        let gateway = Listening::gateway(
            Engine::Wasmtime,
            &wasm,
            &[("REASONS_UPSTREAM", &server.url)],
        );
        alike(
            &sdk_client_over("python2", calls(), url(server)),
            &sdk_client_over("python2", calls(), url(&gateway)),
            era,
        );
    }
}

/// The Python SDK's server over Streamable HTTP, twice, reached by `client` (an SDK's)
/// directly and through `reasons mcp --url`, each answered alike; the folder, and the
/// logs of what each server received.
fn python_server_served_alike(client: &str) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (direct_log, proxied_log) = (dir.path().join("direct"), dir.path().join("proxied"));
    let (direct_server, proxied_server) = (python_http(&direct_log), python_http(&proxied_log));
    let direct = sdk_client_over(
        client,
        calls(),
        vec!["--url".into(), direct_server.url.clone()],
    );
    let through = sdk_client(client, calls(), proxied_url(&[], &proxied_server.url));
    // FastMCP validates its arguments: the call with a reason succeeds only because the
    // proxy took the reason off.
    assert_served_alike(&direct, &through);
    (dir, direct_log, proxied_log)
}

#[test]
fn a_call_that_asks_for_input_keeps_the_reason_out_of_every_round_on_every_path() {
    // R9 R18 with 2026-07-28's multi-round results: a call answered `input_required` is
    // made again with the client's input and the server's requestState; each round is a
    // call, stripped alike, and what the server hands out (its requests, its state)
    // reaches the client untouched, over stdio, through the HTTP front and the gateway.
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{}}}"#;
    let first = format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"ask","arguments":{{"text":"t","reason":"SECRET"}},{meta}}}}}"#
    );
    let again = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"ask","arguments":{{"text":"t","reason":"SECRET"}},"inputResponses":{{"confirm":{{"action":"accept","content":{{"go":true}}}}}},"requestState":"state-of-ask",{meta}}}}}"#
    );
    // Both rounds as a path answers them; the server's log after.
    let rounds = |ask: &mut dyn FnMut(&str) -> Value, log: &std::path::Path| {
        let asked = ask(&first);
        let result = &asked["result"];
        assert_eq!(result["resultType"], "input_required", "{asked}");
        assert_eq!(result["requestState"], "state-of-ask", "{asked}");
        assert_eq!(
            result["inputRequests"]["confirm"]["params"]["message"],
            "Go on?"
        );
        let done = ask(&again);
        let text = done["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        assert_eq!(
            serde_json::from_str::<Value>(text).unwrap_or_default(),
            json!({
                "arguments": {"text": "t"},
                "requestState": "state-of-ask",
                "got": {"action": "accept", "content": {"go": true}},
            }),
            "{done}"
        );
        let received = std::fs::read_to_string(log).unwrap();
        assert_eq!(received.matches("\"ask\"").count(), 2, "{received}");
        assert!(!received.contains("SECRET"), "{received}");
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("stdio");
    let mut session = Session::start(&proxied(&[], teed(&log, own_server2())));
    rounds(
        &mut |body| serde_json::from_str(&session.ask(body)).unwrap(),
        &log,
    );
    let log = dir.path().join("front");
    let front = Listening::front(&[], teed(&log, own_server2()));
    fn over(url: &str) -> impl FnMut(&str) -> Value + '_ {
        move |body| {
            let (status, messages) = post(url, &[], body);
            assert_eq!(status, 200, "{messages:?}");
            the_answer(&messages).clone()
        }
    }
    rounds(&mut over(&front.url), &log);
    let log = dir.path().join("http");
    let server = own_server2_http(&log);
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(
        Engine::Wasmtime,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    rounds(&mut over(&gateway.url), &log);
}
