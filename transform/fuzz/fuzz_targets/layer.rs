//! Both entry points of the transform, on arbitrary text: a catalogue is listed, then a
//! batch of calls to its tools goes through, each output judged by the contract's model
//! in both directions. The body is the tests' (`reasons_test_support::fuzz`), which a
//! plain test also runs over the seeds and generated inputs (`tests/tests/fuzz.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| reasons_test_support::fuzz::layer(data));
