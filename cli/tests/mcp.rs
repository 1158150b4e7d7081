//! `reasons mcp` between real MCP clients and servers: the reference servers from npm,
//! the TypeScript and Python SDKs' clients, and a server of the tests' own.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use std::process::Stdio;

/// The names of the tools whose input schema declares `reason`, and whether any of them
/// lists it as required.
fn with_reason(tools: &Value) -> (Vec<&str>, bool) {
    let tools = tools.as_array().unwrap();
    let names = tools
        .iter()
        .filter(|tool| tool["inputSchema"]["properties"]["reason"].is_object())
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    let required = tools.iter().any(|tool| {
        tool["inputSchema"]["required"]
            .as_array()
            .is_some_and(|required| required.contains(&json!("reason")))
    });
    (names, required)
}

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap()
}

#[test]
fn the_python_sdk_sees_reasons_and_server_everything_never_does() {
    // R1 R9
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sent.jsonl");
    let calls = json!([
        {"name": "echo", "arguments": {"message": "hi", "reason": "SECRET-REASON to test"}},
        {"name": "get-sum", "arguments": {"a": 2, "b": 3}},
    ]);
    let out = sdk_client("python", calls, proxied(&[], teed(&log, everything())));
    let (augmented, required) = with_reason(&out["tools"]);
    assert_eq!(augmented.len(), out["tools"].as_array().unwrap().len());
    assert!(!required, "the reason is optional");
    assert_eq!(text_of(&out["results"][0]), "Echo: hi");
    assert!(text_of(&out["results"][1]).contains('5'));
    let sent = received(&log).join("\n");
    assert!(sent.contains(r#""arguments":{"message":"hi"}"#), "{sent}");
    assert!(!sent.contains("SECRET-REASON"), "{sent}");
}

#[test]
fn the_typescript_sdk_writes_a_file_through_server_filesystem_without_the_reason() {
    // R1 R9: the server's own log shows it never received the reason, and the file holds
    // what was asked for.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let log = root.join("sent.jsonl");
    let file = root.join("note.txt");
    let calls = json!([
        {"name": "write_file", "arguments": {
            "path": file, "content": "hello\n", "reason": "SECRET-REASON: the user asked"}},
        {"name": "read_text_file", "arguments": {"path": file, "reason": "check it"}},
    ]);
    let out = sdk_client("node", calls, proxied(&[], teed(&log, filesystem(&root))));
    let (augmented, _) = with_reason(&out["tools"]);
    assert!(augmented.contains(&"write_file"), "{augmented:?}");
    assert_eq!(out["results"][0]["isError"], json!(null), "{out}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "hello\n");
    assert_eq!(text_of(&out["results"][1]), "hello\n");
    let sent = received(&log).join("\n");
    assert!(
        sent.contains(r#""name":"write_file""#),
        "the log holds the calls: {sent}"
    );
    assert!(!sent.contains("SECRET-REASON"), "{sent}");
}

#[test]
fn a_tool_that_owns_reason_gets_it_untouched() {
    // R5: `note` declares `reason` itself; `record` does not.
    let calls = json!([
        {"name": "note", "arguments": {"reason": "mine"}},
        {"name": "record", "arguments": {"text": "a", "reason": "the model's"}},
    ]);
    let out = sdk_client("node", calls, proxied(&[], own_server()));
    let tools = out["tools"].as_array().unwrap();
    assert_eq!(
        tools[0]["inputSchema"],
        json!({"type": "object", "properties": {"reason": {"type": "string"}}})
    );
    assert!(tools[1]["inputSchema"]["properties"]["reason"]["description"].is_string());
    assert_eq!(text_of(&out["results"][0]), r#"{"reason":"mine"}"#);
    assert_eq!(text_of(&out["results"][1]), r#"{"text":"a"}"#);
}

/// The session of the transparency test, request by request.
const SCRIPT: &[&str] = &[
    INITIALIZE,
    INITIALIZED,
    r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
    r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"message":"hi","reason":"to test"}}}"#,
    r#"{"jsonrpc":"2.0","id":4,"method":"ping"}"#,
    r#"{"jsonrpc":"2.0","id":5,"method":"prompts/list"}"#,
    r#"{"jsonrpc":"2.0","id":6,"method":"resources/list"}"#,
    r#"{"jsonrpc":"2.0","id":7,"method":"server/discover"}"#,
    r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":99}}"#,
    r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"get-sum","arguments":{"a":1,"b":2}}}"#,
];

/// Plays [`SCRIPT`] against `command`: the response to each request, in order.
fn play(command: &[String]) -> Vec<String> {
    let mut session = Session::start(command);
    let mut responses = Vec::new();
    for line in SCRIPT {
        if line.contains(r#""id":"#) {
            responses.push(session.ask(line));
        } else {
            session.send(line);
        }
    }
    session.finish();
    responses
}

/// `text` without the property the layer adds, wherever it was inserted.
fn without_reason_property(text: &str) -> String {
    text.replace(&format!("{REASON_PROPERTY},"), "")
        .replace(REASON_PROPERTY, "")
}

#[test]
fn a_session_through_the_proxy_differs_only_by_the_reason() {
    // R1 R2 R9: message by message, the only differences are the added property (to the
    // client) and the removed argument (to the server).
    let dir = tempfile::tempdir().unwrap();
    let (direct_log, proxied_log) = (dir.path().join("direct"), dir.path().join("proxied"));
    let direct = play(&teed(&direct_log, everything()));
    let through = play(&proxied(&[], teed(&proxied_log, everything())));
    let requests = SCRIPT
        .iter()
        .filter(|line| line.contains(r#""id":"#))
        .count();
    assert_eq!(
        direct.len(),
        requests,
        "an answer to each request: {direct:#?}"
    );
    assert_eq!(through.len(), requests, "{through:#?}");
    for (direct, through) in direct.iter().zip(&through) {
        if through.contains(r#""tools":["#) {
            assert_ne!(direct, through, "the listing gained the property");
        }
        assert_eq!(&without_reason_property(through), direct);
    }
    let (direct, through) = (received(&direct_log), received(&proxied_log));
    assert_eq!(
        direct.len(),
        SCRIPT.len(),
        "the server received each line: {direct:#?}"
    );
    assert_eq!(through.len(), SCRIPT.len(), "{through:#?}");
    for (direct, through) in direct.iter().zip(&through) {
        assert_eq!(&direct.replace(r#","reason":"to test""#, ""), through);
    }
}

#[test]
fn when_the_client_leaves_the_server_s_last_answer_still_arrives() {
    let mut session = Session::start(&proxied(&[], own_server()));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.send(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}}"#,
    );
    let (rest, status) = session.finish();
    assert!(
        rest.iter().any(|line| line.contains("slow done")),
        "{rest:?}"
    );
    assert!(status.success());
}

#[test]
fn when_the_server_dies_pending_requests_get_errors() {
    let mut session = Session::start(&proxied(&[], own_server()));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let answer = session.ask(
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"die","arguments":{}}}"#,
    );
    let answer: Value = serde_json::from_str(&answer).unwrap();
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("the MCP server exited before answering"),
        "{message}"
    );
    assert!(message.contains("exit status: 3"), "{message}");
    let (_, status) = session.finish();
    assert_eq!(
        status.code(),
        Some(3),
        "R20: the proxy exits as its server did"
    );
}

