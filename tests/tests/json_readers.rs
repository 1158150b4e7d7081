//! The project's one JSON reader held to serde_json and the model, verdict and value:
//! the transform's (`reasons_transform::json`), which decides what a call holds (R10) and,
//! through the proxy's strict reader (`reasons_mcp::jsonrpc`), what a message holds (R18). Over value trees printed with random whitespace, every escape in both hex
//! cases and numbers in every spelling, the same texts with bytes changed, nesting past
//! 128, and a corpus of documents that must be accepted or refused.

use proptest::prelude::*;
use reasons_test_support::model;
use reasons_transform::json::{Object, is_value};
use serde_json::Value;

/// A JSON value, to be printed in one of many spellings.
#[derive(Clone, Debug)]
enum Tree {
    Null,
    Bool(bool),
    /// A number's text, already in one of its spellings.
    Number(String),
    String(Vec<char>),
    Array(Vec<Tree>),
    Object(Vec<(Vec<char>, Tree)>),
}

/// Numbers as people and programs write them: fractions, exponents in both cases and
/// with either sign, `-0`, integers past every machine word.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("0".to_string()),
        Just("-0".to_string()),
        Just("-0.0E-0".to_string()),
        Just("123456789012345678901234567890".to_string()),
        Just("1e400".to_string()),
        Just("-1.5E+308".to_string()),
        Just("0.30000000000000004".to_string()),
        any::<i64>().prop_map(|n| n.to_string()),
        (
            any::<i32>(),
            0u32..1000,
            prop::sample::select(vec!["e", "E", "e+", "E-", "e-"]),
            0u32..400
        )
            .prop_map(|(whole, fraction, e, exponent)| format!("{whole}.{fraction}{e}{exponent}")),
    ]
}

/// Characters of strings and keys: plain, ones that must be escaped, the parameter's.
fn character() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::char::range('a', 'z'),
        1 => prop::sample::select(vec!['"', '\\', '/', '\u{8}', '\u{c}', '\n', '\r', '\t', '\u{0}', '\u{1f}', '\u{7f}']),
        1 => prop::sample::select(vec!['é', '€', '\u{1F600}', '\u{10FFFF}', '\u{FEFF}', '\u{2028}']),
        1 => prop::sample::select(vec!['r', 'e', 'a', 's', 'o', 'n']),
    ]
}

fn tree() -> impl Strategy<Value = Tree> {
    let leaf = prop_oneof![
        Just(Tree::Null),
        any::<bool>().prop_map(Tree::Bool),
        number().prop_map(Tree::Number),
        prop::collection::vec(character(), 0..8).prop_map(Tree::String),
    ];
    leaf.prop_recursive(8, 96, 8, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..8).prop_map(Tree::Array),
            prop::collection::vec((prop::collection::vec(character(), 0..6), inner), 0..8)
                .prop_map(Tree::Object),
        ]
    })
}

/// Prints `tree` as JSON, each choice of spelling (whitespace, how each character of a
/// string is written) drawn from `rng`.
fn print(tree: &Tree, rng: &mut fastrand::Rng, out: &mut String) {
    match tree {
        Tree::Null => out.push_str("null"),
        Tree::Bool(value) => out.push_str(if *value { "true" } else { "false" }),
        Tree::Number(text) => out.push_str(text),
        Tree::String(chars) => string(chars, rng, out),
        Tree::Array(items) => container(('[', ']'), items, rng, out, print),
        Tree::Object(members) => {
            container(('{', '}'), members, rng, out, |(key, value), rng, out| {
                string(key, rng, out);
                ws(rng, out);
                out.push(':');
                ws(rng, out);
                print(value, rng, out);
            })
        }
    }
}

/// Up to two of JSON's whitespace characters, drawn from `rng`.
fn ws(rng: &mut fastrand::Rng, out: &mut String) {
    for _ in 0..rng.usize(..3).saturating_sub(1) {
        out.push([' ', '\t', '\n', '\r'][rng.usize(..4)]);
    }
}

