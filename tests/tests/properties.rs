//! Property tests: random options, random catalogues in all four shapes and random calls,
//! through the native transform and the component, each judged against the independent
//! model of R1–R10 (`tests/src/model.rs`), never against the layer's own report.
//! `PROPTEST_CASES=100000 cargo test -p reasons-tests --release --test properties` is the
//! long run the README describes.

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use reasons_host::Plugin;
use reasons_host::Provider;
use reasons_host::dry_run::{self as transform, Layer, Report};
use reasons_test_support::model::{self, Called, Declared};
use reasons_tests::providers::Scripted;
use reasons_transform::{Arguments, Options, Position, ToolCall};
use std::collections::BTreeSet;

/// The tool names catalogues and calls are drawn from: several, so that duplicates are
/// common but not constant, one that needs escaping, and names that differ from another
/// only in case or by a prefix (a name is matched exactly, R8).
const NAMES: [&str; 8] = [
    "t",
    "T",
    "tt",
    "u",
    "x y",
    "caf\u{e9}",
    "CAF\u{c9}",
    "Caf\u{e9}",
];

/// JSON whitespace, usually none.
fn ws() -> impl Strategy<Value = &'static str> {
    prop_oneof![6 => Just(""), 1 => Just(" "), 1 => Just("\n  "), 1 => Just("\t"), 1 => Just("\r\n")]
}

/// Whitespace JSON has, or a space character it does not: form feed, vertical tab, a
/// no-break space, the line separator.
fn any_ws() -> impl Strategy<Value = &'static str> {
    prop_oneof![
        2 => ws(),
        1 => Just("\u{c}"),
        1 => Just("\u{b}"),
        1 => Just("\u{a0}"),
        1 => Just("\u{2028}"),
    ]
}

/// Where a text starts or ends: whitespace of any kind, or a byte-order mark, which
/// RFC 8259 does not let a JSON text begin with.
fn edge() -> impl Strategy<Value = &'static str> {
    prop_oneof![3 => any_ws(), 1 => Just("\u{feff}")]
}

