//! Property tests: random catalogues in all four shapes and random calls, through the
//! native transform and the component. `PROPTEST_CASES=100000 cargo test -p reasons-tests
//! --release --test properties` is the long run the README describes.

use proptest::prelude::*;
use reasons::{Arguments, Options, ToolCall};
use reasons_harness::Plugin;
use reasons_harness::dry_run::{self, Layer, Report};
use reasons_tests::received_calls;
use serde_json::Value;

/// JSON whitespace, usually none.
fn ws() -> impl Strategy<Value = &'static str> {
    prop_oneof![6 => Just(""), 1 => Just(" "), 1 => Just("\n  "), 1 => Just("\t")]
}

/// Keys that collide often: the parameter, escaped spellings of it, and a few others.
fn key() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        3 => Just(r#""reason""#),
        1 => Just(r#""\u0072eason""#),
        1 => Just(r#""re\u0061son""#),
        2 => Just(r#""path""#),
        2 => Just(r#""a""#),
        1 => Just(r#""b c""#),
        1 => Just(r#""caf\u00e9""#),
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
    prop_oneof![Just("t"), Just("u"), Just("v")]
}

/// A parameters schema: usually readable, sometimes owning `reason`, sometimes not a schema.
fn schema() -> impl Strategy<Value = String> {
    let property = prop_oneof![
        Just(r#""path":{"type":"string"}"#),
        Just(r#""reason":{"type":"string"}"#),
        Just(r#""n":{"maximum":1e400}"#)
    ];
    let properties = prop::collection::vec(property, 0..3)
        .prop_map(|p| format!(r#""properties":{{{}}}"#, p.join(",")));
    let extra = prop_oneof![
        4 => Just(String::new()),
        1 => Just(r#","required":["path"]"#.to_string()),
        1 => Just(r#","required":["reason"]"#.to_string()),
        1 => Just(r#","allOf":[{"properties":{"reason":{}}}]"#.to_string()),
        1 => Just(r##","$ref":"#/x""##.to_string()),
        1 => Just(r#","additionalProperties":false"#.to_string()),
    ];
    prop_oneof![
        8 => (prop_oneof![Just(r#""type":"object","#), Just("")], properties, extra)
            .prop_map(|(t, p, e)| format!("{{{t}{p}{e}}}")),
        1 => Just(r#"{"type":"object"}"#.to_string()),
        1 => Just(r#"{"type":"string"}"#.to_string()),
        1 => Just(r#"{"properties":null}"#.to_string()),
        1 => Just("[]".to_string()),
    ]
}

/// A declaration in one of the four shapes, or something unreadable.
fn declaration() -> impl Strategy<Value = String> {
    let strict = prop_oneof![Just(""), Just(r#","strict":true"#)];
    prop_oneof![
        3 => (name(), schema(), strict.clone()).prop_map(|(n, s, st)| format!(r#"{{"type":"function","function":{{"name":"{n}","parameters":{s}{st}}}}}"#)),
        2 => (name(), schema(), strict).prop_map(|(n, s, st)| format!(r#"{{"type":"function","name":"{n}","parameters":{s}{st}}}"#)),
        2 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":"{n}","input_schema":{s}}}"#)),
        2 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":"{n}","inputSchema":{s},"annotations":{{"x":1}}}}"#)),
        1 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":"{n}","inputSchema":{s},"input_schema":{s}}}"#)),
        1 => value(),
    ]
}

fn calls() -> impl Strategy<Value = Vec<ToolCall>> {
    prop::collection::vec((name(), arguments()), 0..5).prop_map(|calls| {
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

fn run(layer: Layer<'_>, tools: &[String], calls: &[ToolCall]) -> Report {
    dry_run::run(layer, Options::default(), tools.to_vec(), calls.to_vec()).unwrap()
}

/// What the contract says the provider below receives, computed another way: parsed to a
/// value (order kept, numbers exact) with `reason` removed, when there is one to remove.
fn oracle(arguments: &str) -> Option<Value> {
    match serde_json::from_str::<Value>(&readable(arguments)) {
        Ok(Value::Object(mut map)) => map.shift_remove("reason").map(|_| Value::Object(map)),
        _ => None,
    }
}

/// `text` with every surrogate escape turned into another character's escape, the same
/// way on both sides of a comparison: serde_json refuses a lone surrogate (`"\ud800"`),
/// which is valid JSON that servers' parsers read (R10).
fn readable(text: &str) -> String {
    text.replace("\\ud", "\\u00").replace("\\uD", "\\u00")
}

// 256 cases each by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn native_and_component_agree_byte_for_byte(tools in prop::collection::vec(declaration(), 0..5), calls in calls()) {
        // R1–R10: the same code, two builds, one output; neither panics nor traps.
        let plugin = Plugin::reasons().unwrap();
        let native = run(Layer::Native, &tools, &calls);
        let component = run(Layer::Component(&plugin), &tools, &calls);
        prop_assert_eq!(serde_json::to_string(&native).unwrap(), serde_json::to_string(&component).unwrap());
    }

    #[test]
    fn calls_are_untouched_or_lose_exactly_one_top_level_key(tools in prop::collection::vec(declaration(), 0..5), calls in calls()) {
        // R9 R10
        let report = run(Layer::Native, &tools, &calls);
        let received = received_calls(&report);
        prop_assert_eq!(received.len(), calls.len());
        for (sent, got) in calls.iter().zip(&received) {
            let stripped = report.augmented.contains(&sent.name).then(|| oracle(sent.arguments.text())).flatten();
            match stripped {
                None => prop_assert_eq!(got, sent, "untouched means byte for byte"),
                Some(expected) => {
                    let got_value: Value = serde_json::from_str(&readable(got.arguments.text())).unwrap();
                    prop_assert_eq!(serde_json::to_string(&got_value).unwrap(), serde_json::to_string(&expected).unwrap());
                    prop_assert!(!got.arguments.text().contains(['\n', '\t']), "compact");
                }
            }
        }
    }

    #[test]
    fn listing_is_idempotent_and_never_changes_what_it_cannot_read(tools in prop::collection::vec(declaration(), 0..6)) {
        // R2 R4 R8
        let mut layer = reasons::Reasons::new();
        let first = layer.list(tools.clone());
        let set = layer.augmented_tools();
        let second = layer.list(tools.clone());
        prop_assert_eq!(&first, &second);
        prop_assert_eq!(set, layer.augmented_tools());
        for (before, after) in tools.iter().zip(&first) {
            if before != after {
                // Augmenting only inserts: every original byte is still there, in order.
                let mut rest = after.as_str();
                for c in before.chars() {
                    let at = rest.find(c);
                    prop_assert!(at.is_some(), "{} is not inside {}", before, after);
                    rest = &rest[at.unwrap() + c.len_utf8()..];
                }
                prop_assert!(serde_json::from_str::<Value>(after).is_ok());
            }
        }
    }

    #[test]
    fn duplicate_names_in_any_order_agree(mut tools in prop::collection::vec(declaration(), 2..5), seed in any::<u64>()) {
        // R7: the strip set does not depend on the order of the declarations.
        let mut layer = reasons::Reasons::new();
        layer.list(tools.clone());
        let set = layer.augmented_tools();
        let mut rng = seed;
        for at in (1..tools.len()).rev() {
            rng = rng.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            tools.swap(at, (rng >> 33) as usize % (at + 1));
        }
        layer.list(tools);
        prop_assert_eq!(set, layer.augmented_tools());
    }
}
