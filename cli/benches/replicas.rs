//! Replicas of the gateway behind a real load balancer, through faults, under load: three
//! replicas of `reasons-gateway.wasm` on an engine, behind Debian's HAProxy (round robin,
//! no affinity, `/readyz` its health check), in front of one real server (the tests' own
//! on the TypeScript SDK's 2.x line, which serves both eras). 32 clients, half in
//! 2025-11-25 sessions and half making 2026-07-28 requests, each a call with a reason
//! and a listing in a closed loop. As the run goes: one replica is killed, then started
//! again; the server is restarted; the balancer reloads its configuration.
//!
//! The oracle, checked on every run: no reason reaches the server, ever (its log of
//! every POST); every request is answered exactly once, with its result (a call's
//! arguments as they were, less the reason) or an error that says what happened, never
//! with silence or twice. Each phase runs for as many rounds of every client once its
//! fault is done (the fault's own time counts in its phase): 40 under `cargo bench`, 4
//! under `cargo test --benches` (CI); the table of each phase's figures is printed.

use reasons_test_support::mcp::*;
use serde_json::Value;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Barrier, Mutex};
use std::time::{Duration, Instant};

/// How many clients run at once, and how many of them are of each era.
const CLIENTS: usize = 32;

/// What happens to the deployment, in turn, each once a share of the requests is made.
const PHASES: [&str; 5] = [
    "steady",
    "one replica killed",
    "the replica started again",
    "the server restarted",
    "the balancer reloaded",
];

/// The handshake of a 2025-11-25 session (the tests' own `INITIALIZE` asks 2025-06-18).
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reasons-replicas","version":"1"}}}"#;

/// How one request went.
struct Outcome {
    phase: usize,
    took: Duration,
    /// `None` for its result; else the error the client was told.
    error: Option<String>,
}

fn main() {
    let rounds = match std::env::args().any(|arg| arg == "--bench") {
        true => 40,
        false => 4,
    };
    let dir = tempfile::tempdir().unwrap();
    let baseline = direct(dir.path(), rounds);
    for engine in [Engine::Wasmtime, Engine::Jco] {
        let dir = tempfile::tempdir().unwrap();
        let run = replicated(engine, dir.path(), rounds);
        report(engine, &run, &baseline);
    }
}

/// What a run gave: every request's outcome, and the time from the clients' start to
/// their end.
struct Run {
    outcomes: Vec<Outcome>,
    /// Each phase's time, from its fault's start to the next's.
    walls: Vec<Duration>,
}

/// The server on `port`, logging every POST's body to `log`.
fn server(port: u16, log: &Path) -> Listening {
    let node = node("server2.mjs", &["--http", log.to_str().unwrap()]);
    let mut command = Command::new(&node[0]);
    command.args(&node[1..]).env("PORT", port.to_string());
    command.stdout(std::process::Stdio::null());
    Listening::at_port(port, command, "/mcp")
}

/// The baseline, in the same run: the same clients straight to the server, for as many
/// requests as one phase.
fn direct(dir: &Path, rounds: usize) -> Run {
    let log = dir.join("direct.jsonl");
    let server = server(free_port(), &log);
    drive(&server.url, false, 1, rounds, |_| {})
}

/// The deployment on `engine`, its clients making `rounds` rounds each per phase through
/// the faults.
fn replicated(engine: Engine, dir: &Path, rounds: usize) -> Run {
    let log = dir.join("server.jsonl");
    let server_port = free_port();
    let mut upstream = Some(server(server_port, &log));
    let upstream_url = format!("http://127.0.0.1:{server_port}/mcp");
    let wasm = gateway_wasm(dir);
    let env = [("REASONS_UPSTREAM", upstream_url.as_str())];
    let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
    let mut replicas: Vec<Option<Listening>> = (ports.iter())
        .map(|port| Some(Listening::gateway_at(*port, engine, &wasm, &env)))
        .collect();
    let balancer = Balancer::start(dir, &ports);
    balancer.serves();
    let run = drive(&balancer.url, true, PHASES.len(), rounds, |at| match at {
        1 => drop(replicas[1].take()),
        2 => replicas[1] = Some(Listening::gateway_at(ports[1], engine, &wasm, &env)),
        3 => {
            drop(upstream.take());
            upstream = Some(server(server_port, &log));
        }
        _ => balancer.reload(),
    });
    // R9 through every fault: the server never saw a reason.
    let received = std::fs::read_to_string(&log).unwrap();
    let calls = received.matches("\"tools/call\"").count();
    assert!(calls > 0, "the server received no call");
    assert!(
        !received.contains("the model's reason"),
        "a reason reached the server"
    );
    run
}

