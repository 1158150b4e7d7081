//! The wasi:http gateway (`reasons-gateway.wasm`, as `reasons component` writes it) on
//! real engines, `wasmtime serve` (a fresh instance per request) and `jco serve` (one
//! instance for all), each test on each, in front of the tests' own Streamable HTTP server
//! (`tests/mcp/http-echo.mjs`, which logs every HTTP request it gets) and in front of the
//! SDKs' own clients. The oracle is the server's log, read with serde_json, and what a
//! client is answered.

use reasons_test_support::mcp::*;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};

/// The tests' own server, logging to `dir/http.jsonl`, and the gateway in front of it.
fn behind_gateway(
    engine: Engine,
    dir: &Path,
    env: &[(&str, &str)],
) -> (Listening, Listening, PathBuf) {
    behind_gateway_of(engine, dir, &[], env)
}

/// Runs `test` on each engine, with a folder of its own, saying which on failure.
fn on_each_engine(test: impl Fn(Engine, &Path)) {
    for engine in ENGINES {
        eprintln!("on {engine:?}");
        let dir = tempfile::tempdir().unwrap();
        test(engine, dir.path());
    }
}

#[test]
fn a_legacy_session_through_the_gateway_loses_only_the_models_reason() {
    // R9 R5 R1, on wasmtime serve, which makes a fresh instance for every request: each
    // call is stripped on the listing the gateway makes for it, in the client's session.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let (status, session, messages) = initialize(&gateway.url);
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(
            session, "session-1f2e",
            "the upstream's session id reaches the client"
        );
        let with_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let (status, messages) = post(&gateway.url, &with_session, INITIALIZED);
        assert_eq!((status, messages.len()), (202, 0));
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
        let (status, messages) = post(&gateway.url, &with_session, list);
        assert_eq!(status, 200);
        let tools = the_answer(&messages)["result"]["tools"]
            .as_array()
            .unwrap()
            .clone();
        assert_eq!(tools.len(), HTTP_ECHO_TOOLS, "{tools:#?}");
        for tool in &tools {
            assert!(
                tool["inputSchema"]["properties"]["reason"].is_object(),
                "{tool}"
            );
        }
        let record = call(3, "record", r#"{"text":"hi","reason":"to test"}"#, false);
        let (status, messages) = post(&gateway.url, &with_session, &record);
        assert_eq!(status, 200);
        assert_eq!(result_text(the_answer(&messages)), r#"{"text":"hi"}"#);
        let note = call(4, "note", r#"{"reason":"the tool's own"}"#, false);
        let (_, messages) = post(&gateway.url, &with_session, &note);
        assert_eq!(
            result_text(the_answer(&messages)),
            r#"{"reason":"the tool's own"}"#
        );
        // An answer on an SSE stream, after a notification that relates to it: both reach
        // the client, as a stream.
        let stream = call(5, "stream", r#"{"text":"s","reason":"r"}"#, false);
        let (status, messages) = post(&gateway.url, &with_session, &stream);
        assert_eq!(status, 200);
        assert_eq!(messages.len(), 2, "{messages:#?}");
        assert_eq!(messages[0]["method"], "notifications/progress");
        assert_eq!(result_text(the_answer(&messages)), r#"{"text":"s"}"#);

        let calls = calls_received(&log);
        assert_eq!(calls.len(), 3, "{calls:#?}");
        for call in &calls {
            let body: Value = serde_json::from_str(call["body"].as_str().unwrap()).unwrap();
            let reaches = body["params"]["name"] == "note";
            assert_eq!(
                body["params"]["arguments"].get("reason").is_some(),
                reaches,
                "{call}"
            );
            assert_eq!(call["headers"]["mcp-session-id"], "session-1f2e", "{call}");
            assert!(!call["headers"].to_string().contains("to test"), "{call}");
        }
        // Each call was stripped on a listing the gateway made for it, in the same session.
        let own_listings = http_received(&log)
            .into_iter()
            .filter(|request| {
                request["body"]
                    .as_str()
                    .unwrap_or("")
                    .contains("reasons-proxy/")
            })
            .collect::<Vec<_>>();
        assert_eq!(own_listings.len(), 3, "{own_listings:#?}");
        for listing in &own_listings {
            assert_eq!(
                listing["headers"]["mcp-session-id"], "session-1f2e",
                "{listing}"
            );
        }
    });
}

#[test]
fn a_2026_request_carries_headers_rebuilt_from_what_was_forwarded() {
    // R9 R10 for 2026-07-28: Mcp-Method, Mcp-Name and the Mcp-Param-* a schema asks for
    // are rebuilt from the call as forwarded; a header the client sent for them is not
    // passed on, so none can carry the reason.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let record = call(
            7,
            "record",
            r#"{"text":"t","region":"eu","reason":"secret"}"#,
            true,
        );
        // R18: an Mcp-Name that disagrees with the body is refused as the specification
        // says, and nothing goes upstream.
        let twice = [("Mcp-Name", "record"), ("Mcp-Name", "secret")];
        for forged in [&[("Mcp-Name", "secret")][..], &twice] {
            let (status, messages) = post(&gateway.url, forged, &record);
            assert_eq!(status, 400, "{forged:?}: {messages:?}");
            assert_eq!(the_answer(&messages)["error"]["code"], -32020);
        }
        assert!(!log.exists() || calls_received(&log).is_empty());
        let forged = [
            ("Mcp-Param-Reason", "secret"),
            // The client's credentials go upstream.
            ("Authorization", "Bearer the-clients"),
        ];
        let (status, messages) = post(&gateway.url, &forged, &record);
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(
            result_text(the_answer(&messages)),
            r#"{"text":"t","region":"eu"}"#
        );
        let calls = calls_received(&log);
        assert_eq!(calls.len(), 1, "{calls:#?}");
        let headers = &calls[0]["headers"];
        assert_eq!(headers["mcp-method"], "tools/call");
        assert_eq!(headers["mcp-name"], "record");
        assert_eq!(headers["mcp-param-region"], "eu");
        assert_eq!(headers["mcp-protocol-version"], "2026-07-28");
        assert_eq!(headers["authorization"], "Bearer the-clients");
        assert!(!headers.to_string().contains("secret"), "{headers}");
        assert!(!calls[0]["body"].as_str().unwrap().contains("secret"));
    });
}

