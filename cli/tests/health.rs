//! Liveness and readiness, as a load balancer or a supervisor asks them: `reasons mcp
//! --listen` and the gateway on `wasmtime serve`, in front of real servers, one that
//! cannot start, one that nothing answers for, and one that signs its users in. What the
//! server received is read from its own log.

use reasons_test_support::mcp::*;
use serde_json::Value;

/// GETs `url`; the status and the JSON body.
fn get(url: &str) -> (u16, Value) {
    request("GET", url)
}

/// `method` to `url` with no body; the status and the JSON body.
fn request(method: &str, url: &str) -> (u16, Value) {
    let agent = ureq::Agent::config_builder()
        .http_status_as_error(false)
        .timeout_global(Some(std::time::Duration::from_secs(120)))
        .build()
        .new_agent();
    let request = ureq::http::Request::builder()
        .method(method)
        .uri(url)
        .body(())
        .unwrap();
    let mut response = agent.run(request).unwrap();
    let status = response.status().as_u16();
    let body = response.body_mut().read_to_string().unwrap();
    let json = serde_json::from_str(&body).unwrap_or_else(|_| panic!("{status}: {body:?}"));
    (status, json)
}

/// The front's URL for `path`, with its token (`with_token`) or without.
fn front_path(front: &Listening, path: &str, with_token: bool) -> String {
    let (bare, token) = front.url.split_once("?token=").unwrap();
    let base = bare.strip_suffix("/mcp").unwrap();
    match with_token {
        true => format!("{base}{path}?token={token}"),
        false => format!("{base}{path}"),
    }
}

/// The methods of the messages `log` (the tests' own stdio server's) received.
fn methods_received(log: &std::path::Path) -> Vec<String> {
    received(log)
        .iter()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter_map(|message| message["method"].as_str().map(str::to_string))
        .collect()
}

#[test]
fn the_front_is_live_to_anyone_and_ready_once_its_server_lists() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(&[], teed(&log, own_server()));
    // Liveness tells nothing and runs nothing: no token needed.
    assert_eq!(
        get(&front_path(&front, "/livez", false)),
        (200, serde_json::json!({"live": true}))
    );
    assert!(!log.exists(), "liveness started a server");
    // Readiness starts the server, as a session does: the token's.
    let (status, refused) = get(&front_path(&front, "/readyz", false));
    assert_eq!(status, 403, "{refused}");
    assert!(
        !log.exists(),
        "a request without the token started a server"
    );
    let ready = front_path(&front, "/readyz", true);
    assert_eq!(
        get(&ready),
        (200, serde_json::json!({"ready": true, "tools": 5}))
    );
    let methods = methods_received(&log);
    assert_eq!(
        methods,
        ["initialize", "notifications/initialized", "tools/list"]
    );
    // Asked again at once, the verdict is the one found: no second server.
    assert_eq!(get(&ready).0, 200);
    assert_eq!(methods_received(&log).len(), 3);
}

#[test]
fn a_front_whose_server_cannot_start_is_not_ready_and_says_why() {
    let front = Listening::front(&[], vec!["/nonexistent/mcp-server".into()]);
    assert_eq!(get(&front_path(&front, "/livez", false)).0, 200);
    let (status, verdict) = get(&front_path(&front, "/readyz", true));
    assert_eq!(status, 503, "{verdict}");
    assert_eq!(verdict["ready"], false);
    let why = verdict["why"].as_str().unwrap();
    assert!(
        why.starts_with("initialize: ") && why.contains("/nonexistent/mcp-server"),
        "{why}"
    );
}

#[test]
fn a_full_front_is_ready_and_ends_no_client_s_session_to_probe() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let front = Listening::front(&["--max-sessions", "1"], teed(&log, own_server()));
    let (status, session, _) = initialize(&front.url);
    assert_eq!(status, 200);
    let (status, verdict) = get(&front_path(&front, "/readyz", true));
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(
        verdict["why"],
        "all 1 sessions --max-sessions allows are open and serving"
    );
    // The client's session still serves.
    let with_session = [("Mcp-Session-Id", session.as_str())];
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let (status, messages) = post(&front.url, &with_session, list);
    assert_eq!(status, 200, "{messages:?}");
    assert_eq!(
        the_answer(&messages)["result"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        5
    );
}