/// The clients at `url` (through `reasons` when `stripping`), `phases` phases of `rounds`
/// rounds each; `fault(at)` brings phase `at` about (after the first), and its own time
/// counts in that phase.
fn drive(
    url: &str,
    stripping: bool,
    phases: usize,
    rounds: usize,
    mut fault: impl FnMut(usize),
) -> Run {
    let done = Arc::new(AtomicUsize::new(0));
    let phase = Arc::new(AtomicUsize::new(0));
    let over = Arc::new(AtomicBool::new(false));
    let outcomes = Arc::new(Mutex::new(Vec::new()));
    let start = Arc::new(Barrier::new(CLIENTS + 1));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|client| {
            let (done, phase, over) = (done.clone(), phase.clone(), over.clone());
            let (outcomes, start) = (outcomes.clone(), start.clone());
            let url = url.to_string();
            std::thread::spawn(move || {
                let mut era = Era::new(client % 2 == 0, stripping, &url);
                start.wait();
                for round in 0.. {
                    if over.load(Ordering::SeqCst) {
                        break;
                    }
                    for call_it in [true, false] {
                        let began = Instant::now();
                        let error = era.ask(&url, client, round, call_it);
                        let took = began.elapsed();
                        // A request counts in the phase it ended in: one in flight on a
                        // replica as it is lost counts in that fault's.
                        let at = phase.load(Ordering::SeqCst);
                        let outcome = Outcome {
                            phase: at,
                            took,
                            error,
                        };
                        outcomes.lock().unwrap().push(outcome);
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                }
            })
        })
        .collect();
    start.wait();
    let mut began = Instant::now();
    let mut walls = Vec::new();
    let run_phase = || {
        let until = done.load(Ordering::SeqCst) + CLIENTS * rounds * 2;
        while done.load(Ordering::SeqCst) < until {
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    run_phase();
    for at in 1..phases {
        walls.push(began.elapsed());
        began = Instant::now();
        phase.store(at, Ordering::SeqCst);
        fault(at);
        run_phase();
    }
    over.store(true, Ordering::SeqCst);
    for client in clients {
        client.join().expect("a client panicked");
    }
    walls.push(began.elapsed());
    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    assert_eq!(outcomes.len(), done.load(Ordering::SeqCst));
    Run { outcomes, walls }
}

/// The balancer: HAProxy in master-worker mode, round robin over the replicas, each
/// checked on `/readyz`; a request that could not reach a replica goes to another.
struct Balancer {
    process: Listening,
    url: String,
}

impl Balancer {
    fn start(dir: &Path, replicas: &[u16]) -> Balancer {
        let port = free_port();
        let servers: String = (replicas.iter().enumerate())
            .map(|(at, port)| format!("  server gateway{at} 127.0.0.1:{port} check\n"))
            .collect();
        let config = format!(
            "global\n  master-worker\n  maxconn 2000\n  hard-stop-after 30s\n\
             defaults\n  mode http\n  timeout connect 2s\n  timeout client 60s\n  \
             timeout server 60s\n  retries 3\n  option redispatch\n  \
             option idle-close-on-response\n\
             frontend mcp\n  bind 127.0.0.1:{port}\n  default_backend gateways\n\
             backend gateways\n  balance roundrobin\n  option httpchk\n  \
             http-check send meth GET uri /readyz ver HTTP/1.1 hdr Host 127.0.0.1\n  \
             http-check expect status 200\n  timeout check 10s\n  \
             default-server inter 2s fall 2 rise 1\n\
             {servers}"
        );
        let file = dir.join("haproxy.cfg");
        std::fs::write(&file, config).unwrap();
        let mut command = Command::new("haproxy");
        command.args(["-W", "-db", "-f"]).arg(&file);
        command.stdout(std::process::Stdio::null());
        let process = Listening::at_port(port, command, "/mcp");
        let url = process.url.clone();
        Balancer { process, url }
    }

    /// Asserts that the deployment serves before the run: HAProxy takes a replica to be
    /// up until its checks say otherwise, and round robin sends these to each in turn.
    fn serves(&self) {
        let mut era = Era::new(false, true, &self.url);
        for _ in 0..6 {
            assert_eq!(
                era.ask(&self.url, 0, 0, false),
                None,
                "the deployment serves"
            );
        }
    }

    /// Reloads the configuration, as an operator does: SIGUSR2 to the master.
    fn reload(&self) {
        let master = self.process.pid().to_string();
        let status = Command::new("kill").args(["-USR2", &master]).status();
        assert!(status.unwrap().success(), "the balancer reloads");
    }
}

/// A client of one era: a 2025-11-25 session (`session` its id, once initialized) or
/// 2026-07-28 requests, each on its own.
struct Era {
    agent: ureq::Agent,
    legacy: bool,
    /// Whether its calls go through `reasons`, so that the server must get them without
    /// the reason (the baseline's go to the server as they are).
    stripping: bool,
    session: Option<String>,
}

impl Era {
    fn new(legacy: bool, stripping: bool, url: &str) -> Era {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        let mut era = Era {
            agent,
            legacy,
            stripping,
            session: None,
        };
        if legacy {
            era.initialize(url);
        }
        era
    }

    /// Opens a session: the handshake, and the session id if the server gives one.
    fn initialize(&mut self, url: &str) -> Option<String> {
        self.session = None;
        let (status, session, messages) = match self.post(url, INITIALIZE, &[]) {
            Ok(answered) => answered,
            Err(error) => return Some(broken(error)),
        };
        if status != 200 || !messages.iter().any(|message| message["result"].is_object()) {
            return Some(format!("initialize: HTTP {status}"));
        }
        self.session = Some(session);
        match self.post(url, INITIALIZED, &self.headers()) {
            Ok((status, _, _)) if (200..300).contains(&status) => None,
            Ok((status, _, _)) => Some(format!("initialized: HTTP {status}")),
            Err(error) => Some(broken(error)),
        }
    }

    /// The legacy session's headers.
    fn headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = vec![("MCP-Protocol-Version", "2025-11-25".to_string())];
        if let Some(session) = self.session.as_ref().filter(|session| !session.is_empty()) {
            headers.push(("Mcp-Session-Id", session.clone()));
        }
        headers
    }

    /// POSTs `body`; the status, session id and messages, or why no whole answer came.
    fn post(
        &self,
        url: &str,
        body: &str,
        headers: &[(&str, String)],
    ) -> Result<(u16, String, Vec<Value>), ureq::Error> {
        let mut post = (self.agent.post(url))
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in headers {
            post = post.header(*name, value);
        }
        for (name, value) in mirrored(body, &[]) {
            post = post.header(name, value);
        }
        let mut answer = post.send(body)?;
        let status = answer.status().as_u16();
        let session = (answer.headers().get("mcp-session-id"))
            .and_then(|value| value.to_str().ok())
            .unwrap_or_default()
            .to_string();
        let text = answer.body_mut().read_to_string()?;
        let messages = if text.trim_start().starts_with('{') {
            serde_json::from_str(&text).into_iter().collect()
        } else {
            (text.lines())
                .filter_map(|line| line.strip_prefix("data: "))
                .filter_map(|data| serde_json::from_str(data).ok())
                .collect()
        };
        Ok((status, session, messages))
    }

    /// Client `client`'s call (or listing) of round `round`: `None` for its result, or
    /// the error it was answered with. Panics when it was not answered exactly once, or
    /// a call's result is not its arguments less the reason.
    fn ask(&mut self, url: &str, client: usize, round: usize, call_it: bool) -> Option<String> {
        let id = u32::try_from(round * 2 + usize::from(call_it) + 10).unwrap();
        let text = format!("client {client} round {round}");
        let arguments = format!(r#"{{"text":"{text}","reason":"the model's reason"}}"#);
        let body = match call_it {
            true => call(id, "record", &arguments, !self.legacy),
            false => list(id, !self.legacy),
        };
        let headers = if self.legacy { self.headers() } else { vec![] };
        let (status, _, messages) = match self.post(url, &body, &headers) {
            Ok(answered) => answered,
            Err(error) => return Some(broken(error)),
        };
        if status == 404 && self.legacy {
            // The spec's word for a session the server no longer has: a new one.
            return self
                .initialize(url)
                .or(Some("session gone: initialized again".into()));
        }
        let answers: Vec<&Value> = (messages.iter())
            .filter(|message| message["id"] == id && message.get("method").is_none())
            .collect();
        if status != 200 && answers.is_empty() {
            return Some(format!("HTTP {status}"));
        }
        assert_eq!(
            answers.len(),
            1,
            "client {client}: {body} answered {messages:?}"
        );
        let answer = answers[0];
        if let Some(error) = answer.get("error") {
            return Some(
                error["message"]
                    .as_str()
                    .unwrap_or("(no message)")
                    .to_string(),
            );
        }
        if call_it {
            let expected = match self.stripping {
                true => serde_json::json!({ "text": text }),
                false => serde_json::json!({ "text": text, "reason": "the model's reason" }),
            };
            let expected = expected.to_string();
            assert_eq!(result_text(answer), expected, "client {client}");
        } else {
            let tools = answer["result"]["tools"].as_array().unwrap();
            assert_eq!(tools.len(), 3, "{answer}");
        }
        None
    }
}

/// The error a client sees when no whole answer came: the connection broke off (a
/// replica lost with the answer half sent, a connection the balancer closed). Never
/// silence: a request nothing answers within the client's minute fails the run.
fn broken(error: ureq::Error) -> String {
    if let ureq::Error::Timeout(_) = error {
        panic!("a request went unanswered: {error}");
    }
    format!("the connection broke off ({error})")
}

/// Prints each phase's figures, the baseline's first: requests, requests/s, errors
/// (each kind, counted), p50 and p99; and the steady phase's throughput against the
/// baseline's.
fn report(engine: Engine, run: &Run, baseline: &Run) {
    fn phase(run: &Run, at: usize) -> Vec<&Outcome> {
        (run.outcomes.iter())
            .filter(|outcome| outcome.phase == at)
            .collect()
    }
    let rate = |run: &Run, at: usize| phase(run, at).len() as f64 / run.walls[at].as_secs_f64();
    println!(
        "\n{engine:?}: 3 replicas behind HAProxy, {CLIENTS} clients; steady, {:.0} requests/s, \
         the server alone {:.0} ({:.2}x)\n",
        rate(run, 0),
        rate(baseline, 0),
        rate(run, 0) / rate(baseline, 0),
    );
    println!("| phase | requests | requests/s | errors | p50 ms | p99 ms | the errors |");
    println!("|---|---|---|---|---|---|---|");
    row(
        "the server alone (baseline)",
        &phase(baseline, 0),
        rate(baseline, 0),
    );
    for (at, name) in PHASES.iter().enumerate() {
        row(name, &phase(run, at), rate(run, at));
    }
}

/// One phase's row.
fn row(name: &str, outcomes: &[&Outcome], rate: f64) {
    let mut took: Vec<Duration> = outcomes.iter().map(|outcome| outcome.took).collect();
    took.sort();
    let mut errors: Vec<&str> = (outcomes.iter())
        .filter_map(|outcome| outcome.error.as_deref())
        .collect();
    errors.sort();
    let mut kinds: Vec<(usize, &str)> = Vec::new();
    for error in &errors {
        match kinds.last_mut() {
            Some((count, kind)) if kind == error => *count += 1,
            _ => kinds.push((1, error)),
        }
    }
    let kinds: Vec<String> = (kinds.iter())
        .map(|(count, kind)| format!("{count}× {kind}"))
        .collect();
    let at_share = |share: f64| {
        let index = ((took.len() as f64 * share) as usize).min(took.len().saturating_sub(1));
        took.get(index).map_or(0.0, |took| took.as_secs_f64() * 1e3)
    };
    println!(
        "| {name} | {} | {rate:.0} | {} | {:.1} | {:.1} | {} |",
        took.len(),
        errors.len(),
        at_share(0.5),
        at_share(0.99),
        kinds.join("; ")
    );
}