/// A value nested at, just under and just past 128 levels (the depth some parsers stop
/// at; RFC 8259 sets none), or deeper.
fn deep() -> impl Strategy<Value = String> {
    let depth = prop::sample::select(vec![126usize, 127, 128, 129, 300]);
    (depth, any::<bool>()).prop_map(|(depth, objects)| match objects {
        true => format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth)),
        false => format!("{}1{}", "[".repeat(depth), "]".repeat(depth)),
    })
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
        1 => Just(r#""caf\u00E9""#),
        1 => Just(r#""\ud800""#),
        // Keys that must be escaped when written back.
        1 => Just(r#""q\"uote""#),
        1 => Just(r#""back\\slash\/""#),
        1 => Just(r#""tab\tcr\rbs\bff\fnl\n""#),
    ]
}

/// A JSON string as text, spelled with every escape JSON has, in both hex cases.
fn escaped() -> impl Strategy<Value = String> {
    let piece = prop::sample::select(vec![
        "a",
        " ",
        "é",
        "\u{1F600}",
        r#"\""#,
        r#"\\"#,
        r#"\/"#,
        r#"\b"#,
        r#"\f"#,
        r#"\n"#,
        r#"\r"#,
        r#"\t"#,
        r#"\u00e9"#,
        r#"\u00E9"#,
        r#"\uD83D\uDE00"#,
        r#"\u001F"#,
    ]);
    prop::collection::vec(piece, 0..6).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
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
        escaped(),
        Just("6.02E+23".to_string()),
        Just("-1e-7".to_string()),
    ]
}

/// A JSON value as text, objects' keys repeating and colliding often: up to six deep and
/// eight wide.
fn value() -> impl Strategy<Value = String> {
    scalar().prop_recursive(6, 64, 8, |inner| {
        prop_oneof![
            prop::collection::vec((ws(), inner.clone()), 0..8).prop_map(|items| {
                let items: Vec<String> =
                    items.into_iter().map(|(w, v)| format!("{w}{v}")).collect();
                format!("[{}]", items.join(","))
            }),
            object(inner),
        ]
    })
}

fn object(values: impl Strategy<Value = String>) -> impl Strategy<Value = String> {
    prop::collection::vec((ws(), key(), ws(), values), 0..9).prop_map(|members| {
        let members: Vec<String> = members
            .into_iter()
            .map(|(w, k, w2, v)| format!("{w}{k}{w2}:{w}{v}"))
            .collect();
        format!("{{{}}}", members.join(","))
    })
}

/// What lenient readers accept and RFC 8259 does not, put into JSON text at `at` (a
/// fraction of its length): a word of Python's `json`, a raw control character (in a
/// string or not), a space JSON does not have, a byte-order mark, a trailing comma, a
/// single quote, a cut.
fn unjson() -> impl Strategy<Value = (f64, &'static str)> {
    let insert = prop_oneof![
        Just("NaN"),
        Just("-Infinity"),
        Just("\n"),
        Just("\t"),
        Just("\u{1}"),
        Just("\u{c}"),
        Just("\u{b}"),
        Just("\u{a0}"),
        Just("\u{feff}"),
        Just(","),
        Just("'"),
        Just("\\x"),
        Just(""),
    ];
    (0.0..1.0f64, insert)
}

/// `text` broken: `insert` put in at a character boundary near `at` of its length, or,
/// for the empty insert, the text cut there.
fn broken(text: &str, at: f64, insert: &str) -> String {
    let mut at = (text.len() as f64 * at) as usize;
    while !text.is_char_boundary(at) {
        at -= 1;
    }
    match insert {
        "" => text[..at].to_string(),
        _ => format!("{}{insert}{}", &text[..at], &text[at..]),
    }
}

/// An object carrying the parameter `param` (as it is spelt, or with an escape) among
/// other members, one of them sometimes nested deep.
fn with_reason(param: &str) -> BoxedStrategy<String> {
    let member = prop_oneof![
        4 => (key(), value()).prop_map(|(k, v)| format!("{k}:{v}")),
        1 => (key(), deep()).prop_map(|(k, v)| format!("{k}:{v}")),
    ];
    let mut chars = param.chars();
    let first = chars.next().map_or(0, u32::from);
    let escaped = format!("\"\\u{first:04x}{}\"", chars.as_str());
    let reason = (
        prop_oneof![4 => Just(quoted(param)), 1 => Just(escaped)],
        value(),
    );
    (prop::collection::vec(member, 0..5), reason, 0.0..1.0f64)
        .prop_map(|(mut members, (key, value), at)| {
            let at = (members.len() as f64 * at) as usize;
            members.insert(at, format!("{key}:{value}"));
            format!("{{{}}}", members.join(","))
        })
        .boxed()
}

/// A call's arguments: mostly objects, often carrying the parameter, sometimes anything
/// at all, sometimes text that is JSON only to a lenient reader.
// Boxed, as the generators that use it, because an unboxed union this wide puts every
// arm's value tree in one stack frame, which overflows a test thread in a debug build.
fn arguments(param: &str) -> BoxedStrategy<Arguments> {
    prop_oneof![
        4 => (ws(), object(value()), ws()).prop_map(|(a, o, b)| Arguments::Text(format!("{a}{o}{b}"))),
        12 => (ws(), with_reason(param), ws()).prop_map(|(a, o, b)| Arguments::Text(format!("{a}{o}{b}"))),
        2 => object(value()).prop_map(Arguments::Object),
        3 => with_reason(param).prop_map(Arguments::Object),
        1 => value().prop_map(Arguments::Text),
        2 => (with_reason(param), unjson())
            .prop_map(|(o, (at, insert))| Arguments::Text(broken(&o, at, insert))),
        1 => (edge(), with_reason(param), edge()).prop_map(|(a, o, b)| Arguments::Text(format!("{a}{o}{b}"))),
        1 => prop_oneof![Just(""), Just("  "), Just("{\"reason\":"), Just("{\"reason\":1} x")]
            .prop_map(|t| Arguments::Text(t.to_string())),
    ]
    .boxed()
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
        1 => Just(r#""m":{"minimum":-1.5E-7,"default":6.02E+23}"#),
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

/// A declaration in one of the four shapes, or something unreadable: sometimes with a
/// space JSON does not have or a byte-order mark around it, or broken inside.
fn declaration() -> BoxedStrategy<String> {
    prop_oneof![
        12 => shaped(),
        1 => (edge(), shaped(), edge()).prop_map(|(a, d, b)| format!("{a}{d}{b}")),
        1 => (shaped(), unjson()).prop_map(|(d, (at, insert))| broken(&d, at, insert)),
        1 => value(),
    ]
    .boxed()
}

/// A declaration in one of the four shapes, its `strict` any JSON value.
fn shaped() -> BoxedStrategy<String> {
    let strict = prop_oneof![
        2 => Just(""),
        3 => Just(r#","strict":true"#),
        2 => Just(r#","strict":false"#),
        1 => prop::sample::select(vec![
            r#","strict":"true""#,
            r#","strict":1"#,
            r#","strict":0"#,
            r#","strict":null"#,
            r#","strict":{}"#,
            r#","strict":[true]"#,
            r#","strict":"false""#,
        ]),
    ];
    prop_oneof![
        3 => (name(), schema(), strict.clone()).prop_map(|(n, s, st)| format!(r#"{{"type":"function","function":{{"name":{},"parameters":{s}{st}}}}}"#, quoted(n))),
        2 => (name(), schema(), strict).prop_map(|(n, s, st)| format!(r#"{{"type":"function","name":{},"parameters":{s}{st}}}"#, quoted(n))),
        2 => (name(), schema(), ws()).prop_map(|(n, s, w)| format!(r#"{{{w}"name"{w}:{w}{}{w},"input_schema":{s}}}"#, quoted(n))),
        2 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":{},"inputSchema":{s},"annotations":{{"x":1}}}}"#, quoted(n))),
        1 => (name(), schema()).prop_map(|(n, s)| format!(r#"{{"name":{},"inputSchema":{s},"input_schema":{s}}}"#, quoted(n))),
    ]
    .boxed()
}

/// Descriptions of the parameter: the contract's, ones a careless writer of JSON would
/// spell wrong, and the longest the contract allows (in characters, not bytes).
fn description() -> impl Strategy<Value = String> {
    prop_oneof![
        3 => Just(reasons_transform::DEFAULT_DESCRIPTION.to_string()),
        1 => Just("Why: \"quoted\", a back\\slash, a tab\t and a line\nbreak.".to_string()),
        1 => Just("Pourquoi cet appel ? \u{1F600} \u{7f}\u{1}".to_string()),
        1 => "[a-zA-Z .,é]{1,40}",
        1 => Just("\u{e9}".repeat(1024)),
    ]
}

/// The longest name the contract allows.
fn longest_name() -> String {
    "a.B-9_".repeat(11)[..64].to_string()
}

/// Options the contract accepts: its own, or others at and inside every bound.
fn options() -> impl Strategy<Value = Options> {
    (
        prop_oneof![
            3 => Just("reason".to_string()),
            1 => Just("why".to_string()),
            1 => Just(longest_name())
        ],
        description(),
        any::<bool>(),
        prop_oneof![Just(Position::Last), Just(Position::First)],
        prop::sample::subsequence(NAMES.to_vec(), 0..2),
    )
        .prop_map(
            |(name, description, required, position, leave_alone)| Options {
                name,
                description,
                required,
                position,
                leave_alone: leave_alone.into_iter().map(str::to_string).collect(),
            },
        )
        .prop_filter("the contract accepts them", model::accepts)
}

/// Options of every kind: ones the contract accepts, and ones just past each bound.
fn any_options() -> impl Strategy<Value = Options> {
    let param = prop_oneof![
        Just("reason".to_string()),
        Just(longest_name()),
        Just("a".repeat(65)),
        Just(String::new()),
        Just("why not".to_string()),
        Just("caf\u{e9}".to_string()),
    ];
    let description = prop_oneof![
        3 => description(),
        1 => Just("x".repeat(1025)),
        1 => Just("\u{e9}".repeat(1025)),
        1 => Just(" \t\n".to_string()),
        1 => Just(String::new()),
    ];
    let leave_alone = prop::collection::vec(prop_oneof![name(), Just("")], 0..3);
    (param, description, any::<bool>(), leave_alone).prop_map(
        |(name, description, required, leave_alone)| Options {
            name,
            description,
            required,
            position: Position::Last,
            leave_alone: leave_alone.into_iter().map(str::to_string).collect(),
        },
    )
}

/// Calls after a listing of `tools`: most to the tools the contract says it augments
/// (so that a good share are stripped), some to names differing from theirs in case or
/// by a letter, some to any name.
fn calls(options: &Options, tools: &[String]) -> impl Strategy<Value = Vec<ToolCall>> + use<> {
    let augmented: Vec<String> = model::list(options, tools).augmented.into_iter().collect();
    let variants: Vec<String> = augmented
        .iter()
        .flat_map(|name| {
            let shorter = name.chars().skip(1).collect();
            [
                name.to_uppercase(),
                name.to_lowercase(),
                format!("{name}t"),
                shorter,
            ]
        })
        .collect();
    let any = name().prop_map(str::to_string);
    let name = match augmented.is_empty() {
        true => any.boxed(),
        false => prop_oneof![
            6 => prop::sample::select(augmented),
            1 => prop::sample::select(variants),
            1 => any,
        ]
        .boxed(),
    };
    prop::collection::vec((name, arguments(&options.name)), 0..6).prop_map(|calls| {
        calls
            .into_iter()
            .enumerate()
            .map(|(at, (name, arguments))| ToolCall {
                id: at.to_string(),
                name,
                arguments,
            })
            .collect()
    })
}

/// A declaration in one of the four shapes that nothing stops being augmented but its
/// name: most generated schemas own the parameter or are not schemas, and a catalogue
/// without a tool to augment strips nothing.
fn plain() -> impl Strategy<Value = String> {
    let schema = r#"{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}"#;
    (name(), 0..4).prop_map(move |(name, shape)| {
        let name = quoted(name);
        match shape {
            0 => format!(r#"{{"type":"function","function":{{"name":{name},"parameters":{schema},"strict":true}}}}"#),
            1 => format!(r#"{{"type":"function","name":{name},"parameters":{schema}}}"#),
            2 => format!(r#"{{"name":{name},"input_schema":{schema}}}"#),
            _ => format!(r#"{{"name":{name},"inputSchema":{schema}}}"#),
        }
    })
}

/// A catalogue of up to `most` declarations, two times in three with a [`plain`] one
/// among them.
fn catalogue(most: usize) -> impl Strategy<Value = Vec<String>> {
    let plain = prop_oneof![1 => Just(None), 2 => plain().prop_map(Some)];
    (
        prop::collection::vec(declaration(), 0..most),
        plain,
        0.0..1.0f64,
    )
        .prop_map(move |(mut tools, plain, at)| {
            if let Some(plain) = plain.filter(|_| tools.len() < most) {
                tools.insert((tools.len() as f64 * at) as usize, plain);
            }
            tools
        })
}

/// Options, a catalogue of up to `most` declarations, and calls after it.
fn case(most: usize) -> impl Strategy<Value = (Options, Vec<String>, Vec<ToolCall>)> {
    (options(), catalogue(most)).prop_flat_map(|(options, tools)| {
        let calls = calls(&options, &tools);
        (Just(options), Just(tools), calls)
    })
}

fn run(layer: Layer<'_>, options: &Options, tools: &[String], calls: &[ToolCall]) -> Report {
    transform::run(layer, options.clone(), tools.to_vec(), calls.to_vec()).unwrap()
}

/// What one listing and one batch through a layer gave, on both sides of it.
struct Outcome {
    /// The catalogue as the model sees it.
    listed: Vec<String>,
    augmented_tools: Vec<String>,
    /// What the provider below received.
    received: Vec<ToolCall>,
    /// Each result's call and whether it is an error.
    results: Vec<(String, bool)>,
}

/// Checks one listing and batch against the model: every declaration, the augmented
/// tools, every call.
fn judge(
    options: &Options,
    tools: &[String],
    calls: &[ToolCall],
    report: &Outcome,
) -> Result<(), TestCaseError> {
    let expected = model::list(options, tools);
    prop_assert_eq!(
        report.listed.len(),
        tools.len(),
        "one declaration out per declaration in"
    );
    prop_assert_eq!(expected.declarations.len(), tools.len());
    for ((before, after), declared) in tools.iter().zip(&report.listed).zip(&expected.declarations)
    {
        match declared {
            Declared::Same => {
                prop_assert_eq!(after, before, "R4 R5 R7: passed through byte for byte")
            }
            Declared::Augmented(value) => {
                let got = model::written(after);
                prop_assert!(
                    got.is_some(),
                    "R1: an augmented declaration is JSON: {}",
                    after
                );
                prop_assert_eq!(got.unwrap(), model::print(value), "R1 R2 R6: {}", before);
            }
        }
    }
    let augmented: BTreeSet<String> = report.augmented_tools.iter().cloned().collect();
    prop_assert_eq!(
        &augmented,
        &expected.augmented,
        "R7 R8: the augmented tools"
    );

    prop_assert_eq!(
        report.results.len(),
        calls.len(),
        "R13: one result per call"
    );
    let mut forwarded = report.received.iter();
    for (call, (call_id, is_error)) in calls.iter().zip(&report.results) {
        prop_assert_eq!(call_id, &call.id);
        let called = model::call(options, &expected, &call.name, call.arguments.text());
        if called == Called::Refused {
            prop_assert!(
                *is_error,
                "R6 R10: call {} is refused: {:?}",
                call.id,
                call.arguments
            );
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
                let got = model::written(text);
                prop_assert!(got.is_some(), "R10: JSON: {}", text);
                prop_assert_eq!(
                    got.unwrap(),
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

/// A layer of either build over `below`, kept for a whole session.
enum SessionLayer {
    Native(reasons_host::NativeReasons),
    Component(reasons_host::WasmLayer),
}

impl SessionLayer {
    fn new(layer: Layer<'_>, options: &Options, below: &Scripted) -> SessionLayer {
        let below = Box::new(below.clone());
        match layer {
            Layer::Native => SessionLayer::Native(
                reasons_host::NativeReasons::new(below, options.clone()).unwrap(),
            ),
            Layer::Component(plugin) => {
                let mut layer = plugin.layer(below);
                layer.configure(options.clone()).unwrap();
                SessionLayer::Component(layer)
            }
        }
    }

    fn provider(&mut self) -> &mut dyn Provider {
        match self {
            SessionLayer::Native(layer) => layer,
            SessionLayer::Component(layer) => layer,
        }
    }

    fn augmented_tools(&self) -> Vec<String> {
        match self {
            SessionLayer::Native(layer) => layer.augmented_tools(),
            SessionLayer::Component(layer) => layer.augmented_tools().names(),
        }
    }
}

/// Several listings, each followed by a batch, through one layer: each step judged
/// against the model of that step's listing alone (R8: each listing replaces the set).
fn session(layer: Layer<'_>, options: &Options, steps: &[Step]) -> Result<(), TestCaseError> {
    let below = Scripted::new(&[]);
    let mut layer = SessionLayer::new(layer, options, &below);
    for (tools, calls) in steps {
        let tools_ref: Vec<&str> = tools.iter().map(String::as_str).collect();
        below.set_catalogue(&tools_ref);
        let listed = layer.provider().tools_for_llm().unwrap();
        let augmented_tools = layer.augmented_tools();
        let results = layer.provider().execute_tool_calls(calls.clone()).unwrap();
        let outcome = Outcome {
            listed,
            augmented_tools,
            received: below.take_received(),
            results: results
                .into_iter()
                .map(|result| (result.call_id, result.is_error))
                .collect(),
        };
        judge(options, tools, calls, &outcome)?;
    }
    Ok(())
}

/// One listing of a session, and the calls after it.
type Step = (Vec<String>, Vec<ToolCall>);

/// Options and a session of several listings, each followed by calls.
fn steps() -> impl Strategy<Value = (Options, Vec<Step>)> {
    (options(), prop::collection::vec(catalogue(6), 1..4)).prop_flat_map(|(options, catalogues)| {
        let steps: Vec<_> = catalogues
            .into_iter()
            .map(|tools| (Just(tools.clone()), calls(&options, &tools)))
            .collect();
        (Just(options), steps)
    })
}

#[test]
fn at_least_a_third_of_the_generated_calls_are_stripped() {
    // A generator whose calls are seldom stripped would leave R9 and R10's rebuilding
    // of arguments (where most bugs live) to chance: the model says what share is.
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let strategy = case(6);
    let (mut calls, mut stripped) = (0usize, 0usize);
    for _ in 0..2000 {
        let (options, tools, generated) = strategy.new_tree(&mut runner).unwrap().current();
        let listing = model::list(&options, &tools);
        calls += generated.len();
        stripped += generated
            .iter()
            .filter(|call| {
                let called = model::call(&options, &listing, &call.name, call.arguments.text());
                matches!(called, Called::Stripped(_))
            })
            .count();
    }
    assert!(calls >= 2000, "{calls} calls in 2000 cases");
    assert!(
        stripped * 3 >= calls,
        "{stripped} of {calls} calls stripped"
    );
}

/// Whether `options` configure a layer of the build `layer`.
fn configures(layer: Layer<'_>, options: &Options) -> bool {
    match layer {
        Layer::Native => reasons_transform::Transform::new()
            .configure(options.clone())
            .is_ok(),
        Layer::Component(plugin) => {
            let mut layer = plugin.layer(Box::new(Scripted::new(&[])));
            layer.configure(options.clone()).is_ok()
        }
    }
}

// 256 cases each by default; `PROPTEST_CASES` sets another number.
proptest! {
    #[test]
    fn the_native_transform_takes_the_options_the_contract_takes(options in any_options()) {
        // Options: accepted at every bound, refused just past it, whole.
        prop_assert_eq!(configures(Layer::Native, &options), model::accepts(&options), "{:?}", options);
    }

    #[test]
    fn the_component_takes_the_options_the_contract_takes(options in any_options()) {
        // Options, through the component's `configure`.
        let plugin = Plugin::reasons().unwrap();
        prop_assert_eq!(configures(Layer::Component(&plugin), &options), model::accepts(&options), "{:?}", options);
    }

    #[test]
    fn the_native_transform_is_the_model((options, tools, calls) in case(6)) {
        // R1–R10, R13
        session(Layer::Native, &options, &[(tools, calls)])?;
    }

    #[test]
    fn the_component_is_the_model((options, tools, calls) in case(5)) {
        // R1–R10, R13, through the component; it neither panics nor traps.
        let plugin = Plugin::reasons().unwrap();
        session(Layer::Component(&plugin), &options, &[(tools, calls)])?;
    }

    #[test]
    fn the_component_and_the_native_transform_agree_byte_for_byte((options, tools, calls) in case(5)) {
        // The same code, two builds, one output.
        let plugin = Plugin::reasons().unwrap();
        let component = run(Layer::Component(&plugin), &options, &tools, &calls);
        let native = run(Layer::Native, &options, &tools, &calls);
        prop_assert_eq!(serde_json::to_string(&native).unwrap(), serde_json::to_string(&component).unwrap());
    }

    #[test]
    fn each_listing_of_a_session_is_the_model((options, steps) in steps()) {
        // R8: the augmented tools are the latest listing's, whatever came before.
        session(Layer::Native, &options, &steps)?;
    }

    #[test]
    fn each_listing_of_a_component_session_is_the_model((options, steps) in steps()) {
        // R8 R15: one instance kept across listings knows only the latest.
        let plugin = Plugin::reasons().unwrap();
        session(Layer::Component(&plugin), &options, &steps)?;
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
    fn the_order_of_a_catalogue_changes_no_augmented_tools(
        options in options(),
        (tools, shuffled) in prop::collection::vec(declaration(), 2..6)
            .prop_flat_map(|tools| (Just(tools.clone()), Just(tools).prop_shuffle())),
    ) {
        // R7: the augmented tools does not depend on the order of the declarations.
        let augmented_tools = |tools: Vec<String>| {
            let mut layer = reasons_transform::Transform::new();
            layer.configure(options.clone()).unwrap();
            layer.list(tools);
            layer.augmented_tools()
        };
        prop_assert_eq!(augmented_tools(tools), augmented_tools(shuffled));
    }
}
