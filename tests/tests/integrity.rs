//! A plugin cannot get past the policy (R16, R17): under `Policy(Unruly(provider))` with
//! a policy that denies `delete_everything`, a plugin that smuggles, rewrites, doubles or
//! amplifies calls gets none of them run. The provider below counts what reaches it; the
//! caller gets one result per call naming the plugin and what it did; the next call works.

use reasons_host::plugin::{Entry, FaultKind};
use reasons_host::policy::{Decision, Rule};
use reasons_host::{Limits, Plugin, Stack};
use reasons_tests::checks::{arguments, assert_error_mentions, error_flags};
use reasons_tests::providers::{Scripted, text_call};
use reasons_tests::{liar, unruly};
use reasons_transform::{Options, ToolCall};
use std::time::{Duration, Instant};

const READ: &str = r#"{"name":"read_file","inputSchema":{"type":"object"}}"#;
const DELETE: &str = r#"{"name":"delete_everything","inputSchema":{"type":"object"}}"#;

/// Far above anything these calls need: a call that took this long would be a hang.
const WALL: Duration = Duration::from_secs(20);

fn limits() -> Limits {
    Limits {
        wall: WALL,
        ..Limits::default()
    }
}

/// `Policy(Unruly(provider))`, the policy denying `delete_everything` and allowing the rest.
fn policed(provider: &Scripted) -> Stack {
    let rules = vec![
        Rule::new("delete_everything", Decision::Deny).unwrap(),
        Rule::new("*", Decision::Allow).unwrap(),
    ];
    let mut stack = Stack::new(provider.clone())
        .plugin(&unruly().with_limits(limits()))
        .policy(rules, Box::new(|_| panic!("nothing is asked")));
    stack.list().unwrap();
    stack
}

