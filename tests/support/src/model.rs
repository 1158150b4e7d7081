//! An independent model of the contract's R1–R10, to judge the transform by: a small
//! reader of the four shapes over `serde_json::Value`, written from `CONTRACT.md` and
//! sharing no code with the guest. It says which names a listing augments, what each
//! declaration becomes (as a value), and what each call becomes.
//!
//! Values are read with `preserve_order` and `arbitrary_precision` (the workspace's
//! serde_json), so key order and every number's digits are kept, and a repeated key keeps
//! its first position and its last value, as R10 says parsers read it. serde_json refuses
//! a lone surrogate escape, which is valid JSON (R10), so text is read through
//! [`readable`], which turns each lone surrogate into a private character, the same way
//! on both sides of any comparison. It also refuses nesting past 128 levels, which
//! RFC 8259 does not, so its limit is lifted (`unbounded_depth`).
//!
//! serde_json re-spells an exponent (`1E400` prints as `1e+400`), so the values the model
//! expects, and the outputs they are compared with, are read by [`written`], which keeps
//! each number as it is spelt: R10 keeps a number's spelling, and a reader that printed
//! all spellings the same could not see one changed. Decisions (is it an object, is the
//! reason `null`) are made on the plain reading, [`read`].

use reasons_transform::{Options, Position};
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::{Map, Value, json};
use std::collections::BTreeSet;

/// Where [`readable`] puts a lone surrogate: U+D800 + n becomes U+10F800 + n, a private
/// character no test writes.
const LONE: u32 = 0x10F800 - 0xD800;

/// `text` with every lone surrogate escape (RFC 8259 allows one; serde_json refuses it)
/// turned into the escaped pair of a private character (see [`LONE`]), for serde_json to
/// read: a pair stays as it is, and text that was not JSON does not become JSON.
pub fn readable(text: &str) -> String {
    let unit = |at: usize| {
        let hex = text.get(at..at + 6)?.strip_prefix("\\u")?;
        u32::from_str_radix(hex, 16)
            .ok()
            .filter(|_| hex.bytes().all(|b| b.is_ascii_hexdigit()))
    };
    let is_high = |unit: u32| (0xD800..0xDC00).contains(&unit);
    let is_low = |unit: u32| (0xDC00..0xE000).contains(&unit);
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    while let Some(found) = text[at..].find('\\') {
        let escape = at + found;
        out.push_str(&text[at..escape]);
        match unit(escape) {
            Some(high) if is_high(high) && unit(escape + 6).is_some_and(is_low) => {
                out.push_str(&text[escape..escape + 12]);
                at = escape + 12;
            }
            Some(lone) if is_high(lone) || is_low(lone) => {
                let private = lone + LONE - 0x10000;
                let (high, low) = (0xD800 + (private >> 10), 0xDC00 + (private & 0x3FF));
                out.push_str(&format!("\\u{high:04x}\\u{low:04x}"));
                at = escape + 6;
            }
            // Any other escape, whole: a `\\` does not start the next one.
            _ => {
                let end = text[escape + 1..]
                    .chars()
                    .next()
                    .map_or(escape + 1, |c| escape + 1 + c.len_utf8());
                out.push_str(&text[escape..end]);
                at = end;
            }
        }
    }
    out.push_str(&text[at..]);
    out
}

/// Whether a string read through [`readable`] held a lone surrogate, which no tool name
/// (a WIT `string`) can carry.
pub fn held_lone_surrogate(text: &str) -> bool {
    text.chars()
        .any(|c| (0xD800 + LONE..=0xDFFF + LONE).contains(&u32::from(c)))
}

/// Where [`numbers_spelt`] puts a number's spelling: in a string after this private
/// character, which no test writes and [`LONE`]'s range does not reach.
const NUMBER: char = '\u{10F7FF}';

/// `text` read as JSON, if it is, nested as deep as it is.
pub fn read(text: &str) -> Option<Value> {
    let text = readable(text);
    let mut reader = serde_json::Deserializer::from_str(&text);
    reader.disable_recursion_limit();
    let value = Value::deserialize(&mut reader).ok()?;
    reader.end().ok()?;
    Some(value)
}