#[test]
fn a_probe_in_flight_takes_no_client_s_place() {
    // R20: with --max-sessions 2, A's session open and a probe waiting on a server that
    // lists slowly, B's initialize finds a place without ending A's: the probe's session
    // holds none. (It did: B's ended A's, the least recently used, and A got 404.)
    let marks = tempfile::tempdir().unwrap();
    let server = format!(
        r#"require("fs").writeFileSync({marks:?} + "/" + process.pid, "");
        require("readline").createInterface({{ input: process.stdin }}).on("line", (line) => {{
          const message = JSON.parse(line);
          if (message.id === undefined) return;
          const reply = (result) =>
            process.stdout.write(JSON.stringify({{ jsonrpc: "2.0", id: message.id, result }}) + "\n");
          if (message.method === "initialize")
            reply({{ protocolVersion: message.params.protocolVersion, capabilities: {{ tools: {{}} }},
                     serverInfo: {{ name: "slow", version: "1" }} }});
          else if (message.method === "tools/list") setTimeout(() => reply({{ tools: [] }}), 8000);
          else reply({{}});
        }});"#,
        marks = marks.path().to_str().unwrap()
    );
    let command = vec!["node".to_string(), "-e".to_string(), server];
    let front = Listening::front(&["--max-sessions", "2"], command);
    let started = || std::fs::read_dir(marks.path()).unwrap().count();
    let (status, a, _) = initialize(&front.url);
    assert_eq!(status, 200);
    let ready = front_path(&front, "/readyz", true);
    let probe = std::thread::spawn(move || get(&ready));
    let until = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while started() < 2 {
        assert!(std::time::Instant::now() < until, "the probe never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let (status, _, _) = initialize(&front.url);
    assert_eq!(status, 200);
    let ping = r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    let (status, messages) = post(&front.url, &[("Mcp-Session-Id", a.as_str())], ping);
    assert_eq!(status, 200, "A's session was ended: {messages:?}");
    assert_eq!(probe.join().unwrap().0, 200);
}

#[test]
fn a_front_whose_server_signs_users_in_is_probed_without_a_sign_in() {
    // Probes never sign in: a front to a server that asks its users to sign in is found
    // ready at once, for its signed-in users, and no browser is opened (it ran the
    // BROWSER command and answered only after --sign-in-wait).
    let dir = tempfile::tempdir().unwrap();
    let opened = dir.path().join("browser-opened");
    let browser = dir.path().join("browser.sh");
    std::fs::write(
        &browser,
        format!("#!/bin/sh\ntouch '{}'\n", opened.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&browser, std::fs::Permissions::from_mode(0o755)).unwrap();
    let server = oauth_example();
    let mut command = std::process::Command::new(reasons());
    command
        .args(["mcp", "--sign-in-wait", "600", "--listen", "127.0.0.1:0"])
        .args(["--url", &server.url])
        .env("BROWSER", &browser)
        .env("HOME", dir.path())
        .env("XDG_CONFIG_HOME", dir.path().join(".config"));
    let front = Listening::serving(command);
    let (status, verdict) = get(&front_path(&front, "/readyz", true));
    assert!(!opened.exists(), "the probe opened a browser");
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["ready"], true, "{verdict}");
}

/// The gateway's URL for `path`.
fn gateway_path(gateway: &Listening, path: &str) -> String {
    gateway.url.strip_suffix("/mcp").unwrap().to_string() + path
}

#[test]
fn the_gateway_is_live_alone_and_ready_once_its_upstream_lists() {
    let dir = tempfile::tempdir().unwrap();
    let (_server, gateway, log) = behind_gateway_of(Engine::Wasmtime, dir.path(), &[], &[]);
    assert_eq!(
        get(&gateway_path(&gateway, "/livez")),
        (200, serde_json::json!({"live": true}))
    );
    assert!(!log.exists(), "liveness asked the upstream");
    assert_eq!(
        get(&gateway_path(&gateway, "/readyz")),
        (
            200,
            serde_json::json!({"ready": true, "tools": HTTP_ECHO_TOOLS})
        )
    );
    // The handshake, the listing, and the session ended: nothing else, and no call.
    let received = http_received(&log);
    let asked: Vec<(&str, String)> = received
        .iter()
        .map(|request| {
            let method = request["method"].as_str().unwrap();
            let body: Value =
                serde_json::from_str(request["body"].as_str().unwrap()).unwrap_or(Value::Null);
            (
                method,
                body["method"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    assert_eq!(
        asked,
        [
            ("POST", "initialize".to_string()),
            ("POST", "notifications/initialized".to_string()),
            ("POST", "tools/list".to_string()),
            ("DELETE", String::new())
        ]
    );
    assert_eq!(received[3]["headers"]["mcp-session-id"], "session-1f2e");
    let (status, _) = request("POST", &gateway_path(&gateway, "/readyz"));
    assert_eq!(status, 405);
}

#[test]
fn a_gateway_whose_upstream_is_gone_is_live_and_not_ready() {
    let dir = tempfile::tempdir().unwrap();
    // A port this test holds and nothing listens on: bound, never listening, so every
    // connection to it is refused and no other test's server can take it meanwhile (a
    // port bound and let go was, under load: the gateway reached that server instead).
    let held = rustix::net::socket(
        rustix::net::AddressFamily::INET,
        rustix::net::SocketType::STREAM,
        None,
    )
    .unwrap();
    let loopback = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    rustix::net::bind(&held, &loopback).unwrap();
    let bound = rustix::net::getsockname(&held).unwrap();
    let port = std::net::SocketAddr::try_from(bound).unwrap().port();
    let upstream = format!("http://127.0.0.1:{port}/mcp");
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(Engine::Wasmtime, &wasm, &[("REASONS_UPSTREAM", &upstream)]);
    assert_eq!(get(&gateway_path(&gateway, "/livez")).0, 200);
    let (status, verdict) = get(&gateway_path(&gateway, "/readyz"));
    assert_eq!(status, 503, "{verdict}");
    assert_eq!(
        verdict,
        serde_json::json!({
            "ready": false,
            "why": "cannot reach the MCP server: the connection was refused"
        })
    );
}

#[test]
fn a_gateway_whose_upstream_signs_users_in_is_ready() {
    let dir = tempfile::tempdir().unwrap();
    let server = oauth_example();
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(
        Engine::Wasmtime,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    let (status, verdict) = get(&gateway_path(&gateway, "/readyz"));
    assert_eq!(status, 200, "{verdict}");
    assert_eq!(verdict["ready"], true);
    assert_eq!(
        verdict["why"],
        "the MCP server answered HTTP 401: it lists for signed-in users only"
    );
}