/// The batch: a read the policy allows, and the call that makes the fixture misbehave.
fn batch(fault: &str) -> Vec<ToolCall> {
    vec![
        text_call("c1", "read_file", r#"{"path":"notes.txt"}"#),
        text_call("c2", fault, "{}"),
    ]
}

/// Every call the provider received, as `name arguments`.
fn received(provider: &Scripted) -> Vec<String> {
    provider
        .take_received()
        .iter()
        .map(|call| format!("{} {} {}", call.id, call.name, call.arguments.text()))
        .collect()
}

/// After a violation, a plain call goes through, once, on a fresh instance.
fn assert_next_call_works(stack: &mut Stack, provider: &Scripted, fault: &str) {
    let results = stack.execute(vec![text_call("c3", "read_file", r#"{"path":"a"}"#)]);
    assert_eq!(error_flags(&results), [("c3", false)], "after {fault}");
    assert_eq!(
        received(provider),
        [r#"c3 read_file {"path":"a"}"#],
        "after {fault}"
    );
}

#[test]
fn calls_a_plugin_invents_or_rewrites_never_run() {
    // R16: nothing of the forwarded batch runs, and each call says why.
    for (fault, violation) in [
        (
            "smuggle",
            "passed down a call it was not given (id `smuggled`, tool `delete_everything`)",
        ),
        (
            "rewrite",
            "passed call `c1` down as tool `delete_everything`; it was given as `read_file`",
        ),
        (
            "rewrite-args",
            "changed the arguments of call `c1` (tool `read_file`)",
        ),
    ] {
        let provider = Scripted::new(&[READ, DELETE]);
        let mut stack = policed(&provider);
        let results = stack.execute(batch(fault));
        assert_eq!(
            error_flags(&results),
            [("c1", true), ("c2", true)],
            "{fault}"
        );
        for result in &results {
            assert_error_mentions(result, "the plugin `unruly`");
            assert_error_mentions(result, violation);
        }
        assert_eq!(
            received(&provider),
            Vec::<String>::new(),
            "{fault}: nothing ran"
        );
        assert_next_call_works(&mut stack, &provider, fault);
    }
}

#[test]
fn a_batch_runs_at_most_once_whatever_the_plugin_repeats() {
    // R16 R17: the first pass down runs; every later one is refused, and the results
    // name what the plugin did, not what it claimed.
    for fault in ["double", "amplify"] {
        let provider = Scripted::new(&[READ, DELETE]);
        let mut stack = policed(&provider);
        let started = Instant::now();
        let results = stack.execute(batch(fault));
        assert!(
            started.elapsed() < WALL,
            "{fault} took {:?}",
            started.elapsed()
        );
        assert_eq!(
            error_flags(&results),
            [("c1", true), ("c2", true)],
            "{fault}"
        );
        for result in &results {
            assert_error_mentions(result, "passed calls down more than once in one execution");
        }
        assert_eq!(
            received(&provider),
            [
                r#"c1 read_file {"path":"notes.txt"}"#,
                &format!("c2 {fault} {{}}")
            ],
            "{fault}: each call once"
        );
        assert_next_call_works(&mut stack, &provider, fault);
    }
}

#[test]
fn a_plugin_runs_nothing_and_lists_once_while_it_lists() {
    // R16 R17 R14: the listing fails naming what the plugin did; nothing ran below.
    for (declaration, violation) in [
        (
            r#"{"name":"smuggle-listing","inputSchema":{}}"#,
            "tried to run calls while it listed the tools",
        ),
        (
            r#"{"name":"relist","inputSchema":{}}"#,
            "listed the tools below more than once in one listing",
        ),
    ] {
        let provider = Scripted::new(&[READ, declaration]);
        let mut layer = unruly()
            .with_limits(limits())
            .layer(Box::new(provider.clone()));
        let error = reasons_host::Provider::tools_for_llm(&mut layer)
            .unwrap_err()
            .to_string();
        assert!(error.contains("the plugin `unruly`"), "{error}");
        assert!(error.contains(violation), "{error}");
        assert_eq!(received(&provider), Vec::<String>::new());
        // The plugin's one listing below ran; whatever it tried after was refused.
        assert_eq!(provider.listings(), 1, "{declaration}");
    }
}

#[test]
fn the_reasons_component_is_held_to_the_same_gate() {
    // R16: the built-in plugin takes off its own parameter and nothing else, which the
    // gate admits; a tool's own `reason` (R5) it leaves, and the gate would not admit less.
    let own = r#"{"name":"own","inputSchema":{"type":"object","properties":{"reason":{"type":"string"}}}}"#;
    let provider = Scripted::new(&[READ, own]);
    let mut stack = Stack::new(provider.clone())
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap();
    stack.list().unwrap();
    let results = stack.execute(vec![
        text_call("1", "read_file", r#"{"path":"a","reason":"why \ud83d"}"#),
        text_call("2", "own", r#"{"reason":"mine"}"#),
    ]);
    assert_eq!(error_flags(&results), [("1", false), ("2", false)]);
    assert_eq!(
        arguments(&provider.take_received()),
        [r#"{"path":"a"}"#, r#"{"reason":"mine"}"#]
    );
}

#[test]
fn a_plugin_cannot_take_off_an_argument_by_claiming_it_added_it() {
    // R5 R16: the liar publishes `path` as its parameter and claims every tool; the host
    // reads the schemas itself, so it may take `path` only off a tool that has none.
    let with_path = r#"{"name":"read_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#;
    let without = r#"{"name":"ping","inputSchema":{"type":"object"}}"#;
    let provider = Scripted::new(&[with_path, without]);
    let mut stack = Stack::new(provider.clone())
        .reasons(&liar().with_limits(limits()), Options::default())
        .unwrap()
        .policy(
            vec![Rule::new("*", Decision::Allow).unwrap()],
            Box::new(|_| panic!("nothing is asked")),
        );
    stack.list().unwrap();
    let results = stack.execute(vec![text_call(
        "c1",
        "read_file",
        r#"{"path":"notes.txt"}"#,
    )]);
    assert_eq!(error_flags(&results), [("c1", true)]);
    assert_error_mentions(&results[0], "changed the arguments of call `c1`");
    assert_eq!(received(&provider), Vec::<String>::new(), "nothing ran");
    let results = stack.execute(vec![text_call("c2", "ping", r#"{"path":"x"}"#)]);
    assert_eq!(error_flags(&results), [("c2", false)]);
    assert_eq!(
        received(&provider),
        ["c2 ping {}"],
        "a parameter it did add may go"
    );
}

#[test]
fn what_a_plugin_routes_is_held_to_the_same_rule() {
    // R16 for the direct surface (`augment`, `route`), which the proxy uses: the liar
    // routes every call with its arguments emptied; the host reads the catalogue it
    // augmented itself, and refuses a routed call that lost more than the parameter on
    // a tool whose schema leaves it free.
    let with_path = r#"{"name":"read_file","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#;
    let without = r#"{"name":"ping","inputSchema":{"type":"object"}}"#;
    let mut layer = liar()
        .with_limits(limits())
        .layer(Box::new(Scripted::new(&[])));
    let listed = layer
        .augment(vec![with_path.into(), without.into()])
        .unwrap();
    assert_eq!(listed.len(), 2);
    assert_eq!(
        layer.augmented_tools().names(),
        ["ping"],
        "only where `path` is free"
    );
    let refused = layer
        .route(text_call("c1", "read_file", r#"{"path":"notes.txt"}"#))
        .unwrap_err();
    assert!(
        refused
            .message()
            .contains("changed the arguments of call `c1`"),
        "{refused}"
    );
    // Typed, so that a caller tells a violation from a trap without reading words.
    assert_eq!(refused.kind(), FaultKind::SteppedOutOfLine);
    assert_eq!((refused.plugin(), refused.call()), ("liar", Entry::Route));
    // Its own parameter, on a tool whose schema leaves it free, it may take off.
    let routed = layer
        .route(text_call("c2", "ping", r#"{"path":"x"}"#))
        .unwrap()
        .unwrap();
    assert_eq!(arguments(&[routed]), ["{}"]);
    let refused = layer
        .route(text_call("c3", "ping", r#"{"path":"x","count":2}"#))
        .unwrap_err();
    assert!(refused.message().contains("call `c3`"), "{refused}");
}

#[test]
fn a_catalogue_a_plugin_augments_short_is_refused_and_the_augmented_tools_stands() {
    // R14 R16 for `augment`: the liar drops a tool named `vanish`; a catalogue that comes
    // back shorter than it went in is refused, naming the plugin, and the augmented tools of
    // the last good catalogue stands.
    let ping = r#"{"name":"ping","inputSchema":{"type":"object"}}"#;
    let vanish = r#"{"name":"vanish","inputSchema":{"type":"object"}}"#;
    let mut layer = liar()
        .with_limits(limits())
        .layer(Box::new(Scripted::new(&[])));
    assert_eq!(layer.augment(vec![ping.into()]).unwrap().len(), 1);
    assert_eq!(layer.augmented_tools().names(), ["ping"]);
    let refused = layer.augment(vec![ping.into(), vanish.into()]).unwrap_err();
    assert!(
        refused
            .message()
            .contains("the plugin `liar` augmented 2 declarations into 1"),
        "{refused}"
    );
    assert_eq!(refused.kind(), FaultKind::Misanswered);
    assert_eq!((refused.plugin(), refused.call()), ("liar", Entry::Augment));
    assert_eq!(layer.augmented_tools().names(), ["ping"]);
}
