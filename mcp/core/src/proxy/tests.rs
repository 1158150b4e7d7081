//! The proxy as a hostile client and an odd server would use it, line by line. Each test
//! of a finding of the review that found the proxy fail-open names the rule it proves.

use super::*;
use crate::layer::ComponentLayer;
use crate::telemetry::Failure;
use reasons_host::Plugin;
use reasons_transform::Options;
use serde_json::{Value, json};

/// The time, read as a transport reads it.
fn now() -> Now {
    Now {
        instant: std::time::Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

const PLAIN: &str =
    r#"{"name":"plain","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;
const OWN: &str =
    r#"{"name":"own","inputSchema":{"type":"object","properties":{"reason":{"type":"string"}}}}"#;
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
const INITIALIZED: &str = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
const INITIALIZE_RESULT: &str =
    r#"{"jsonrpc":"2.0","id":0,"result":{"capabilities":{"tools":{}}}}"#;
/// The property the layer adds, first among a schema's properties (R1).
const REASON: &str = r#""reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}"#;

fn proxy_with(options: Options) -> Proxy<ComponentLayer> {
    proxy_auditing(options, Audit::new(false, true))
}

fn proxy_auditing(options: Options, audit: Audit) -> Proxy<ComponentLayer> {
    let layer = ComponentLayer::new(&Plugin::reasons().unwrap(), options).unwrap();
    Proxy::new(layer, audit, now())
}

fn proxy() -> Proxy<ComponentLayer> {
    proxy_with(Options::default())
}

/// What the proxy wrote, by side.
#[derive(Debug, Default)]
struct Wire {
    server: Vec<String>,
    client: Vec<String>,
    /// For the human running the proxy, on stderr.
    notes: Vec<String>,
    /// For the transport.
    learnt: Vec<Learnt>,
    /// The audit's records, for the transport's log.
    records: Vec<String>,
    /// The spans of the requests answered, for the collector.
    spans: Vec<Span>,
}

fn wire(out: Vec<Out>) -> Wire {
    let mut wire = Wire::default();
    for line in out {
        match line {
            Out::Server { line, .. } => wire.server.push(String::from_utf8(line).unwrap()),
            Out::Client(to) => wire.client.push(String::from_utf8(to.line).unwrap()),
            Out::Note(note) => wire.notes.push(note),
            Out::Learnt(learnt) => wire.learnt.push(learnt),
            Out::Record(record) => wire.records.push(record),
            Out::Span(span) => wire.spans.push(span),
        }
    }
    wire
}

fn client(proxy: &mut Proxy<ComponentLayer>, line: &str) -> Wire {
    wire(proxy.client_sent(line.as_bytes().to_vec(), now()))
}

fn server(proxy: &mut Proxy<ComponentLayer>, line: &str) -> Wire {
    wire(proxy.server_sent(line.as_bytes().to_vec(), now()))
}

fn call(id: &str, tool: &str, arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{arguments}}}}}"#
    )
}

/// The id of the proxy's own `tools/list` among `lines`, if it sent one.
fn own_listing(lines: &[String]) -> Option<String> {
    lines.iter().find_map(|line| {
        let message: Value = serde_json::from_str(line).ok()?;
        let own = message["method"] == "tools/list"
            && message["id"]
                .as_str()
                .is_some_and(|id| id.starts_with("reasons-proxy/"));
        own.then(|| message["id"].to_string())
    })
}

/// The server's answer listing `tools` under `id` (JSON text), with `more` after them.
fn listing(id: &str, tools: &[&str], more: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]{more}}}}}"#,
        tools.join(",")
    )
}

/// Answers the proxy's own listing in `lines` with `tools`; what the proxy then wrote.
fn answer_own_listing(proxy: &mut Proxy<ComponentLayer>, lines: &[String], tools: &[&str]) -> Wire {
    let id = own_listing(lines).expect("the proxy listed the server");
    server(proxy, &listing(&id, tools, ""))
}

/// A session whose handshake is done and whose client has listed `tools` once.
fn ready(options: Options, tools: &[&str]) -> Proxy<ComponentLayer> {
    ready_auditing(options, tools, Audit::new(false, true))
}

