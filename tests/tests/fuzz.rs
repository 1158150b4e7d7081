//! The fuzz target's body (`reasons_test_support::fuzz`), run as a plain test so that CI
//! runs it and not only compiles it: over every seed of `transform/fuzz/seeds/layer`, and
//! over a few thousand inputs made from them as libFuzzer makes its own (pieces of a
//! dictionary put in, ranges cut or doubled), from a fixed seed so a failure repeats.

use reasons_test_support::fuzz;
use std::path::Path;

/// What the fuzzer's dictionary would hold: the parameter in its spellings, JSON's
/// structure and escapes, and what only lenient readers accept.
const DICTIONARY: [&str; 28] = [
    "\"reason\"",
    "\"\\u0072eason\"",
    "reason",
    "\\u0072",
    "\\",
    "\"",
    "{",
    "}",
    "[",
    "]",
    ":",
    ",",
    "\0",
    "\u{1}",
    "null",
    "-0",
    "1e400",
    "NaN",
    "\n",
    "\t",
    "\u{feff}",
    "'",
    "\\ud800",
    "\\t",
    "\\u00E9",
    "{\"name\":\"t\",\"inputSchema\":{}}",
    "\"strict\":true",
    "{\"type\":\"function\",\"function\":{\"name\":\"t\",\"parameters\":{}}}",
];

fn seeds() -> Vec<Vec<u8>> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../transform/fuzz/seeds/layer");
    let mut seeds: Vec<Vec<u8>> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .map(|entry| std::fs::read(entry.unwrap().path()).unwrap())
        .collect();
    seeds.sort();
    seeds
}

/// `input` changed one to four times.
fn mutated(input: &[u8], rng: &mut fastrand::Rng) -> Vec<u8> {
    let mut out = input.to_vec();
    for _ in 0..rng.usize(1..=4) {
        let at = rng.usize(..=out.len());
        match rng.u8(..3) {
            0 => {
                let piece = DICTIONARY[rng.usize(..DICTIONARY.len())].as_bytes();
                out.splice(at..at, piece.iter().copied());
            }
            1 => {
                let end = rng.usize(at..=out.len().min(at + 8));
                out.drain(at..end);
            }
            _ => {
                let end = rng.usize(at..=out.len().min(at + 16));
                let copy = out[at..end].to_vec();
                out.splice(end..end, copy);
            }
        }
    }
    out
}

#[test]
fn the_fuzz_target_s_body_holds_over_its_seeds_and_generated_inputs() {
    // R1–R10, R13
    let seeds = seeds();
    assert!(seeds.len() >= 2, "the seeds are there");
    for seed in &seeds {
        fuzz::layer(seed);
    }
    let mut rng = fastrand::Rng::with_seed(0x7265_6173_6f6e);
    let mut inputs = 0;
    for round in 0..4000 {
        let mut input = seeds[round % seeds.len()].clone();
        // Some inputs grow over several generations, as a fuzzer's corpus does.
        for _ in 0..=round % 3 {
            input = mutated(&input, &mut rng);
        }
        let shown = String::from_utf8_lossy(&input).into_owned();
        if let Err(panic) = std::panic::catch_unwind(|| fuzz::layer(&input)) {
            panic!("input {shown:?}: {panic:?}");
        }
        inputs += 1;
    }
    assert_eq!(inputs, 4000);
}
