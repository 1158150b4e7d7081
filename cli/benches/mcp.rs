//! What `reasons mcp` adds to a round trip: the same server (the tests' own, in Node)
//! spoken to directly and through the proxy, alternately, in one run; over stdio, and
//! over Streamable HTTP (`--url`, against a client that POSTs to the server itself);
//! and what its telemetry adds, the proxy without and with a collector in turn:
//! `cargo bench -p reasons --bench mcp`.

use reasons_test_support::mcp::{
    Collector, INITIALIZE, INITIALIZED, Listening, Session, http_echo, own_server, peers, proxied,
    proxied_url, python_http, status_mib,
};
use std::time::Duration;
use support::{alternately, ms, requests, rounds, summary};

mod support;

fn session(command: &[String]) -> Session {
    let mut session = Session::start(command);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session
}

/// The peak resident memory of the process `pid` so far (`VmHWM`), in MiB.
fn peak_mib(pid: u32) -> f64 {
    status_mib(pid, "VmHWM:").expect("the kernel reports VmHWM")
}

/// Prints a row: the median and mean of `direct` and of `through`, what the proxy adds,
/// and the median added as a share of the direct median (issue 57's target for a stdio
/// call: at most a third, 0.33).
fn row(name: &str, plain: &mut [Duration], proxy: &mut [Duration]) {
    let (plain_median, plain_mean) = summary(plain);
    let (proxy_median, proxy_mean) = summary(proxy);
    let added = ms(proxy_median) - ms(plain_median);
    println!(
        "{name:<32} {:>7.3} ms ({:.3})      {:>7.3} ms ({:.3})       {added:>+7.3} ms ({:+.3})   {:>5.2}",
        ms(plain_median),
        ms(plain_mean),
        ms(proxy_median),
        ms(proxy_mean),
        ms(proxy_mean) - ms(plain_mean),
        added / ms(plain_median),
    );
}

/// An SDK's client (`node`: the TypeScript SDK's 1.x; `python`) timing one call with a
/// reason over `direct` and `through` in turn, in one process: the samples of each.
fn sdk_round_trips(client: &str, direct: &str, through: &str) -> (Vec<Duration>, Vec<Duration>) {
    let (program, script) = match client {
        "python" => (peers().join(".venv/bin/python"), "bench_client.py"),
        _ => ("node".into(), "bench-client.mjs"),
    };
    let output = std::process::Command::new(program)
        .arg(peers().join(script))
        .arg(rounds().to_string())
        .args([
            "record",
            r#"{"text":"a","reason":"to measure"}"#,
            direct,
            through,
        ])
        .output()
        .expect("the SDK's client starts");
    assert!(
        output.status.success(),
        "the {client} client failed: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    let times: Vec<Vec<f64>> = serde_json::from_slice(&output.stdout).expect("its times");
    assert_eq!(times.len(), 2, "one list of times per URL");
    let samples = |ms: &Vec<f64>| -> Vec<Duration> {
        assert_eq!(ms.len(), rounds(), "a time for each round");
        ms.iter()
            .map(|ms| Duration::from_secs_f64(ms / 1000.0))
            .collect()
    };
    (samples(&times[0]), samples(&times[1]))
}

/// Times `direct` and `through` alternately and prints a row: median and mean of each,
/// and what the proxy adds.
fn compare(name: &str, direct: impl FnMut(), through: impl FnMut()) {
    let [mut plain, mut proxy]: [Vec<Duration>; 2] =
        alternately(vec![Box::new(direct), Box::new(through)])
            .try_into()
            .expect("a list of times per path");
    row(name, &mut plain, &mut proxy);
}

fn main() {
    println!(
        "round trip                       direct median (mean)   proxied median (mean)   added median (mean)   added / direct"
    );
    let mut direct = session(&own_server());
    let mut through = session(&proxied(&[], own_server()));
    let over_stdio = [
        (
            "tools/list",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
        (
            "tools/call with a reason",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record","arguments":{"text":"a","reason":"to measure"}}}"#,
        ),
    ];
    for (name, request) in over_stdio {
        compare(
            name,
            || drop(direct.ask(request)),
            || drop(through.ask(request)),
        );
    }
    println!(
        "peak memory of the proxy, whole session (stdio): {:.1} MiB",
        peak_mib(through.pid())
    );
    direct.finish();
    through.finish();

    // What telemetry costs: the same proxy, without a collector and sending each span to
    // one (rotel, a real collector), in turn.
    println!(
        "telemetry                        off median (mean)      on median (mean)        added median (mean)   added / off"
    );
    let dir = tempfile::tempdir().unwrap();
    let collector = Collector::start(dir.path());
    let mut off = session(&proxied(&[], own_server()));
    let proxy = proxied(&[], own_server());
    let mut sending = std::process::Command::new(&proxy[0]);
    sending
        .args(&proxy[1..])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", &collector.endpoint);
    let mut on = Session::start_command(sending);
    on.ask(INITIALIZE);
    on.send(INITIALIZED);
    for (name, request) in over_stdio {
        compare(name, || drop(off.ask(request)), || drop(on.ask(request)));
    }
    off.finish();
    on.finish();
    collector.until("tools/call record");

    let log = tempfile::NamedTempFile::new().unwrap();
    let server = http_echo(log.path());
    let agent = ureq::Agent::new_with_defaults();
    let mut through = Session::start(&proxied_url(&[], &server.url));
    for request in requests() {
        compare(
            &format!("{} (HTTP)", request.name),
            || drop(request.post(&agent, &server.url)),
            || drop(through.ask(&request.body)),
        );
    }
    println!(
        "peak memory of the proxy, whole session (HTTP): {:.1} MiB",
        peak_mib(through.pid())
    );
    through.finish();

    // The SDKs' own clients over HTTP, timed by themselves: the Python SDK's server
    // directly, and through `--listen` in front of it (`--url`), in turn in one client.
    let log = tempfile::NamedTempFile::new().unwrap();
    let server = python_http(log.path());
    let front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    for client in ["node", "python"] {
        let (mut plain, mut proxy) = sdk_round_trips(client, &server.url, &front.url);
        row(
            &format!("{client} SDK call, --listen"),
            &mut plain,
            &mut proxy,
        );
    }
}
