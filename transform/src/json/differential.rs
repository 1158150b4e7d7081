//! The reader held to serde_json's, which did its job before: over every short text
//! from JSON's alphabet and over random longer ones, both accept the same objects and
//! read the same members (keys decoded alike, values sliced alike).

use super::{Member, Object};
use proptest::prelude::*;
use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use std::fmt;

/// An object's members as serde_json reads them: each key decoded to WTF-8 (serde_json
/// decodes a key read as bytes that way, lone surrogates too) and each value's text.
struct Members(Vec<(Vec<u8>, String)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(MembersVisitor)
    }
}

struct MembersVisitor;

impl<'de> Visitor<'de> for MembersVisitor {
    type Value = Members;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a JSON object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
        let mut members = Vec::new();
        while let Some(Key(key)) = map.next_key()? {
            let value = map.next_value::<&RawValue>()?;
            members.push((key, value.get().to_string()));
        }
        Ok(Members(members))
    }
}

struct Key(Vec<u8>);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_bytes(KeyVisitor)
    }
}

struct KeyVisitor;

impl Visitor<'_> for KeyVisitor {
    type Value = Key;

    fn expecting(&self, formatter: &mut fmt::Formatter) -> fmt::Result {
        formatter.write_str("a key")
    }

    fn visit_bytes<E>(self, key: &[u8]) -> Result<Key, E> {
        Ok(Key(key.to_vec()))
    }
}

fn oracle(text: &str) -> Option<Vec<(Vec<u8>, String)>> {
    // Reading a key as bytes skips the check for control characters, which RFC 8259
    // forbids unescaped in every string: the text must also pass serde_json's own check
    // of a whole value, which makes it.
    serde_json::from_str::<&RawValue>(text).ok()?;
    serde_json::from_str::<Members>(text)
        .ok()
        .map(|Members(members)| members)
}

fn ours(text: &str) -> Option<Vec<(Vec<u8>, String)>> {
    let listed = |members: &[Member]| -> Vec<(Vec<u8>, String)> {
        members
            .iter()
            .map(|member| (member.key.to_vec(), member.value.to_string()))
            .collect()
    };
    let read = Object::parse(text).map(|object| listed(&object.members));
    // Reading a member's object in the same pass reads the same text, and that member
    // as reading its value alone does.
    let with = Object::read_with(text, "a").ok();
    assert_eq!(
        with.as_ref().map(|(object, _)| listed(&object.members)),
        read,
        "{text:?}"
    );
    if let Some((object, inner)) = with {
        let alone = object.get("a").and_then(Object::parse);
        let alone = alone.map(|inner| listed(&inner.members));
        assert_eq!(inner.as_deref().map(listed), alone, "{text:?}");
    }
    read
}

/// Pieces of JSON and of near-JSON, from which texts are put together.
const PIECES: [&str; 34] = [
    "{",
    "}",
    "[",
    "]",
    "\"",
    ":",
    ",",
    " ",
    "\n",
    "\\",
    "u",
    "0",
    "1",
    "-",
    ".",
    "e",
    "+",
    "a",
    "é",
    "\u{1}",
    "\t",
    "true",
    "nul",
    "null",
    "\\u00",
    "d800",
    "dc00",
    "\\ud83d",
    "\\ude00",
    "\"reason\"",
    "{\"a\":",
    "\\\"",
    "01",
    "\u{feff}",
];

#[test]
fn every_short_text_is_read_as_serde_json_reads_it() {
    // Every text of up to four pieces: 1.4 million of them.
    let mut texts = vec![String::new()];
    let mut checked = 0;
    for _ in 0..4 {
        let mut longer = Vec::with_capacity(texts.len() * PIECES.len());
        for text in &texts {
            for piece in PIECES {
                let text = format!("{text}{piece}");
                assert_eq!(ours(&text), oracle(&text), "{text:?}");
                checked += 1;
                longer.push(text);
            }
        }
        texts = longer;
    }
    assert_eq!(checked, 34 + 34 * 34 + 34 * 34 * 34 + 34 * 34 * 34 * 34);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(20_000))]

    #[test]
    fn longer_texts_are_read_as_serde_json_reads_them(
        pieces in prop::collection::vec(prop::sample::select(&PIECES[..]), 0..40)
    ) {
        let text = format!("{{{}", pieces.concat());
        prop_assert_eq!(ours(&text), oracle(&text), "{:?}", text);
    }

    #[test]
    fn objects_are_read_as_serde_json_reads_them(
        members in prop::collection::vec(
            (prop::sample::select(&PIECES[..]), prop::sample::select(&PIECES[..]),
             prop::sample::select(&PIECES[..])),
            0..8,
        )
    ) {
        // Mostly well-formed: "key<piece>": value<pieces>, so the reader's deeper paths run.
        let body: Vec<String> = members
            .iter()
            .map(|(key, a, b)| format!("\"k{key}\":{a}{b}"))
            .collect();
        let text = format!("{{{}}}", body.join(","));
        prop_assert_eq!(ours(&text), oracle(&text), "{:?}", text);
    }
}
