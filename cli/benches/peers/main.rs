//! `reasons` beside the proxies a user would pick instead, in one run: the same server,
//! the same client, the same requests (a `tools/call` with the model's reason, then a
//! `tools/list`, in turn), directly and through each path, at 1, 8 and 32 sessions at
//! once; the paths take turns within each concurrency, so that whatever else the shared
//! machine does falls on each alike: `cargo bench -p reasons --bench peers`.
//!
//! Under `cargo test --benches` it runs a few requests at 1 and 2 sessions, without the
//! Rust `mcp-proxy` (a build of minutes), so that the benchmark does not rot.

use load::{Call, Client, Http, Stdio, Times, drive, quantile};
use reasons_test_support::mcp::{
    Engine, Listening, Session, everything, gateway_wasm, own_server, own_server_http, proxied,
    proxied_url, status_mib,
};
use std::time::Duration;

mod load;
mod setup;

/// Whether this is `cargo bench` (measured) rather than `cargo test --benches` (checked).
fn measured() -> bool {
    std::env::args().any(|arg| arg == "--bench")
}

/// How a path's sessions are opened.
enum Open {
    /// A process per session, spoken to over stdio: the server itself (`proxy` false) or a
    /// proxy before it, whose memory is the path's own.
    Stdio {
        start: Box<dyn Fn() -> Session>,
        proxy: bool,
    },
    /// Sessions of an HTTP endpoint, served by one process (`front`, whose memory is the
    /// path's own, none for the server itself).
    Http { url: String, front: Option<u32> },
}

/// One way from the client to the server.
struct Path {
    name: &'static str,
    open: Open,
    /// The tool its calls go to, by the name the path gives it (a peer that aggregates
    /// names it in its own namespace).
    call: Call,
    /// Whether the server gets the model's reason on this path: it does directly and
    /// through each peer, and never through `reasons`.
    reason_arrives: bool,
}

impl Path {
    fn stdio(name: &'static str, start: impl Fn() -> Session + 'static, call: Call) -> Path {
        Path {
            name,
            open: Open::Stdio {
                start: Box::new(start),
                proxy: name != "direct",
            },
            call,
            reason_arrives: !name.starts_with("reasons"),
        }
    }

    fn http(name: &'static str, front: &Listening, call: Call) -> Path {
        Path {
            name,
            open: Open::Http {
                url: front.url.clone(),
                front: (name != "direct").then(|| front.pid()),
            },
            call,
            reason_arrives: !name.starts_with("reasons"),
        }
    }
}

/// A path's sessions, open.
struct Sessions {
    clients: Vec<Box<dyn Client>>,
    /// The processes whose memory is the path's: one per session, one for all, or none.
    own: Vec<u32>,
}

fn open(path: &Path, count: usize) -> Sessions {
    let mut clients: Vec<Box<dyn Client>> = Vec::with_capacity(count);
    let mut own = Vec::new();
    for _ in 0..count {
        match &path.open {
            Open::Stdio { start, proxy } => {
                let stdio = Stdio::open(start());
                if *proxy {
                    own.push(stdio.0.pid());
                }
                clients.push(Box::new(stdio));
            }
            Open::Http { url, front } => {
                clients.push(Box::new(Http::open(url)));
                own = front.iter().copied().collect();
            }
        }
    }
    Sessions { clients, own }
}

/// The resident memory of `pids`, in MiB: their sum, and per session.
fn memory(pids: &[u32], sessions: usize) -> Option<(f64, f64)> {
    if pids.is_empty() {
        return None;
    }
    let total: f64 = pids
        .iter()
        .map(|&pid| status_mib(pid, "VmRSS:").expect("the kernel reports VmRSS"))
        .sum();
    Some((total, total / sessions as f64))
}

/// A path's figures at one concurrency.
struct Row {
    times: Times,
    /// Its memory once warmed up (20 requests a session), and after the timed rounds.
    memory: Option<((f64, f64), (f64, f64))>,
}

