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
    /// it had escapes. It is WTF-8, not always UTF-8: RFC 8259 lets a key hold a lone
    /// surrogate escape (`"\ud800"`), which servers' parsers read (R10).
    pub key: Cow<'a, [u8]>,
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
            .find(|member| *member.key == *key.as_bytes())
            .map(|member| member.value)
    }

    /// Whether `key` is a member.
    pub fn has(&self, key: &str) -> bool {
        self.members
            .iter()
            .any(|member| *member.key == *key.as_bytes())
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
/// whitespace. Escapes are copied as written, a lone surrogate's among them (R10).
/// `None` only if `value` was not validated JSON after all.
pub(crate) fn push_compact(out: &mut String, value: &str) -> Option<()> {
    let bytes = value.as_bytes();
    let mut run = 0;
    let mut at = 0;
    let mut in_string = false;
    while let Some(&byte) = bytes.get(at) {
        if in_string {
            match byte {
                b'"' => in_string = false,
                // `\uXXXX` or a one-character escape: skipped whole, so that an escaped
                // quote does not end the string.
                b'\\' => {
                    at += if bytes.get(at + 1) == Some(&b'u') {
                        6
                    } else {
                        2
                    };
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

/// A key, borrowed from the text when it has no escapes to decode. Read as bytes, which
/// serde_json decodes to WTF-8, so that a lone surrogate escape is a key like any other
/// (as a string it would be refused). (Serde's own `Cow<[u8]>` always allocates.)
struct Key<'a>(Cow<'a, [u8]>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(KeyVisitor)
    }
}

struct KeyVisitor;

impl<'de> Visitor<'de> for KeyVisitor {
    type Value = Key<'de>;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_borrowed_bytes<E>(self, key: &'de [u8]) -> Result<Self::Value, E> {
        Ok(Key(Cow::Borrowed(key)))
    }

    fn visit_bytes<E>(self, key: &[u8]) -> Result<Self::Value, E> {
        Ok(Key(Cow::Owned(key.into())))
    }
}

/// Appends `key`, as [`Member::key`] holds it, as a JSON string: a lone surrogate (WTF-8's
/// three bytes `ED A0..BF xx`) goes back as the `\uXXXX` escape it was read from.
pub(crate) fn push_key(out: &mut String, key: &[u8]) {
    if let Ok(key) = core::str::from_utf8(key) {
        return push_string(out, key);
    }
    out.push('"');
    let mut rest = key;
    while !rest.is_empty() {
        let valid = match core::str::from_utf8(rest) {
            Ok(valid) => valid,
            // `valid_up_to` is a char boundary by definition.
            Err(error) => core::str::from_utf8(rest.get(..error.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
        };
        let mut quoted = String::new();
        push_string(&mut quoted, valid);
        out.push_str(
            quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default(),
        );
        rest = rest.get(valid.len()..).unwrap_or_default();
        let Some((surrogate, after)) = split_surrogate(rest) else {
            // Only WTF-8 that serde_json wrote gets here, so this is the end.
            break;
        };
        out.push_str(&alloc::format!("\\u{surrogate:04x}"));
        rest = after;
    }
    out.push('"');
}

/// The surrogate WTF-8 spells at the start of `bytes`, and the bytes after it.
fn split_surrogate(bytes: &[u8]) -> Option<(u32, &[u8])> {
    match bytes {
        [0xED, second @ 0xA0..=0xBF, third @ 0x80..=0xBF, after @ ..] => Some((
            0xD000 | (u32::from(second & 0x3F) << 6) | u32::from(third & 0x3F),
            after,
        )),
        _ => None,
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
        assert_eq!(keys, [&b"b"[..], b"reason", b"b"]);
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
    fn compacting_keeps_lone_surrogates_as_written() {
        // R10
        for text in [
            r#""\ud800""#,
            r#""\udc00""#,
            r#""\ud800\u0041""#,
            r#"["\ud800x"]"#,
        ] {
            assert_eq!(compact(text).as_deref(), Some(text), "{text}");
        }
    }

    #[test]
    fn a_key_with_a_lone_surrogate_is_written_back_as_read() {
        // R10
        let object = Object::parse(r#"{"a\ud800\"b":1,"\udfff":2}"#).unwrap();
        let written: Vec<String> = object
            .members
            .iter()
            .map(|member| {
                let mut out = String::new();
                push_key(&mut out, &member.key);
                out
            })
            .collect();
        assert_eq!(written, [r#""a\ud800\"b""#, r#""\udfff""#]);
    }
}