#[test]
fn what_the_gateway_cannot_classify_is_refused_and_never_forwarded() {
    // R18: no listing, no augmented tools. An upstream that cannot be reached, or that answers
    // the listing with an error, leaves every call carrying the parameter unsent; a tool
    // the upstream does not list is refused too.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let unknown = call(8, "nowhere", r#"{"reason":"r"}"#, true);
        let (status, messages) = post(&gateway.url, &[], &unknown);
        assert_eq!(status, 200);
        let answer = the_answer(&messages);
        assert!(
            answer["error"]["message"]
                .as_str()
                .unwrap()
                .contains("not sent"),
            "{answer}"
        );
        assert_eq!(calls_received(&log).len(), 0);
        // What the proxy's reader refuses (a key given twice, a byte-order mark, no
        // JSON) and a batch are answered as the front answers them, with 400 and the
        // error under the id where it was read (one intake), and go nowhere.
        let unread = [
            (
                r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","method":"ping"}"#,
                json!(null),
            ),
            (
                "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}",
                json!(null),
            ),
            ("not json", json!(null)),
            (r#"[{"jsonrpc":"2.0","id":7,"method":"ping"}]"#, json!(null)),
            (
                r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
                json!(7),
            ),
        ];
        assert_eq!(unread.len(), 5);
        for (body, id) in unread {
            let (status, messages) = post(&gateway.url, &[], body);
            assert_eq!(status, 400, "{body}: {messages:?}");
            assert_eq!(the_answer(&messages)["id"], id, "{body}: {messages:?}");
        }
        assert_eq!(calls_received(&log).len(), 0);

        // An upstream that answers every POST with an error status: the listing fails,
        // the call is refused, and the client hears the upstream's status.
        let refusing_log = dir.join("refusing.jsonl");
        let refusing = http_echo_with(&refusing_log, &["--refuse-posts"]);
        let wasm = gateway_wasm(dir);
        let listing_fails =
            Listening::gateway(engine, &wasm, &[("REASONS_UPSTREAM", &refusing.url)]);
        let record = call(9, "record", r#"{"text":"x","reason":"r"}"#, true);
        let (status, messages) = post(&listing_fails.url, &[], &record);
        assert_eq!(status, 501, "{messages:?}");
        assert_not_sent(&messages, "the server's tools");
        assert_eq!(listings_received(&refusing_log), 1);
        assert_eq!(calls_received(&refusing_log).len(), 0);
        // Nothing listens here at all.
        let nowhere = Listening::gateway(
            engine,
            &wasm,
            &[("REASONS_UPSTREAM", "http://127.0.0.1:9/mcp")],
        );
        let (status, messages) = post(&nowhere.url, &[], &record);
        assert_eq!(status, 200, "{messages:?}");
        assert_not_sent(&messages, "the server's tools");
        assert_eq!(calls_received(&log).len(), 0);
    });
}

