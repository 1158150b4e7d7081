//! Many sessions on several threads, thousands of batches, faults injected at random:
//! every batch gets exactly its own results, in order, none lost, duplicated or crossed
//! (R13, R15, R16, R17), and every call that was answered had its reason stripped.

use reasons_host::{Limits, Plugin, Stack};
use reasons_tests::providers::{Scripted, text_call};
use reasons_tests::unruly;
use reasons_transform::{Options, ToolCall, ToolResult};
use std::time::Duration;

const THREADS: u64 = 4;
const SESSIONS_PER_THREAD: u64 = 2;
const BATCHES_PER_SESSION: u64 = 400;
/// One batch in this many carries a fault.
const FAULT_EVERY: u32 = 12;

/// Each fault of the fixture, and whether it costs the whole batch its results (the rest
/// only cost the calls the fixture left unanswered).
const FAULTS: [(&str, bool); 14] = [
    ("trap", true),
    ("spin", true),
    ("hog", true),
    ("recurse", true),
    ("flood", true),
    ("fail", true),
    ("wrong-ids", true),
    ("smuggle", true),
    ("rewrite", true),
    ("rewrite-args", true),
    ("double", true),
    ("amplify", true),
    ("drop-last", false),
    ("extra", false),
];

/// A deadline no honest batch comes near (they take well under a millisecond) and the
/// `spin` fault always passes, however loaded the machine.
const LIMITS: Limits = Limits {
    deadline: Duration::from_secs(1),
    wall: Duration::from_secs(60),
    memory: 16 << 20,
    hostcall_data: 1 << 20,
};

/// `Unruly(Reasons(echo))`, listed.
fn session() -> Stack {
    let provider = Scripted::new(&[
        r#"{"name":"t","inputSchema":{"type":"object"}}"#,
        r#"{"type":"function","function":{"name":"u","parameters":{"type":"object"}}}"#,
    ]);
    let mut stack = Stack::new(provider)
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap()
        .plugin(&unruly().with_limits(LIMITS));
    stack.list().unwrap();
    stack
}

/// A random batch whose every call is told apart by its id and its arguments; maybe
/// with a fault among them.
fn batch(rng: &mut fastrand::Rng, tag: &str) -> (Vec<ToolCall>, Option<(&'static str, bool)>) {
    let mut calls: Vec<ToolCall> = (0..rng.usize(1..=8))
        .map(|i| {
            let id = format!("{tag}-{i}");
            let tool = if rng.bool() { "t" } else { "u" };
            let arguments = match rng.u8(0..3) {
                0 => format!(r#"{{"n":"{id}"}}"#),
                1 => format!(r#"{{"n":"{id}","reason":"because {id}"}}"#),
                _ => format!(r#"{{"reason":"because {id}","n":"{id}"}}"#),
            };
            text_call(&id, tool, &arguments)
        })
        .collect();
    let fault = (rng.u32(0..FAULT_EVERY) == 0).then(|| FAULTS[rng.usize(..FAULTS.len())]);
    if let Some((name, _)) = fault {
        let at = rng.usize(..=calls.len());
        calls.insert(at, text_call(&format!("{tag}-fault"), name, "{}"));
    }
    (calls, fault)
}

/// Checks one batch's results against its calls; panics with the batch's tag if wrong.
fn check(tag: &str, calls: &[ToolCall], fault: Option<(&str, bool)>, results: &[ToolResult]) {
    let ids: Vec<&str> = calls.iter().map(|call| call.id.as_str()).collect();
    let answered: Vec<&str> = results
        .iter()
        .map(|result| result.call_id.as_str())
        .collect();
    assert_eq!(answered, ids, "{tag}: one result per call, in order");
    for (index, (call, result)) in calls.iter().zip(results).enumerate() {
        let expected_error = match fault {
            Some((_, true)) => true,
            Some(("drop-last", false)) => index == calls.len() - 1,
            _ => false,
        };
        assert_eq!(result.is_error, expected_error, "{tag}: {result:?}");
        if !result.is_error {
            let stripped = match call.name.as_str() {
                "t" | "u" => format!(r#"{{"n":"{}"}}"#, call.id),
                _ => call.arguments.text().to_string(),
            };
            let echoed = serde_json::to_string(&stripped).unwrap();
            assert_eq!(result.content, echoed, "{tag}: the call's own answer");
        }
    }
}

#[test]
fn sessions_on_threads_under_random_faults_each_get_their_own_results() {
    // R13 R15 R16 R17
    let seed = std::env::var("SOAK_SEED")
        .ok()
        .and_then(|seed| seed.parse().ok())
        .unwrap_or(0x5eed);
    let threads: Vec<_> = (0..THREADS)
        .map(|thread| {
            std::thread::spawn(move || {
                let mut rng = fastrand::Rng::with_seed(seed + thread);
                let mut sessions: Vec<Stack> =
                    (0..SESSIONS_PER_THREAD).map(|_| session()).collect();
                let (mut answered, mut faults) = (0, 0);
                for number in 0..BATCHES_PER_SESSION * SESSIONS_PER_THREAD {
                    let which = rng.usize(..sessions.len());
                    let tag = format!("seed{seed}-thread{thread}-batch{number}");
                    let (calls, fault) = batch(&mut rng, &tag);
                    let results = sessions[which].execute(calls.clone());
                    check(&tag, &calls, fault, &results);
                    answered += results.len();
                    faults += usize::from(fault.is_some());
                }
                (answered, faults)
            })
        })
        .collect();
    let (mut answered, mut faults) = (0, 0);
    for thread in threads {
        let (a, f) = thread.join().expect("no session panicked");
        answered += a;
        faults += f;
    }
    let batches = THREADS * SESSIONS_PER_THREAD * BATCHES_PER_SESSION;
    eprintln!("soak: {batches} batches, {answered} results, {faults} faults (seed {seed})");
    assert!(
        faults > batches as usize / FAULT_EVERY as usize / 2,
        "faults were injected"
    );
}
