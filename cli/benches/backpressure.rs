//! The proxy's memory while one side stops reading and the other writes as fast as it
//! can, beside the same flood with both sides reading, in one run; and the `--listen`
//! front's after its client reads answers of many MiB, each kept for resumption:
//! `cargo bench -p reasons --bench backpressure`. Flat is the target: what the side that
//! reads nothing is sent waits in the other side, not in the proxy, and what is kept for
//! a client to resume with is bounded in bytes, not in answers.

use reasons_test_support::mcp::{
    INITIALIZE, Listening, call, legacy_session, own_server, post, proxied, status_mib,
};
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// When the proxy's resident memory is read, from its start.
const AT: [u64; 4] = [1, 2, 4, 8];

/// A server that writes notifications of about 1 KiB without end.
fn flooding_server() -> Vec<String> {
    let note = format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
        "x".repeat(1000)
    );
    ["sh".into(), "-c".into(), format!("yes '{note}'")].to_vec()
}

/// The proxy in front of `server`, past any write timeout of the run.
fn proxy(server: Vec<String>) -> Child {
    let line = proxied(&["--write-timeout", "600"], server);
    Command::new(&line[0])
        .args(&line[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the proxy starts")
}

/// The proxy's resident memory at each of [`AT`], in MiB, then it is ended.
fn sampled(mut child: Child) -> Vec<f64> {
    let start = Instant::now();
    let rss = AT
        .iter()
        .map(|&at| {
            std::thread::sleep(
                (start + Duration::from_secs(at)).saturating_duration_since(Instant::now()),
            );
            status_mib(child.id(), "VmRSS:").expect("the proxy still runs")
        })
        .collect();
    let _ = child.kill();
    let _ = child.wait();
    rss
}

fn row(name: &str, rss: &[f64]) {
    let cells: Vec<String> = rss.iter().map(|mib| format!("{mib:>8.1}")).collect();
    let growth = rss[rss.len() - 1] / rss[0];
    println!("{name:<44} {}   {growth:>5.2}x", cells.join(" "));
}

fn main() {
    println!(
        "{:<44} {}   8 s / 1 s",
        "RSS of the proxy, MiB, at",
        AT.map(|at| format!("{:>7}s", at)).join(" ")
    );
    // The baseline: the same flood, read as fast as it comes.
    let mut reading = proxy(flooding_server());
    let mut stdout = reading.stdout.take().unwrap();
    let drained = std::thread::spawn(move || {
        let mut read = 0u64;
        let mut buffer = vec![0; 1 << 16];
        while let Ok(n) = stdout.read(&mut buffer) {
            if n == 0 {
                break;
            }
            read += n as u64;
        }
        read
    });
    row(
        "flooding server, client reads everything",
        &sampled(reading),
    );
    let relayed = drained.join().unwrap();
    println!(
        "  (the client read {} MiB in {} s)",
        relayed >> 20,
        AT[AT.len() - 1]
    );
    // The client reads nothing: its stdout is held open, unread.
    let mut stopped = proxy(flooding_server());
    let held = stopped.stdout.take();
    row("flooding server, client stops reading", &sampled(stopped));
    drop(held);
    // The server reads nothing; the client writes requests without end.
    let mut deaf = proxy(["sleep".into(), "600".into()].to_vec());
    let mut stdin = deaf.stdin.take().unwrap();
    let _stdout = deaf.stdout.take();
    let writer = std::thread::spawn(move || {
        let _ = writeln!(stdin, "{INITIALIZE}");
        let pad = "p".repeat(1000);
        let mut written = 0u64;
        for id in 2u64.. {
            let ping = format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{{"pad":"{pad}"}}}}}}"#
            );
            if writeln!(stdin, "{ping}").is_err() {
                break;
            }
            written += ping.len() as u64 + 1;
        }
        written
    });
    row("server stops reading, client floods", &sampled(deaf));
    let written = writer.join().unwrap();
    println!(
        "  (the client got {} KiB in before it was held back)",
        written >> 10
    );
    answers_kept_for_resumption();
}

/// The front's resident memory before and after its client reads answers of 8 MiB in
/// one session, each on a resumable stream: 16 of them under `cargo bench`, 2 under
/// `cargo test --benches`.
fn answers_kept_for_resumption() {
    let answers = match std::env::args().any(|arg| arg == "--bench") {
        true => 16,
        false => 2,
    };
    let front = Listening::front(&[], own_server());
    let session = legacy_session(&front.url);
    let headers = [
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-06-18"),
    ];
    let rss = || status_mib(front.pid(), "VmRSS:").expect("the kernel reports VmRSS");
    let before = rss();
    let text = "x".repeat(8 << 20);
    let mut after_two = 0.0;
    for id in 0..answers {
        let request = call(id + 2, "record", &format!(r#"{{"text":"{text}"}}"#), false);
        let (status, messages) = post(&front.url, &headers, &request);
        assert_eq!(status, 200);
        assert_eq!(messages.len(), 1);
        if id == 1 {
            after_two = rss();
        }
    }
    let peak = status_mib(front.pid(), "VmHWM:").expect("the kernel reports VmHWM");
    println!(
        "--listen, answers of 8 MiB read, RSS      before {before:.1} MiB, after 2 {after_two:.1} MiB, after {answers} {:.1} MiB (peak {peak:.1})",
        rss()
    );
}
