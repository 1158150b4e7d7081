//! The contract's vectors (`tests/vectors/*.json`), each run through the transform
//! compiled natively and through the component under wasmtime, as a layer over a
//! provider and through its direct surface (`augment`, `route`): each must give exactly
//! the expected output, the first two byte for byte the same as each other.

use reasons_host::Plugin;
use reasons_host::dry_run::{Layer, Report};
use reasons_host::provider::FixedTools;
use reasons_tests::{Case, received_calls, vectors};

fn check(file: &str, case: &Case, report: &Report, build: &str) {
    let at = format!("{file}: {} ({}, {build})", case.name, case.rule);
    let listed: Vec<&str> = report.tools.iter().map(|tool| tool.get()).collect();
    assert_eq!(listed, case.listed(), "{at}: the catalogue the model sees");
    let mut expected_augmented_tools = case.augmented_tools.clone();
    expected_augmented_tools.sort();
    assert_eq!(
        report.augmented_tools, expected_augmented_tools,
        "{at}: the augmented tools"
    );
    assert_eq!(
        received_calls(report),
        case.received(),
        "{at}: what the provider below received"
    );
    assert_eq!(
        report.results.len(),
        case.calls().len(),
        "{at}: one result per call"
    );
    for result in &report.results {
        let refused = case.refused.contains(&result.call_id);
        assert_eq!(
            result.is_error, refused,
            "{at}: call {} refused?",
            result.call_id
        );
    }
    let answers = report.results.iter().filter(|result| result.is_error);
    case.check_says(
        answers.map(|result| (result.call_id.as_str(), result.content.get())),
        &at,
    );
}

/// The case through the component's direct surface: the catalogue augmented, then each
/// call routed on its own; nothing below is asked.
fn check_direct(file: &str, case: &Case, plugin: &Plugin) {
    let at = format!("{file}: {} ({}, direct)", case.name, case.rule);
    let mut layer = plugin.layer(Box::new(FixedTools::new(Vec::new(), "null")));
    layer.configure(case.options()).unwrap();
    let listed = layer.augment(case.tools()).unwrap();
    assert_eq!(listed, case.listed(), "{at}: the catalogue the model sees");
    let mut expected_augmented_tools = case.augmented_tools.clone();
    expected_augmented_tools.sort();
    assert_eq!(
        layer.augmented_tools().names(),
        expected_augmented_tools,
        "{at}: the augmented tools"
    );
    let (mut received, mut answers) = (Vec::new(), Vec::new());
    for call in case.calls() {
        match layer.route(call).unwrap() {
            Ok(call) => received.push(call),
            Err(answer) => answers.push(answer),
        }
    }
    assert_eq!(
        received,
        case.received(),
        "{at}: what the provider below would receive"
    );
    let refused: Vec<&String> = answers.iter().map(|answer| &answer.call_id).collect();
    assert_eq!(
        refused,
        case.refused.iter().collect::<Vec<_>>(),
        "{at}: the calls answered instead"
    );
    case.check_says(
        answers
            .iter()
            .map(|answer| (answer.call_id.as_str(), answer.content.as_str())),
        &at,
    );
}

fn run_file(name: &str) {
    let plugin = Plugin::reasons().expect("the built-in plugin compiles");
    let cases: Vec<_> = vectors()
        .into_iter()
        .filter(|(file, _)| file == name)
        .collect();
    assert!(!cases.is_empty(), "{name} holds cases");
    for (file, case) in cases {
        let native = case.run(Layer::Native);
        let component = case.run(Layer::Component(&plugin));
        check(&file, &case, &native, "native");
        check(&file, &case, &component, "component");
        check_direct(&file, &case, &plugin);
        assert_eq!(
            serde_json::to_string(&native).unwrap(),
            serde_json::to_string(&component).unwrap(),
            "{file}: {}: the native build and the component differ",
            case.name
        );
    }
}

#[test]
fn declarations() {
    // R1 R2 R3 R4 R5 R6 R7
    run_file("declarations.json");
}

#[test]
fn calls() {
    // R9 R10
    run_file("calls.json");
}

#[test]
fn options() {
    // R1 R5 R6 R8 R11, under the layer's options
    run_file("options.json");
}

#[test]
fn every_rule_of_the_transform_has_vectors() {
    let rules: std::collections::BTreeSet<String> =
        vectors().into_iter().map(|(_, case)| case.rule).collect();
    for rule in ["R1", "R2", "R3", "R4", "R5", "R6", "R7", "R9", "R10"] {
        assert!(rules.contains(rule), "no vector proves {rule}");
    }
}
