//! Reading JSON objects as servers' parsers read them, for the checks that must not be
//! fooled by spelling: keys are decoded (`"\u0072eason"` is `reason`) to WTF-8, so that a
//! lone surrogate escape, which RFC 8259 allows and servers' parsers accept, is read like
//! any other character instead of making the text "not JSON"; every value is its exact
//! text; repeated keys are all kept, for the caller to judge.

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::fmt;

/// One member of an object: its key, decoded (borrowed from the text when it has no
/// escapes), and its value's exact text.
pub type Member<'a> = (Cow<'a, [u8]>, &'a RawValue);

/// `text`'s members in order, repeats included; `None` when it is not one JSON object.
pub fn members(text: &str) -> Option<Vec<Member<'_>>> {
    // serde_json reading a key as bytes does not refuse a raw control character in it,
    // which RFC 8259 and servers' strict parsers do (found by `tests/json_readers.rs`):
    // the grammar is the transform's reader's to decide, as it is for a call's text.
    if !reasons_transform::json::is_value(text) {
        return None;
    }
    serde_json::from_str::<Members>(text)
        .ok()
        .map(|members| members.0)
}

/// The value of the JSON string `value`, as WTF-8; `None` for any other value.
pub fn string(value: &RawValue) -> Option<Vec<u8>> {
    let mut reader = serde_json::Deserializer::from_str(value.get());
    Bytes::deserialize(&mut reader)
        .ok()
        .map(|bytes| bytes.0.into_owned())
}

/// The characters of the JSON string whose text is `value`; `None` for another value,
/// or for a string no header could carry (a lone surrogate is no character).
pub fn text(value: &str) -> Option<String> {
    let value: &RawValue = serde_json::from_str(value).ok()?;
    String::from_utf8(string(value)?).ok()
}

/// Where `part`, a slice of `whole` (as serde's borrowed values are), begins in it.
pub fn offset(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

struct Members<'a>(Vec<Member<'a>>);

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Entries;
        impl<'de> Visitor<'de> for Entries {
            type Value = Members<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut members = Vec::new();
                while let Some(Bytes(key)) = map.next_key()? {
                    members.push((key, map.next_value()?));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(Entries)
    }
}

/// A JSON string as bytes: serde_json decodes it to WTF-8, lone surrogates included;
/// borrowed from the text when it has no escapes.
struct Bytes<'a>(Cow<'a, [u8]>);

impl<'de> Deserialize<'de> for Bytes<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Decoded;
        impl<'de> Visitor<'de> for Decoded {
            type Value = Bytes<'de>;
            fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
                formatter.write_str("a JSON string")
            }
            fn visit_borrowed_bytes<E>(self, bytes: &'de [u8]) -> Result<Bytes<'de>, E> {
                Ok(Bytes(Cow::Borrowed(bytes)))
            }
            fn visit_bytes<E>(self, bytes: &[u8]) -> Result<Bytes<'de>, E> {
                Ok(Bytes(Cow::Owned(bytes.to_vec())))
            }
        }
        deserializer.deserialize_bytes(Decoded)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_lone_surrogates_included_and_repeats_kept() {
        // R10
        let members = members(r#" {"\u0072eason":1, "\ud800" : [ 2 ], "a":3, "a":4} "#).unwrap();
        let keys: Vec<&[u8]> = members.iter().map(|(key, _)| key.as_ref()).collect();
        assert_eq!(keys, [&b"reason"[..], b"\xed\xa0\x80", b"a", b"a"]);
        assert_eq!(members[1].1.get(), "[ 2 ]");
        for text in ["[]", "1", "{", "{} x", "\u{feff}{}"] {
            assert!(super::members(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn strings_are_decoded_and_other_values_are_not_strings() {
        let value = |text| serde_json::from_str::<&RawValue>(text).unwrap();
        assert_eq!(string(value(r#""tools\/call""#)).unwrap(), b"tools/call");
        assert_eq!(string(value(r#""\ud83d""#)).unwrap(), b"\xed\xa0\xbd");
        assert!(string(value("1")).is_none());
    }
}
