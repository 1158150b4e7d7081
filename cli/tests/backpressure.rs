//! No side can grow the proxy's memory: a side that stops reading holds the other side
//! back (the proxy stops reading from it), and once a line written to it has waited
//! `--write-timeout` seconds its session is ended with a note, what waits answered with
//! why. The oracle is the proxy's own peak memory, read from the kernel while it runs,
//! against what the other side would have written without end.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

/// Far above what the proxy holds (a few MiB), far below what the side that keeps
/// writing would have made it hold in the time it is given.
const BOUND_MIB: f64 = 150.0;

/// How long a test lets the side that keeps writing write.
const FLOOD: Duration = Duration::from_secs(6);

/// Watches `child` until it exits or `within` has passed, killing it the moment its
/// peak memory passes [`BOUND_MIB`]: the peak seen, in MiB, and whether it exited.
fn watch(child: &mut Child, within: Duration) -> (f64, bool) {
    let until = Instant::now() + within;
    let mut peak: f64 = 0.0;
    loop {
        if let Some(seen) = status_mib(child.id(), "VmHWM:") {
            peak = peak.max(seen);
        }
        if peak > BOUND_MIB {
            let _ = child.kill();
            let _ = child.wait();
            return (peak, false);
        }
        if child.try_wait().unwrap().is_some() {
            return (peak, true);
        }
        if Instant::now() >= until {
            return (peak, false);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `sh -c script`, as a server's command.
fn shell(script: &str) -> Vec<String> {
    ["sh", "-c", script].map(String::from).to_vec()
}

/// A notification of about 1 KiB, as a server sends on its own.
fn notification() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"level":"info","data":"{}"}}}}"#,
        "x".repeat(1000)
    )
}

/// What a process says on stderr, line by line, read on a thread of its own.
struct Said(mpsc::Receiver<String>);

impl Said {
    /// The URL a front names (`serving MCP at http://127.0.0.1:PORT/mcp?token=TOKEN`).
    fn url(&self) -> String {
        loop {
            let line = self.0.recv().expect("the front names its address first");
            if let Some(said) = line.strip_prefix("reasons: serving MCP at ") {
                return said.split_whitespace().next().unwrap().to_string();
            }
        }
    }

    /// Reads what is said until a line holds `text`, for at most `within`: whether one
    /// did.
    fn until(&self, text: &str, within: Duration) -> bool {
        let until = Instant::now() + within;
        while let Ok(line) = self
            .0
            .recv_timeout(until.saturating_duration_since(Instant::now()))
        {
            if line.contains(text) {
                return true;
            }
        }
        false
    }

    /// Everything said after what was read, once the process has closed its stderr.
    fn rest(self) -> String {
        self.0.iter().collect::<Vec<_>>().join("\n")
    }
}

/// Starts `line` with its stdio piped.
fn start(line: &[String]) -> (Child, Said) {
    let mut child = Command::new(&line[0])
        .args(&line[1..])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the proxy starts");
    let stderr = BufReader::new(child.stderr.take().unwrap());
    let (lines, said) = mpsc::channel();
    std::thread::spawn(move || {
        for line in stderr.lines().map_while(Result::ok) {
            let _ = lines.send(line);
        }
    });
    (child, Said(said))
}

#[test]
fn a_client_that_stops_reading_holds_a_flooding_server_back_and_its_session_ends() {
    // R20: a server that writes notifications as fast as it can, to a client that reads
    // nothing: the proxy reads the server only as far as its outbox to the client has
    // room, so its memory stays flat, and once a line has waited 2 s for the client the
    // session is ended, the server with it.
    let server = shell(&format!("yes '{}'", notification()));
    let line = proxied(&["--write-timeout", "2"], server);
    let (mut child, said) = start(&line);
    // Its stdin stays open, its stdout unread.
    let stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (peak, exited) = watch(&mut child, FLOOD + Duration::from_secs(20));
    assert!(peak <= BOUND_MIB, "the proxy grew to {peak} MiB");
    assert!(exited, "the session never ended");
    drop((stdin, stdout));
    let said = said.rest();
    assert!(
        said.contains("the client took nothing the proxy wrote to its stdout for 2 s"),
        "{said}"
    );
}

#[test]
fn one_line_left_unread_ends_the_session_with_nothing_else_to_wake_the_proxy() {
    // R20: a server that answers `initialize` with one 2 MiB line and then says nothing,
    // to a client that reads nothing: no later line comes to wake the proxy, and the line
    // waiting alone still ends the session after `--write-timeout 2`.
    let server = shell(
        r#"read -r line; printf '{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-06-18","capabilities":{},"serverInfo":{"name":"big","version":"1"},"x":"'; head -c 2097152 /dev/zero | tr '\0' a; printf '"}}\n'; exec sleep 600"#,
    );
    let line = proxied(&["--write-timeout", "2"], server);
    let (mut child, said) = start(&line);
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "{INITIALIZE}").unwrap();
    let stdout = child.stdout.take().unwrap();
    let (peak, exited) = watch(&mut child, Duration::from_secs(30));
    assert!(peak <= BOUND_MIB, "the proxy grew to {peak} MiB");
    assert!(exited, "the session never ended");
    drop((stdin, stdout));
    let said = said.rest();
    assert!(
        said.contains("the client took nothing the proxy wrote to its stdout for 2 s"),
        "{said}"
    );
}