#[test]
fn the_audit_log_and_the_stats_say_who_called_what_and_why() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let stats = dir.path().join("stats.txt");
    let flags = ["--audit", audit.to_str().unwrap(), "--stats"];
    let mut session = Session::start_with(
        &proxied(&flags, own_server()),
        Stdio::from(std::fs::File::create(&stats).unwrap()),
    );
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record","arguments":{"text":"a","reason":"to see"}}}"#);
    session.ask(r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"record","arguments":{"text":"b"}}}"#);
    session.ask(r#"{"jsonrpc":"2.0","id":"n","method":"tools/call","params":{"name":"note","arguments":{"reason":"its own"}}}"#);
    session.ask(
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    );
    let (_, status) = session.finish();
    assert!(status.success());

    let records: Vec<Value> = std::fs::read_to_string(&audit)
        .unwrap()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    let digest = |text: &str| format!("{:x}", Sha256::digest(text.as_bytes()));
    assert_eq!(records.len(), 4);
    assert_eq!(records[0]["id"], 2);
    assert_eq!(records[0]["tool"], "record");
    assert_eq!(records[0]["reason"], "to see");
    assert_eq!(records[0]["arguments_sha256"], digest(r#"{"text":"a"}"#));
    assert_eq!(records[0]["outcome"], json!({"result": {"isError": false}}));
    assert_eq!(records[1]["reason"], json!(null));
    assert_eq!(records[2]["id"], "n");
    assert_eq!(
        records[2]["reason"],
        json!(null),
        "a tool's own reason is not the model's"
    );
    assert_eq!(records[3]["outcome"], json!({"result": {"isError": true}}));
    assert!(records[0]["time"].as_str().unwrap().ends_with('Z'));

    let stats = std::fs::read_to_string(&stats).unwrap();
    assert!(
        stats.contains("reasons: 4 tool calls, 1 with a reason (25%)"),
        "{stats}"
    );
    assert!(
        stats.contains("record      2 calls      1 with a reason (50%)"),
        "{stats}"
    );
}

/// A server that implements the Skills extension (SEP-2640): it says so in
/// `capabilities.extensions` and answers `skills/list`, `skills/get` and
/// `resources/directory/read`, each result tagged with the method it answers.
fn skills_server() -> Vec<String> {
    scripted_server(
        "",
        r#"({
          initialize: { protocolVersion: message.params?.protocolVersion, serverInfo: { name: "skills", version: "1" },
                        capabilities: { tools: {}, extensions: { "io.modelcontextprotocol/skills": { "x-note": 1.50 } } } },
          "tools/list": { tools: [] },
          "skills/list": { skills: [{ name: "review", description: "Reviews a change", uri: "skill://review" }] },
          "skills/get": { skill: { name: message.params?.name, instructions: "Read the diff\u2028then say" } },
          "resources/directory/read": { entries: [{ uri: "skill://review/SKILL.md", name: "SKILL.md" }] },
        })[message.method] ?? {}"#,
    )
}