#[test]
fn a_gateway_without_its_settings_names_what_is_missing() {
    on_each_engine(|engine, dir| {
        let wasm = gateway_wasm(dir);
        let unset = Listening::gateway(engine, &wasm, &[]);
        let (status, messages) = post(&unset.url, &[], INITIALIZE);
        assert_eq!(status, 500);
        assert!(
            messages[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("REASONS_UPSTREAM")
        );
        let bad = Listening::gateway(
            engine,
            &wasm,
            &[
                ("REASONS_UPSTREAM", "http://127.0.0.1:9/mcp"),
                ("REASONS_POSITION", "middle"),
            ],
        );
        let (status, messages) = post(&bad.url, &[], INITIALIZE);
        assert_eq!(status, 500);
        assert!(
            messages[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("REASONS_POSITION")
        );
        // Every client gets the error: it names the setting and never shows a secret.
        let upstream = "http://127.0.0.1:9/mcp?key=s3cret";
        let secrets: [(&[(&str, &str)], &str); 2] = [
            (
                &[("REASONS_UPSTREAM", "http://user:s3cret@127.0.0.1:9/mcp")],
                "REASONS_UPSTREAM",
            ),
            (
                &[
                    ("REASONS_UPSTREAM", upstream),
                    ("REASONS_HEADERS", "Authorization: Bearer s3cret\u{7}"),
                ],
                "REASONS_HEADERS: line 1, Authorization,",
            ),
        ];
        for (settings, named) in secrets {
            let secret = Listening::gateway(engine, &wasm, settings);
            let (status, messages) = post(&secret.url, &[], INITIALIZE);
            assert_eq!((status, messages.len()), (500, 1), "{messages:?}");
            let message = messages[0]["error"]["message"].as_str().unwrap();
            assert!(message.contains(named), "{message}");
            assert!(!message.contains("s3cret"), "{message}");
        }
    });
}

/// An SDK's own Streamable HTTP server of the tests', logging each POST's body to a file.
type SdkServer = fn(&Path) -> Listening;

/// The engines for a server that keeps a session's GET stream open: jco's default runs
/// one request at a time, so the relayed stream would hold the session's next request
/// back; with a worker per request it serves them side by side.
const STANDING_STREAM: [Engine; 2] = [Engine::Wasmtime, Engine::JcoIsolated];

#[test]
fn sdk_clients_through_the_gateway_send_the_sdk_servers_what_they_send_them_directly() {
    // R9, R5, the transparency test through the gateway: the SDKs' clients (TypeScript
    // 1.x and 2.x, Python) in front of the SDKs' servers (TypeScript 1.x and 2.x, Python
    // FastMCP). Each server's transcript is the one the same client makes directly,
    // message by message, less the model's reason and less the listings the gateway makes
    // of its own (each call's, as a fresh instance knows no tools): every tool gains the
    // parameter, a tool's own `reason` arrives, no other reason does.
    let servers: [(&str, SdkServer, &[&str], [Engine; 2]); 3] = [
        (
            "TypeScript 1.x",
            own_server_http,
            &["node", "python"],
            STANDING_STREAM,
        ),
        // The 2.x client speaks 2026-07-28 alone, which only this server serves; it
        // keeps no GET stream open.
        (
            "TypeScript 2.x",
            own_server2_http,
            &["node", "node2", "python"],
            ENGINES,
        ),
        (
            "Python FastMCP",
            python_http,
            &["node", "python"],
            STANDING_STREAM,
        ),
    ];
    assert_eq!(servers.len(), 3);
    let calls = json!([
        {"name": "record", "arguments": {"text": "hi", "reason": "to test"}},
        {"name": "note", "arguments": {"reason": "the tool's own"}}
    ]);
    for (server, start, clients, engines) in servers {
        for client in clients {
            let dir = tempfile::tempdir().unwrap();
            let direct_log = dir.path().join("direct");
            let direct = start(&direct_log);
            sdk_client_over(
                client,
                calls.clone(),
                vec!["--url".into(), direct.url.clone()],
            );
            let direct = received(&direct_log);
            for engine in engines {
                eprintln!("{client} client, {server} server, on {engine:?}");
                let proxied_log = dir.path().join(format!("{engine:?}"));
                let upstream = start(&proxied_log);
                let gateway = Listening::gateway(
                    engine,
                    &gateway_wasm(dir.path()),
                    &[("REASONS_UPSTREAM", &upstream.url)],
                );
                let session = sdk_client_over(
                    client,
                    calls.clone(),
                    vec!["--url".into(), gateway.url.clone()],
                );
                let results = session["results"].as_array().unwrap();
                assert_eq!(results.len(), 2, "{session}");
                assert!(
                    results[1].to_string().contains("the tool's own"),
                    "{session}"
                );
                let tools = session["tools"].as_array().unwrap();
                assert!(!tools.is_empty());
                for tool in tools {
                    let reason = &tool["inputSchema"]["properties"]["reason"];
                    assert!(reason.is_object(), "{tool}");
                }
                let proxied: Vec<String> = received(&proxied_log)
                    .into_iter()
                    .filter(|line| !line.contains("\"reasons-proxy/"))
                    .collect();
                assert_transcript_less_the_reason(client, &direct, &proxied);
            }
        }
    }
}

#[test]
fn a_listing_that_never_ends_or_never_comes_sends_no_call() {
    // R18, fail closed: an upstream whose tools/list pages for ever, or never answers
    // (far past the gateway's one-second wait), leaves every call unsent and answered
    // with an error.
    for engine in ENGINES {
        eprintln!("on {engine:?}");
        for (flag, waits) in [("--endless-pages", "300"), ("--hang-list", "1")] {
            let dir = tempfile::tempdir().unwrap();
            let env = [("REASONS_READ_TIMEOUT_SECS", waits)];
            let (_server, gateway, log) = behind_gateway_of(engine, dir.path(), &[flag], &env);
            let record = call(1, "record", r#"{"text":"x","reason":"r"}"#, true);
            let (_, messages) = post(&gateway.url, &[], &record);
            let refused = the_answer(&messages);
            let why = refused["error"]["message"]
                .as_str()
                .unwrap_or_else(|| panic!("{flag}: {refused}"));
            assert!(why.contains("not sent"), "{flag}: {why}");
            assert_eq!(calls_received(&log).len(), 0, "{flag}");
        }
    }
}

#[test]
fn the_get_stream_and_delete_are_relayed() {
    // What the server sends on its own reaches the client through the proxy; ending the
    // session reaches the server.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let (_, session, _) = initialize(&gateway.url);
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let (status, _, messages) = answered(
            agent
                .get(&gateway.url)
                .header("Accept", "text/event-stream")
                .header("Mcp-Session-Id", &session)
                .call()
                .unwrap(),
        );
        assert_eq!(status, 200);
        assert_eq!(messages.len(), 1, "{messages:?}");
        assert_eq!(messages[0]["params"]["data"], "from the GET stream");
        let deleted = agent
            .delete(&gateway.url)
            .header("Mcp-Session-Id", &session)
            .call()
            .unwrap();
        assert_eq!(deleted.status().as_u16(), 200);
        let received = http_received(&log);
        let methods: Vec<&str> = received
            .iter()
            .map(|r| r["method"].as_str().unwrap())
            .collect();
        assert_eq!(methods, ["POST", "GET", "DELETE"]);
        assert_eq!(received[2]["headers"]["mcp-session-id"], "session-1f2e");
    });
}

#[test]
fn each_call_is_stripped_on_a_listing_made_with_its_own_callers_credentials() {
    // Stateless: no caller's listing serves another's. The listing each call is stripped
    // on went upstream with that call's own `Authorization`, just before it.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        for caller in ["Bearer alice", "Bearer bob", "Bearer alice"] {
            let record = call(1, "record", r#"{"text":"x","reason":"r"}"#, true);
            let (status, messages) = post(&gateway.url, &[("Authorization", caller)], &record);
            assert_eq!(status, 200);
            assert_eq!(result_text(the_answer(&messages)), r#"{"text":"x"}"#);
        }
        let received = http_received(&log);
        assert_eq!(received.len(), 6, "{received:#?}");
        for pair in received.chunks(2) {
            let (listing, call) = (&pair[0], &pair[1]);
            assert!(
                listing["body"].as_str().unwrap().contains("tools/list"),
                "{listing}"
            );
            assert!(
                call["body"].as_str().unwrap().contains("tools/call"),
                "{call}"
            );
            assert_eq!(
                listing["headers"]["authorization"],
                call["headers"]["authorization"]
            );
        }
        let callers: Vec<&Value> = received
            .iter()
            .map(|r| &r["headers"]["authorization"])
            .collect();
        assert_eq!(callers[1], "Bearer alice");
        assert_eq!(callers[3], "Bearer bob");
    });
}

