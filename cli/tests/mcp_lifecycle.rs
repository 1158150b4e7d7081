//! `reasons mcp` fails closed with real peers (R18, R20): a TypeScript SDK server sent
//! what servers' parsers accept and the proxy must read as they do, and the server's life
//! tied to the proxy's, whatever ends it: the TypeScript SDK client's `close()`, a signal,
//! a server that dies at start.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What `own-server.mjs` wrote of its life: its pid, and each signal it got.
fn life(file: &Path) -> (libc::pid_t, Vec<String>) {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let mut lines = text.lines();
    let pid = lines.next().and_then(|pid| pid.parse().ok()).unwrap_or(0);
    (pid, lines.map(str::to_string).collect())
}

/// Waits, at most ten seconds, until `what` holds.
fn eventually(what: &str, mut holds: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(10);
    while !holds() {
        assert!(Instant::now() < until, "never: {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn alive(pid: libc::pid_t) -> bool {
    // SAFETY: signal 0 only asks whether the process exists.
    pid > 0 && unsafe { libc::kill(pid, 0) } == 0
}

#[test]
fn the_typescript_sdk_s_close_ends_the_server_through_the_proxy() {
    // R20 (finding 11): close() ends stdin, then sends the proxy SIGTERM; the server,
    // which outlives its stdin, gets SIGTERM too and is gone.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("life");
    let mut command = Command::new("node");
    command
        .arg(peers().join("close.mjs"))
        .arg("--")
        .args(proxied(&[], own_server()))
        .env("REASONS_TEST_LIFE", &file);
    let output = output_within(&mut command, Duration::from_secs(60));
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let (pid, signals) = life(&file);
    assert!(pid > 0, "the server started");
    assert_eq!(signals, ["SIGTERM"]);
    eventually("the server is gone", || !alive(pid));
}

#[test]
fn a_server_that_outlives_its_stdin_gets_sigterm_before_anything_harder() {
    // R20 (finding 11): stdin closed, a grace period, then SIGTERM, which it handles.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("life");
    let mut session = Session::start_env(
        &proxied(&[], own_server()),
        Stdio::inherit(),
        &[("REASONS_TEST_LIFE", &file)],
    );
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let (rest, status) = session.finish();
    assert_eq!(rest, Vec::<String>::new());
    assert_eq!(life(&file).1, ["SIGTERM"]);
    assert_eq!(status.code(), Some(143), "the server's own exit code");
    assert!(!alive(life(&file).0));
}

#[test]
fn a_signal_reaches_the_server_and_the_call_in_flight_is_answered_and_audited() {
    // R20 (findings 11, 12): the call the server never answered gets an error and an
    // audit record; the proxy exits as its server did; the audit log is its owner's.
    let dir = tempfile::tempdir().unwrap();
    let (file, audit) = (dir.path().join("life"), dir.path().join("audit.jsonl"));
    let flags = ["--audit", audit.to_str().unwrap()];
    let mut session = Session::start_env(
        &proxied(&flags, own_server()),
        Stdio::inherit(),
        &[("REASONS_TEST_LIFE", &file)],
    );
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    eventually("the server wrote its pid", || life(&file).0 > 0);
    // A tool that never answers, signalled once the server has the call: the call is
    // in flight whatever the machine's speed.
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"hang","arguments":{"reason":"to wait"}}}"#);
    let called = dir.path().join("life.hang");
    eventually("the server has the call", || called.exists());
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(session.pid() as libc::pid_t, libc::SIGTERM) };
    let answer: Value = serde_json::from_str(&session.next_line().expect("an answer")).unwrap();
    assert_eq!(answer["id"], 2);
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("exited before answering"), "{message}");
    assert_eq!(session.wait().code(), Some(128 + libc::SIGTERM));
    assert_eq!(life(&file).1, ["SIGTERM"]);
    assert!(!alive(life(&file).0));

    let records = std::fs::read_to_string(&audit).unwrap();
    let records: Vec<Value> = records
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["reason"], "to wait");
    assert_eq!(records[0]["forwarded"], true);
    assert!(
        records[0]["outcome"]["lost"]
            .as_str()
            .unwrap()
            .contains("exited")
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&audit).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the model's reasons are its owner's to read");
}

