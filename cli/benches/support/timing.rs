//! Timing paths in turn, so that whatever else the shared machine does falls on every
//! path alike: what every benchmark here shares, the process starts' too.

use std::time::{Duration, Instant};

/// Round trips per request: many under `cargo bench`, a few under `cargo test --benches`,
/// which only checks that the benchmark still runs.
pub fn rounds() -> usize {
    match std::env::args().any(|arg| arg == "--bench") {
        true => 2_000,
        false => 10,
    }
}

/// Runs each of `paths` once per round, in turn, for `warm` rounds of warm-up (JIT,
/// caches, connections) and then `measured` more: the times of each, in its order.
pub fn alternately_for(
    measured: usize,
    warm: usize,
    mut paths: Vec<Box<dyn FnMut() + '_>>,
) -> Vec<Vec<Duration>> {
    let mut samples = vec![Vec::with_capacity(measured); paths.len()];
    for round in 0..measured + warm {
        for (run, samples) in paths.iter_mut().zip(&mut samples) {
            let start = Instant::now();
            run();
            if round >= warm {
                samples.push(start.elapsed());
            }
        }
    }
    samples
}

/// Median and mean of `samples`.
pub fn summary(samples: &mut [Duration]) -> (Duration, Duration) {
    samples.sort();
    let mean = samples.iter().sum::<Duration>() / samples.len() as u32;
    (samples[samples.len() / 2], mean)
}

/// `duration` in milliseconds.
pub fn ms(duration: Duration) -> f64 {
    duration.as_secs_f64() * 1000.0
}
