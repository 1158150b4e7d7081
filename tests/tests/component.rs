//! The reasons component under wasmtime: what it can reach, its state, and the host's
//! never-throw promise around it. Plugins that misbehave are in `containment.rs`.

use reasons_host::{Plugin, Provider, WasmLayer};
use reasons_tests::checks::{arguments, assert_error_mentions, error_flags};
use reasons_tests::providers::{Behaviour, Scripted, text_call};
use reasons_tests::unruly;
use reasons_transform::{NO_RESULT, Options};

const TOOL: &str = r#"{"name":"t","inputSchema":{"type":"object"}}"#;
const OTHER: &str = r#"{"name":"u","inputSchema":{"type":"object"}}"#;

fn reasons_over(provider: &Scripted) -> WasmLayer {
    Plugin::reasons().unwrap().layer(Box::new(provider.clone()))
}

#[test]
fn the_component_imports_nothing_but_its_provider() {
    // R15: no WASI, so no files, network, clock or environment.
    let mut imports = Plugin::reasons().unwrap().imports();
    imports.sort();
    assert_eq!(
        imports,
        ["agent:tools/provider@0.1.1", "agent:tools/types@0.1.1"]
    );
    assert!(Plugin::reasons().unwrap().is_reasons());
}

#[test]
fn the_parameter_name_is_published() {
    // R11
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    assert_eq!(layer.reason_param().unwrap(), "reason");
    layer
        .configure(Options {
            name: "why".into(),
            ..Options::default()
        })
        .unwrap();
    assert_eq!(layer.reason_param().unwrap(), "why");
}

#[test]
fn bad_options_are_refused_whole() {
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    let error = layer
        .configure(Options {
            name: "no spaces".into(),
            required: true,
            ..Options::default()
        })
        .unwrap_err();
    assert!(error.to_string().contains("option `name`"), "{error}");
    let listed = layer.tools_for_llm().unwrap();
    assert!(listed[0].contains(r#""reason":{"type":"string""#));
    assert!(
        !listed[0].contains("required"),
        "required mode was not half-applied"
    );
}

#[test]
fn nothing_is_stripped_before_the_first_listing() {
    // R8
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    layer
        .execute_tool_calls(vec![text_call("1", "t", r#"{"reason":"x"}"#)])
        .unwrap();
    assert_eq!(arguments(&provider.take_received()), [r#"{"reason":"x"}"#]);
}

#[test]
fn each_listing_replaces_the_augmented_tools_and_a_failed_one_keeps_them() {
    // R8
    let provider = Scripted::new(&[TOOL, OTHER]);
    let mut layer = reasons_over(&provider);
    layer.tools_for_llm().unwrap();
    assert_eq!(layer.claimed_augmented_tools().unwrap(), ["t", "u"]);

    provider.set_catalogue(&[OTHER]);
    layer.tools_for_llm().unwrap();
    assert_eq!(layer.claimed_augmented_tools().unwrap(), ["u"]);

    provider.behave(Behaviour::Fail("offline".into()));
    assert!(layer.tools_for_llm().is_err());
    provider.behave(Behaviour::Echo);
    assert_eq!(layer.claimed_augmented_tools().unwrap(), ["u"]);

    let calls = vec![
        text_call("1", "t", r#"{"reason":"x"}"#),
        text_call("2", "u", r#"{"reason":"x"}"#),
    ];
    layer.execute_tool_calls(calls).unwrap();
    assert_eq!(
        arguments(&provider.take_received()),
        [r#"{"reason":"x"}"#, "{}"]
    );
}

#[test]
fn a_failing_provider_becomes_one_error_per_call() {
    // R13
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    layer.tools_for_llm().unwrap();
    provider.behave(Behaviour::Fail("disk full".into()));
    let results = layer
        .execute_tool_calls(vec![text_call("b", "t", "{}"), text_call("a", "t", "{}")])
        .unwrap();
    assert_eq!(error_flags(&results), [("b", true), ("a", true)]);
    assert_eq!(
        results[0].content,
        r#""The tool provider failed: disk full""#
    );
}

#[test]
fn a_panicking_provider_becomes_one_error_per_call() {
    // R13
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    layer.tools_for_llm().unwrap();
    provider.behave(Behaviour::Panic);
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", "{}")])
        .unwrap();
    assert_eq!(error_flags(&results), [("1", true)]);
    assert_error_mentions(&results[0], "panicked");
    provider.behave(Behaviour::Echo);
    let results = layer
        .execute_tool_calls(vec![text_call("2", "t", "{}")])
        .unwrap();
    assert_eq!(error_flags(&results), [("2", false)]);
}

#[test]
fn a_call_left_without_a_result_gets_one() {
    // R13
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    provider.behave(Behaviour::AnswerFirstOnly);
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", "{}"), text_call("2", "t", "{}")])
        .unwrap();
    assert_eq!(error_flags(&results), [("1", false), ("2", true)]);
    assert_eq!(results[1].content, format!("{:?}", NO_RESULT));
}

#[test]
fn an_empty_batch_never_reaches_the_provider() {
    // R13
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    assert!(layer.execute_tool_calls(Vec::new()).unwrap().is_empty());
    assert!(provider.take_received().is_empty());
}

#[test]
fn a_provider_that_cannot_list_fails_the_listing() {
    // R14
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    provider.behave(Behaviour::Fail("server down".into()));
    assert_eq!(
        layer.tools_for_llm().unwrap_err().to_string(),
        "server down"
    );
    provider.behave(Behaviour::Panic);
    assert!(
        layer
            .tools_for_llm()
            .unwrap_err()
            .to_string()
            .contains("panicked")
    );
}

#[test]
fn deeply_nested_arguments_are_stripped_without_a_trap() {
    // R10 R15: nesting as deep as the text allows is still JSON, read without recursion.
    let provider = Scripted::new(&[TOOL]);
    let mut layer = reasons_over(&provider);
    layer.tools_for_llm().unwrap();
    let deep = format!(
        r#"{{"reason":"x","a":{}{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", &deep)])
        .unwrap();
    assert_eq!(error_flags(&results), [("1", false)]);
    let expected = format!(r#"{{"a":{}{}}}"#, "[".repeat(100_000), "]".repeat(100_000));
    assert_eq!(arguments(&provider.take_received()), [expected.as_str()]);
}

#[test]
fn a_dry_run_goes_through_any_middleware_component() {
    // The `--plugin` path: a component without the reasons surface changes nothing here.
    let tools = vec![TOOL.to_string(), "[1, 2]".to_string()];
    let calls = vec![text_call("1", "t", r#"{ "reason" : "x" }"#)];
    let report = reasons_host::dry_run::run(
        reasons_host::dry_run::Layer::Component(&unruly()),
        Options::default(),
        tools.clone(),
        calls.clone(),
    )
    .unwrap();
    let listed: Vec<&str> = report.tools.iter().map(|tool| tool.get()).collect();
    assert_eq!(listed, tools);
    assert!(report.augmented_tools.is_empty());
    assert_eq!(reasons_tests::received_calls(&report), calls);
}
