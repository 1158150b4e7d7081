//! Calls on their way down: a top-level reason comes off, and nothing else changes
//! (R9, R10); text that could hold one but is not JSON is not passed on at all.

use crate::json::{self, Fault, Object};
use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;
use memchr::memmem::Finder;

/// What a call's arguments hold of the parameter.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Param {
    /// No top-level member by that name: the call is forwarded untouched. Valid JSON
    /// that is not an object, and text that is not JSON but holds neither the name nor a
    /// backslash, are read so too: no reader could find the member in them.
    Absent,
    /// Text that is not JSON, in which a lenient reader could find the member: the
    /// call is not forwarded (R10).
    Unreadable(Fault),
    /// The member is there.
    Present {
        /// The arguments without it, compact, every other member kept by value and order.
        without: String,
        /// Whether its (last) value was `null`.
        is_null: bool,
    },
}

/// The scan that decides, without parsing, that a call's text cannot hold the member:
/// it holds neither the name nor a backslash, and only an escape can spell the name's
/// characters otherwise (see `Options::validate`). Built once per name: building a
/// searcher costs more than running it over a short call.
#[derive(Clone, Debug)]
pub(crate) struct Scan {
    name: Finder<'static>,
}

impl Scan {
    pub(crate) fn new(name: &str) -> Scan {
        Scan {
            name: Finder::new(name).into_owned(),
        }
    }

    fn may_hold(&self, text: &str) -> bool {
        let text = text.as_bytes();
        // The backslash, the rarer byte, first, with the single-byte scan.
        (memchr::memchr(b'\\', text).is_some() && !cfg!(feature = "mutant-scan-name-only"))
            || self.name.find(text).is_some()
    }
}

/// Looks for the top-level member `name` in the arguments' text; `scan` is `name`'s.
pub(crate) fn find(text: &str, name: &str, scan: &Scan) -> Param {
    if !scan.may_hold(text) {
        return Param::Absent;
    }
    let object = match Object::read(text) {
        Ok(object) => object,
        Err(_) if json::is_value(text) => return Param::Absent,
        Err(_) if cfg!(feature = "mutant-forward-unreadable") => return Param::Absent,
        Err(at) => return Param::Unreadable(Fault::at(text, at)),
    };
    let Some(reason) = object.get(name) else {
        return Param::Absent;
    };
    match without(&object, name) {
        Some(without) => Param::Present {
            without,
            is_null: reason == "null",
        },
        None => Param::Absent,
    }
}

