//! `reasons mcp --listen` holding many sessions: what each costs the proxy (resident
//! memory, file descriptors), and what happens at `--max-sessions`. 100 legacy sessions
//! under `cargo bench`, 8 under `cargo test --benches` (CI), each with a server of its
//! own (the tests' own, on Node), each initialized, listed and called with a reason.
//! Then one more: the session used least recently is ended to make room (its next
//! request is answered 404, the spec's word to initialize again), the new one is served,
//! and no more than the limit and one servers run. The reason reaches no server.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::time::{Duration, Instant};

/// The proxy's open file descriptors.
fn descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map_or(0, Iterator::count)
}

/// The processes whose parent is `pid`: the sessions' servers the proxy runs.
fn children(pid: u32) -> usize {
    let parent = |stat: &str| {
        let after_name = stat.rsplit_once(") ")?.1;
        after_name.split(' ').nth(1)?.parse::<u32>().ok()
    };
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| std::fs::read_to_string(entry.path().join("stat")).ok())
        .filter(|stat| parent(stat) == Some(pid))
        .count()
}

/// A legacy session's next request, with its id.
fn ask(url: &str, session: &str, body: &str) -> (u16, Vec<Value>) {
    let headers = [
        ("Mcp-Session-Id", session),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    post(url, &headers, body)
}

/// Opens a session, lists and calls with a reason: its id.
fn open(url: &str, at: usize) -> String {
    let (status, session, _) = initialize(url);
    assert_eq!(status, 200, "session {at}");
    ask(url, &session, INITIALIZED);
    let (status, listed) = ask(url, &session, &list(2, false));
    assert_eq!(status, 200, "session {at}: {listed:?}");
    let arguments = format!(r#"{{"text":"session {at}","reason":"the model's reason"}}"#);
    let (status, called) = ask(url, &session, &call(3, "record", &arguments, false));
    assert_eq!(status, 200, "session {at}: {called:?}");
    let expected = serde_json::json!({ "text": format!("session {at}") }).to_string();
    assert_eq!(result_text(the_answer(&called)), expected);
    session
}

fn main() {
    let sessions = match std::env::args().any(|arg| arg == "--bench") {
        true => 100,
        false => 8,
    };
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let limit = sessions.to_string();
    let front = Listening::front(&["--max-sessions", &limit], teed(&log, own_server()));
    let pid = front.pid();
    let rss = || status_mib(pid, "VmRSS:").unwrap();
    let (rss_before, fds_before) = (rss(), descriptors(pid));
    println!("\n`reasons mcp --listen --max-sessions {sessions}`, a session at a time:\n");
    println!("| sessions | proxy RSS MiB | file descriptors | servers running |");
    println!("|---|---|---|---|");
    println!("| 0 | {rss_before:.1} | {fds_before} | {} |", children(pid));
    let started = Instant::now();
    let mut opened = Vec::new();
    for at in 0..sessions {
        opened.push(open(&front.url, at));
        if (at + 1) % (sessions / 4).max(1) == 0 {
            println!(
                "| {} | {:.1} | {} | {} |",
                at + 1,
                rss(),
                descriptors(pid),
                children(pid)
            );
        }
    }
    let took = started.elapsed();
    let (rss_full, fds_full) = (rss(), descriptors(pid));
    let per_session = (rss_full - rss_before) / sessions as f64;
    let fds_per_session = (fds_full - fds_before) as f64 / sessions as f64;
    println!(
        "\n{sessions} sessions opened in {:.1} s; per session: {:.2} MiB of the proxy's \
         memory, {fds_per_session:.1} file descriptors",
        took.as_secs_f64(),
        per_session
    );

    // One past the limit: the least recently used (the first) is ended, the new one served.
    let past = Instant::now();
    let newest = open(&front.url, sessions);
    let past = past.elapsed();
    let (status, _) = ask(&front.url, &opened[0], &list(4, false));
    assert_eq!(status, 404, "the session used least recently was not ended");
    let (status, _) = ask(&front.url, &opened[sessions - 1], &list(4, false));
    assert_eq!(status, 200, "a session still held was ended");
    let (status, _) = ask(&front.url, &newest, &list(4, false));
    assert_eq!(status, 200);
    // The ended session's server is gone in the grace period, or soon after.
    let until = Instant::now() + Duration::from_secs(30);
    while children(pid) > sessions && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(50));
    }
    let running = children(pid);
    assert!(
        running <= sessions + 1,
        "{running} servers for {sessions} places"
    );
    println!(
        "\nsession {} past --max-sessions: served in {:.0} ms, the least recently used \
         ended (its next request 404), {running} servers running after",
        sessions + 1,
        past.as_secs_f64() * 1e3
    );
    // R9: no server received the reason.
    let received = std::fs::read_to_string(&log).unwrap();
    assert_eq!(
        received.matches("\"tools/call\"").count(),
        sessions + 1,
        "every call reached a server once"
    );
    assert!(!received.contains("the model's reason"));
}
