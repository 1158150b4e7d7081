//! A plugin that breaks is contained (R13, R15): every fault of the `unruly` fixture, and
//! the reasons component's own limits, each ending in `is_error` results, with the next
//! call served by a fresh instance that still knows the augmented tools.

use reasons_host::{Limits, Plugin, Provider, Stack, WasmLayer};
use reasons_tests::checks::{arguments, assert_error_mentions, error_flags};
use reasons_tests::providers::{Behaviour, Scripted, text_call};
use reasons_tests::unruly;
use reasons_transform::{Options, ToolCall, ToolResult};
use std::time::Duration;

const TOOL: &str = r#"{"name":"t","inputSchema":{"type":"object"}}"#;
const OTHER: &str = r#"{"name":"u","inputSchema":{"type":"object"}}"#;

/// Limits small enough for each fault to hit its own quickly, and a deadline no honest
/// call comes near (they take well under a millisecond) that `spin` always passes.
const SMALL: Limits = Limits {
    deadline: Duration::from_secs(2),
    wall: Duration::from_secs(60),
    memory: 16 << 20,
    hostcall_data: 1 << 20,
};

/// `Unruly(Reasons(provider))`, listed once.
fn unruly_over_reasons(provider: &Scripted) -> Stack {
    let mut stack = Stack::new(provider.clone())
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap()
        .plugin(&unruly().with_limits(SMALL));
    stack.list().unwrap();
    stack
}