/// `items` between the brackets, comma-separated, each printed by `item` with whitespace
/// drawn around it.
fn container<T>(
    (open, close): (char, char),
    items: &[T],
    rng: &mut fastrand::Rng,
    out: &mut String,
    mut item: impl FnMut(&T, &mut fastrand::Rng, &mut String),
) {
    out.push(open);
    for (at, each) in items.iter().enumerate() {
        if at > 0 {
            out.push(',');
        }
        ws(rng, out);
        item(each, rng, out);
        ws(rng, out);
    }
    out.push(close);
}

/// A string, each character as itself where JSON allows, as its short escape, or as
/// `\u` escapes in lower or upper case (a pair for one past the BMP).
fn string(chars: &[char], rng: &mut fastrand::Rng, out: &mut String) {
    out.push('"');
    for &c in chars {
        let short = match c {
            '"' => Some("\\\""),
            '\\' => Some("\\\\"),
            '/' => Some("\\/"),
            '\u{8}' => Some("\\b"),
            '\u{c}' => Some("\\f"),
            '\n' => Some("\\n"),
            '\r' => Some("\\r"),
            '\t' => Some("\\t"),
            _ => None,
        };
        let must_escape = c < ' ' || c == '"' || c == '\\';
        match rng.u8(..3) {
            0 if !must_escape => out.push(c),
            1 if short.is_some() => out.push_str(short.unwrap()),
            _ => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    if rng.bool() {
                        out.push_str(&format!("\\u{unit:04x}"));
                    } else {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
    }
    out.push('"');
}

/// Pieces a byte-level mutation puts in: JSON's structure, broken escapes, what only
/// lenient readers accept.
const PIECES: [&str; 20] = [
    "{", "}", "[", "]", "\"", ":", ",", "\\", "\\u", "\\ud800", "\\uDFFF", "0", "-", ".", "e",
    "NaN", "\u{1}", "\u{feff}", "'", " ",
];

/// `text` with one to three changes at character boundaries.
fn mutate(text: &str, rng: &mut fastrand::Rng) -> String {
    let mut out = text.to_string();
    for _ in 0..rng.usize(1..=3) {
        let mut at = rng.usize(..=out.len());
        while !out.is_char_boundary(at) {
            at -= 1;
        }
        if rng.bool() {
            out.insert_str(at, PIECES[rng.usize(..PIECES.len())]);
        } else {
            let mut end = (at + rng.usize(1..4)).min(out.len());
            while !out.is_char_boundary(end) {
                end += 1;
            }
            out.replace_range(at..end, "");
        }
    }
    out
}

/// A WTF-8 key as the model reads it: a lone surrogate as [`model::readable`] makes it.
fn model_key(key: &[u8]) -> String {
    let push = |json: &mut String, text: &str| {
        let quoted = serde_json::to_string(text).unwrap();
        json.push_str(&quoted[1..quoted.len() - 1]);
    };
    let mut json = String::from("\"");
    let mut rest = key;
    loop {
        match std::str::from_utf8(rest) {
            Ok(valid) => break push(&mut json, valid),
            Err(error) => {
                let (valid, after) = rest.split_at(error.valid_up_to());
                push(&mut json, std::str::from_utf8(valid).unwrap());
                // A surrogate, as WTF-8 writes one: ED A0..BF xx.
                let unit = 0xD000 | (u32::from(after[1] & 0x3F) << 6) | u32::from(after[2] & 0x3F);
                json.push_str(&format!("\\u{unit:04x}"));
                rest = &after[3..];
            }
        }
    }
    json.push('"');
    model::read(&json)
        .and_then(|value| value.as_str().map(str::to_string))
        .unwrap_or_else(|| panic!("the key {json} reads back"))
}

/// serde_json's verdict on `text`, with no depth limit (RFC 8259 sets none): `Some` of
/// its value, read through the model's surrogate-safe spelling.
fn serde_reads(text: &str) -> Option<Value> {
    let readable = model::readable(text);
    let mut reader = serde_json::Deserializer::from_str(&readable);
    reader.disable_recursion_limit();
    let value = serde::Deserialize::deserialize(&mut reader).ok()?;
    reader.end().ok()?;
    Some(value)
}

/// Every reader on one text: each must agree with serde_json, in verdict and in value.
fn agree(text: &str) -> Result<(), String> {
    let oracle = serde_reads(text);
    let transform_value = is_value(text);
    if transform_value != oracle.is_some() {
        return Err(format!(
            "is a value: transform {transform_value}, serde_json {}",
            oracle.is_some()
        ));
    }
    let object = oracle.as_ref().and_then(Value::as_object);
    let transform = Object::parse(text);
    if transform.is_some() != object.is_some() {
        return Err(format!(
            "is an object: transform {}, serde_json {}",
            transform.is_some(),
            object.is_some()
        ));
    }
    // The proxy's strict reader is this reader, refusing what repeats a key.
    let strict = reasons_mcp::jsonrpc::unique(text);
    let repeats = transform.as_ref().is_some_and(|transform| {
        let mut seen = std::collections::HashSet::new();
        !transform.members.iter().all(|m| seen.insert(&m.key))
    });
    if strict.is_ok() != (object.is_some() && !repeats) {
        return Err(format!(
            "is an object with each key once: proxy {}, serde_json {}, repeats {repeats}",
            strict.is_ok(),
            object.is_some()
        ));
    }
    let (Some(transform), Some(object)) = (transform, object) else {
        return Ok(());
    };
    let ours: Vec<(&[u8], &str)> = transform
        .members
        .iter()
        .map(|m| (&*m.key, m.value))
        .collect();
    // A string value decodes to the characters serde_json reads in it.
    for (_, value) in &ours {
        if let Some(decoded) = reasons_transform::json::string(value)
            && serde_reads(value) != Some(Value::String(decoded.clone()))
        {
            return Err(format!("the string {value} decodes to {decoded:?}"));
        }
    }
    // The members, read as parsers read repeats (first position, last value), are the
    // oracle's value.
    let mut rebuilt = serde_json::Map::new();
    for (key, value) in &ours {
        let value = serde_reads(value)
            .ok_or_else(|| format!("a member's value {value:?} alone is not JSON"))?;
        rebuilt.insert(model_key(key), value);
    }
    if model::print(&Value::Object(rebuilt.clone())) != model::print(&Value::Object(object.clone()))
    {
        return Err(format!("value: members {rebuilt:?}, serde_json {object:?}"));
    }
    Ok(())
}

/// Runs `check` on a thread with room for serde_json's recursion through deep nesting.
fn deep_stack(check: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(512 << 20)
        .spawn(check)
        .unwrap()
        .join()
        .unwrap();
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn printed_trees_are_read_alike_by_every_reader(tree in tree(), seed in any::<u64>()) {
        // R10 R18: the readers that decide what a call or a message holds read it as
        // parsers do.
        let mut rng = fastrand::Rng::with_seed(seed);
        let mut text = String::new();
        print(&tree, &mut rng, &mut text);
        prop_assert!(serde_reads(&text).is_some(), "the printer writes JSON: {:?}", text);
        if let Err(why) = agree(&text) {
            return Err(TestCaseError::fail(format!("{text:?}: {why}")));
        }
        for _ in 0..8 {
            let mutated = mutate(&text, &mut rng);
            if let Err(why) = agree(&mutated) {
                return Err(TestCaseError::fail(format!("{mutated:?} (from {text:?}): {why}")));
            }
        }
    }
}

#[test]
fn nesting_past_128_is_read_as_any_other() {
    // R10 R20: RFC 8259 sets no depth; a server's parser reads these, so the readers do.
    deep_stack(|| {
        let mut checked = 0;
        for depth in [1, 127, 128, 129, 200, 1000, 20_000] {
            for (open, close) in [("[", "]"), ("{\"a\":", "}"), ("[{\"reason\":", "}]")] {
                let inner = format!("{}1{}", open.repeat(depth), close.repeat(depth));
                for text in [
                    format!(r#"{{"reason":"x","deep":{inner}}}"#),
                    format!(r#"{{"deep":{inner},"reason":"x"}}"#),
                    format!(r#"{{"deep":{inner}"#),
                    format!(r#"{{"deep":{inner}]}}"#),
                ] {
                    agree(&text).unwrap_or_else(|why| panic!("depth {depth} of {open}: {why}"));
                    checked += 1;
                }
            }
        }
        assert_eq!(checked, 7 * 3 * 4);
    });
}

/// Documents every reader must accept, in the spirit of JSONTestSuite's `y_` files.
const ACCEPT: [&str; 30] = [
    "{}",
    " \t\r\n{ } \t\r\n",
    r#"{"":0}"#,
    r#"{"a":"b","a":"c"}"#,
    r#"{"\u0000":"\u001f"}"#,
    r#"{"a":"\ud800"}"#,
    r#"{"\udfff\ud800":1}"#,
    r#"{"a":"\uD834\uDD1E"}"#,
    r#"{"a":"\/\\\"\b\f\n\r\t"}"#,
    r#"{"a":"\u00e9\u00E9\uABCD\uabcd"}"#,
    r#"{"a":-0,"b":-0.0,"c":0e0,"d":0E+0,"e":0e-0,"f":1E400}"#,
    r#"{"a":123456789012345678901234567890123456789}"#,
    r#"{"a":1.000000000000000000000000001}"#,
    r#"{"a":[],"b":{},"c":[[]],"d":[{}]}"#,
    r#"{"a":[null,true,false]}"#,
    "{\"a\":\"\u{7f}\u{80}\u{10FFFF}\"}",
    "{\"a\":\"\u{2028}\u{2029}\"}",
    "{\"\u{feff}\":1}",
    r#"{"a" : 1 , "b" : [ 1 , 2 ] }"#,
    "[1]",
    "\"reason\"",
    "0",
    "-1.5e-7",
    "null",
    "true",
    r#"[{"reason":1}]"#,
    r#""\u0072eason""#,
    "[\"\\ud800\"]",
    "[[[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]]]",
    r#"{"a":"reason","reason":{"reason":[]}}"#,
];

/// Documents every reader must refuse, in the spirit of JSONTestSuite's `n_` files:
/// among them, everything a lenient reader takes (R10).
const REJECT: [&str; 36] = [
    "",
    " ",
    "{",
    "}",
    r#"{"a"}"#,
    r#"{"a":}"#,
    r#"{"a":1,}"#,
    r#"{,"a":1}"#,
    r#"{"a":1 "b":2}"#,
    r#"{'a':1}"#,
    r#"{a:1}"#,
    r#"{"a":NaN}"#,
    r#"{"a":Infinity}"#,
    r#"{"a":-Infinity}"#,
    r#"{"a":01}"#,
    r#"{"a":-}"#,
    r#"{"a":1.}"#,
    r#"{"a":.5}"#,
    r#"{"a":+1}"#,
    r#"{"a":1e}"#,
    r#"{"a":0x10}"#,
    r#"{"a":"\x41"}"#,
    r#"{"a":"\u12"}"#,
    r#"{"a":"\uGHIJ"}"#,
    r#"{"a":"\'"}"#,
    "{\"a\":\"line\nbreak\"}",
    "{\"a\":\"tab\there\"}",
    "{\"k\u{1}\":1}",
    "\u{feff}{}",
    r#"{"a":tru}"#,
    r#"{"a":True}"#,
    r#"{"a":nul}"#,
    r#"{"a":1} {"b":2}"#,
    r#"{"a":1}x"#,
    r#"{"a":[1,]}"#,
    "{\"a\":1}\u{0}",
];

#[test]
fn the_corpus_is_read_as_it_must_be() {
    // R10 R18
    for text in ACCEPT {
        assert!(
            serde_reads(text).is_some(),
            "the corpus's oracle accepts {text:?}"
        );
        agree(text).unwrap_or_else(|why| panic!("{text:?}: {why}"));
        assert!(is_value(text), "{text:?}");
    }
    for text in REJECT {
        assert!(
            serde_reads(text).is_none(),
            "the corpus's oracle refuses {text:?}"
        );
        agree(text).unwrap_or_else(|why| panic!("{text:?}: {why}"));
        assert!(!is_value(text), "{text:?}");
        assert!(Object::read(text).is_err(), "{text:?}");
    }
}
