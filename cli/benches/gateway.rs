//! What the wasi:http gateway adds to a round trip: the tests' own Streamable HTTP server
//! (`tests/mcp/http-echo.mjs`) spoken to directly, through `reasons-gateway.wasm` on
//! `wasmtime serve` (a fresh instance per request, and an instance reused: a listing per
//! call either way, since no instance keeps one), and through
//! `reasons mcp --listen --url`, alternately, in one run; then what one fresh instance
//! costs, and the gateway's size: `cargo bench -p reasons --bench gateway`.

use reasons_test_support::mcp::{Engine, Listening, gateway_wasm, http_echo};
use std::time::Duration;
use support::{alternately, ms, requests, summary};

mod support;

/// One way to the server: what the table calls it, and its URL.
struct Path<'a> {
    name: &'a str,
    url: &'a str,
}

/// Prints a row of the table: the median and mean of each path, and what each adds to the
/// first's median.
fn row(name: &str, samples: &mut [Vec<Duration>]) {
    let summaries: Vec<(Duration, Duration)> = samples.iter_mut().map(|s| summary(s)).collect();
    let direct = summaries[0].0;
    let cells: Vec<String> = summaries
        .iter()
        .map(|&(median, mean)| {
            let added = ms(median) - ms(direct);
            format!("{:.3} ms ({:.3}), {added:+.3}", ms(median), ms(mean))
        })
        .collect();
    println!("| {name} | {} |", cells.join(" | "));
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let wasm = gateway_wasm(dir.path());
    let log = dir.path().join("http.jsonl");
    let server = http_echo(&log);
    let fresh = Listening::gateway(
        Engine::Wasmtime,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    let reusing = Listening::gateway(
        Engine::WasmtimeReusing,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    let front = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    let paths = [
        Path {
            name: "direct",
            url: &server.url,
        },
        Path {
            name: "gateway, a listing per call (fresh instances)",
            url: &fresh.url,
        },
        Path {
            name: "gateway, a listing per call (a reused instance)",
            url: &reusing.url,
        },
        Path {
            name: "reasons mcp --listen --url",
            url: &front.url,
        },
    ];
    assert_eq!(paths.len(), 4);

    // A connection kept alive per path, as a client keeps one to its server.
    let agents: Vec<ureq::Agent> = paths
        .iter()
        .map(|_| ureq::Agent::new_with_defaults())
        .collect();
    let names: Vec<&str> = paths.iter().map(|path| path.name).collect();
    println!(
        "| round trip, median (mean), added | {} |",
        names.join(" | ")
    );
    println!("|---|{}", "---|".repeat(paths.len()));
    for request in requests() {
        // Each path answers before it is timed: the server directly, with the reason it
        // was sent; through the layer, without it.
        for (index, (path, agent)) in paths.iter().zip(&agents).enumerate() {
            let answer = request.post(agent, path.url);
            assert!(answer.contains(r#""result""#), "{}: {answer}", path.name);
            let direct = index == 0 && request.body.contains("to measure");
            assert_eq!(
                answer.contains("to measure"),
                direct,
                "{}: {answer}",
                path.name
            );
        }
        let runs = paths.iter().zip(&agents).map(|(path, agent)| {
            Box::new(|| drop(request.post(agent, path.url))) as Box<dyn FnMut()>
        });
        row(request.name, &mut alternately(runs.collect()));
    }

    // What one fresh instance costs: a request the gateway answers itself (a GET of a
    // path it does not serve, 404), so that nothing goes upstream and no body is left
    // unread, on a fresh instance and on a reused one.
    let refused = |url: String| {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .build()
            .new_agent();
        let elsewhere = url.replace("/mcp", "/elsewhere");
        move || assert_eq!(agent.get(&elsewhere).call().unwrap().status(), 404)
    };
    let mut samples = alternately(vec![
        Box::new(refused(fresh.url.clone())),
        Box::new(refused(reusing.url.clone())),
    ]);
    let (fresh_median, _) = summary(&mut samples[0]);
    let (reused_median, _) = summary(&mut samples[1]);
    println!(
        "a request the gateway answers itself: {:.3} ms on a fresh instance, {:.3} ms on a reused one: one fresh instance costs {:+.3} ms",
        ms(fresh_median),
        ms(reused_median),
        ms(fresh_median) - ms(reused_median)
    );
    let bytes = std::fs::metadata(&wasm).unwrap().len();
    println!("reasons-gateway.wasm: {bytes} bytes");
}