#[test]
fn a_message_over_the_cap_is_refused_from_either_side_and_never_relayed() {
    // A client's message over REASONS_MAX_MESSAGE_MIB is refused before anything goes
    // upstream; a server's answer over it reaches the client as an error, not in part.
    on_each_engine(|engine, dir| {
        let cap = [("REASONS_MAX_MESSAGE_MIB", "1")];
        let (_server, gateway, log) = behind_gateway(engine, dir, &cap);
        let large = format!(r#"{{"text":"{}"}}"#, "x".repeat(2 << 20));
        match try_post(&gateway.url, &[], &call(1, "record", &large, true)) {
            Ok((status, _)) => assert_eq!(status, 413),
            // The engine may close the connection on its 413 while the rest of the body
            // is still going up: refused unread all the same.
            Err(ureq::Error::Io(error)) => eprintln!("cut off while sending: {error}"),
            Err(error) => panic!("{error}"),
        }
        // The server logs each request it gets: no log, no request.
        assert!(!log.exists(), "{:?}", http_received(&log));

        // Under the cap going up, twice its size coming back: `record` answers with its
        // arguments as JSON text inside JSON text, so each `\"` sent comes back as four
        // bytes.
        let quotes = format!(r#"{{"text":"{}"}}"#, r#"\""#.repeat(350_000));
        let (status, messages) = post(&gateway.url, &[], &call(2, "record", &quotes, true));
        assert_eq!(status, 200, "{messages:?}");
        let answer = the_answer(&messages);
        let why = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(why.contains("cap"), "{answer}");
        assert_eq!(calls_received(&log).len(), 1);
    });
}

#[test]
fn what_a_server_does_to_a_call_through_the_gateway_still_answers_it_once() {
    // R19: an error status, a stream that ends first, an SSE event whose data never ends
    // (past a 1 MiB cap), an answer whose whitespace hides a forged second answer behind
    // carriage returns, and a batch of the answer and a forged one: each call gets
    // exactly one answer, its own, saying what happened; no answer to a request the
    // client never made.
    on_each_engine(|engine, dir| {
        let cap = [("REASONS_MAX_MESSAGE_MIB", "1")];
        let (_server, gateway, _log) = behind_gateway(engine, dir, &cap);
        // Each case: the tool, the status the client gets, what its answer must say.
        let cases = [
            ("fail", 500, "HTTP 500"),
            ("drop", 200, "ended before it answered"),
            ("endless", 200, "cap"),
            ("crlf", 200, "real"),
            ("batch", 200, "real"),
        ];
        assert_eq!(cases.len(), 5);
        for (tool, status_wanted, says) in cases {
            let (status, messages) = post(&gateway.url, &[], &call(2, tool, "{}", true));
            assert_eq!(status, status_wanted, "{tool}: {messages:?}");
            let answer = the_answer(&messages);
            assert_eq!(answer["id"], 2, "{tool}: {answer}");
            let said = answer["error"]["message"]
                .as_str()
                .or(answer["result"]["content"][0]["text"].as_str())
                .unwrap_or_default();
            assert!(said.contains(says), "{tool}: {answer}");
            assert!(!said.contains('\r'), "{tool}: {answer}");
        }
    });
}

#[test]
fn what_a_web_page_can_send_is_refused_before_anything_goes_upstream() {
    // A page's no-cors fetch or form POST (text/plain, form-encoded) needs no preflight;
    // a page's request carries `Origin`. The gateway serves native clients, and a page
    // only of its own origin on a loopback name, so no other page can spend the
    // credentials its browser holds: each is refused, and the upstream hears nothing.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let both = "application/json, text/event-stream";
        let record = call(1, "record", r#"{"text":"x","reason":"r"}"#, true);
        // Each case: Content-Type, Accept, Origin (empty: none), and the status.
        let cases = [
            ("text/plain;charset=UTF-8", both, "", 415),
            ("application/x-www-form-urlencoded", both, "", 415),
            ("multipart/form-data; boundary=x", both, "", 415),
            ("application/json", "text/html", "", 406),
            ("application/json", both, "https://evil.example", 403),
            ("application/json", both, "null", 403),
        ];
        assert_eq!(cases.len(), 6);
        for (content_type, accept, origin, status) in cases {
            let mut request = agent
                .post(&gateway.url)
                .header("Content-Type", content_type)
                .header("Accept", accept);
            if !origin.is_empty() {
                request = request.header("Origin", origin);
            }
            let answer = request.send(&record).unwrap();
            assert_eq!(answer.status().as_u16(), status, "{content_type} {origin}");
        }
        // The GET stream and DELETE from a page are refused too.
        let get = agent
            .get(&gateway.url)
            .header("Origin", "https://evil.example")
            .call()
            .unwrap();
        assert_eq!(get.status().as_u16(), 403);
        // The server logs each request it gets: no log, no request.
        assert!(!log.exists(), "{:?}", http_received(&log));
        // A page of the gateway's own origin on a loopback name is this machine's own.
        let own = gateway.url.trim_end_matches("/mcp");
        let (status, messages) = post(&gateway.url, &[("Origin", own)], &record);
        assert_eq!(status, 200, "{messages:?}");
        assert_eq!(result_text(the_answer(&messages)), r#"{"text":"x"}"#);
    });
}

/// How many `tools/list` requests the server got.
fn listings_received(log: &Path) -> usize {
    http_received(log)
        .iter()
        .filter(|request| request["body"].as_str().unwrap().contains("tools/list"))
        .count()
}

#[test]
fn a_tool_that_changes_after_the_client_listed_is_stripped_as_it_is_now() {
    // R9, R18: `note` owns a `reason` (R5) until `change`, whose answer says the tools
    // changed. The next call's reason is the model's, stripped on a fresh listing, even
    // where the server said its listings may be reused for ten minutes: none is kept.
    for engine in [Engine::Wasmtime, Engine::WasmtimeReusing, Engine::Jco] {
        for flags in [&[][..], &["--cacheable=600000,public"]] {
            eprintln!("on {engine:?}, {flags:?}");
            let dir = tempfile::tempdir().unwrap();
            let (_server, gateway, log) = behind_gateway_of(engine, dir.path(), flags, &[]);
            let (_, listed) = post(&gateway.url, &[], &list(1, true));
            let tools = &the_answer(&listed)["result"]["tools"];
            assert_eq!(tools[0]["name"], "note", "{tools}");
            let own = call(2, "note", r#"{"reason":"the tool's own"}"#, true);
            let (_, answer) = post(&gateway.url, &[], &own);
            assert_eq!(
                result_text(the_answer(&answer)),
                r#"{"reason":"the tool's own"}"#
            );

            let (_, changed) = post(&gateway.url, &[], &call(3, "change", "{}", true));
            assert_eq!(result_text(the_answer(&changed)), "changed");
            let model = call(4, "note", r#"{"text":"t","reason":"the model's"}"#, true);
            let (_, answer) = post(&gateway.url, &[], &model);
            assert_eq!(result_text(the_answer(&answer)), r#"{"text":"t"}"#);
            let received = calls_received(&log);
            assert_eq!(received.len(), 3);
            assert!(
                !received[2]["body"]
                    .as_str()
                    .unwrap()
                    .contains("the model's")
            );
        }
    }
}

/// A legacy session and 2026-07-28 calls, each request POSTed to the next of `urls` in
/// turn; every answer, in order.
fn alternating(urls: &[&str]) -> Vec<Value> {
    let mut next = urls.iter().cycle();
    let (_, session, first) = initialize(next.next().unwrap());
    let legacy = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let mut answers = first;
    let requests = [
        (
            &legacy[..],
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#.to_string(),
        ),
        (
            &legacy[..],
            call(3, "record", r#"{"text":"a","reason":"r"}"#, false),
        ),
        (
            &legacy[..],
            call(4, "note", r#"{"reason":"its own"}"#, false),
        ),
        (
            &[][..],
            call(
                5,
                "record",
                r#"{"text":"b","region":"eu","reason":"r"}"#,
                true,
            ),
        ),
        (&[][..], call(6, "nowhere", r#"{"reason":"r"}"#, true)),
        (
            &legacy[..],
            call(7, "stream", r#"{"text":"c","reason":"r"}"#, false),
        ),
    ];
    for (headers, body) in requests {
        let (status, messages) = post(next.next().unwrap(), headers, &body);
        assert_eq!(status, 200, "{body}: {messages:?}");
        answers.extend(messages);
    }
    answers
}

#[test]
fn two_engines_serve_one_client_as_one_does() {
    // Scale-out: replicas share nothing, so a client whose requests alternate between two
    // engine processes gets the answers it gets through one, and the server receives the
    // same calls.
    on_each_engine(|engine, dir| {
        let (server, one, log) = behind_gateway(engine, dir, &[]);
        let wasm = dir.join("reasons-gateway.wasm");
        let two = Listening::gateway(engine, &wasm, &[("REASONS_UPSTREAM", &server.url)]);
        let through_one = alternating(&[&one.url]);
        let calls_through_one = calls_received(&log).len();
        let through_two = alternating(&[&one.url, &two.url]);
        assert_eq!(through_one.len(), 8, "{through_one:#?}");
        assert_eq!(through_one, through_two);
        let calls = calls_received(&log);
        assert_eq!(calls_through_one, 4);
        assert_eq!(calls.len(), 8, "{calls:#?}");
        for call in &calls {
            let body = call["body"].as_str().unwrap();
            assert!(!body.contains(r#""reason":"r""#), "{call}");
        }
    });
}

#[test]
fn every_body_goes_upstream_whole_with_its_length() {
    // The gateway holds each body whole before it sends it: it says how long it is, as a
    // server that reads no chunked body (Python's http.server) needs, never chunked.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway(engine, dir, &[]);
        let (status, session, messages) = initialize(&gateway.url);
        assert_eq!(status, 200, "{messages:?}");
        let with_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        let call = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record","arguments":{"text":"é","reason":"why"}}}"#;
        let (status, messages) = post(&gateway.url, &with_session, call);
        assert_eq!(status, 200, "{messages:?}");
        let posts: Vec<Value> = http_received(&log)
            .into_iter()
            .filter(|request| request["method"] == "POST")
            .collect();
        // initialize, the gateway's own listing, the call.
        assert!(posts.len() >= 3, "{posts:#?}");
        for request in &posts {
            let body = request["body"].as_str().unwrap();
            assert_eq!(
                request["headers"]["content-length"],
                body.len().to_string(),
                "{engine:?}: {request}"
            );
            assert_eq!(
                request["headers"].get("transfer-encoding"),
                None,
                "{request}"
            );
        }
    });
}

#[test]
fn a_call_whose_stream_the_server_closes_is_answered_through_the_gateway() {
    // R19 (2025-11-25's SSE polling): the server ends a call's stream after an event id,
    // for its client to come back for the answer with `Last-Event-ID`. The gateway is
    // that client: it comes back itself, within the request, and the call that ran is
    // answered, where it was told "the MCP server's answer ended before it answered".
    let dir = tempfile::tempdir().unwrap();
    let wasm = gateway_wasm(dir.path());
    for engine in ENGINES {
        let server = conformance_server_http();
        let gateway = Listening::gateway(engine, &wasm, &[("REASONS_UPSTREAM", &server.url)]);
        let (status, session, messages) = initialize_as(&gateway.url, "2025-11-25");
        assert_eq!(status, 200, "{engine:?}: {messages:?}");
        let in_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        post(&gateway.url, &in_session, INITIALIZED);
        let call = call(2, "test_reconnection", r#"{"reason":"why"}"#, false);
        let (status, messages) = post(&gateway.url, &in_session, &call);
        assert_eq!(status, 200, "{engine:?}: {messages:?}");
        let answer = the_answer(&messages);
        assert_eq!(
            result_text(answer),
            "Reconnection test completed successfully.",
            "{engine:?}: {messages:?}"
        );
    }
}

#[test]
fn a_client_whose_connection_broke_comes_back_to_any_instance_for_the_answer() {
    // R19 (2025-11-25's resumable streams): the gateway's stream of a call opens with a
    // priming event (an id, the wait before coming back, no message) once the server's
    // does; a client whose connection broke then comes back with a GET and that id, to
    // an instance that keeps nothing of the first (each request a fresh one), and gets
    // the call's answer, once. Before, the gateway's events had no ids: nothing to come
    // back with, and the answer was lost.
    let dir = tempfile::tempdir().unwrap();
    let wasm = gateway_wasm(dir.path());
    for engine in ENGINES {
        let server = conformance_server_http();
        let gateway = Listening::gateway(engine, &wasm, &[("REASONS_UPSTREAM", &server.url)]);
        let (status, session, messages) = initialize_as(&gateway.url, "2025-11-25");
        assert_eq!(status, 200, "{engine:?}: {messages:?}");
        let in_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-11-25"),
        ];
        post(&gateway.url, &in_session, INITIALIZED);
        let headers = format!(
            "Mcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\n\
             Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
        );
        // The call's stream: its first event, the priming one, read; then the break.
        let call = call(2, "test_reconnection", r#"{"reason":"why"}"#, false);
        let (mut first, mut primed, mut retry) = (Vec::new(), None, false);
        let post = format!("POST /mcp HTTP/1.1\r\n{headers}");
        let mut body = false;
        read_events(&gateway.url, &post, &call, |line| {
            body |= line.is_empty();
            if body && !line.is_empty() {
                first.push(line.to_string());
            }
            retry |= line.starts_with("retry:");
            if let Some(id) = line.strip_prefix("id: ") {
                primed = Some(id.to_string());
            }
            // Until the first event has ended.
            first.is_empty() || !line.is_empty()
        });
        let primed = primed.unwrap_or_else(|| panic!("{engine:?}: no id first: {first:?}"));
        assert!(
            retry,
            "{engine:?}: the priming event names the wait: {first:?}"
        );
        assert!(
            first.iter().all(|line| !line.starts_with("data: {")),
            "{engine:?}: the priming event carries no message: {first:?}"
        );
        // Back, on a connection and an instance of its own, as a client comes back: with
        // the last id it has, after the wait, until it has the answer (the instance that
        // served the POST may still hold the server's stream for a moment; the server
        // then gives it to the one that came last, and the other comes back again).
        let (mut ids, mut messages) = (Vec::new(), Vec::<Value>::new());
        for _ in 0..5 {
            let last = ids.last().unwrap_or(&primed).clone();
            let get = format!("GET /mcp HTTP/1.1\r\n{headers}Last-Event-ID: {last}\r\n");
            read_events(&gateway.url, &get, "", |line| {
                if let Some(id) = line.strip_prefix("id: ") {
                    ids.push(id.to_string());
                }
                if let Some(data) = line.strip_prefix("data: ").filter(|data| !data.is_empty()) {
                    messages.push(serde_json::from_str(data).unwrap());
                }
                // Until the event with the answer has ended, or the stream has.
                !(line.is_empty() && messages.iter().any(|message| message["id"] == 2))
                    && line != "0"
            });
            if messages.iter().any(|message| message["id"] == 2) {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(200));
        }
        let answers: Vec<&Value> = messages.iter().filter(|m| m["id"] == 2).collect();
        assert_eq!(answers.len(), 1, "{engine:?}: {messages:#?}");
        assert_eq!(
            result_text(answers[0]),
            "Reconnection test completed successfully.",
            "{engine:?}: {messages:#?}"
        );
        // Every event says where the stream is, for a client whose connection breaks again.
        assert!(
            ids.len() >= messages.len(),
            "{engine:?}: {ids:?} {messages:#?}"
        );
    }
}

#[test]
fn a_client_s_listing_costs_the_server_one_listing_however_many_pages() {
    // R1 R7: a page cannot be augmented alone (R7 reads the whole listing), and the
    // gateway keeps nothing between requests, so each page a client asked for cost the
    // server a whole listing: 5 pages walked, 30 listings. The first page is answered
    // with the whole listing instead, and the client, given no cursor, asks no more.
    on_each_engine(|engine, dir| {
        let (_server, gateway, log) = behind_gateway_of(engine, dir, &["--pages", "5"], &[]);
        let (_, session, _) = initialize(&gateway.url);
        let in_session = [
            ("Mcp-Session-Id", session.as_str()),
            ("MCP-Protocol-Version", "2025-06-18"),
        ];
        post(&gateway.url, &in_session, INITIALIZED);
        let (mut tools, mut cursor, mut pages) = (Vec::new(), None::<Value>, 0);
        loop {
            let params = match &cursor {
                Some(cursor) => json!({"cursor": cursor}),
                None => json!({}),
            };
            let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": params});
            let (status, messages) = post(&gateway.url, &in_session, &list.to_string());
            assert_eq!(status, 200, "{messages:?}");
            let result = &the_answer(&messages)["result"];
            tools.extend(result["tools"].as_array().unwrap().clone());
            pages += 1;
            cursor = result.get("nextCursor").cloned();
            if cursor.is_none() || pages == 10 {
                break;
            }
        }
        assert_eq!(pages, 1, "{engine:?}: no cursor after the whole listing");
        assert_eq!(tools.len(), HTTP_ECHO_TOOLS, "{engine:?}: {tools:#?}");
        for tool in &tools {
            let properties = &tool["inputSchema"]["properties"];
            assert!(
                properties["reason"].is_object() || tool["name"] == "note",
                "{tool}"
            );
        }
        // The client's own first page, and the gateway's walk of the five.
        assert_eq!(listings_received(&log), 6, "{engine:?}");
    });
}
