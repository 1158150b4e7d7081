//! Reading JSON text without re-spelling it.
//!
//! The layer edits declarations and arguments it does not own, so it never round-trips
//! them through a value type: serde_json validates the text and hands back each member's
//! value as a [`RawValue`], a slice of the original text. Declarations are then edited by
//! inserting text at offsets into those slices (everything else stays byte for byte), and
//! arguments are re-assembled from the members' own text (every number keeps its digits).

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

/// One member of a JSON object, as it stands in the text.
pub(crate) struct Member<'a> {
    /// The key, unescaped: `"\u0072eason"` is `reason`. Borrowed from the text unless
    /// it had escapes.
    pub key: Cow<'a, str>,
    /// The value's text, a slice of the object's text.
    pub value: &'a RawValue,
}

/// A JSON object in a text: its own slice and its members in order, repeats included.
pub(crate) struct Object<'a> {
    pub text: &'a str,
    pub members: Vec<Member<'a>>,
}

impl<'a> Object<'a> {
    /// Reads `text` as one JSON object; `None` if it is anything else or not JSON.
    pub fn parse(text: &'a str) -> Option<Self> {
        let Members(members) = serde_json::from_str(text).ok()?;
        Some(Object {
            text: text.trim_matches(is_json_whitespace),
            members,
        })
    }

    /// The value of `key` as JSON parsers read it: the last one when the key repeats.
    pub fn get(&self, key: &str) -> Option<&'a RawValue> {
        self.members
            .iter()
            .rev()
            .find(|member| member.key == key)
            .map(|member| member.value)
    }

    /// Whether `key` is a member.
    pub fn has(&self, key: &str) -> bool {
        self.members.iter().any(|member| member.key == key)
    }

    /// The member `key` read as an object; `None` when absent, `Some(None)` when not an object.
    pub fn object(&self, key: &str) -> Option<Option<Object<'a>>> {
        self.get(key).map(|value| Object::parse(value.get()))
    }
}

/// The value of a JSON string; `None` for any other value.
pub(crate) fn string(value: &RawValue) -> Option<String> {
    serde_json::from_str(value.get()).ok()
}

/// The values of a JSON list of strings; `None` for any other value.
pub(crate) fn strings(value: &RawValue) -> Option<Vec<String>> {
    serde_json::from_str(value.get()).ok()
}

/// Appends `text` to `out` as a JSON string.
pub(crate) fn push_string(out: &mut String, text: &str) {
    if !text.contains(|c: char| c == '"' || c == '\\' || c < ' ') {
        // Nothing to escape: the common case, without serde_json's allocation.
        out.push('"');
        out.push_str(text);
        out.push('"');
        return;
    }
    // Serialising a `&str` cannot fail; an empty string would still be valid JSON text.
    out.push_str(&serde_json::to_string(text).unwrap_or_default());
}

/// Where `part`, a slice of `whole`, starts in it.
pub(crate) fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

/// Appends `value`, JSON text serde_json has already validated, without insignificant
/// whitespace. `None` when a string in it escapes half of a surrogate pair: serde_json
/// skips over such escapes in values it does not decode, but the text is not valid JSON
/// that any parser can read back, so the caller must leave the whole text alone.
pub(crate) fn push_compact(out: &mut String, value: &str) -> Option<()> {
    let bytes = value.as_bytes();
    let mut run = 0;
    let mut at = 0;
    let mut in_string = false;
    while let Some(&byte) = bytes.get(at) {
        if in_string {
            match byte {
                b'"' => in_string = false,
                b'\\' => {
                    at += escape_len(bytes.get(at..)?)?;
                    continue;
                }
                // Nothing in a string is dropped: jump to its next quote or escape.
                _ => {
                    let rest = bytes.get(at..)?;
                    at += memchr::memchr2(b'"', b'\\', rest).unwrap_or(rest.len());
                    continue;
                }
            }
        } else if is_json_whitespace(char::from(byte)) {
            out.push_str(value.get(run..at)?);
            run = at + 1;
        } else if byte == b'"' {
            in_string = true;
        }
        at += 1;
    }
    out.push_str(value.get(run..)?);
    Some(())
}

/// The length of the escape at the start of `bytes` (a `\` in a validated string), or
/// `None` when it is a `\u` escape of a lone surrogate.
fn escape_len(bytes: &[u8]) -> Option<usize> {
    if bytes.get(1) != Some(&b'u') {
        return Some(2);
    }
    match hex_unit(bytes.get(2..6)?)? {
        0xD800..=0xDBFF => {
            let low = bytes.get(6..12)?;
            let is_low =
                low.starts_with(b"\\u") && matches!(hex_unit(low.get(2..)?)?, 0xDC00..=0xDFFF);
            is_low.then_some(12)
        }
        0xDC00..=0xDFFF => None,
        _ => Some(6),
    }
}

/// The code unit spelled by four hex digits.
fn hex_unit(digits: &[u8]) -> Option<u16> {
    u16::from_str_radix(core::str::from_utf8(digits).ok()?, 16).ok()
}

/// JSON's four whitespace characters (RFC 8259 §2), and no others.
fn is_json_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r')
}

/// Deserialises an object into its members, in order, repeats included.
struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let mut members = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value::<&'de RawValue>()?;
            members.push(Member { key, value });
        }
        Ok(Members(members))
    }
}

/// A key, borrowed from the text when it has no escapes to decode. (Serde's own
/// `Cow<str>` always allocates.)
struct Key<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_str(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_borrowed_str<E>(self, key: &'de str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_str<E>(self, key: &str) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(key.into())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &str) -> Option<String> {
        let mut out = String::new();
        push_compact(&mut out, text).map(|()| out)
    }

    #[test]
    fn members_keep_order_repeats_and_unescape_keys() {
        let object = Object::parse(r#" {"b":1, "\u0072eason" : [1, 2], "b":2} "#).unwrap();
        let keys: Vec<_> = object.members.iter().map(|m| &*m.key).collect();
        assert_eq!(keys, ["b", "reason", "b"]);
        assert_eq!(object.get("b").unwrap().get(), "2");
        assert_eq!(object.get("reason").unwrap().get(), "[1, 2]");
        assert!(object.text.starts_with('{') && object.text.ends_with('}'));
    }

    #[test]
    fn only_objects_are_objects() {
        for text in ["", " ", "[]", "1", "\"x\"", "null", "{", "{}x", "{\"a\":}"] {
            assert!(Object::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn compacting_keeps_strings_and_numbers_exactly() {
        assert_eq!(
            compact("{ \"a b\" : [ 1.10 , -0, 1e400 ],\n\t\"c\" : \"x \\\" y\" }").unwrap(),
            r#"{"a b":[1.10,-0,1e400],"c":"x \" y"}"#
        );
        assert_eq!(compact(r#""\ud83d\ude00""#).unwrap(), r#""\ud83d\ude00""#);
    }

    #[test]
    fn compacting_refuses_lone_surrogates() {
        for text in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#"["\ud800x"]"#,
        ] {
            assert!(compact(text).is_none(), "{text}");
        }
    }
}