/// The object re-serialised compactly without `name`: each other key at its first
/// position with its last value, as JSON parsers read repeated keys. Escapes, a lone
/// surrogate's among them, are kept (R10). `None` only for text that is not JSON.
fn without(object: &Object<'_>, name: &str) -> Option<String> {
    let mut kept: Vec<(&[u8], &str)> = Vec::with_capacity(object.members.len());
    // Where each key was first kept. A short object (the usual) is searched in place; a
    // long one gets a map, so that a call with thousands of keys stays linear.
    let mut first_at: Option<BTreeMap<&[u8], usize>> =
        (object.members.len() > 16).then(BTreeMap::new);
    let mut dropped = String::new();
    for member in &object.members {
        let key = &*member.key;
        if key == name.as_bytes() {
            // Dropped, but still checked: invalid text is left alone whole.
            dropped.clear();
            json::push_compact(&mut dropped, member.value)?;
            continue;
        }
        let seen = match &first_at {
            Some(map) => map.get(key).copied(),
            None => kept.iter().position(|(kept, _)| *kept == key),
        };
        match seen {
            Some(at) => {
                let (_, old) = kept.get_mut(at)?;
                dropped.clear();
                json::push_compact(&mut dropped, old)?;
                if !cfg!(feature = "mutant-repeat-first-value") {
                    *old = member.value;
                }
            }
            None => {
                if let Some(map) = &mut first_at {
                    map.insert(key, kept.len());
                }
                kept.push((key, member.value));
            }
        }
    }
    if cfg!(feature = "mutant-sort-keys") {
        kept.sort_by_key(|(key, _)| *key);
    }
    let mut out = String::with_capacity(object.text.len());
    out.push('{');
    for (at, (key, value)) in kept.into_iter().enumerate() {
        if at > 0 {
            out.push(',');
        }
        json::push_key(&mut out, key);
        out.push(':');
        if cfg!(feature = "mutant-drop-negative-zero") && value == "-0" {
            out.push('0');
            continue;
        }
        if cfg!(feature = "mutant-strip-nested")
            && let Some(nested) = Object::parse(value)
            && nested.has(name)
        {
            out.push_str(&without(&nested, name)?);
            continue;
        }
        json::push_compact(&mut out, value)?;
    }
    out.push('}');
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strip(text: &str) -> Option<String> {
        match find(text, "reason", &Scan::new("reason")) {
            Param::Absent => None,
            Param::Present { without, .. } => Some(without),
            Param::Unreadable(fault) => panic!("{text:?} refused: {fault:?}"),
        }
    }

    #[test]
    fn only_a_top_level_reason_comes_off() {
        // R9
        assert_eq!(strip(r#"{"a":1,"reason":"why"}"#).unwrap(), r#"{"a":1}"#);
        assert_eq!(strip(r#"{"a":{"reason":"deep"}}"#), None);
        assert_eq!(strip(r#"{"a":"reason"}"#), None);
        assert_eq!(strip(r#"["reason"]"#), None);
        for value in ["null", "3", "{\"x\":[1]}", "[]", "true"] {
            assert_eq!(
                strip(&alloc::format!(r#"{{"reason":{value},"b":2}}"#)).unwrap(),
                r#"{"b":2}"#
            );
        }
    }

    #[test]
    fn numbers_keep_their_digits() {
        // R10
        let text = r#"{"big":123456789012345678901234567890,"a":1.10,"z":-0,"e":1e400,"f":0.30000000000000004,"reason":"x"}"#;
        assert_eq!(
            strip(text).unwrap(),
            r#"{"big":123456789012345678901234567890,"a":1.10,"z":-0,"e":1e400,"f":0.30000000000000004}"#
        );
    }

    #[test]
    fn repeated_keys_keep_first_position_and_last_value() {
        // R10
        assert_eq!(
            strip(r#"{"a":1,"reason":"x","b":2,"a":3,"reason":"y"}"#).unwrap(),
            r#"{"a":3,"b":2}"#
        );
    }

    #[test]
    fn a_long_object_keeps_first_positions_and_last_values_too() {
        // R10, past the 16 members a short object is searched in place for.
        let mut text = String::from("{");
        for at in 0..20 {
            text.push_str(&alloc::format!(r#""k{at}":{at},"#));
        }
        text.push_str(r#""reason":"x","k5":"five","\u006b0":"zero","k19":[19],"reason":null}"#);
        let mut expected = String::from(r#"{"k0":"zero","#);
        for at in 1..19 {
            if at == 5 {
                expected.push_str(r#""k5":"five","#);
            } else {
                expected.push_str(&alloc::format!(r#""k{at}":{at},"#));
            }
        }
        expected.push_str(r#""k19":[19]}"#);
        assert_eq!(strip(&text).unwrap(), expected);
    }

    #[test]
    fn escaped_keys_are_the_key() {
        // R10
        assert_eq!(
            strip(r#"{"\u0072eason":"x","k\u00e9":"\u00e9"}"#).unwrap(),
            r#"{"ké":"\u00e9"}"#
        );
    }

    #[test]
    fn json_that_is_not_an_object_is_untouched() {
        // R10
        for text in [
            "",
            "  \n",
            "null",
            "[1]",
            "\"reason\"",
            "[{\"reason\":1}]",
            "\"\\u0072\"",
        ] {
            assert_eq!(strip(text), None, "{text:?}");
        }
    }

    #[test]
    fn text_no_reader_could_find_the_name_in_is_untouched() {
        // R10: neither the name nor a backslash, so no reader, however lenient, finds it.
        for text in [
            "{\"a\":NaN}",
            "{'a':1}",
            "\u{feff}{}",
            "{\"a\":\"x\ny\"}",
            "not json",
        ] {
            assert_eq!(strip(text), None, "{text:?}");
        }
    }

    #[test]
    fn text_a_lenient_reader_could_find_the_name_in_is_refused() {
        // R10: what Python's `json.loads` (NaN, Infinity), `strict=False` (raw control
        // characters) and a BOM-skipping `JSON.parse` read, and any text with a backslash.
        for (text, at) in [
            ("{\"reason\":\"x\",\"a\":NaN}", 18),
            ("{\"a\":Infinity,\"reason\":1}", 5),
            ("{\"reason\":\"line one\nline two\"}", 19),
            ("{\"reason\":\"tab\t\"}", 14),
            ("\u{feff}{\"reason\":\"x\"}", 0),
            ("{\"reason\":", 10),
            ("{\"reason\":1} trailing", 13),
            ("{\"a\":\"\\x\"}", 7),
            ("{\"\\u0072eason\":\"x\",}", 19),
        ] {
            let Param::Unreadable(fault) = find(text, "reason", &Scan::new("reason")) else {
                panic!("{text:?} was not refused");
            };
            assert_eq!(fault.at, at, "{text:?}: {}", fault.what);
        }
    }

    #[test]
    fn lone_surrogates_are_json_and_kept_as_written() {
        // R10: a reason cut mid-emoji is still valid JSON to servers' parsers, so the
        // reason beside it comes off and the escape stays.
        for (text, expected) in [
            (r#"{"reason":"x","a":"\ud800"}"#, r#"{"a":"\ud800"}"#),
            (r#"{"reason":"\udc00"}"#, "{}"),
            (r#"{"reason":"why \ud83d","a":1}"#, r#"{"a":1}"#),
            (r#"{"a":"\ud800","a":1,"reason":1}"#, r#"{"a":1}"#),
            (
                r#"{"a": ["\ud800x", "\udfff\ud800"], "reason":1}"#,
                r#"{"a":["\ud800x","\udfff\ud800"]}"#,
            ),
            (
                r#"{"\ud800":1,"reason":1,"k\udbff\u00e9":2}"#,
                r#"{"\ud800":1,"k\udbffé":2}"#,
            ),
        ] {
            assert_eq!(strip(text).as_deref(), Some(expected), "{text}");
        }
    }

    #[test]
    fn whitespace_goes_and_strings_stay() {
        // R10
        assert_eq!(
            strip("{ \"a\" : [ 1 , { \"b\" : \"x  y\\n\" } ] ,\n \"reason\" : \"z\" }").unwrap(),
            r#"{"a":[1,{"b":"x  y\n"}]}"#
        );
    }

    #[test]
    fn null_is_reported() {
        assert_eq!(
            find(r#"{"reason":null}"#, "reason", &Scan::new("reason")),
            Param::Present {
                without: "{}".into(),
                is_null: true
            }
        );
    }
}
