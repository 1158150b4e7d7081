//! A plugin's stack limit is a setting, not a hazard (R15, R17): any limit in range works
//! from any thread, whatever stack that thread has, and a limit out of range is refused
//! with a message. Loading works from such a thread too: compiling gets a stack of its
//! own. One test in this file: the limit belongs to the process's engine.

use reasons_host::plugin::sandbox;
use reasons_host::{Limits, Provider};
use reasons_tests::checks::{assert_error_mentions, error_flags};
use reasons_tests::providers::{Scripted, text_call};
use reasons_tests::unruly;
use std::time::Duration;

#[test]
fn a_large_stack_limit_works_from_a_small_thread() {
    for (bytes, message) in [
        (
            0,
            "the plugin stack limit must be from 64 KiB to 64 MiB (it was 0 bytes)",
        ),
        (
            1 << 30,
            "the plugin stack limit must be from 64 KiB to 64 MiB (it was 1024 MiB)",
        ),
    ] {
        let error = sandbox::set_stack_limit(bytes).unwrap_err().to_string();
        assert_eq!(error, message);
    }
    // Eight times the default, far more than the calling thread's 256 KiB.
    sandbox::set_stack_limit(4 << 20).unwrap();
    // No compile cache: the plugin is compiled on the small thread, every run, whatever
    // ran before (a warm cache had hidden that compiling overflowed it).
    // SAFETY: the only test in this process, before it starts any thread.
    unsafe { std::env::set_var("REASONS_CACHE_DIR", "") };
    let results = std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(|| {
            let limits = Limits {
                deadline: Duration::from_secs(60),
                wall: Duration::from_secs(120),
                ..Limits::default()
            };
            let provider = Scripted::new(&[]);
            let mut layer = unruly().with_limits(limits).layer(Box::new(provider));
            let recursed = layer
                .execute_tool_calls(vec![text_call("1", "recurse", "{}")])
                .unwrap();
            let next = layer
                .execute_tool_calls(vec![text_call("2", "t", "{}")])
                .unwrap();
            (recursed, next)
        })
        .unwrap()
        .join()
        .expect("the host survived the plugin's recursion");
    let (recursed, next) = results;
    assert_eq!(error_flags(&recursed), [("1", true)]);
    assert_error_mentions(&recursed[0], "overflowed its stack of 4 MiB");
    assert_eq!(error_flags(&next), [("2", false)], "the next call works");
}