/// `text`, JSON, read with every number as a string of its spelling (see [`NUMBER`]):
/// for comparing values, never for deciding.
fn read_as_written(text: &str) -> Option<Value> {
    read(text)?;
    read(&numbers_spelt(text))
}

/// The value of `text` printed compactly, each number as it is spelt; `None` if `text` is
/// not JSON. What an output must print as to be the value the model expects.
pub fn written(text: &str) -> Option<String> {
    read_as_written(text).map(|value| print(&value))
}

/// JSON `text` with each number outside strings turned into a string of its spelling
/// after [`NUMBER`].
fn numbers_spelt(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if in_string {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
            out.push(c);
        } else if c == '-' || c.is_ascii_digit() {
            out.push('"');
            out.push(NUMBER);
            out.push(c);
            while let Some(next) = chars.next_if(|n| n.is_ascii_digit() || "+-.eE".contains(*n)) {
                out.push(next);
            }
            out.push('"');
        } else {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// Whether the contract's options section accepts `options`: a name of 1 to 64
/// characters of `a-z A-Z 0-9 _ . -`, a description not blank and at most 1024
/// characters, no empty tool name to leave alone.
pub fn accepts(options: &Options) -> bool {
    let name = &options.name;
    let name_ok = (1..=64).contains(&name.chars().count())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
    let description = &options.description;
    name_ok
        && !description.trim().is_empty()
        && description.chars().count() <= 1024
        && options.leave_alone.iter().all(|name| !name.is_empty())
}

/// A value as compact text: what two values must both print as to be equal, order kept.
pub fn print(value: &Value) -> String {
    serde_json::to_string(value).expect("a value prints")
}

/// What the model expects of one declaration.
#[derive(Debug, PartialEq)]
pub enum Declared {
    /// Passed through byte for byte (R4, R5, R7, leave-alone).
    Same,
    /// Augmented: the value it must read as.
    Augmented(Value),
}

/// What the model expects of one listing.
#[derive(Debug)]
pub struct Listing {
    pub declarations: Vec<Declared>,
    pub augmented: BTreeSet<String>,
}

/// What the model expects of one call.
#[derive(Debug, PartialEq)]
pub enum Called {
    /// Forwarded byte for byte.
    Same,
    /// Forwarded as arguments reading as this value, with the parameter gone.
    Stripped(Value),
    /// Refused: answered with an error, never forwarded (required mode, R6; text that is
    /// not JSON but could hold the parameter, R10).
    Refused,
}

/// One declaration, read.
enum Reading {
    /// It can take the parameter: its name, and what it becomes.
    Extends(String, Value),
    /// It is passed through; the names it could be called by (R7).
    Untouched(Vec<String>),
}

/// The model's listing of `declarations` under `options` (R1–R8).
pub fn list(options: &Options, declarations: &[String]) -> Listing {
    let readings: Vec<Reading> = declarations.iter().map(|d| reading(options, d)).collect();
    let doubtful: BTreeSet<String> = readings
        .iter()
        .flat_map(|reading| match reading {
            Reading::Untouched(names) => names.clone(),
            Reading::Extends(..) => Vec::new(),
        })
        .collect();
    let mut augmented = BTreeSet::new();
    let declarations = readings
        .into_iter()
        .map(|reading| match reading {
            Reading::Extends(name, value) if !doubtful.contains(&name) => {
                augmented.insert(name);
                Declared::Augmented(value)
            }
            _ => Declared::Same,
        })
        .collect();
    Listing {
        declarations,
        augmented,
    }
}

fn reading(options: &Options, text: &str) -> Reading {
    let Some(Value::Object(declaration)) = read(text) else {
        return Reading::Untouched(Vec::new());
    };
    match reading_of(options, &declaration) {
        // Built again from the numbers as spelt: a number is no container, key or
        // string the decision read, so the decision is the same.
        Reading::Extends(name, _) => match read_as_written(text) {
            Some(Value::Object(written)) => match reading_of(options, &written) {
                Reading::Extends(_, value) => Reading::Extends(name, value),
                Reading::Untouched(_) => unreachable!("a number's spelling decided {text}"),
            },
            _ => unreachable!("JSON read two ways: {text}"),
        },
        untouched => untouched,
    }
}

fn reading_of(options: &Options, declaration: &Map<String, Value>) -> Reading {
    let names = names(declaration);
    let untouched = || Reading::Untouched(names.clone());
    // R3: the shape is the one key of the four that the declaration has.
    let keys = ["function", "parameters", "input_schema", "inputSchema"];
    let present: Vec<&str> = keys
        .into_iter()
        .filter(|k| declaration.contains_key(*k))
        .collect();
    let [key] = present[..] else {
        return untouched();
    };
    let (container, schema_key, has_strict) = match key {
        "function" => (declaration.get("function"), "parameters", true),
        "parameters" => (
            Some(&Value::Object(declaration.clone())),
            "parameters",
            true,
        ),
        other => (Some(&Value::Object(declaration.clone())), other, false),
    };
    let Some(Value::Object(container)) = container else {
        return untouched();
    };
    let Some(Value::String(name)) = container.get("name") else {
        return untouched();
    };
    // R4: a name that holds a lone surrogate is no name a call can carry.
    if held_lone_surrogate(name) {
        return untouched();
    }
    if options.leave_alone.contains(name) {
        return untouched();
    }
    let strict = has_strict && container.get("strict") == Some(&Value::Bool(true));
    let Some(Value::Object(schema)) = container.get(schema_key) else {
        return untouched();
    };
    let Some(extended) = extend(options, schema, strict) else {
        return untouched();
    };
    let mut container = container.clone();
    container.insert(schema_key.into(), Value::Object(extended));
    let whole = match key {
        "function" => {
            let mut whole = declaration.clone();
            whole.insert("function".into(), Value::Object(container));
            whole
        }
        _ => container,
    };
    Reading::Extends(name.clone(), Value::Object(whole))
}

/// Every name a declaration could be called by: its own `name`, and its `function`'s.
fn names(declaration: &Map<String, Value>) -> Vec<String> {
    let nested = declaration.get("function").and_then(|f| f.get("name"));
    [declaration.get("name"), nested]
        .into_iter()
        .flatten()
        .filter_map(|name| name.as_str().map(str::to_string))
        .collect()
}

/// The schema with the parameter added, or `None` when it cannot take it (R4, R5).
fn extend(
    options: &Options,
    schema: &Map<String, Value>,
    strict: bool,
) -> Option<Map<String, Value>> {
    let param = &options.name;
    // R4
    if schema.get("type").is_some_and(|kind| kind != "object") {
        return None;
    }
    let properties = match schema.get("properties") {
        None => None,
        Some(Value::Object(properties)) => Some(properties),
        Some(_) => return None,
    };
    let required = match schema.get("required") {
        None => None,
        Some(value) => Some(strings(value)?),
    };
    // R5
    if owns(schema, properties, required.as_ref(), param) || branches_may_own(schema, param) {
        return None;
    }
    // R1, R6: the property; strict tools spell "optional" as nullable, except in
    // required mode, where the parameter is not optional.
    let nullable = strict && !options.required;
    let kind = if nullable {
        json!(["string", "null"])
    } else {
        json!("string")
    };
    let property = json!({"type": kind, "description": options.description});
    let mut schema = schema.clone();
    let mut properties = properties.cloned().unwrap_or_default();
    properties = match options.position {
        Position::Last => {
            properties.insert(param.clone(), property);
            properties
        }
        Position::First => {
            let mut first = Map::new();
            first.insert(param.clone(), property);
            first.extend(properties);
            first
        }
    };
    schema.insert("properties".into(), Value::Object(properties));
    if strict || options.required {
        let mut required = required.unwrap_or_default();
        required.push(param.clone());
        schema.insert("required".into(), json!(required));
    }
    Some(schema)
}

fn strings(value: &Value) -> Option<Vec<String>> {
    value
        .as_array()?
        .iter()
        .map(|item| item.as_str().map(str::to_string))
        .collect()
}

fn owns(
    schema: &Map<String, Value>,
    properties: Option<&Map<String, Value>>,
    required: Option<&Vec<String>>,
    param: &str,
) -> bool {
    schema.contains_key("$ref")
        || properties.is_some_and(|properties| properties.contains_key(param))
        || required.is_some_and(|required| required.iter().any(|name| name == param))
}

/// Whether a branch of a top-level `allOf`/`anyOf`/`oneOf` declares, requires or may
/// refer to the parameter; a composite that is not a list of schemas may.
fn branches_may_own(schema: &Map<String, Value>, param: &str) -> bool {
    ["allOf", "anyOf", "oneOf"]
        .iter()
        .filter_map(|keyword| schema.get(*keyword))
        .any(|branches| match branches.as_array() {
            None => true,
            Some(branches) => branches.iter().any(|branch| match branch {
                Value::Bool(_) => false,
                Value::Object(branch) => {
                    let properties = match branch.get("properties") {
                        None => None,
                        Some(Value::Object(properties)) => Some(properties),
                        Some(_) => return true,
                    };
                    let required = match branch.get("required") {
                        None => None,
                        Some(value) => match strings(value) {
                            None => return true,
                            Some(required) => Some(required),
                        },
                    };
                    owns(branch, properties, required.as_ref(), param)
                }
                _ => true,
            }),
        })
}

/// What the model expects of a call to `tool` with `arguments` after `listing` (R9, R10).
pub fn call(options: &Options, listing: &Listing, tool: &str, arguments: &str) -> Called {
    if !listing.augmented.contains(tool) {
        return Called::Same;
    }
    // Whether the reason is there, and if so whether it is `null`.
    let reason_is_null = match read(arguments) {
        Some(Value::Object(members)) => members.get(&options.name).map(Value::is_null),
        // JSON that is not an object, and no arguments at all.
        Some(_) => None,
        None if arguments.trim_matches([' ', '\t', '\n', '\r']).is_empty() => None,
        // R10: not JSON, and a lenient reader could find the parameter in it.
        None if arguments.contains(options.name.as_str()) || arguments.contains('\\') => {
            return Called::Refused;
        }
        None => None,
    };
    match reason_is_null {
        Some(true) if options.required => Called::Refused,
        Some(_) => {
            let Some(Value::Object(mut members)) = read_as_written(arguments) else {
                unreachable!("JSON read two ways: {arguments}")
            };
            members.shift_remove(&options.name);
            Called::Stripped(Value::Object(members))
        }
        None if options.required => Called::Refused,
        None => Called::Same,
    }
}

/// Whether `text` has whitespace outside its strings: a compact text has none.
pub fn has_insignificant_whitespace(text: &str) -> bool {
    let (mut in_string, mut escaped) = (false, false);
    text.chars().any(|c| {
        let outside = !in_string;
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            _ => {}
        }
        outside && matches!(c, ' ' | '\t' | '\n' | '\r')
    })
}

/// The top-level keys of the object `text`, repeats included, in order.
pub fn top_level_keys(text: &str) -> Vec<String> {
    struct Keys;
    impl<'de> Visitor<'de> for Keys {
        type Value = Vec<String>;
        fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
            formatter.write_str("an object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Vec<String>, A::Error> {
            let mut keys = Vec::new();
            while let Some(key) = map.next_key::<String>()? {
                map.next_value::<IgnoredAny>()?;
                keys.push(key);
            }
            Ok(keys)
        }
    }
    let text = readable(text);
    let mut reader = serde_json::Deserializer::from_str(&text);
    reader.disable_recursion_limit();
    reader.deserialize_map(Keys).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_reads_the_contract_s_examples() {
        let options = Options::default();
        let listing = list(
            &options,
            &[
                r#"{"name":"a","inputSchema":{"type":"object"}}"#.into(),
                r#"{"name":"b","inputSchema":{"properties":{"reason":{}}}}"#.into(),
                r#"{"type":"function","function":{"name":"c","parameters":{},"strict":true}}"#
                    .into(),
                r#"{"name":"a","input_schema":{"type":"string"}}"#.into(),
            ],
        );
        assert_eq!(listing.declarations.len(), 4);
        assert_eq!(listing.augmented, BTreeSet::from(["c".to_string()]));
        let Declared::Augmented(c) = &listing.declarations[2] else {
            panic!()
        };
        assert_eq!(c["function"]["parameters"]["required"], json!(["reason"]));
        let Called::Stripped(value) =
            call(&options, &listing, "c", r#"{"x":1,"reason":"y","x":2}"#)
        else {
            panic!("stripped")
        };
        assert_eq!(Some(print(&value)), written(r#"{"x":2}"#));
        assert_eq!(
            call(&options, &listing, "a", r#"{"reason":1}"#),
            Called::Same
        );
        // R10: not JSON, and holding the name or a backslash.
        for text in [
            "{\"reason\":NaN}",
            "{\"a\":\"\\x\"}",
            "\u{feff}{\"reason\":1}",
        ] {
            assert_eq!(
                call(&options, &listing, "c", text),
                Called::Refused,
                "{text:?}"
            );
        }
        for text in ["{\"a\":NaN}", "[\"reason\"]", " ", "\"\\u0072\""] {
            assert_eq!(
                call(&options, &listing, "c", text),
                Called::Same,
                "{text:?}"
            );
        }
        assert_eq!(
            readable(r#""\ud800\uDC0 \u0041 \\ud800 \ud83d\ude00 \udfff""#),
            r#""\udbfe\udc00\uDC0 \u0041 \\ud800 \ud83d\ude00 \udbff\udfff""#
        );
        assert!(held_lone_surrogate(
            read(r#""a\udc00""#).unwrap().as_str().unwrap()
        ));
        assert!(!held_lone_surrogate(
            read(r#""\ud83d\ude00""#).unwrap().as_str().unwrap()
        ));
        assert!(has_insignificant_whitespace(r#"{"a": 1}"#));
        assert!(!has_insignificant_whitespace(r#"{"a":" 1"}"#));
        assert_eq!(
            top_level_keys(r#"{"a":1,"b":{"a":2},"a":3}"#),
            ["a", "b", "a"]
        );
    }

    #[test]
    fn the_model_keeps_each_number_as_it_is_spelt() {
        // R10: a stripped call keeps `1E400` as `1E400`; `1e400` would be another spelling.
        let options = Options::default();
        let listing = list(&options, &[r#"{"name":"t","inputSchema":{}}"#.into()]);
        let Called::Stripped(value) = call(
            &options,
            &listing,
            "t",
            r#"{"a":[1E400,-0.0e-0],"reason":1,"b":" 1E4 \" 2"}"#,
        ) else {
            panic!("stripped")
        };
        assert_eq!(
            written(r#"{"a":[1E400,-0.0e-0],"b":" 1E4 \" 2"}"#),
            Some(print(&value))
        );
        assert_ne!(
            written(r#"{"a":[1e400,-0.0e-0],"b":" 1E4 \" 2"}"#),
            Some(print(&value))
        );
        assert_ne!(written("[1e+400]"), written("[1E400]"));
        assert_eq!(written("[1E400"), None);
        // The spelling changes no decision: `required` holding a number is no list of names.
        let listing = list(
            &options,
            &[r#"{"name":"t","inputSchema":{"required":[1]}}"#.into()],
        );
        assert!(listing.augmented.is_empty());
    }

    #[test]
    fn the_model_reads_nesting_of_any_depth() {
        // R10: RFC 8259 sets no depth, and a server's parser may read any.
        let deep = format!(
            r#"{{"reason":1,"a":{}1{}}}"#,
            "[".repeat(500),
            "]".repeat(500)
        );
        assert!(read(&deep).is_some());
        assert_eq!(top_level_keys(&deep), ["reason", "a"]);
        let objects = format!("{}1{}", r#"{"a":"#.repeat(300), "}".repeat(300));
        assert!(written(&objects).is_some());
    }

    #[test]
    fn the_model_accepts_options_at_their_bounds() {
        let with = |change: fn(&mut Options)| {
            let mut options = Options::default();
            change(&mut options);
            accepts(&options)
        };
        assert!(with(|o| o.name = "a".repeat(64)));
        assert!(!with(|o| o.name = "a".repeat(65)));
        assert!(!with(|o| o.name = String::new()));
        assert!(with(|o| o.name = "a.B-9_".into()));
        assert!(!with(|o| o.name = "caf\u{e9}".into()));
        assert!(with(|o| o.description = "\u{e9}".repeat(1024)));
        assert!(!with(|o| o.description = "x".repeat(1025)));
        assert!(!with(|o| o.description = " \t\n".into()));
        assert!(!with(|o| o.leave_alone = vec!["t".into(), String::new()]));
    }
}