#[test]
fn the_skills_extension_passes_through_untouched() {
    // R9, R20: what the proxy does not act on is relayed byte for byte: the Skills
    // extension's methods, their params and results, and `capabilities.extensions`;
    // through stdio byte for byte, and the same values through --listen, --url (to that
    // front) and the gateway (to it too).
    let requests = [
        (
            r#"{"jsonrpc":"2.0","id":2,"method":"skills/list","params":{"cursor":null}}"#,
            "skills/list",
        ),
        (
            r#"{"jsonrpc":"2.0","id":3,"method":"skills/get","params":{"name":"review"}}"#,
            "skills/get",
        ),
        (
            r#"{"jsonrpc":"2.0","id":4,"method":"resources/directory/read","params":{"uri":"skill://review/"}}"#,
            "resources/directory/read",
        ),
    ];
    let direct = {
        let mut session = Session::start(&skills_server());
        let mut answers = vec![session.ask(INITIALIZE)];
        session.send(INITIALIZED);
        answers.extend(requests.iter().map(|(request, _)| session.ask(request)));
        session.finish();
        answers
    };
    let mut session = Session::start(&proxied(&[], skills_server()));
    let mut proxied_answers = vec![session.ask(INITIALIZE)];
    session.send(INITIALIZED);
    proxied_answers.extend(requests.iter().map(|(request, _)| session.ask(request)));
    session.finish();
    assert_eq!(direct.len(), 4);
    assert_eq!(proxied_answers, direct);
    // Over HTTP, in a session of `url`'s: each answer the server's, the same value.
    let over_http = |url: &str, path: &str| {
        let session = legacy_session(url);
        let with_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        for ((request, _), direct) in requests.iter().zip(&direct[1..]) {
            let (status, messages) = post(url, &with_session, request);
            assert_eq!(status, 200, "{path}: {messages:?}");
            let direct: Value = serde_json::from_str(direct).unwrap();
            assert_eq!(the_answer(&messages), &direct, "{path}: {request}");
        }
    };
    let front = Listening::front(&[], skills_server());
    over_http(&front.url, "--listen");
    // Through --url to that front, and through the gateway to it: the same values.
    let mut session = Session::start(&proxied_url(&[], &front.url));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    for ((request, _), direct) in requests.iter().zip(&direct[1..]) {
        let answer: Value = serde_json::from_str(&session.ask(request)).unwrap();
        let direct: Value = serde_json::from_str(direct).unwrap();
        assert_eq!(answer, direct, "--url: {request}");
    }
    session.finish();
    let dir = tempfile::tempdir().unwrap();
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(Engine::Wasmtime, &wasm, &[("REASONS_UPSTREAM", &front.url)]);
    over_http(&gateway.url, "the gateway");
    assert!(
        direct[0].contains(r#""extensions":{"io.modelcontextprotocol/skills":{"x-note":1.5}}"#),
        "{}",
        direct[0]
    );
    assert!(
        direct[1].contains(r#""skills":[{"name":"review""#),
        "{}",
        direct[1]
    );
}

#[test]
fn stats_name_a_tool_that_asks_why_itself() {
    // `--stats` tells, on exit, of each tool that asks the model why in a field of its
    // own (PostHog's `context` here): the model is asked twice, and how to leave it alone.
    let dir = tempfile::tempdir().unwrap();
    let stderr = dir.path().join("stderr");
    let server = scripted_server(
        r#"const tool = { name: "query", inputSchema: { type: "object", properties: {
          context: { type: "string", description: "Why are you calling this tool? Briefly describe the user's goal." },
        } } };"#,
        r#"message.method === "initialize"
          ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "posthog-like", version: "1" } }
          : { tools: [tool] }"#,
    );
    let mut session = Session::start_with(
        &proxied(&["--stats"], server),
        std::process::Stdio::from(std::fs::File::create(&stderr).unwrap()),
    );
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.ask(r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#);
    session.finish();
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        said.contains("`query` asks the model why itself (`context`)")
            && said.contains("--leave-alone query"),
        "{said}"
    );
}