/// [`ready`], with `audit`.
fn ready_auditing(options: Options, tools: &[&str], audit: Audit) -> Proxy<ComponentLayer> {
    let mut proxy = proxy_auditing(options, audit);
    assert_eq!(client(&mut proxy, INITIALIZE).server, [INITIALIZE]);
    assert_eq!(
        server(&mut proxy, INITIALIZE_RESULT).client,
        [INITIALIZE_RESULT]
    );
    assert_eq!(client(&mut proxy, INITIALIZED).server, [INITIALIZED]);
    let list = r#"{"jsonrpc":"2.0","id":"l","method":"tools/list"}"#;
    assert_eq!(client(&mut proxy, list).server, [list]);
    let answered = server(&mut proxy, &listing(r#""l""#, tools, ""));
    assert_eq!(answered.client.len(), 1, "{answered:?}");
    assert!(
        answered.server.is_empty(),
        "a whole listing needs no listing of the proxy's"
    );
    proxy
}

/// Whether any line sent to the server carries the model's reason `text`.
fn leaked(lines: &[String], text: &str) -> bool {
    lines.iter().any(|line| line.contains(text))
}

fn error_of(line: &str) -> (Value, i64, String) {
    let message: Value = serde_json::from_str(line).unwrap();
    let code = message["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{line}"));
    let text = message["error"]["message"].as_str().unwrap().to_string();
    (message["id"].clone(), code, text)
}

#[test]
fn only_the_tools_and_the_arguments_change() {
    // R1 R9: every other byte of every message is relayed as it came.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let request = r#"{ "jsonrpc" : "2.0", "id" : "a", "method" : "tools/list" }"#;
    assert_eq!(client(&mut proxy, request).server, [request]);
    let result = format!(
        r#"{{"result" : {{ "tools" : [ {PLAIN} ] , "nextCursor" : null }}, "jsonrpc":"2.0", "id":"a"}}"#
    );
    let expected = result.replace(
        &format!("[ {PLAIN} ]"),
        &format!(
            "[{}]",
            PLAIN.replace(r#""properties":{"#, &format!(r#""properties":{{{REASON},"#))
        ),
    );
    assert_eq!(server(&mut proxy, &result).client, [expected]);

    let sent = call("7", "plain", r#"{ "text" : "hi" , "reason" : "to test" }"#);
    assert_eq!(
        client(&mut proxy, &sent).server,
        [call("7", "plain", r#"{"text":"hi"}"#)]
    );
    for text in [
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hi"}]}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1}}"#,
        r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#,
    ] {
        assert_eq!(server(&mut proxy, text).client, [text]);
    }
    for text in [
        r#"{"jsonrpc":"2.0","id":"s1","result":{"role":"assistant"}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"server/discover"}"#,
        &call("9", "plain", r#"{"text":"no reason"}"#),
    ] {
        assert_eq!(client(&mut proxy, text).server, [text]);
    }
}

#[test]
fn a_tool_that_owns_reason_gets_it() {
    // R5: its `reason` is a real argument.
    let mut proxy = ready(Options::default(), &[OWN]);
    let sent = call("1", "own", r#"{"reason":"mine"}"#);
    assert_eq!(client(&mut proxy, &sent).server, [sent]);
}

#[test]
fn a_call_waits_for_the_proxy_s_own_listing_whatever_the_client_does() {
    // R18 (finding 1): initialize, initialized and a call pipelined, then the client
    // closes its stdin: the call waits for the listing, which waits for the handshake.
    let mut proxy = proxy();
    let mut to_server = Vec::new();
    for line in [
        INITIALIZE,
        INITIALIZED,
        &call("1", "plain", r#"{"text":"a","reason":"SECRET"}"#),
    ] {
        to_server.extend(client(&mut proxy, line).server);
    }
    to_server.extend(wire(proxy.client_gone(now())).server);
    assert_eq!(
        to_server,
        [INITIALIZE, INITIALIZED],
        "nothing else until the handshake"
    );
    assert!(!proxy.idle(), "the call still waits");
    let after = server(&mut proxy, INITIALIZE_RESULT);
    assert_eq!(after.client, [INITIALIZE_RESULT]);
    assert!(own_listing(&after.server).is_some(), "{after:?}");
    let released = answer_own_listing(&mut proxy, &after.server, &[PLAIN]);
    assert_eq!(released.server, [call("1", "plain", r#"{"text":"a"}"#)]);
    assert!(proxy.idle());
}

#[test]
fn a_client_that_skips_initialized_is_listed_for_at_once() {
    // R18 (finding 5): the listing waits for the handshake's answer, not for a
    // notification the client may never send.
    let mut proxy = proxy();
    client(&mut proxy, INITIALIZE);
    server(&mut proxy, INITIALIZE_RESULT);
    let sent = client(&mut proxy, &call("1", "plain", r#"{"reason":"SECRET"}"#));
    assert_eq!(
        sent.server.len(),
        1,
        "the proxy's listing, at once: {sent:?}"
    );
    let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(released.server, [call("1", "plain", "{}")]);
}

#[test]
fn a_hold_that_cannot_complete_ends_in_an_error_never_in_forwarding() {
    // R18 (finding 1): a server that never answers its listing, or its `initialize`.
    for handshake in [false, true] {
        let mut proxy = proxy();
        proxy.hold = Duration::ZERO;
        let mut to_server = Vec::new();
        if handshake {
            to_server.extend(client(&mut proxy, INITIALIZE).server);
        }
        let sent = client(&mut proxy, &call("1", "plain", r#"{"reason":"SECRET"}"#));
        to_server.extend(sent.server);
        let mut answers = sent.client;
        let ticked = wire(proxy.tick(now()));
        to_server.extend(ticked.server);
        answers.extend(ticked.client);
        assert!(!leaked(&to_server, "SECRET"), "{to_server:?}");
        assert_eq!(answers.len(), 1, "{answers:?}");
        let (id, code, message) = error_of(&answers[0]);
        assert_eq!((id, code), (json!(1), INTERNAL_ERROR));
        assert!(message.contains("the call was not sent"), "{message}");
    }
}

#[test]
fn a_listing_that_fails_or_never_ends_refuses_what_waits() {
    // R18 (finding 1): an error for a listing, a cursor that comes back, and cursors
    // that are not the opaque strings MCP's pagination gives (a number, an object).
    let answers: [fn(&str) -> String; 4] = [
        |id: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"no"}}}}"#)
        },
        |id: &str| listing(id, &[PLAIN], r#","nextCursor":"again""#),
        |id: &str| listing(id, &[PLAIN], r#","nextCursor":2"#),
        |id: &str| listing(id, &[PLAIN], r#","nextCursor":{"page":2}"#),
    ];
    assert_eq!(answers.len(), 4);
    for answer in answers {
        let mut proxy = proxy();
        let mut sent = client(&mut proxy, &call("1", "plain", r#"{"reason":"SECRET"}"#));
        let mut answers = Vec::new();
        // Each page the proxy asks for is answered the same way, a few times over.
        for _ in 0..3 {
            let Some(id) = own_listing(&sent.server) else {
                break;
            };
            sent = server(&mut proxy, &answer(&id));
            answers.extend(sent.client.clone());
            assert!(!leaked(&sent.server, "SECRET"));
        }
        assert_eq!(answers.len(), 1, "{answers:?}");
        assert!(
            error_of(&answers[0])
                .2
                .contains("could not list the server's tools")
        );
    }
}

#[test]
fn a_batch_with_initialized_and_a_call_is_listed_for() {
    // R18 (finding 1): the batch waits whole; the listing does not wait for it.
    let mut proxy = proxy();
    client(&mut proxy, INITIALIZE);
    server(&mut proxy, INITIALIZE_RESULT);
    let batch = format!(
        "[{INITIALIZED},{}]",
        call("1", "plain", r#"{"reason":"SECRET","text":"a"}"#)
    );
    let sent = client(&mut proxy, &batch);
    assert!(!leaked(&sent.server, "SECRET"));
    let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(
        released.server,
        [format!(
            "[{INITIALIZED},{}]",
            call("1", "plain", r#"{"text":"a"}"#)
        )]
    );
}

#[test]
fn escaped_method_names_are_calls() {
    // R18 (finding 2)
    for method in [r#"tools\/call"#, r#"tools\u002fcall"#, r#"\u0074ools/call"#] {
        let mut proxy = proxy();
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"{method}","params":{{"name":"plain","arguments":{{"reason":"SECRET"}}}}}}"#
        );
        let sent = client(&mut proxy, &line);
        assert!(!leaked(&sent.server, "SECRET"), "{method}");
        let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
        assert_eq!(released.server.len(), 1, "{method}");
        assert!(
            !leaked(&released.server, "SECRET"),
            "{method}: {released:?}"
        );
        assert!(
            released.server[0].contains(r#""arguments":{}"#),
            "{released:?}"
        );
    }
}

#[test]
fn a_lone_surrogate_does_not_let_the_reason_through() {
    // R10 R18 (finding 3): the reason comes off; the escape stays as it was written.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let sent = client(
        &mut proxy,
        &call(
            "1",
            "plain",
            r#"{"text":"\ud83d","reason":"SECRET \ud83d"}"#,
        ),
    );
    assert_eq!(sent.server, [call("1", "plain", r#"{"text":"\ud83d"}"#)]);
    let sent = client(
        &mut proxy,
        &call("2", "plain", r#"{"\udbff":1,"reason":"SECRET"}"#),
    );
    assert_eq!(sent.server, [call("2", "plain", r#"{"\udbff":1}"#)]);
}

/// A call whose text holds a byte that is not UTF-8 (which a server's parser would turn
/// into U+FFFD and run).
fn invalid_utf8() -> Vec<u8> {
    let text = call("5", "plain", r#"{"reason":"SECRET","text":"?"}"#);
    text.into_bytes()
        .into_iter()
        .map(|byte| if byte == b'?' { 0xff } else { byte })
        .collect()
}

#[test]
fn what_the_proxy_cannot_read_is_answered_never_relayed() {
    // R18 (finding 4): each is refused with the JSON-RPC error for it, under its id when
    // the id could be read.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let params = |inner: &str| {
        format!(r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{inner}}}"#)
    };
    let cases: Vec<(Vec<u8>, Value, i64)> = vec![
        (params(r#"{"name":"plain","arguments":{},"arguments":{"reason":"SECRET"}}"#).into(), json!(5), INVALID_PARAMS),
        (params(r#"{"name":"x","name":"plain","arguments":{"reason":"SECRET"}}"#).into(), json!(5), INVALID_PARAMS),
        (br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{},"params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(), json!(null), INVALID_REQUEST),
        (br#"{"jsonrpc":"2.0","id":5,"id":6,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(), json!(null), INVALID_REQUEST),
        (br#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(), json!(null), INVALID_REQUEST),
        (br#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"}}}"#.to_vec(), json!(null), INVALID_REQUEST),
        ([&b"\xef\xbb\xbf"[..], call("5", "plain", r#"{"reason":"SECRET"}"#).as_bytes()].concat(), json!(null), jsonrpc::PARSE_ERROR),
        (params(r#"{"name":"plain","arguments":"{\"reason\":\"SECRET\"}"}"#).into(), json!(5), INVALID_PARAMS),
        (invalid_utf8(), json!(null), jsonrpc::PARSE_ERROR),
        (br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"a","cursor":"b"}}"#.to_vec(), json!(7), INVALID_PARAMS),
        // A raw control character in a key, which RFC 8259 refuses: not JSON, whichever
        // object holds it (tests/json_readers.rs found the object reader taking one).
        (params("{\"name\":\"plain\",\"arguments\":{\"k\u{1}\":1,\"reason\":\"SECRET\"}}").into(), json!(null), jsonrpc::PARSE_ERROR),
        ("{\"jsonrpc\":\"2.0\",\"id\":5,\"k\u{1f}\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"plain\",\"arguments\":{\"reason\":\"SECRET\"}}}".into(), json!(null), jsonrpc::PARSE_ERROR),
    ];
    assert_eq!(cases.len(), 12);
    for (line, id, code) in cases {
        let shown = String::from_utf8_lossy(&line).to_string();
        let sent = wire(proxy.client_sent(line, now()));
        assert_eq!(sent.server, Vec::<String>::new(), "{shown}");
        assert_eq!(sent.client.len(), 1, "{shown}");
        let (answered_id, answered_code, _) = error_of(&sent.client[0]);
        assert_eq!((answered_id, answered_code), (id, code), "{shown}");
    }
}

#[test]
fn a_2026_client_is_served_without_a_handshake() {
    // R18 (finding 5): no `initialize`; the proxy lists at once, with the client's _meta.
    let mut proxy = proxy();
    let discover = r#"{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{"_meta":{"v":"2026-07-28"}}}"#;
    assert_eq!(client(&mut proxy, discover).server, [discover]);
    let discovered = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","ttlMs":1000,"cacheScope":"session"}}"#;
    assert_eq!(server(&mut proxy, discovered).client, [discovered]);
    let line = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"},"_meta":{"v":"2026-07-28","progressToken":7},"inputResponses":{"a":1}}}"#;
    let sent = client(&mut proxy, line);
    assert_eq!(sent.server.len(), 1, "only the proxy's listing: {sent:?}");
    let listed: Value = serde_json::from_str(&sent.server[0]).unwrap();
    assert_eq!(listed["params"]["_meta"], json!({"v":"2026-07-28"}));
    let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(
        released.server,
        [line.replace(r#"{"reason":"SECRET"}"#, "{}")]
    );
}

#[test]
fn a_2026_client_s_first_call_is_listed_for_with_its_own_meta() {
    // R18, R20: the first message of the session is a call; its listing carries its
    // _meta (a server that wants a version on every request answers it).
    let mut proxy = proxy();
    let line = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"},"_meta":{"v":"B"}}}"#;
    let sent = client(&mut proxy, line);
    assert_eq!(sent.server.len(), 1, "only the proxy's listing: {sent:?}");
    let listed: Value = serde_json::from_str(&sent.server[0]).unwrap();
    assert_eq!(listed["params"]["_meta"], json!({"v":"B"}));
}

#[test]
fn clients_of_a_shared_session_are_listed_for_each_with_its_own_meta() {
    // R18, R20: A's call waits for a listing with A's _meta; the server refuses A's
    // version. Only A's call fails: B's gets a listing of its own, with B's _meta, and
    // goes on stripped.
    let mut proxy = proxy();
    let of = |id: u8, version: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"plain","arguments":{{"reason":"SECRET"}},"_meta":{{"v":"{version}"}}}}}}"#
        )
    };
    let a = client(&mut proxy, &of(1, "A"));
    assert_eq!(a.server.len(), 1, "{a:?}");
    let for_a: Value = serde_json::from_str(&a.server[0]).unwrap();
    assert_eq!(for_a["params"]["_meta"], json!({"v":"A"}));
    let b = client(&mut proxy, &of(2, "B"));
    assert!(b.server.is_empty(), "one listing at a time: {b:?}");
    let refused = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32602,"message":"unsupported version A"}}}}"#,
        for_a["id"]
    );
    let after = server(&mut proxy, &refused);
    assert_eq!(after.client.len(), 1, "A's call is refused: {after:?}");
    assert_eq!(error_of(&after.client[0]).0, json!(1));
    assert_eq!(after.server.len(), 1, "B is listed for: {after:?}");
    let for_b: Value = serde_json::from_str(&after.server[0]).unwrap();
    assert_eq!(for_b["method"], "tools/list");
    assert_eq!(for_b["params"]["_meta"], json!({"v":"B"}));
    let released = answer_own_listing(&mut proxy, &after.server, &[PLAIN]);
    assert_eq!(
        released.server,
        [of(2, "B").replace(r#"{"reason":"SECRET"}"#, "{}")]
    );
    assert!(released.client.is_empty(), "{released:?}");
}

#[test]
fn in_a_shared_session_each_client_s_calls_are_stripped_by_the_tools_declared_to_it() {
    // R5, R18: the server declares `plain` by the caller's capabilities: with a `reason`
    // of its own to X, without one to Y. X lists, then Y lists: Y's listing decides
    // nothing of X's calls. X's own reason reaches the tool; Y's model's reason does not.
    let mut proxy = proxy();
    let list = |id: &str, who: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":"{id}","method":"tools/list","params":{{"_meta":{{"who":"{who}"}}}}}}"#
        )
    };
    let call = |id: u8, who: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"plain","arguments":{{"reason":"SECRET {who}"}},"_meta":{{"who":"{who}"}}}}}}"#
        )
    };
    let listed = |proxy: &mut Proxy<ComponentLayer>, id: &str, tool: &str| {
        let listed = server(proxy, &listing(&format!(r#""{id}""#), &[tool], ""));
        assert_eq!(listed.client.len(), 1, "{listed:?}");
        listed.client[0].clone()
    };
    assert_eq!(client(&mut proxy, &list("x", "X")).server.len(), 1);
    let to_x = listed(&mut proxy, "x", PLAIN_OWNING);
    assert!(!to_x.contains(REASON), "{to_x}");
    assert_eq!(client(&mut proxy, &list("y", "Y")).server.len(), 1);
    let to_y = listed(&mut proxy, "y", PLAIN);
    assert!(to_y.contains(REASON), "{to_y}");

    // X's call: its tool owns `reason` as X was shown it, so X's reason is its own.
    let from_x = client(&mut proxy, &call(1, "X"));
    assert_eq!(from_x.server, [call(1, "X")], "{from_x:?}");
    // Y's: stripped, as Y was shown it.
    let from_y = client(&mut proxy, &call(2, "Y"));
    let stripped = call(2, "Y").replace(r#"{"reason":"SECRET Y"}"#, "{}");
    assert_eq!(from_y.server, [stripped], "{from_y:?}");
    // And X's again, after the layer read Y's tools.
    let again = client(&mut proxy, &call(3, "X"));
    assert_eq!(again.server, [call(3, "X")], "{again:?}");
}

#[test]
fn a_caller_no_listing_was_made_for_waits_for_its_own() {
    // R18: Z was never shown the tools; X's listing decides nothing of Z's call, which
    // waits for a listing made with Z's _meta.
    let mut proxy = proxy();
    let x = r#"{"jsonrpc":"2.0","id":"x","method":"tools/list","params":{"_meta":{"who":"X"}}}"#;
    client(&mut proxy, x);
    server(&mut proxy, &listing(r#""x""#, &[PLAIN], ""));
    let z = r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"its own"},"_meta":{"who":"Z"}}}"#;
    let sent = client(&mut proxy, z);
    let listed: Value = serde_json::from_str(&sent.server[0]).unwrap();
    assert_eq!(sent.server.len(), 1, "{sent:?}");
    assert_eq!(listed["method"], "tools/list");
    assert_eq!(listed["params"]["_meta"], json!({"who":"Z"}));
    let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN_OWNING]);
    assert_eq!(released.server, [z], "{released:?}");
}

#[test]
fn each_call_of_a_batch_waits_for_its_own_caller_s_listing() {
    // R5, R18: one batch carries X's call and Z's; the server declares `plain` with a
    // `reason` of its own to Z, without one to X. Each call is decided by the listing
    // made for its own caller: X's model's reason is stripped, Z's own arrives. (The
    // line once waited for its first caller's listing alone, and the other call was
    // refused as a tool nobody had listed.)
    let mut proxy = proxy();
    let call = |id: u8, who: &str| {
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"plain","arguments":{{"reason":"SECRET {who}"}},"_meta":{{"who":"{who}"}}}}}}"#
        )
    };
    let batch = format!("[{},{}]", call(1, "X"), call(2, "Z"));
    let for_x = client(&mut proxy, &batch);
    assert_eq!(for_x.server.len(), 1, "a listing for X: {for_x:?}");
    let asked: Value = serde_json::from_str(&for_x.server[0]).unwrap();
    assert_eq!(asked["params"]["_meta"], json!({"who":"X"}));
    let for_z = answer_own_listing(&mut proxy, &for_x.server, &[PLAIN]);
    assert_eq!(for_z.server.len(), 1, "a listing for Z: {for_z:?}");
    let asked: Value = serde_json::from_str(&for_z.server[0]).unwrap();
    assert_eq!(asked["params"]["_meta"], json!({"who":"Z"}));
    let released = answer_own_listing(&mut proxy, &for_z.server, &[PLAIN_OWNING]);
    let stripped = call(1, "X").replace(r#"{"reason":"SECRET X"}"#, "{}");
    assert_eq!(
        released.server,
        [format!("[{stripped},{}]", call(2, "Z"))],
        "{released:?}"
    );
    assert!(released.client.is_empty(), "{released:?}");
}

#[test]
fn a_call_after_initialize_in_its_batch_is_decided_by_the_session_s_listing() {
    // R18: after `initialize` the handshake, not a request's _meta, says who calls; a
    // call behind it in one batch waits for the listing that will decide it, made
    // without a _meta. (It waited for one made with its own _meta, then was decided
    // against the session's, which did not exist: refused as a tool nobody had listed.)
    let mut proxy = proxy();
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"SECRET"},"_meta":{"who":"X"}}}"#;
    let batch = format!("[{INITIALIZE},{call}]");
    let listed = client(&mut proxy, &batch);
    assert_eq!(listed.server.len(), 1, "{listed:?}");
    let asked: Value = serde_json::from_str(&listed.server[0]).unwrap();
    assert_eq!(asked["method"], "tools/list");
    assert_eq!(asked.get("params"), None, "{asked}");
    let released = answer_own_listing(&mut proxy, &listed.server, &[PLAIN]);
    let stripped = call.replace(r#"{"reason":"SECRET"}"#, "{}");
    assert_eq!(released.server, [format!("[{INITIALIZE},{stripped}]")]);
    assert!(released.client.is_empty(), "{released:?}");
}

#[test]
fn client_ids_in_the_proxy_s_namespace_are_ordinary_ids() {
    // R19 (finding 6)
    let mut proxy = ready(Options::default(), &[PLAIN]);
    for id in [r#""reasons-proxy/1""#, r#""reasons\u002dproxy/2""#] {
        let ping = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let ping = ping.as_str();
        assert_eq!(client(&mut proxy, ping).server, [ping]);
        let pong = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#);
        assert_eq!(server(&mut proxy, &pong).client, [pong]);
    }
}

#[test]
fn ids_match_by_value() {
    // R19 (finding 7): a listing answered under `1` for `1.0` is the client's, augmented,
    // and answered once.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    client(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"tools/list"}"#,
    );
    let answered = server(&mut proxy, &listing("1", &[PLAIN], ""));
    assert_eq!(answered.client.len(), 1);
    assert!(answered.client[0].contains(REASON), "{answered:?}");
    let again = server(&mut proxy, &listing("1e0", &[PLAIN], ""));
    assert_eq!(
        again.client,
        Vec::<String>::new(),
        "a second answer is dropped"
    );
    assert_eq!(
        wire(proxy.server_gone("it exited", now())).client,
        Vec::<String>::new()
    );
    let taken = client(&mut proxy, r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    let doubled = client(&mut proxy, r#"{"jsonrpc":"2.0","id":3.0,"method":"ping"}"#);
    assert_eq!(taken.server.len(), 1);
    assert_eq!(
        error_of(&doubled.client[0]).1,
        INVALID_REQUEST,
        "the id is in use"
    );
}

#[test]
fn a_server_that_announces_changes_on_every_listing_is_listed_once_per_call() {
    // R20 (finding 8): nothing is listed until a call needs it.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    let mut listings = 0;
    for number in 0..20 {
        // The server announces a change after each listing it answers, and before the
        // next call.
        assert_eq!(server(&mut proxy, changed).server, Vec::<String>::new());
        let sent = client(
            &mut proxy,
            &call(&number.to_string(), "plain", r#"{"reason":"SECRET"}"#),
        );
        listings += usize::from(own_listing(&sent.server).is_some());
        let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
        assert_eq!(released.server.len(), 1, "{released:?}");
        assert!(!leaked(&released.server, "SECRET"));
    }
    assert_eq!(listings, 20);
}

/// `plain` as the server declares it once it owns a `reason` of its own.
const PLAIN_OWNING: &str =
    r#"{"name":"plain","inputSchema":{"type":"object","properties":{"reason":{"type":"string"}}}}"#;
const CHANGED: &str = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;

#[test]
fn a_client_listing_asked_for_before_a_change_is_not_the_catalogue() {
    // R18, R5: the server reads the client's tools/list, changes `plain` to own a
    // `reason`, says so, then answers what it read before. That answer is not current:
    // the call waits for a listing asked for after the change, and the tool's own reason
    // reaches it.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let list = r#"{"jsonrpc":"2.0","id":"l2","method":"tools/list"}"#;
    assert_eq!(client(&mut proxy, list).server, [list]);
    assert_eq!(server(&mut proxy, CHANGED).client, [CHANGED]);
    let stale = server(&mut proxy, &listing(r#""l2""#, &[PLAIN], ""));
    let own = call("7", "plain", r#"{"reason":"its own"}"#);
    let sent = client(&mut proxy, &own);
    let asked: Vec<String> = stale.server.iter().chain(&sent.server).cloned().collect();
    assert_eq!(
        asked.len(),
        1,
        "one listing of the proxy's, nothing else: {asked:?}"
    );
    let released = answer_own_listing(&mut proxy, &asked, &[PLAIN_OWNING]);
    assert_eq!(released.server, [own], "{released:?}");
    // The client's listing, held until then, is answered as the current catalogue
    // makes it: `plain` owns the name, so nothing is added.
    let answered: Vec<&String> = stale.client.iter().chain(&released.client).collect();
    assert_eq!(answered.len(), 1, "{answered:?}");
    assert!(!answered[0].contains(REASON), "{answered:?}");
}

#[test]
fn an_own_listing_a_change_overtakes_is_asked_for_again() {
    // R18: the same race for the proxy's own listing, in the other direction: `plain`
    // no longer owns a `reason`, so the model's must not reach it.
    let mut proxy = ready(Options::default(), &[PLAIN_OWNING]);
    assert_eq!(server(&mut proxy, CHANGED).client, [CHANGED]);
    let sent = client(&mut proxy, &call("7", "plain", r#"{"reason":"SECRET"}"#));
    assert_eq!(server(&mut proxy, CHANGED).client, [CHANGED]);
    let again = answer_own_listing(&mut proxy, &sent.server, &[PLAIN_OWNING]);
    assert!(!leaked(&again.server, "SECRET"), "{again:?}");
    assert!(
        own_listing(&again.server).is_some(),
        "listed again: {again:?}"
    );
    let released = answer_own_listing(&mut proxy, &again.server, &[PLAIN]);
    assert_eq!(released.server, [call("7", "plain", "{}")], "{released:?}");
}

#[test]
fn a_server_whose_tools_change_during_every_listing_has_its_calls_refused() {
    // R18, R20: never current, so never stripped against; the proxy lists a bounded
    // number of times, then refuses, and nothing of the reason reaches the server.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    server(&mut proxy, CHANGED);
    let mut wire = client(&mut proxy, &call("7", "plain", r#"{"reason":"SECRET"}"#));
    let mut listings = 0;
    while let Some(id) = own_listing(&wire.server) {
        listings += 1;
        assert!(listings <= 16, "listed without end");
        server(&mut proxy, CHANGED);
        wire = server(&mut proxy, &listing(&id, &[PLAIN], ""));
        assert!(!leaked(&wire.server, "SECRET"), "{wire:?}");
    }
    // R18's number of listings a change may overtake in a row.
    assert_eq!(listings, 16);
    assert_eq!(wire.client.len(), 1, "{wire:?}");
    let (id, code, text) = error_of(&wire.client[0]);
    assert_eq!((id, code), (serde_json::json!(7), INTERNAL_ERROR));
    assert!(
        text.contains("changed during each of 16 listings"),
        "{text}"
    );
}

#[test]
fn the_catalogue_is_the_latest_listing_not_an_accumulation() {
    // R20 (finding 9): 200 listings of tools whose descriptions change each time.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    for number in 0..200 {
        let tool = format!(
            r#"{{"name":"t{}","description":"state {number}","inputSchema":{{"type":"object"}}}}"#,
            number % 3
        );
        let list = format!(r#"{{"jsonrpc":"2.0","id":"l{number}","method":"tools/list"}}"#);
        client(&mut proxy, &list);
        let answered = server(
            &mut proxy,
            &listing(&format!(r#""l{number}""#), &[&tool, PLAIN], ""),
        );
        assert_eq!(answered.client.len(), 1);
        assert!(answered.client[0].contains(&format!("state {number}")));
        assert_eq!(proxy.catalogues.len(), 1);
        let catalogue = proxy.catalogues.of(&None).unwrap();
        assert_eq!(
            (catalogue.declarations.len(), catalogue.names.len()),
            (2, 2)
        );
    }
}

#[test]
fn a_call_too_big_for_the_layer_goes_through_when_it_has_nothing_to_strip() {
    // R20 (finding 10): no size limit of the proxy's for what the layer leaves alone,
    // and a clear error naming the limit for what it cannot.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let huge = "a".repeat(65 << 20);
    let untouched = call("1", "plain", &format!(r#"{{"text":"{huge}"}}"#));
    assert_eq!(client(&mut proxy, &untouched).server, [untouched]);
    let stripped = call(
        "2",
        "plain",
        &format!(r#"{{"text":"{huge}","reason":"SECRET"}}"#),
    );
    let sent = client(&mut proxy, &stripped);
    assert_eq!(sent.server, Vec::<String>::new());
    let answer: Value = serde_json::from_str(&sent.client[0]).unwrap();
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("data limit of 64 MiB"), "{text}");
}

#[test]
fn refusals_in_a_batch_are_answered_in_the_batch() {
    // R19 (finding 12)
    let options = Options {
        required: true,
        ..Options::default()
    };
    let mut proxy = ready(options, &[PLAIN]);
    let ping = r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#;
    let batch = format!("[{},{ping}]", call("1", "plain", r#"{"text":"a"}"#));
    let sent = client(&mut proxy, &batch);
    assert_eq!(sent.server, [format!("[{ping}]")]);
    assert_eq!(sent.client, Vec::<String>::new(), "answered with the batch");
    let pong = r#"{"jsonrpc":"2.0","id":"p","result":{}}"#;
    let answered = server(&mut proxy, &format!("[{pong}]"));
    assert_eq!(answered.client.len(), 1);
    let answers: Vec<Value> = serde_json::from_str(&answered.client[0]).unwrap();
    assert_eq!(answers.len(), 2);
    assert_eq!(answers[0]["id"], "p");
    assert_eq!(answers[1]["id"], 1);
    assert_eq!(answers[1]["result"]["isError"], true);
}

#[test]
fn an_answer_is_the_shape_its_request_was() {
    // R19: a server that wraps the answer to a request sent alone in a batch does not
    // hand the client an array it never asked for; a batch's answers stay a batch.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    client(&mut proxy, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
    client(
        &mut proxy,
        r#"[{"jsonrpc":"2.0","id":"b","method":"ping"}]"#,
    );
    let (a, b) = (
        r#"{"jsonrpc":"2.0","id":"a","result":{}}"#,
        r#"{"jsonrpc":"2.0","id":"b","result":{}}"#,
    );
    let alone = server(&mut proxy, &format!("[{a}]"));
    assert_eq!(alone.client, [a]);
    let batched = server(&mut proxy, &format!("[{b}]"));
    assert_eq!(batched.client, [format!("[{b}]")]);
    // Both in one server batch: each as its request was.
    client(&mut proxy, r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#);
    client(
        &mut proxy,
        r#"[{"jsonrpc":"2.0","id":"b","method":"ping"}]"#,
    );
    let both = server(&mut proxy, &format!("[{a},{b}]"));
    assert_eq!(both.client, [a.to_string(), format!("[{b}]")]);
}

#[test]
fn a_tool_the_server_did_not_list_is_refused_only_with_a_reason() {
    // R18 R20: whether `reason` is its own argument is unknown; without one, nothing is
    // in doubt and the server decides.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let sent = client(&mut proxy, &call("1", "ghost", r#"{"reason":"SECRET"}"#));
    let refused = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(refused.server, Vec::<String>::new());
    assert_eq!(error_of(&refused.client[0]).1, INVALID_PARAMS);
    let plain = call("2", "ghost", r#"{"text":"a"}"#);
    let sent = client(&mut proxy, &plain);
    let released = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(released.server, [plain]);
}

#[test]
fn a_page_with_tools_the_proxy_has_not_listed_waits_for_its_listing() {
    // R8 R18: the model is offered the parameter only for tools whose calls the proxy
    // will strip.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let new = r#"{"name":"new","inputSchema":{"type":"object"}}"#;
    client(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":"p2","method":"tools/list","params":{"cursor":"2"}}"#,
    );
    let held = server(&mut proxy, &listing(r#""p2""#, &[new], ""));
    assert_eq!(held.client, Vec::<String>::new());
    let released = answer_own_listing(&mut proxy, &held.server, &[PLAIN, new]);
    assert_eq!(released.client.len(), 1);
    assert!(released.client[0].contains(REASON), "{released:?}");
    let sent = client(&mut proxy, &call("1", "new", r#"{"reason":"SECRET"}"#));
    assert_eq!(sent.server, [call("1", "new", "{}")]);
}

#[test]
fn a_proxy_that_keeps_nothing_answers_a_first_page_with_the_whole_listing() {
    // R1 R7 R8: the gateway keeps nothing between requests, so each page a client asked
    // for would cost the server a whole listing (R7 reads it whole). Answering whole
    // listings, the first page the client asked for is every page the proxy walked,
    // each augmented, in the server's order, repeats kept, without `nextCursor`; every
    // other byte of the server's first page as it came.
    let mut proxy = proxy().answering_whole_listings();
    let three = r#"{"name":"three","inputSchema":{"type":"object"}}"#;
    let asked = client(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    assert_eq!(asked.server.len(), 1);
    let first = format!(
        r#"{{"jsonrpc":"2.0", "id":1, "result": {{ "nextCursor" : "p2" , "tools": [{PLAIN}], "_meta": {{"k":1}} }}}}"#
    );
    let held = server(&mut proxy, &first);
    assert_eq!(
        held.client,
        Vec::<String>::new(),
        "held for the whole listing"
    );
    let own = own_listing(&held.server).expect("the proxy lists the server itself");
    let more = server(
        &mut proxy,
        &listing(&own, &[PLAIN], r#","nextCursor":"p2""#),
    );
    assert_eq!(more.server.len(), 1, "the next page asked for: {more:?}");
    let next: Value = serde_json::from_str(&more.server[0]).unwrap();
    let last = listing(&next["id"].to_string(), &[OWN, three, three], "");
    let released = server(&mut proxy, &last);
    assert_eq!(released.client.len(), 1, "{released:?}");
    let answer = &released.client[0];
    let augmented = |tool: &str| {
        tool.replacen(
            r#""properties":{"#,
            &format!(r#""properties":{{{REASON},"#),
            1,
        )
    };
    let plain = augmented(PLAIN);
    let three_augmented = r#"{"name":"three","inputSchema":{"type":"object","properties":{"#;
    let whole: Value = serde_json::from_str(answer).unwrap();
    let tools = whole["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4, "{answer}");
    assert_eq!(tools[0], serde_json::from_str::<Value>(&plain).unwrap());
    // A tool that owns `reason` is left alone (R5).
    assert_eq!(tools[1], serde_json::from_str::<Value>(OWN).unwrap());
    assert!(
        tools[2].to_string().starts_with(three_augmented),
        "{answer}"
    );
    assert_eq!(tools[2], tools[3], "repeats kept");
    assert_eq!(
        answer.replace(&whole["result"]["tools"].to_string(), "TOOLS"),
        r#"{"jsonrpc":"2.0", "id":1, "result": { "tools": TOOLS, "_meta": {"k":1} }}"#,
        "every other byte as the server sent it, the cursor gone"
    );
    // What the client was shown is what the proxy strips.
    let sent = client(&mut proxy, &call("2", "three", r#"{"reason":"SECRET"}"#));
    assert_eq!(sent.server, [call("2", "three", "{}")]);
    // A proxy that keeps its catalogue answers page by page, as the server did.
    let mut keeping = super::tests::proxy();
    client(
        &mut keeping,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
    );
    let held = server(&mut keeping, &first);
    let own = own_listing(&held.server).unwrap();
    let more = server(
        &mut keeping,
        &listing(&own, &[PLAIN], r#","nextCursor":"p2""#),
    );
    let next: Value = serde_json::from_str(&more.server[0]).unwrap();
    let released = server(
        &mut keeping,
        &listing(&next["id"].to_string(), &[OWN, three], ""),
    );
    let page: Value = serde_json::from_str(&released.client[0]).unwrap();
    assert_eq!(page["result"]["tools"].as_array().unwrap().len(), 1);
    assert_eq!(page["result"]["nextCursor"], "p2");
}

#[test]
fn when_the_server_goes_each_pending_request_gets_an_error() {
    // R19 R20: what was sent and what waited alike.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    client(&mut proxy, &call("5", "plain", r#"{"text":"a"}"#));
    client(&mut proxy, r#"{"jsonrpc":"2.0","id":"p","method":"ping"}"#);
    client(&mut proxy, &call("6", "ghost", r#"{"reason":"x"}"#));
    let out = wire(proxy.server_gone("it exit status: 1", now()));
    assert_eq!(out.server, Vec::<String>::new());
    let mut ids: Vec<String> = out
        .client
        .iter()
        .map(|line| error_of(line).0.to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["\"p\"", "5", "6"]);
    for line in &out.client {
        assert!(
            error_of(line)
                .2
                .contains("exited before answering (it exit status: 1)")
        );
    }
    assert!(proxy.audit().stats().contains("2 tool calls"));
}

#[test]
fn what_the_proxy_drops_from_the_server_reaches_no_side_and_is_told_to_the_human() {
    // R18: a line the proxy cannot read, and an answer to no request, go to neither side;
    // the core has no stderr of its own, so each is a note for the transport to print.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let unreadable = server(&mut proxy, "{not json");
    let unasked = server(&mut proxy, r#"{"jsonrpc":"2.0","id":77,"result":{}}"#);
    for (dropped, says) in [
        (unreadable, "dropped a line from the server"),
        (unasked, "dropped a response to no pending request (77)"),
    ] {
        assert!(
            dropped.client.is_empty() && dropped.server.is_empty(),
            "{dropped:?}"
        );
        assert_eq!(dropped.notes.len(), 1, "{dropped:?}");
        assert!(dropped.notes[0].contains(says), "{dropped:?}");
    }
}

#[test]
fn what_a_server_or_client_spells_reaches_the_human_only_as_inert_text() {
    // R12: an id the server chose and a tool name the client chose are printed on the
    // proxy's stderr, in a note and in --stats: no escape, control or reordering
    // character of theirs reaches the terminal, and no line break draws a row of its own.
    let forged = "evil\u{1b}]52;c;Y3VybA==\u{7}\u{1b}[2J\n  plain          9 calls";
    let name = serde_json::to_string(forged).unwrap();
    let declaration = format!(r#"{{"name":{name},"inputSchema":{{"type":"object"}}}}"#);
    let mut proxy = ready(Options::default(), &[PLAIN, &declaration]);
    let dropped = server(
        &mut proxy,
        "{\"jsonrpc\":\"2.0\",\"id\":\"a\u{202E}b\u{200B}\",\"result\":{}}",
    );
    assert_eq!(dropped.notes.len(), 1, "{dropped:?}");
    assert!(
        dropped.notes[0].contains("(\"ab\")"),
        "{:?}",
        dropped.notes[0]
    );
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{{"name":{name},"arguments":{{}}}}}}"#
    );
    let sent = client(&mut proxy, &call);
    assert_eq!(sent.server.len(), 1, "{sent:?}");
    server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[],"isError":true}}"#,
    );
    let stats = proxy.audit().stats();
    let rows: Vec<&str> = stats.lines().collect();
    assert_eq!(rows.len(), 2, "a header and one row: {stats:?}");
    assert_eq!(
        rows[0], "reasons: 1 tool call, 0 with a reason (0%)",
        "{stats:?}"
    );
    assert_eq!(
        rows[1], "  evil   plain          9 calls       1 call      0 with a reason (0%)",
        "{stats:?}"
    );
}

/// The outline of each line the proxy sent the server, in order.
fn outlines(out: Vec<Out>) -> Vec<Outline> {
    out.into_iter()
        .filter_map(|line| match line {
            Out::Server { outline, .. } => Some(outline),
            _ => None,
        })
        .collect()
}

#[test]
fn a_line_to_the_server_comes_with_what_it_is_owed_and_carries_as_forwarded() {
    // R9, R10: the transport learns a call's ids, method, name, protocol version and
    // arguments from the proxy's own reading, and the arguments are the ones forwarded,
    // without the reason, so that no header built from them can carry it.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let sent = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"plain","arguments":{"text":"hi","reason":"the model's secret"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let out = outlines(proxy.client_sent(sent.as_bytes().to_vec(), now()));
    assert_eq!(out.len(), 1, "{out:?}");
    let expected = Outline {
        // The fourth line to the server: `ready` sent three.
        exchange: 4,
        ids: vec![Id::parse("7").unwrap()],
        method: Some("tools/call".into()),
        name: Some("plain".into()),
        version: Some("2026-07-28".into()),
        arguments: Some(r#"{"text":"hi"}"#.into()),
        params: Vec::new(),
        cursor: None,
        own: false,
    };
    assert_eq!(out[0], expected);
    // A batch is owed the answers of its requests only: not its notification's, not its
    // response to the server's.
    let batch = r#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":2,"result":{}}]"#;
    let out = outlines(proxy.client_sent(batch.as_bytes().to_vec(), now()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ids, [Id::parse("1").unwrap()]);
    assert_eq!(out[0].method, None);
    // A response the client sends the server is owed nothing.
    let answer = r#"{"jsonrpc":"2.0","id":"s","result":{}}"#;
    let out = outlines(proxy.client_sent(answer.as_bytes().to_vec(), now()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert!(out[0].ids.is_empty(), "{out:?}");
    // A listing names the page it asks for, so that a transport can tell pages apart.
    let page = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"cursor":"p2"}}"#;
    let out = outlines(proxy.client_sent(page.as_bytes().to_vec(), now()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].cursor.as_deref(), Some("p2"));
}

#[test]
fn whatever_the_proxy_relays_is_outlined() {
    // R19, R20: a lone surrogate and nesting deeper than serde_json's 128 are what a
    // server takes, and the proxy relays them: the call is still owed its answer and
    // carries its era's version. A lone surrogate is no character: no name is read.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let sent = format!(
        r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"plain","arguments":{{"text":"\ud800","deep":{deep}}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","x":"\udc00"}}}}}}"#
    );
    let out = outlines(proxy.client_sent(sent.into_bytes(), now()));
    assert_eq!(out.len(), 1, "{out:?}");
    assert_eq!(out[0].ids, [Id::parse(r#""c""#).unwrap()]);
    assert_eq!(out[0].version.as_deref(), Some("2026-07-28"));
    assert_eq!(out[0].name.as_deref(), Some("plain"));
    assert_eq!(
        out[0].arguments.as_deref(),
        Some(format!(r#"{{"text":"\ud800","deep":{deep}}}"#).as_str())
    );
}

#[test]
fn the_proxys_own_listing_is_outlined_under_its_callers_version() {
    // A 2026-07-28 session has no handshake: a call whose tool is unknown waits for a
    // listing of the proxy's own, made with the caller's `_meta`, which goes with the
    // same version, as a request owed its answer.
    let mut proxy = proxy();
    let sent = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"r"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let out = outlines(proxy.client_sent(sent.as_bytes().to_vec(), now()));
    assert_eq!(
        out.len(),
        1,
        "the call waits for the proxy's listing: {out:?}"
    );
    assert_eq!(out[0].method.as_deref(), Some("tools/list"));
    assert_eq!(out[0].ids.len(), 1);
    assert!(out[0].ids[0].json().contains("reasons-proxy/"), "{out:?}");
    assert!(out[0].own, "{out:?}");
    assert_eq!(out[0].version.as_deref(), Some("2026-07-28"));
}

mod owed;
mod restart;

#[test]
fn over_http_a_tool_whose_header_annotations_break_the_rules_is_dropped_and_never_called() {
    // R18 (2026-07-28, Streamable HTTP): an HTTP client MUST drop a tool whose
    // x-mcp-header annotations break the rules. Over HTTP, such a tool is left out of
    // the listing a 2026-07-28 client sees, and a call to it is refused, never sent; a
    // server reached over stdio, and a legacy session, keep it (R20: no header is built
    // for either).
    const BROKEN: &str = r#"{"name":"broken","inputSchema":{"type":"object","properties":{"score":{"type":"number","x-mcp-header":"Score"}}}}"#;
    let list =
        r#"{"jsonrpc":"2.0","id":"l","method":"tools/list","params":{"_meta":{"v":"2026-07-28"}}}"#;
    let listed_names = |wire: &Wire| -> Vec<String> {
        assert_eq!(wire.client.len(), 1, "{wire:?}");
        let answer: Value = serde_json::from_str(&wire.client[0]).unwrap();
        let tools = answer["result"]["tools"].as_array().unwrap();
        tools
            .iter()
            .map(|tool| tool["name"].as_str().unwrap().to_string())
            .collect()
    };
    let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"broken","arguments":{"score":1.5,"reason":"SECRET"},"_meta":{"v":"2026-07-28"}}}"#;

    let mut http = proxy().over_http();
    assert_eq!(client(&mut http, list).server, [list]);
    let answered = server(&mut http, &listing(r#""l""#, &[PLAIN, BROKEN], ""));
    assert_eq!(listed_names(&answered), ["plain"]);
    let refused = client(&mut http, call);
    assert!(refused.server.is_empty(), "{refused:?}");
    assert_eq!(refused.client.len(), 1, "{refused:?}");
    let (id, code, message) = error_of(&refused.client[0]);
    assert_eq!((id, code), (json!(2), INVALID_PARAMS));
    assert!(message.contains("x-mcp-header"), "{message}");

    // Over stdio the same listing and call go as ever, stripped.
    let mut stdio = proxy();
    assert_eq!(client(&mut stdio, list).server, [list]);
    let answered = server(&mut stdio, &listing(r#""l""#, &[PLAIN, BROKEN], ""));
    assert_eq!(listed_names(&answered), ["plain", "broken"]);
    let sent = client(&mut stdio, call);
    assert_eq!(sent.server.len(), 1, "{sent:?}");
    assert!(!leaked(&sent.server, "SECRET"));

    // A legacy session over HTTP keeps it too.
    let mut legacy = ready(Options::default(), &[PLAIN, BROKEN]).over_http();
    let legacy_call = call.replace(r#","_meta":{"v":"2026-07-28"}"#, "");
    let sent = client(&mut legacy, &legacy_call);
    assert_eq!(sent.server.len(), 1, "{sent:?}");
}

#[test]
fn the_audit_record_speaks_sep_2817_s_words_and_the_client_s_invocation_passes_untouched() {
    // R12: the model's reason as `invocationReason.text`, the client's `turnId` and model
    // name where its call sent them; the client's own `aiInvocation` (its `_meta`)
    // reaches the server untouched, and the model's reason never does.
    let meta = r#""_meta":{"io.modelcontextprotocol/aiInvocation":{"invocationReason":{"text":"the client's"},"turnId":"t-7","model":{"name":"m-1"}}}"#;
    let line = format!(
        r#"{{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{{"name":"plain","arguments":{{"reason":"the model's","text":"x"}},{meta}}}}}"#
    );
    let mut proxy = ready_auditing(Options::default(), &[PLAIN], Audit::new(true, false));
    let sent = client(&mut proxy, &line);
    assert_eq!(sent.server.len(), 1, "{sent:?}");
    assert!(sent.server[0].contains(meta), "{sent:?}");
    assert!(!leaked(&sent.server, "the model's"), "{sent:?}");
    let answered = server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
    );
    assert_eq!(answered.records.len(), 1, "{answered:?}");
    let record: Value = serde_json::from_str(&answered.records[0]).unwrap();
    assert_eq!(
        record["aiInvocation"],
        json!({"invocationReason": {"text": "the model's"}, "turnId": "t-7", "model": {"name": "m-1"}}),
        "{record}"
    );
    assert_eq!(record["reason"], "the model's");
}

#[test]
fn the_audit_record_is_an_output_made_only_when_records_are_wanted() {
    // The core writes no file: each call's record comes out with the lines it answers,
    // for the transport's log, and names the digest of the arguments exactly as the
    // server received them; with no log, no record and no digest are made.
    let arguments = r#"{"text":"a b","reason":"the model's"}"#;
    let line = call("5", "plain", arguments);
    let mut recording = ready_auditing(Options::default(), &[PLAIN], Audit::new(true, false));
    let sent = client(&mut recording, &line);
    assert_eq!(sent.server.len(), 1, "{sent:?}");
    assert!(sent.records.is_empty(), "no outcome yet: {sent:?}");
    let answer = r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#;
    let out = recording.server_sent(answer.as_bytes().to_vec(), now());
    // The record goes out before the answer: in the log before the client has it.
    assert_eq!(out.len(), 2, "a record and the answer");
    assert!(matches!(out[0], Out::Record(_)) && matches!(out[1], Out::Client(_)));
    let answered = wire(out);
    assert_eq!(answered.records.len(), 1, "{answered:?}");
    let record: Value = serde_json::from_str(&answered.records[0]).unwrap();
    let received: Value = serde_json::from_str(&sent.server[0]).unwrap();
    let text = serde_json::to_string(&received["params"]["arguments"]).unwrap();
    assert_eq!(text, r#"{"text":"a b"}"#);
    use sha2::Digest;
    let digest = format!("{:x}", sha2::Sha256::digest(text.as_bytes()));
    assert_eq!(record["arguments_sha256"], json!(digest), "{record}");
    assert_eq!(record["reason"], "the model's");
    assert_eq!(record["tool"], "plain");

    let mut quiet = ready_auditing(Options::default(), &[PLAIN], Audit::new(false, false));
    client(&mut quiet, &line);
    let answered = server(
        &mut quiet,
        r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#,
    );
    assert!(answered.records.is_empty(), "{answered:?}");
}

#[test]
fn a_span_tells_what_the_layer_did_with_each_call_and_never_the_reason() {
    let mut proxy = ready(Options::default(), &[PLAIN, OWN]).with_telemetry();
    let traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let stripped = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"plain","arguments":{{"text":"hi","reason":"to test é"}},"_meta":{{"traceparent":"{traceparent}"}}}}}}"#
    );
    let sent = client(&mut proxy, &stripped);
    assert_eq!(sent.server.len(), 1);
    assert!(sent.spans.is_empty(), "a span ends with its answer");
    let answer = r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#;
    let answered = server(&mut proxy, answer);
    assert_eq!(answered.spans.len(), 1, "{answered:?}");
    let span = &answered.spans[0];
    assert_eq!(span.method, "tools/call");
    assert_eq!(span.tool.as_deref(), Some("plain"));
    assert_eq!(span.request_id, "7");
    assert_eq!(span.error, None);
    assert!(!span.held);
    assert!(span.upstream.is_some(), "it went on to the server");
    assert_eq!(
        span.call,
        Some(CallFacts {
            augmented: true,
            reason: Some(9),
            fate: CallFate::Stripped
        })
    );
    let resource = crate::telemetry::otlp::Resource {
        service: "reasons".into(),
        attributes: Vec::new(),
    };
    let body = crate::telemetry::otlp::traces(&resource, &answered.spans);
    assert!(!body.contains("to test"), "{body}");
    let parent = span.parent.expect("the client's trace context");
    assert_eq!(
        parent.span_id,
        [0xb7, 0xad, 0x6b, 0x71, 0x69, 0x20, 0x33, 0x31]
    );
    assert_eq!(parent.flags, 1);

    // The tool's own reason is not the model's: not augmented, no reason given.
    let own = call("8", "own", r#"{"reason":"the tool's own"}"#);
    assert_eq!(client(&mut proxy, &own).server, [own.as_str()]);
    let answered = server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":8,"result":{"content":[]}}"#,
    );
    assert_eq!(answered.spans.len(), 1);
    let facts = answered.spans[0].call.unwrap();
    assert_eq!((facts.augmented, facts.reason), (false, None));
    assert_eq!(facts.fate, CallFate::Forwarded);
    assert_eq!(answered.spans[0].parent, None);

    // A call to a tool the listing lacks, carrying a reason: held for a listing of the
    // proxy's own, then refused here, its span ended by the proxy's own answer, with the
    // error's code.
    let unknown = call("9", "gone", r#"{"reason":"why"}"#);
    let held = client(&mut proxy, &unknown);
    assert!(held.spans.is_empty());
    let refused = answer_own_listing(&mut proxy, &held.server, &[PLAIN, OWN]);
    assert!(refused.server.is_empty());
    assert_eq!(refused.spans.len(), 1, "{refused:?}");
    assert!(refused.spans[0].held);
    assert_eq!(refused.spans[0].error, Some(Failure::Code(INVALID_PARAMS)));
    assert_eq!(refused.spans[0].call.unwrap().fate, CallFate::Refused);
    assert_eq!(refused.spans[0].upstream, None, "it never went on");

    // Other requests have spans too, without call facts.
    let list = r#"{"jsonrpc":"2.0","id":"l2","method":"tools/list"}"#;
    client(&mut proxy, list);
    let listed = server(&mut proxy, &listing(r#""l2""#, &[PLAIN], ""));
    assert_eq!(listed.spans.len(), 1);
    assert_eq!(
        (listed.spans[0].method.as_str(), listed.spans[0].call),
        ("tools/list", None)
    );
}

#[test]
fn a_call_held_for_a_listing_says_so_and_its_span_spans_the_wait() {
    let mut proxy = proxy().with_telemetry();
    let sent = client(
        &mut proxy,
        &call("1", "plain", r#"{"text":"a","reason":"r"}"#),
    );
    // No listing yet: the call waits for the proxy's own.
    let answered = answer_own_listing(&mut proxy, &sent.server, &[PLAIN]);
    assert_eq!(answered.server.len(), 1, "{answered:?}");
    let done = server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
    );
    assert_eq!(done.spans.len(), 1);
    assert!(done.spans[0].held);
    assert_eq!(done.spans[0].call.unwrap().fate, CallFate::Stripped);
}

#[test]
fn a_span_carries_at_most_a_short_name_of_what_the_client_named() {
    let mut proxy = ready(Options::default(), &[PLAIN]).with_telemetry();
    let long = "m".repeat(5000);
    let request = format!(r#"{{"jsonrpc":"2.0","id":"{long}","method":"{long}"}}"#);
    let sent = client(&mut proxy, &request);
    assert_eq!(sent.server.len(), 1);
    let answer = format!(r#"{{"jsonrpc":"2.0","id":"{long}","result":{{}}}}"#);
    let answered = server(&mut proxy, &answer);
    assert_eq!(answered.spans.len(), 1);
    assert_eq!(answered.spans[0].method.chars().count(), 128);
    assert_eq!(answered.spans[0].request_id.chars().count(), 128);
}

#[test]
fn a_request_refused_for_reusing_an_id_in_flight_has_its_own_span_and_leaves_the_first_s_open() {
    // A client chooses its ids: one reused while its request is in flight must not end
    // that request's span with the refusal's answer.
    let mut proxy = ready(Options::default(), &[PLAIN]).with_telemetry();
    let first = call("7", "plain", r#"{"text":"a","reason":"r"}"#);
    let sent = client(&mut proxy, &first);
    assert_eq!(sent.server.len(), 1);
    assert!(sent.spans.is_empty());
    let twin = client(&mut proxy, &call("7", "plain", r#"{"text":"b"}"#));
    assert!(twin.server.is_empty(), "{twin:?}");
    assert_eq!(twin.client.len(), 1, "{twin:?}");
    assert!(twin.client[0].contains("already in use"), "{twin:?}");
    assert_eq!(twin.spans.len(), 1, "{twin:?}");
    assert_eq!(twin.spans[0].error, Some(Failure::Code(INVALID_REQUEST)));
    assert_eq!(twin.spans[0].upstream, None, "it never went on");
    assert_eq!(twin.spans[0].tool.as_deref(), Some("plain"));

    let answered = server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":7,"result":{"content":[]}}"#,
    );
    assert_eq!(answered.spans.len(), 1, "{answered:?}");
    let span = &answered.spans[0];
    assert_eq!(span.error, None);
    assert!(span.upstream.is_some(), "the first went on to the server");
    assert_eq!(span.call.map(|facts| facts.fate), Some(CallFate::Stripped));
}

#[test]
fn a_request_its_client_cancelled_ends_its_span_and_a_late_answer_ends_none() {
    // A session of many cancelled requests would otherwise hold their spans open until
    // no span is opened at all.
    let mut proxy = ready(Options::default(), &[PLAIN]).with_telemetry();
    let sent = client(
        &mut proxy,
        &call("9", "plain", r#"{"text":"a","reason":"r"}"#),
    );
    assert_eq!(sent.server.len(), 1);
    let cancel = r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":9}}"#;
    let cancelled = client(&mut proxy, cancel);
    assert_eq!(cancelled.server, [cancel], "the server is told");
    assert_eq!(cancelled.spans.len(), 1, "{cancelled:?}");
    assert_eq!(cancelled.spans[0].error, Some(Failure::Cancelled));
    assert_eq!(cancelled.spans[0].tool.as_deref(), Some("plain"));
    let late = server(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":9,"result":{"content":[]}}"#,
    );
    assert!(late.spans.is_empty(), "{late:?}");
    // A cancellation of nothing in flight ends nothing.
    let stray =
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"x"}}"#;
    assert!(client(&mut proxy, stray).spans.is_empty());
}