/// Each path's figures with `count` sessions at once; `echoes` when the server answers a
/// call with the arguments it received.
fn measure(paths: &[Path], count: usize, rounds: usize, each: usize, echoes: bool) -> Vec<Row> {
    let mut open: Vec<Sessions> = paths.iter().map(|path| open(path, count)).collect();
    assert_eq!(open.len(), paths.len(), "sessions for each path");
    // Each path is checked before it is timed: the call is answered, and, where the
    // server says what it received, the reason reaches it on the paths that do not strip
    // it, and only on those.
    for (path, sessions) in paths.iter().zip(&mut open) {
        assert_eq!(
            sessions.clients.len(),
            count,
            "{}: every session open",
            path.name
        );
        let answer = sessions.clients[0].ask(&path.call.text(1));
        assert!(answer.contains(r#""result""#), "{}: {answer}", path.name);
        if echoes {
            assert_eq!(
                answer.contains("to measure"),
                path.reason_arrives,
                "{}: {answer}",
                path.name
            );
        }
        drive(&mut sessions.clients, 20, &path.call);
    }
    let warm: Vec<_> = open
        .iter()
        .map(|sessions| memory(&sessions.own, count))
        .collect();
    let mut times: Vec<Times> = paths.iter().map(|_| Times::default()).collect();
    for _ in 0..rounds {
        for ((path, sessions), times) in paths.iter().zip(&mut open).zip(&mut times) {
            times.extend(drive(&mut sessions.clients, each, &path.call));
        }
    }
    open.iter()
        .zip(times)
        .zip(warm)
        .map(|((sessions, times), warm)| Row {
            memory: warm.zip(memory(&sessions.own, count)),
            times,
        })
        .collect()
}

fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}

/// Prints the rows of `paths` at `count` sessions: each path's latency of a call and of
/// a listing (p50 and p99), what it adds to the direct path's (the first), its
/// throughput and its share of the direct path's, and its memory (warmed up, then after
/// the timed requests).
fn table(paths: &[Path], count: usize, rows: &mut [Row]) {
    assert_eq!(rows.len(), paths.len(), "a row per path");
    let direct = {
        let times = &mut rows[0].times;
        (
            quantile(&mut times.calls, 0.5),
            quantile(&mut times.calls, 0.99),
            times.throughput(),
        )
    };
    for (path, row) in paths.iter().zip(rows) {
        let times = &mut row.times;
        let (p50, p99) = (
            quantile(&mut times.calls, 0.5),
            quantile(&mut times.calls, 0.99),
        );
        let (list50, list99) = (
            quantile(&mut times.lists, 0.5),
            quantile(&mut times.lists, 0.99),
        );
        let memory = match row.memory {
            Some(((warm, _), (total, each))) => {
                format!("{warm:.1} → {total:.1} MiB ({each:.1} a session)")
            }
            None => String::from("(the server)"),
        };
        println!(
            "| {} | {count} | {:.3} / {:.3} | {:+.3} / {:+.3} | {:.3} / {:.3} | {:.0} ({:.2}x) | {memory} |",
            path.name,
            ms(p50),
            ms(p99),
            ms(p50) - ms(direct.0),
            ms(p99) - ms(direct.1),
            ms(list50),
            ms(list99),
            times.throughput(),
            times.throughput() / direct.2,
        );
    }
}

/// Runs `paths` at each concurrency and prints their table under `title` (see
/// [`measure`] for `echoes`).
fn compare(title: &str, paths: &[Path], echoes: bool) {
    println!("\n{title}\n");
    println!(
        "| path | sessions | call p50 / p99 (ms) | added p50 / p99 (ms) | list p50 / p99 (ms) | requests/s (of direct) | resident memory |"
    );
    println!("|---|---|---|---|---|---|---|");
    let levels: &[usize] = if measured() { &[1, 8, 32] } else { &[1, 2] };
    for &count in levels {
        // About 2,000 requests a path at each concurrency, in five turns.
        let (rounds, each) = match measured() {
            true => (5, (400 / count).max(20) & !1),
            false => (1, 4),
        };
        let mut rows = measure(paths, count, rounds, each, echoes);
        table(paths, count, &mut rows);
    }
}

/// `reasons mcp --listen` for up to 64 sessions, with `upstream` (`-- server…` or
/// `--url URL`).
fn listening(upstream: Vec<String>) -> Listening {
    Listening::front_to(&["--max-sessions", "64"], upstream)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let rust = measured().then(setup::rust_proxy);
    let python = setup::python_proxy();
    let civic = setup::civic();

    // A server over stdio: the tests' own (fast, it answers with what it received), then
    // the reference server-everything (its `echo` says only its message back).
    let servers = [
        (
            "the tests' own server (Node)",
            own_server(),
            "record",
            "text",
            true,
        ),
        (
            "the reference server-everything",
            everything(),
            "echo",
            "message",
            false,
        ),
    ];
    for (title, server, tool, argument, echoes) in servers {
        let mut upstream = vec!["--".to_string()];
        upstream.extend(server.clone());
        let front = listening(upstream);
        let python_front = setup::python_front(&python, &server);
        let rust_front = rust
            .as_ref()
            .map(|rust| setup::rust_front(rust, &setup::stdio_backend(&server), dir.path()));
        let call = |tool: &str| Call {
            tool: tool.to_string(),
            argument,
        };
        let direct = server.clone();
        let through = proxied(&[], server.clone());
        let mut paths = vec![
            Path::stdio("direct", move || Session::start(&direct), call(tool)),
            Path::stdio("reasons mcp", move || Session::start(&through), call(tool)),
            Path::http("reasons mcp --listen", &front, call(tool)),
            Path::http("Python mcp-proxy 0.13.0", &python_front, call(tool)),
        ];
        if let Some(rust_front) = &rust_front {
            let aggregated = call(&format!("own/{tool}"));
            paths.push(Path::http("Rust mcp-proxy 0.6.0", rust_front, aggregated));
        }
        compare(&format!("A server over stdio: {title}"), &paths, echoes);
    }

    // A server over Streamable HTTP: the tests' own, on the TypeScript SDK.
    let log = dir.path().join("http.jsonl");
    let server = own_server_http(&log);
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(
        Engine::WasmtimeReusing,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    let front = listening(vec!["--url".into(), server.url.clone()]);
    let civic_front = setup::civic_front(&civic, &server.url);
    let through = proxied_url(&[], &server.url);
    let civic_stdio = {
        let (civic, url) = (civic.clone(), server.url.clone());
        move || {
            let mut command = setup::civic_to(&civic, &url);
            command.arg("--stdio").stderr(std::process::Stdio::null());
            Session::start_command(command)
        }
    };
    let rust_front = rust
        .as_ref()
        .map(|rust| setup::rust_front(rust, &setup::http_backend(&server.url), dir.path()));
    let record = |tool: &str| Call {
        tool: tool.to_string(),
        argument: "text",
    };
    let mut paths = vec![
        Path::http("direct", &server, record("record")),
        Path::stdio(
            "reasons mcp --url",
            move || Session::start(&through),
            record("record"),
        ),
        Path::http("reasons mcp --listen --url", &front, record("record")),
        Path::http(
            "reasons-gateway.wasm (wasmtime serve)",
            &gateway,
            record("record"),
        ),
        Path::stdio(
            "Civic passthrough 0.12.1, stdio",
            civic_stdio,
            record("record"),
        ),
        Path::http(
            "Civic passthrough 0.12.1, HTTP",
            &civic_front,
            record("record"),
        ),
    ];
    if let Some(rust_front) = &rust_front {
        paths.push(Path::http(
            "Rust mcp-proxy 0.6.0",
            rust_front,
            record("own/record"),
        ));
    }
    compare(
        "A server over Streamable HTTP: the tests' own (the TypeScript SDK's 1.x)",
        &paths,
        true,
    );
}
