//! What a call costs the proxy while it waits for a listing, against the same call
//! when nothing waits: a 2026-07-28 call of 4 MiB whose tool the proxy has not listed
//! waits for the proxy's own listing, while the server sends 50 log notes; on the
//! baseline path the listing comes first and the notes after. Both paths hand the
//! proxy the same lines; only the wait differs. The two are timed alternately, one
//! round each in turn, in one run; the table gives each one's median and mean, and the
//! ratio of the medians.

use reasons_mcp::{Audit, NativeLayer, Now, Out, Proxy};
use reasons_transform::Options;
use std::time::{Duration, Instant};

/// The server's notes while the call waits.
const NOTES: usize = 50;
/// Rounds per path: many under `cargo bench`, one under `cargo test --benches`.
fn rounds() -> usize {
    if std::env::args().any(|arg| arg == "--bench") {
        20
    } else {
        1
    }
}

fn now() -> Now {
    Now {
        instant: Instant::now(),
        wall: std::time::SystemTime::now(),
    }
}

const TOOL: &str =
    r#"{"name":"write","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;

/// The call: 4 MiB of text and a reason.
fn call() -> Vec<u8> {
    let text = "a".repeat(4 << 20);
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"write","arguments":{{"text":"{text}","reason":"to measure"}},"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}}}}"#
    )
    .into_bytes()
}

/// The id of the proxy's own listing among `out`.
fn listing_id(out: &[Out]) -> String {
    out.iter()
        .find_map(|out| match out {
            Out::Server { outline, .. } if outline.own => Some(outline.ids[0].json().to_string()),
            _ => None,
        })
        .expect("the proxy lists the server for the call")
}

/// One round: the call, then the listing's answer and the notes, in the order `held`
/// says (notes first: the call waits through them). Checks that the call went.
fn round(held: bool) -> Duration {
    let layer = NativeLayer::new(Options::default()).unwrap();
    let mut proxy = Proxy::new(layer, Audit::default(), now());
    let note = br#"{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":"working"}}"#;
    let call = call();
    let start = Instant::now();
    let asked = proxy.client_sent(call, now());
    let listed = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"tools":[{TOOL}]}}}}"#,
        listing_id(&asked)
    )
    .into_bytes();
    let mut sent = Vec::new();
    let notes = |proxy: &mut Proxy<NativeLayer>| {
        for _ in 0..NOTES {
            proxy.server_sent(note.to_vec(), now());
        }
    };
    if held {
        notes(&mut proxy);
    }
    sent.extend(proxy.server_sent(listed, now()));
    if !held {
        notes(&mut proxy);
    }
    let elapsed = start.elapsed();
    let went = sent
        .iter()
        .any(|out| matches!(out, Out::Server { outline, .. } if outline.method.as_deref() == Some("tools/call")));
    assert!(went, "the call went to the server once listed");
    elapsed
}

fn median(times: &mut [Duration]) -> Duration {
    times.sort();
    times[times.len() / 2]
}

fn mean(times: &[Duration]) -> Duration {
    times.iter().sum::<Duration>() / times.len() as u32
}

fn main() {
    let (mut held, mut first) = (Vec::new(), Vec::new());
    for _ in 0..rounds() {
        held.push(round(true));
        first.push(round(false));
    }
    assert_eq!(held.len(), rounds());
    let ms = |time: Duration| time.as_secs_f64() * 1000.0;
    let (held_mean, first_mean) = (mean(&held), mean(&first));
    let (held, first) = (median(&mut held), median(&mut first));
    println!("| path | median | mean |");
    println!("|---|---|---|");
    println!(
        "| listed first, then {NOTES} notes | {:.2} ms | {:.2} ms |",
        ms(first),
        ms(first_mean)
    );
    println!(
        "| waiting through {NOTES} notes | {:.2} ms | {:.2} ms |",
        ms(held),
        ms(held_mean)
    );
    println!(
        "waiting / listed first, medians: {:.2}x",
        held.as_secs_f64() / first.as_secs_f64()
    );
}