#[test]
fn a_server_that_cannot_start_or_ends_at_once_has_initialize_answered_every_time() {
    // R19: every request gets one answer from the first byte. The client sends its
    // `initialize` and waits with its stdin open, as clients do: a missing command, and a
    // server that exits at once (before or after the proxy read the request), have it
    // answered with the error naming the cause, in every run; then the proxy exits.
    use std::io::{BufRead, Write};
    let cases: [(&str, &str); 2] = [
        ("/nonexistent/server", "cannot start the MCP server"),
        ("false", "exit status: 1"),
    ];
    for (server, cause) in cases {
        for run in 0..10 {
            let mut proxy = Command::new(reasons())
                .args(["mcp", "--", server])
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let mut stdin = proxy.stdin.take().unwrap();
            // The proxy may be gone already: what it reads of this is what it answers.
            let _ = writeln!(stdin, "{INITIALIZE}");
            let mut answer = String::new();
            let stdout = proxy.stdout.take().unwrap();
            std::io::BufReader::new(stdout)
                .read_line(&mut answer)
                .unwrap();
            let answer: Value = serde_json::from_str(&answer)
                .unwrap_or_else(|_| panic!("{server}, run {run}: no answer ({answer:?})"));
            assert_eq!(answer["id"], 1, "{answer}");
            let message = answer["error"]["message"].as_str().unwrap_or_default();
            assert!(message.contains(cause), "{server}, run {run}: {answer}");
            drop(stdin);
            assert!(!proxy.wait().unwrap().success());
        }
    }
}

#[test]
fn a_server_that_dies_at_start_is_reported_and_its_status_kept() {
    // R20 (finding 11)
    let dir = tempfile::tempdir().unwrap();
    let stderr = dir.path().join("stderr");
    let server = vec!["sh".to_string(), "-c".to_string(), "exit 7".to_string()];
    let session = Session::start_with(
        &proxied(&[], server),
        Stdio::from(std::fs::File::create(&stderr).unwrap()),
    );
    let (rest, status) = session.finish();
    assert_eq!(rest.len(), 0);
    assert_eq!(status.code(), Some(7));
    let said = std::fs::read_to_string(&stderr).unwrap();
    assert!(
        said.contains("the MCP server exited (exit status: 7)"),
        "{said}"
    );
}

#[test]
fn a_typescript_sdk_server_never_sees_a_reason_beside_a_lone_surrogate_or_bad_utf8() {
    // R10 R18 (findings 3, 4): what the SDK's server would read (a lone surrogate, or
    // bytes it would turn into U+FFFD) is read by the proxy first.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sent.jsonl");
    let mut session = Session::start(&proxied(&[], teed(&log, own_server())));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session.send(r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"record","arguments":{"text":"cut \ud83d","reason":"SECRET-1"}}}"#);
    let answer: Value = serde_json::from_str(&session.next_line().unwrap()).unwrap();
    assert_eq!(answer["id"], 2);
    let recorded = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert_eq!(
        recorded, r#"{"text":"cut \ud83d"}"#,
        "the server got the text, not the reason"
    );
    session.send_bytes(b"{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{\"name\":\"record\",\"arguments\":{\"text\":\"\xff\",\"reason\":\"SECRET-2\"}}}");
    let refused: Value = serde_json::from_str(&session.next_line().unwrap()).unwrap();
    assert_eq!(refused["error"]["code"], -32700);
    session.finish();
    let sent = received(&log);
    assert_eq!(
        sent.len(),
        3,
        "initialize, initialized, the call: {sent:#?}"
    );
    assert!(!sent.join("\n").contains("SECRET"), "{sent:#?}");
}

#[test]
fn a_line_break_in_a_message_never_makes_a_second_message_for_the_server() {
    // R9 R18: a carriage return is JSON whitespace, but Python's universal newlines and
    // Node's readline end a line at it. A notification hiding a `tools/call` with a
    // reason behind one must reach the server as one line, or the server would read a
    // call the proxy never stripped.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("sent.jsonl");
    let mut session = Session::start(&proxied(&[], teed(&log, own_server())));
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    let hidden = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"record","arguments":{"text":"a","reason":"SECRET-CR"}}}"#;
    session.send(&format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":\"x\",\"p\":\r{hidden}\r}}}}"
    ));
    session.ask(r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#);
    session.finish();
    let sent = std::fs::read(&log).unwrap();
    assert!(!sent.is_empty());
    assert!(!sent.contains(&b'\r'), "{}", String::from_utf8_lossy(&sent));
    // However the server splits it, no piece is a call carrying the reason.
    let text = String::from_utf8(sent).unwrap();
    let pieces: Vec<&str> = text
        .split(['\r', '\n'])
        .filter(|piece| !piece.is_empty())
        .collect();
    assert!(pieces.len() >= 4, "{pieces:#?}");
    for piece in pieces {
        let message: Option<Value> = serde_json::from_str(piece).ok();
        assert!(
            message.is_none_or(|message| message["method"] != "tools/call"),
            "{piece}"
        );
    }
}

