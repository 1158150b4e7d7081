//! Property tests: random options, random catalogues in all four shapes and random calls,
//! through the native transform and the component, each judged against the independent
//! model of R1–R10 (`tests/src/model.rs`), never against the layer's own report.
//! `PROPTEST_CASES=100000 cargo test -p reasons-tests --release --test properties` is the
//! long run the README describes.

use proptest::prelude::*;
use reasons_harness::Plugin;
use reasons_harness::transform::{self, Layer, Report};
use reasons_test_support::model::{self, Called, Declared};
use reasons_tests::received_calls;
use reasons_transform::{Arguments, Options, Position, ToolCall};
use std::collections::BTreeSet;

/// The tool names catalogues and calls are drawn from: several, so that duplicates are
/// common but not constant, and one that needs escaping.
const NAMES: [&str; 6] = ["t", "u", "v", "w", "x y", "caf\u{e9}"];

/// JSON whitespace, usually none.
fn ws() -> impl Strategy<Value = &'static str> {
    prop_oneof![6 => Just(""), 1 => Just(" "), 1 => Just("\n  "), 1 => Just("\t"), 1 => Just("\r\n")]
}

/// Keys that collide often: the parameter, escaped spellings of it, and a few others.
fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => Just(r#""reason""#),
        1 => Just(r#""\u0072eason""#),
        1 => Just(r#""re\u0061son""#),
        1 => Just(r#""why""#),
        2 => Just(r#""path""#),
        2 => Just(r#""a""#),
        1 => Just(r#""b c""#),
        1 => Just(r#""caf\u00e9""#),
        1 => Just(r#""\ud800""#),
    ]
}

/// Numbers and strings that a careless re-serialiser would change.
fn scalar() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("123456789012345678901234567890".to_string()),
        Just("1.10".to_string()),
        Just("-0".to_string()),
        Just("1e400".to_string()),
        Just("-1.5E-7".to_string()),
        Just("0.30000000000000004".to_string()),
        Just("true".to_string()),
        Just("null".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(|f| format!("{f:e}")),
        "[a-z é\u{1F600}]{0,6}".prop_map(|s| serde_json::to_string(&s).unwrap()),
        Just(r#""\ud83d\ude00 \n \" \\ \/""#.to_string()),
        Just(r#""\ud800""#.to_string()),
        Just(r#""reason""#.to_string()),
    ]
}

/// A JSON value as text, objects' keys repeating and colliding often.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec((ws(), inner.clone()), 0..4).prop_map(|items| {
                let items: Vec<String> =
                    items.into_iter().map(|(w, v)| format!("{w}{v}")).collect();
                format!("[{}]", items.join(","))
            }),
            object(inner),
        ]
    })
}

fn object(values: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec((ws(), key(), ws(), values), 0..5).prop_map(|members| {
        let members: Vec<String> = members
            .into_iter()
            .map(|(w, k, w2, v)| format!("{w}{k}{w2}:{w}{v}"))
            .collect();
        format!("{{{}}}", members.join(","))
    })
}

/// A call's arguments: mostly objects, sometimes anything at all.
fn arguments() -> impl Strategy<Value = Arguments> {
    prop_oneof![
        6 => (ws(), object(value()), ws()).prop_map(|(a, o, b)| Arguments::Text(format!("{a}{o}{b}"))),
        2 => object(value()).prop_map(Arguments::Object),
        1 => value().prop_map(Arguments::Text),
        1 => prop_oneof![Just(""), Just("  "), Just("{\"reason\":"), Just("{\"reason\":1} x")]
            .prop_map(|t| Arguments::Text(t.to_string())),
    ]
}

fn name() -> impl Strategy<Value = &'static str> {
    prop::sample::select(&NAMES[..])
}

/// A JSON string of `text`.
fn quoted(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// A property a schema (or a branch) may hold; sometimes the parameter, in any spelling.
fn property() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => Just(r#""path":{"type":"string"}"#),
        1 => Just(r#""reason":{"type":"string"}"#),
        1 => Just(r#""\u0072eason":{}"#),
        1 => Just(r#""why":{"type":"string"}"#),
        1 => Just(r#""n":{"maximum":1e400}"#),
    ]
}

/// A `required` list: sometimes naming the parameter, in any spelling.
fn required() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        Just(r#""required":[]"#),
        Just(r#""required":["path"]"#),
        Just(r#""required":["reason"]"#),
        Just(r#""required":["re\u0061son"]"#),
        Just(r#""required":["why"]"#),
        Just(r#""required":"path""#),
    ]
}

/// A branch of a composite: owning the parameter or not, or referring elsewhere.
fn branch() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::collection::vec(property(), 0..2)
            .prop_map(|p| format!(r#"{{"properties":{{{}}}}}"#, p.join(","))),
        required().prop_map(|r| format!("{{{r}}}")),
        Just(r##"{"$ref":"#/defs/x"}"##.to_string()),
        Just("true".to_string()),
        Just("1".to_string()),
    ]
}

/// A parameters schema: usually readable, sometimes owning `reason`, sometimes not a schema.
fn schema() -> impl Strategy<Value = String> {
    let properties = (ws(), prop::collection::vec(property(), 0..3))
        .prop_map(|(w, p)| format!(r#"{w}"properties"{w}:{w}{{{}}}"#, p.join(",")));
    let composite = (
        prop::sample::select(vec!["allOf", "anyOf", "oneOf"]),
        prop::collection::vec(branch(), 0..3),
    )
        .prop_map(|(keyword, branches)| format!(r#""{keyword}":[{}]"#, branches.join(",")));
    let extra = prop_oneof![
        4 => Just(String::new()),
        2 => required().prop_map(str::to_string),
        2 => composite,
        1 => Just(r##""$ref":"#/x""##.to_string()),
        1 => Just(r#""additionalProperties":false"#.to_string()),
        1 => Just(r#""type":"object","type":"string""#.to_string()),
    ];
    prop_oneof![
        8 => (prop_oneof![Just(r#""type":"object""#), Just(r#""type" : "object""#), Just("")], prop::option::of(properties), extra)
            .prop_map(|(t, p, e)| {
                let members: Vec<String> = [t.to_string(), p.unwrap_or_default(), e]
                    .into_iter()
                    .filter(|m| !m.is_empty())
                    .collect();
                format!("{{{}}}", members.join(","))
            }),
        1 => Just(r#"{"type":"string"}"#.to_string()),
        1 => Just(r#"{"properties":null}"#.to_string()),
        1 => Just("[]".to_string()),
    ]
}

/// A declaration in one of the four shapes, or something unreadable.
fn declaration() -> impl Strategy<Value = String> {
    let strict = prop_oneof![
        Just(""),
        Just(r#","strict":true"#),
        Just(r#","strict":false"#)
    ];
    prop_oneof![
        3 => (name(), schema(), strict.clone()).prop_map(|(n, s, st)| format!(r#"{{"type":"function","function":{{"name":{},"parameters":{s}{st}}}}}"#, quoted(n))),
        2 => (name(), schema(), strict).prop_map(|(n, s, st)| format!(r#"{{"type":"function","name":{},"parameters":{s}{st}}}"#, quoted(n))),
        2 => (name(), schema(), ws()).prop_map(|(n, s, w)| format!(r#"{{{w}"name"{w}:{w}{}{w},"input_schema":{s}}}"#, quoted(n))),
        2 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":{},"inputSchema":{s},"annotations":{{"x":1}}}}"#, quoted(n))),
        1 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":{},"inputSchema":{s},"input_schema":{s}}}"#, quoted(n))),
        1 => value(),
    ]
}

/// Options: the contract's, or any other valid ones.
fn options() -> impl Strategy<Value = Options> {
    (
        prop::sample::select(vec!["reason", "why"]),
        any::<bool>(),
        prop_oneof![Just(Position::Last), Just(Position::First)],
        prop::sample::subsequence(NAMES.to_vec(), 0..2),
    )
        .prop_map(|(name, required, position, leave_alone)| Options {
            name: name.into(),
            required,
            position,
            leave_alone: leave_alone.into_iter().map(str::to_string).collect(),
            ..Options::default()
        })
}

fn calls() -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec((name(), arguments()), 0..6).prop_map(|calls| {
        calls
            .into_iter()
            .enumerate()
            .map(|(at, (name, arguments))| ToolCall {
                id: at.to_string(),
                name: name.into(),
                arguments,
            })
            .collect()
    })
}

fn run(layer: Layer<'_>, options: &Options, tools: &[String], calls: &[ToolCall]) -> Report {
    transform::run(layer, options.clone(), tools.to_vec(), calls.to_vec()).unwrap()
}

/// Checks a report against the model: every declaration, the strip set, every call.
fn judge(
    options: &Options,
    tools: &[String],
    calls: &[ToolCall],
    report: &Report,
) -> Result<(), TestCaseError> {
    let expected = model::list(options, tools);
    prop_assert_eq!(
        report.tools.len(),
        tools.len(),
        "one declaration out per declaration in"
    );
    prop_assert_eq!(expected.declarations.len(), tools.len());
    for ((before, after), declared) in tools.iter().zip(&report.tools).zip(&expected.declarations) {
        let after = after.get();
        match declared {
            Declared::Same => {
                prop_assert_eq!(after, before, "R4 R5 R7: passed through byte for byte")
            }
            Declared::Augmented(value) => {
                let got = model::read(after);
                prop_assert!(
                    got.is_some(),
                    "R1: an augmented declaration is JSON: {}",
                    after
                );
                prop_assert_eq!(
                    model::print(&got.unwrap()),
                    model::print(value),
                    "R1 R2 R6: {}",
                    before
                );
            }
        }
    }
    let augmented: BTreeSet<String> = report.strip_set.iter().cloned().collect();
    prop_assert_eq!(&augmented, &expected.augmented, "R7 R8: the strip set");

    let received = received_calls(report);
    prop_assert_eq!(
        report.results.len(),
        calls.len(),
        "R13: one result per call"
    );
    let mut forwarded = received.iter();
    for (call, result) in calls.iter().zip(&report.results) {
        prop_assert_eq!(&result.call_id, &call.id);
        let called = model::call(options, &expected, &call.name, call.arguments.text());
        if called == Called::Refused {
            prop_assert!(result.is_error, "required mode refuses call {}", call.id);
            continue;
        }
        let got = forwarded.next();
        prop_assert!(got.is_some(), "call {} was forwarded", call.id);
        let got = got.unwrap();
        prop_assert_eq!(&got.id, &call.id, "in order, once each");
        prop_assert_eq!(&got.name, &call.name);
        match called {
            Called::Same => prop_assert_eq!(got, call, "R9: untouched means byte for byte"),
            Called::Stripped(value) => {
                let text = got.arguments.text();
                prop_assert_eq!(
                    std::mem::discriminant(&got.arguments),
                    std::mem::discriminant(&call.arguments),
                    "the arguments keep their shape"
                );
                prop_assert!(
                    !model::has_insignificant_whitespace(text),
                    "R10 compact: {}",
                    text
                );
                let keys = model::top_level_keys(text);
                let unique: BTreeSet<&String> = keys.iter().collect();
                prop_assert_eq!(unique.len(), keys.len(), "R10: no repeated key: {}", text);
                let read = model::read(text);
                prop_assert!(read.is_some(), "R10: JSON: {}", text);
                prop_assert_eq!(
                    model::print(&read.unwrap()),
                    model::print(&value),
                    "R9 R10: {}",
                    call.arguments.text()
                );
            }
            Called::Refused => unreachable!("handled above"),
        }
    }
    prop_assert!(
        forwarded.next().is_none(),
        "nothing forwarded that was not called"
    );
    Ok(())
}

// 256 cases each by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn the_native_transform_is_the_model(options in options(), tools in prop::collection::vec(declaration(), 0..6), calls in calls()) {
        // R1–R10, R13
        let report = run(Layer::Native, &options, &tools, &calls);
        judge(&options, &tools, &calls, &report)?;
    }

    #[test]
    fn the_component_is_the_model_and_the_native_transform_byte_for_byte(options in options(), tools in prop::collection::vec(declaration(), 0..5), calls in calls()) {
        // R1–R10, R13: the same code, two builds, one output; neither panics nor traps.
        let plugin = Plugin::reasons().unwrap();
        let component = run(Layer::Component(&plugin), &options, &tools, &calls);
        judge(&options, &tools, &calls, &component)?;
        let native = run(Layer::Native, &options, &tools, &calls);
        prop_assert_eq!(serde_json::to_string(&native).unwrap(), serde_json::to_string(&component).unwrap());
    }

    #[test]
    fn listing_the_output_again_changes_nothing(options in options(), tools in prop::collection::vec(declaration(), 0..6)) {
        // R2 R5: an augmented declaration now owns the parameter, so a second pass (a
        // layer stacked twice) leaves every declaration as the first pass made it.
        let mut layer = reasons_transform::Transform::new();
        layer.configure(options).unwrap();
        let once = layer.list(tools.clone());
        prop_assert_eq!(once.len(), tools.len());
        let twice = layer.list(once.clone());
        prop_assert_eq!(twice, once);
    }

    #[test]
    fn the_order_of_a_catalogue_changes_no_strip_set(
        options in options(),
        (tools, shuffled) in prop::collection::vec(declaration(), 2..6)
            .prop_flat_map(|tools| (Just(tools.clone()), Just(tools).prop_shuffle())),
    ) {
        // R7: the strip set does not depend on the order of the declarations.
        let strip_set = |tools: Vec<String>| {
            let mut layer = reasons_transform::Transform::new();
            layer.configure(options.clone()).unwrap();
            layer.list(tools);
            layer.strip_set()
        };
        prop_assert_eq!(strip_set(tools), strip_set(shuffled));
    }
}
