//! What `reasons mcp` adds to a round trip: the same server (the tests' own, in Node)
//! spoken to directly and through the proxy, alternately, in one run:
//! `cargo bench -p reasons-harness --bench mcp`.

use reasons_test_support::mcp::{INITIALIZE, INITIALIZED, Session, own_server, proxied};
use std::time::{Duration, Instant};

/// Round trips per request: many under `cargo bench`, a few under `cargo test --benches`,
/// which only checks that the benchmark still runs.
fn rounds() -> usize {
    match std::env::args().any(|arg| arg == "--bench") {
        true => 2_000,
        false => 10,
    }
}

fn session(command: &[String]) -> Session {
    let mut session = Session::start(command);
    session.ask(INITIALIZE);
    session.send(INITIALIZED);
    session
}

/// Median and mean of `samples`.
fn summary(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    (samples[samples.len() / 2], mean)
}

fn main() {
    let mut direct = session(&own_server());
    let mut through = session(&proxied(&[], own_server()));
    let requests = [
        (
            "tools/list",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
        (
            "tools/call with a reason",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"record","arguments":{"text":"a","reason":"to measure"}}}"#,
        ),
    ];
    println!(
        "round trip           direct median (mean)   proxied median (mean)   added median (mean)"
    );
    for (name, request) in requests {
        let (mut plain, mut proxy) = (Vec::new(), Vec::new());
        for round in 0..rounds() + 100 {
            for (session, samples) in [(&mut direct, &mut plain), (&mut through, &mut proxy)] {
                let start = Instant::now();
                session.ask(request);
                // The first rounds warm both sides up (JIT, caches) and are not counted.
                if round >= 100 {
                    samples.push(start.elapsed());
                }
            }
        }
        let (plain_median, plain_mean) = summary(&mut plain);
        let (proxy_median, proxy_mean) = summary(&mut proxy);
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{name:<24} {:>7.3} ms ({:.3})      {:>7.3} ms ({:.3})       {:>+7.3} ms ({:+.3})",
            ms(plain_median),
            ms(plain_mean),
            ms(proxy_median),
            ms(proxy_mean),
            ms(proxy_median) - ms(plain_median),
            ms(proxy_mean) - ms(plain_mean),
        );
    }
    direct.finish();
    through.finish();
}