#[test]
fn a_server_that_stops_reading_holds_the_client_back_and_what_waits_is_answered() {
    // R20 R19: a server that reads nothing (it sleeps), and a client that writes requests without
    // end and reads every answer: the proxy reads the client only as far as its outbox
    // to the server has room, so the client's writes block instead of the proxy growing;
    // after 2 s the server is ended and every request it was sent is answered with why.
    // What the client wrote is counted until then: after it, the proxy answers what the
    // client still sends for a while (2 s), as fast as it is built to.
    let line = proxied(&["--write-timeout", "2"], shell("exec sleep 600"));
    let (mut child, said) = start(&line);
    let mut stdin = child.stdin.take().unwrap();
    let padding = "p".repeat(1000);
    let counted = Arc::new(AtomicU64::new(0));
    let count = counted.clone();
    let writer = std::thread::spawn(move || {
        for id in 1u64.. {
            let request = match id {
                1 => INITIALIZE.to_string(),
                _ => format!(
                    r#"{{"jsonrpc":"2.0","id":{id},"method":"ping","params":{{"_meta":{{"pad":"{padding}"}}}}}}"#
                ),
            };
            if writeln!(stdin, "{request}").is_err() {
                return;
            }
            count.fetch_add(request.len() as u64 + 1, Ordering::SeqCst);
        }
    });
    let stdout = BufReader::new(child.stdout.take().unwrap());
    let reader = std::thread::spawn(move || {
        stdout
            .lines()
            .map_while(Result::ok)
            .map(|line| serde_json::from_str::<Value>(&line).unwrap())
            .collect::<Vec<Value>>()
    });
    let ended = said.until("the MCP server", FLOOD + Duration::from_secs(20));
    let written = counted.load(Ordering::SeqCst);
    assert!(ended, "the server was never ended");
    let (peak, exited) = watch(&mut child, FLOOD + Duration::from_secs(20));
    assert!(peak <= BOUND_MIB, "the proxy grew to {peak} MiB");
    assert!(exited, "the session never ended");
    writer.join().unwrap();
    assert!(
        (written as f64) < BOUND_MIB * f64::from(1 << 20),
        "the client wrote {written} bytes to a proxy whose server reads nothing"
    );
    let answers = reader.join().unwrap();
    assert!(!answers.is_empty(), "nothing was answered");
    let why = "took nothing the proxy wrote to its stdin for 2 s";
    for answer in &answers {
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{answer}");
    }
}

#[test]
fn a_get_stream_nobody_reads_is_ended_and_the_flooding_server_does_not_grow_the_front() {
    // R20: a legacy session whose server answers `initialize` and then sends notifications
    // without end, and a client that opens the session's GET stream and reads nothing of
    // it: the stream holds a bounded number of messages and is then ended, with a note;
    // the front's memory stays flat.
    let server = shell(&format!(
        r#"read -r line; printf '%s\n' '{{"jsonrpc":"2.0","id":1,"result":{{"protocolVersion":"2025-06-18","capabilities":{{}},"serverInfo":{{"name":"flood","version":"1"}}}}}}'; exec yes '{}'"#,
        notification()
    ));
    let mut command = vec![
        reasons(),
        "mcp".into(),
        "--listen".into(),
        "127.0.0.1:0".into(),
    ];
    command.push("--".into());
    command.extend(server);
    let (mut child, said) = start(&command);
    let url = said.url();
    let address = url.strip_prefix("http://").unwrap();
    let (host, target) = address.split_at(address.find('/').unwrap());
    let port: u16 = host.rsplit_once(':').unwrap().1.parse().unwrap();
    let (status, session, _) = initialize(&url);
    assert_eq!(status, 200, "initialize is answered");
    // The GET stream, asked for and never read.
    let mut get = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        get,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-06-18\r\n\r\n"
    )
    .unwrap();
    let (peak, exited) = watch(&mut child, FLOOD);
    assert!(!exited, "the front ended");
    assert!(peak <= BOUND_MIB, "the front grew to {peak} MiB");
    // SAFETY: kill has no memory-safety preconditions.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGTERM);
    }
    let (_, exited) = watch(&mut child, Duration::from_secs(20));
    assert!(exited, "SIGTERM ended the front");
    drop(get);
    let said = said.rest();
    assert!(
        said.contains("a session's GET stream was ended: its client left 64 messages unread"),
        "{said}"
    );
}