/// Runs `line` with `input` on its stdin to its end; each message it wrote on stdout,
/// and its peak resident memory in KiB, as the kernel counted it for this child alone.
#[expect(
    clippy::zombie_processes,
    reason = "reaped by wait4, which alone gives the child's own peak memory"
)]
fn run_measured(line: &[String], input: &[u8]) -> (Vec<Value>, i64) {
    use std::io::{Read, Write};
    let mut child = Command::new(&line[0])
        .args(&line[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    // Written from a thread of its own: the proxy may stop reading before the end.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut status = 0;
    // SAFETY: a zeroed rusage is valid, and the pid is this test's own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let waited = unsafe { libc::wait4(child.id() as libc::pid_t, &mut status, 0, &mut usage) };
    assert_eq!(waited, child.id() as libc::pid_t);
    let _ = writer.join();
    let messages = out
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect();
    (messages, usage.ru_maxrss)
}

#[test]
fn a_server_that_writes_without_end_is_cut_off_at_the_cap_and_what_waits_is_answered() {
    // R20: one line of 200 MB and no line break. With a 1 MiB cap the proxy never holds
    // more than the cap of it: its peak memory stays far below what it was sent, the
    // request waiting is answered with why, and the server is ended.
    let server: Vec<String> = [
        "sh",
        "-c",
        "read -r line; head -c 200000000 /dev/zero; exec sleep 60",
    ]
    .map(String::from)
    .to_vec();
    let line = proxied(&["--max-message-mib", "1"], server);
    let (answers, peak_kib) = run_measured(&line, format!("{INITIALIZE}\n").as_bytes());
    assert_eq!(answers.len(), 1, "{answers:?}");
    assert_eq!(answers[0]["id"], 1);
    let message = answers[0]["error"]["message"].as_str().unwrap();
    assert!(message.contains("over the 1 MiB cap"), "{message}");
    assert!(
        peak_kib < 100 << 10,
        "the proxy peaked at {peak_kib} KiB for a 200 MB line"
    );
}

#[test]
fn a_client_line_past_the_cap_ends_its_stream_with_an_error() {
    // R20: the same cap for what the client sends; nothing of it reaches the server.
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let line = proxied(&["--max-message-mib", "1"], teed(&log, own_server()));
    let call = format!(
        r#"{{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"{}"}}}}}}"#,
        "a".repeat(2 << 20)
    );
    let (answers, _) = run_measured(&line, format!("{INITIALIZE}\n{call}\n").as_bytes());
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert!(
        answers
            .iter()
            .any(|answer| answer["id"] == 1 && answer["result"].is_object()),
        "{answers:?}"
    );
    let refusal = answers
        .iter()
        .find(|answer| answer["id"].is_null())
        .expect("an error under no id");
    let message = refusal["error"]["message"].as_str().unwrap();
    assert!(message.contains("over the 1 MiB cap"), "{message}");
    let received = received(&log);
    assert!(
        received.iter().all(|line| !line.contains("aaaa")),
        "the long line reached the server"
    );
}

#[test]
fn a_server_that_ends_as_the_signal_asks_is_no_failure_and_one_that_does_not_is_named() {
    // R20 as the human reads stderr: a client closing its server by SIGTERM is a normal
    // close, said nothing of; a server that ignores the signal passed on is killed, and
    // that is named.
    let dir = tempfile::tempdir().unwrap();
    let ready = dir.path().join("ignoring");
    let stubborn = vec![
        "sh".to_string(),
        "-c".to_string(),
        format!("trap '' TERM; touch '{}'; exec sleep 600", ready.display()),
    ];
    for (server, named) in [(own_server(), false), (stubborn, true)] {
        let said = dir.path().join(format!("said-{named}"));
        let mut session = Session::start_with(
            &proxied(&[], server),
            Stdio::from(std::fs::File::create(&said).unwrap()),
        );
        let pid = session.pid();
        eventually("the proxy takes SIGTERM", || handles_sigterm(pid));
        if named {
            eventually("the server ignores SIGTERM", || ready.exists());
        }
        // SAFETY: a signal to the child this test started.
        unsafe { libc::kill(session.pid() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(session.wait().code(), Some(128 + libc::SIGTERM));
        let said = std::fs::read_to_string(&said).unwrap();
        assert_eq!(
            said.contains("the MCP server was ended after the proxy got signal 15"),
            named,
            "{said}"
        );
        if named {
            assert!(said.contains("SIGKILL"), "{said}");
        }
    }
}

/// Whether the process `pid` catches SIGTERM: the proxy does once it is ready to pass it
/// on (before, the signal would end it, as any process).
fn handles_sigterm(pid: u32) -> bool {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("SigCgt:"))
        .and_then(|mask| u64::from_str_radix(mask.trim(), 16).ok())
        .is_some_and(|mask| mask & (1 << (libc::SIGTERM - 1)) != 0)
}