/// A batch with a call that has a reason to strip and a call named `fault`.
fn batch_with(fault: &str) -> Vec<ToolCall> {
    vec![
        text_call("1", "t", r#"{"a":1,"reason":"x"}"#),
        text_call("2", fault, "{}"),
    ]
}

/// The call after a fault: answered, and its reason stripped.
fn assert_next_call_is_served(stack: &mut Stack, provider: &Scripted, fault: &str) {
    provider.take_received();
    let results = stack.execute(vec![text_call("3", "t", r#"{"a":2,"reason":"y"}"#)]);
    assert_eq!(error_flags(&results), [("3", false)], "after {fault}");
    assert_eq!(
        arguments(&provider.take_received()),
        [r#"{"a":2}"#],
        "after {fault}"
    );
    // The fresh instance got the catalogue from the host, not from a new listing.
    assert_eq!(provider.listings(), 1, "after {fault}");
}

#[test]
fn a_fault_fails_its_batch_and_the_next_call_works() {
    // R13 R15: each limit, and a plain trap and refusal, end as errors for the batch.
    for (fault, message) in [
        ("trap", "the plugin `unruly` trapped"),
        ("spin", "ran past its deadline of 2000 ms"),
        (
            "hog",
            "ran out of memory (limit 16 MiB over all its memories and tables)",
        ),
        ("recurse", "overflowed its stack of 512 KiB"),
        ("flood", "more than its hostcall data limit of 1 MiB"),
        ("fail", "the unruly layer refuses"),
    ] {
        let provider = Scripted::new(&[TOOL]);
        let mut stack = unruly_over_reasons(&provider);
        let results = stack.execute(batch_with(fault));
        assert_eq!(error_flags(&results), [("1", true), ("2", true)], "{fault}");
        assert_error_mentions(&results[0], message);
        assert_error_mentions(&results[1], message);
        assert_next_call_is_served(&mut stack, &provider, fault);
    }
}

#[test]
fn results_that_match_pass_on_and_the_rest_name_the_fault() {
    // R13 R15: too few, too many, and unknown ids.
    // Each fault, which calls its answer leaves without a result, and what they say.
    for (fault, expected, message) in [
        (
            "drop-last",
            [("1", false), ("2", true)],
            Some("it answered 1 results for 2 calls (0 for unknown ids, 0 more than once)"),
        ),
        (
            "wrong-ids",
            [("1", true), ("2", true)],
            Some("it answered 2 results for 2 calls (2 for unknown ids, 0 more than once)"),
        ),
        // Every call has its result; the second copies are dropped.
        ("extra", [("1", false), ("2", false)], None),
    ] {
        let provider = Scripted::new(&[TOOL]);
        let mut stack = unruly_over_reasons(&provider);
        let results = stack.execute(batch_with(fault));
        assert_eq!(error_flags(&results), expected, "{fault}");
        // `errors` above says which calls failed; each of those says why.
        for result in results.iter().filter(|result| result.is_error) {
            assert_error_mentions(result, "The plugin `unruly` returned no result");
            assert_error_mentions(result, message.expect("a fault that fails a call names it"));
        }
        assert_next_call_is_served(&mut stack, &provider, fault);
    }
}

#[test]
fn a_listing_that_is_not_json_fails_and_the_last_good_one_stands() {
    // R14 R15 R8
    let provider = Scripted::new(&[TOOL]);
    let mut stack = unruly_over_reasons(&provider);
    provider.set_catalogue(&[TOOL, r#"{"name":"bad-listing","inputSchema":{}}"#]);
    let error = stack.list().unwrap_err().to_string();
    assert!(
        error.contains("the plugin `unruly` listed a declaration that is not JSON (declaration 2"),
        "{error}"
    );
    let results = stack.execute(vec![text_call("3", "t", r#"{"a":2,"reason":"y"}"#)]);
    assert_eq!(error_flags(&results), [("3", false)]);
    assert_eq!(arguments(&provider.take_received()), [r#"{"a":2}"#]);
}

#[test]
fn a_declaration_that_is_not_json_from_below_passes_through() {
    // R4: the provider's own unreadable declaration is no fault of the plugins'.
    let provider = Scripted::new(&[TOOL, "not json {"]);
    let mut stack = unruly_over_reasons(&provider);
    let listed = stack.list().unwrap();
    assert_eq!(listed[1], "not json {");
    assert!(listed[0].contains(r#""reason""#));
}

#[test]
fn a_plugin_that_traps_while_listing_fails_the_listing() {
    // R14 R15
    let provider = Scripted::new(&[r#"{"name":"trap-listing","inputSchema":{}}"#]);
    let mut layer = unruly().layer(Box::new(provider.clone()));
    let error = layer.tools_for_llm().unwrap_err().to_string();
    assert!(error.contains("trapped"), "{error}");
    provider.set_catalogue(&[TOOL]);
    assert_eq!(layer.tools_for_llm().unwrap(), [TOOL]);
}

/// The reasons component over `provider` under `limits`, configured and listed once.
fn reasons_with(limits: Limits, provider: &Scripted) -> WasmLayer {
    let mut layer = Plugin::reasons()
        .unwrap()
        .with_limits(limits)
        .layer(Box::new(provider.clone()));
    layer
        .configure(Options {
            name: "why".into(),
            ..Options::default()
        })
        .unwrap();
    layer.tools_for_llm().unwrap();
    layer
}

/// A call to `t` with `arguments` fails under `limits` with an error mentioning
/// `message`, and the same layer still strips `why` from `t` without listing again.
fn assert_fault_then_recovery(limits: Limits, provider: &Scripted, arguments: &str, message: &str) {
    let mut layer = reasons_with(limits, provider);
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", arguments)])
        .unwrap();
    assert_eq!(error_flags(&results), [("1", true)]);
    assert_error_mentions(&results[0], message);
    assert_augmented_tools_survives(&mut layer, provider);
}

/// After the fault, the same layer still strips `why` from `t` without listing again.
fn assert_augmented_tools_survives(layer: &mut WasmLayer, provider: &Scripted) {
    provider.take_received();
    let results = layer
        .execute_tool_calls(vec![text_call("2", "t", r#"{"a":1,"why":"x"}"#)])
        .unwrap();
    assert_eq!(error_flags(&results), [("2", false)]);
    assert_eq!(arguments(&provider.take_received()), [r#"{"a":1}"#]);
    assert_eq!(layer.claimed_augmented_tools().unwrap(), ["t"]);
    assert_eq!(
        provider.listings(),
        1,
        "the augmented tools came back by replay"
    );
}

#[test]
fn the_reasons_component_out_of_memory_keeps_its_augmented_tools() {
    // R15 R8: arguments bigger than the instance may hold.
    let provider = Scripted::new(&[TOOL]);
    let limits = Limits {
        memory: 4 << 20,
        ..Limits::default()
    };
    let huge = format!(r#"{{"why":"x","blob":"{}"}}"#, "a".repeat(8 << 20));
    assert_fault_then_recovery(
        limits,
        &provider,
        &huge,
        "the plugin `reasons` ran out of memory (limit 4 MiB",
    );
}

#[test]
fn the_reasons_component_past_its_deadline_keeps_its_augmented_tools() {
    // R15 R8: every character escaped makes the component read and write back all of a
    // 24 MB call, which takes it 1.6 to 3.2 s here (measured with `reasons transform
    // --plugin-deadline-ms`): over a hundred times the 10 ms deadline, so no machine's
    // speed decides this test. The recovery after it is a few microseconds of work.
    let provider = Scripted::new(&[TOOL]);
    let limits = Limits {
        deadline: Duration::from_millis(10),
        ..Limits::default()
    };
    let slow = format!(r#"{{"why":"x","blob":"{}"}}"#, r"\u0061".repeat(4 << 20));
    assert_fault_then_recovery(limits, &provider, &slow, "ran past its deadline of 10 ms");
}

#[test]
fn time_spent_below_the_plugin_is_not_on_its_clock() {
    // R15: a slow tool is not a runaway plugin. The tool takes six times the deadline;
    // the plugin's own work takes a small fraction of it.
    let limits = Limits {
        deadline: Duration::from_millis(500),
        ..Limits::default()
    };
    let (results, _, _) = behind_a_slow_tool(limits, Duration::from_secs(3));
    assert_eq!(error_flags(&results), [("1", false)]);
}

/// A call through the reasons component under `limits`, to a tool that takes `slow`; its
/// results, and the layer and the provider for what comes next.
fn behind_a_slow_tool(limits: Limits, slow: Duration) -> (Vec<ToolResult>, WasmLayer, Scripted) {
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_with(limits, &provider);
    provider.behave(Behaviour::Slow(slow));
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", r#"{"why":"x"}"#)])
        .unwrap();
    (results, layer, provider)
}

#[test]
fn sessions_do_not_share_a_augmented_tools() {
    // R8: each layer is its own instance; a listing in one changes nothing in another.
    let (left, right) = (Scripted::new(&[TOOL]), Scripted::new(&[OTHER]));
    let plugin = Plugin::reasons().unwrap();
    let mut one = plugin.layer(Box::new(left.clone()));
    let mut two = plugin.layer(Box::new(right.clone()));
    one.tools_for_llm().unwrap();
    let call = |name: &str| vec![text_call("1", name, r#"{"reason":"x"}"#)];

    two.execute_tool_calls(call("t")).unwrap();
    assert_eq!(arguments(&right.take_received()), [r#"{"reason":"x"}"#]);

    two.tools_for_llm().unwrap();
    assert_eq!(one.claimed_augmented_tools().unwrap(), ["t"]);
    assert_eq!(two.claimed_augmented_tools().unwrap(), ["u"]);
    one.execute_tool_calls(call("t")).unwrap();
    one.execute_tool_calls(call("u")).unwrap();
    assert_eq!(
        arguments(&left.take_received()),
        ["{}", r#"{"reason":"x"}"#]
    );
}

#[test]
fn a_call_past_its_wall_limit_ends_as_errors_and_the_next_works() {
    // R17: time below counts toward the wall limit; a provider five times over it. The
    // recovery after it runs under the same limit, a second for a few microseconds of
    // work: no machine's pauses decide it.
    let limits = Limits {
        deadline: Duration::from_secs(60),
        wall: Duration::from_secs(1),
        ..Limits::default()
    };
    let (results, mut layer, provider) = behind_a_slow_tool(limits, Duration::from_secs(5));
    assert_eq!(error_flags(&results), [("1", true)]);
    assert_error_mentions(&results[0], "ran past its wall limit of 1000 ms");
    provider.behave(Behaviour::Echo);
    assert_augmented_tools_survives(&mut layer, &provider);
}
