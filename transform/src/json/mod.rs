//! Reading JSON text without re-spelling it: the workspace's one reader of JSON objects.
//!
//! The layer edits declarations and arguments it does not own, so it never round-trips
//! them through a value type: [`Object::parse`] checks the text against RFC 8259's
//! grammar (`grammar.rs`) and hands back each member's value as a slice of the original
//! text. Declarations are then edited by inserting text at offsets into those slices
//! (everything else stays byte for byte), and arguments are re-assembled from the
//! members' own text (every number keeps its digits).
//!
//! The reader is the crate's own, not serde_json's (which did this job before and is
//! the oracle the tests hold this one to): any typed read through serde links its error
//! reporting, and with it the formatting of floats the layer never reads, a fifth of the
//! component's size. Checking the grammar and decoding a key is all the layer needs.
//!
//! It is the one reader of JSON objects in the workspace: the MCP proxy's strict reader
//! (`reasons_mcp::jsonrpc`) and `reasons wrap` read with it too, so that what decides
//! whether a call carries a reason is what strips it.

mod compact;
#[cfg(test)]
mod differential;
mod escapes;
mod fault;
mod grammar;

pub(crate) use compact::push_compact;
pub(crate) use escapes::{push_key, push_string};
pub(crate) use fault::Fault;

use alloc::borrow::Cow;
use alloc::string::String;
use alloc::vec::Vec;
use escapes::unescape;
use grammar::Reader;

/// One member of a JSON object, as it stands in the text.
#[derive(Debug)]
pub struct Member<'a> {
    /// The key, unescaped: `"\u0072eason"` is `reason`. Borrowed from the text unless
    /// it had escapes. It is WTF-8, not always UTF-8: RFC 8259 lets a key hold a lone
    /// surrogate escape (`"\ud800"`), which servers' parsers read (R10).
    pub key: Cow<'a, [u8]>,
    /// The value's text, a slice of the object's text.
    pub value: &'a str,
}

/// A JSON object in a text: its own slice and its members in order, repeats included.
///
/// ```
/// use reasons_transform::json::Object;
///
/// let object = Object::parse(r#" {"a": [1, 2.50], "\u0072eason": "x", "a": -0} "#).unwrap();
/// assert_eq!(object.members.len(), 3);
/// assert_eq!(&*object.members[1].key, b"reason");
/// assert_eq!(object.get("a"), Some("-0")); // the last of a repeated key, as parsers read it
/// assert_eq!(object.members[0].value, "[1, 2.50]"); // every value as its text
/// assert_eq!(Object::read(r#"{"a":NaN}"#).err(), Some(5)); // where it stops being JSON
/// ```
#[derive(Debug)]
pub struct Object<'a> {
    /// The object's own text, without the whitespace around it.
    pub text: &'a str,
    /// Its members in order, a repeated key each time it appears.
    pub members: Vec<Member<'a>>,
}

impl<'a> Object<'a> {
    /// Reads `text` as one JSON object; `None` if it is anything else or not JSON.
    pub fn parse(text: &'a str) -> Option<Self> {
        Self::read(text).ok()
    }

    /// Reads `text` as one JSON object, or says at which byte it stops being one.
    pub fn read(text: &'a str) -> Result<Self, usize> {
        let mut members = Vec::new();
        let text = whole(text, b'{', b'}', |reader| {
            let key = decoded(reader)?;
            reader.colon()?;
            let value = reader.value_text()?;
            members.push(Member { key, value });
            Some(())
        })?;
        Ok(Object { text, members })
    }

    /// Reads `text` as [`Object::read`] does and, in the same pass, the members of its
    /// member `inner` when that is an object (the last `inner`, when the key repeats):
    /// a reader that wants a message and its params scans the text once.
    ///
    /// ```
    /// use reasons_transform::json::Object;
    ///
    /// let (object, params) = Object::read_with(r#"{"id":1,"params":{"name":"t"}}"#, "params").unwrap();
    /// assert_eq!(object.members.len(), 2);
    /// assert_eq!(object.get("params"), Some(r#"{"name":"t"}"#));
    /// assert_eq!(params.unwrap()[0].value, r#""t""#);
    /// ```
    pub fn read_with(text: &'a str, inner: &str) -> Result<(Self, Option<Vec<Member<'a>>>), usize> {
        let mut members = Vec::new();
        let mut nested = None;
        let text = whole(text, b'{', b'}', |reader| {
            let key = decoded(reader)?;
            reader.colon()?;
            let start = reader.at();
            if *key == *inner.as_bytes() {
                nested = None;
                if reader.peek() == Some(b'{') {
                    let mut inside = Vec::new();
                    container(reader, b'{', b'}', |reader| {
                        let key = decoded(reader)?;
                        reader.colon()?;
                        let value = reader.value_text()?;
                        inside.push(Member { key, value });
                        Some(())
                    })
                    .ok()?;
                    nested = Some(inside);
                    let value = reader.since(start)?;
                    members.push(Member { key, value });
                    return Some(());
                }
            }
            let value = reader.value_text()?;
            members.push(Member { key, value });
            Some(())
        })?;
        Ok((Object { text, members }, nested))
    }

    /// The value of `key` as JSON parsers read it: the last one when the key repeats.
    pub fn get(&self, key: &str) -> Option<&'a str> {
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
        self.get(key).map(Object::parse)
    }
}

/// The text of each element of a JSON list, with nothing but whitespace around it;
/// `None` for any other value.
///
/// ```
/// use reasons_transform::json;
///
/// assert_eq!(json::elements(r#" [1, {"a": []}] "#), Some(vec!["1", r#"{"a": []}"#]));
/// assert_eq!(json::elements("{}"), None);
/// ```
pub fn elements(text: &str) -> Option<Vec<&str>> {
    let mut elements = Vec::new();
    whole(text, b'[', b']', |reader| {
        elements.push(reader.value_text()?);
        Some(())
    })
    .ok()?;
    Some(elements)
}

/// Whether `text` is one JSON value of any kind, with nothing but whitespace around it.
pub fn is_value(text: &str) -> bool {
    let mut reader = Reader::new(text);
    reader.skip_whitespace();
    reader.value().is_some() && {
        reader.skip_whitespace();
        reader.at_end()
    }
}

/// Reads `text` as one object or list (`open` and `close` say which), with nothing but
/// whitespace around it, `item` reading each member or element from its first byte; the
/// container's own slice, or the offset of the byte where the text leaves the grammar.
fn whole<'a>(
    text: &'a str,
    open: u8,
    close: u8,
    item: impl FnMut(&mut Reader<'a>) -> Option<()>,
) -> Result<&'a str, usize> {
    let text = match text.strip_prefix('\u{feff}') {
        Some(rest) if cfg!(feature = "mutant-skip-bom") => rest,
        _ => text,
    };
    let mut reader = Reader::new(text);
    reader.skip_whitespace();
    let start = reader.at();
    container(&mut reader, open, close, item)?;
    let end = reader.at();
    reader.skip_whitespace();
    if !reader.at_end() {
        return Err(reader.at());
    }
    text.get(start..end).ok_or(end)
}

/// Reads one object or list from `reader`'s place (`open` and `close` say which), `item`
/// reading each member or element from its first byte; or the offset of the byte where
/// the text leaves the grammar.
fn container<'a>(
    reader: &mut Reader<'a>,
    open: u8,
    close: u8,
    mut item: impl FnMut(&mut Reader<'a>) -> Option<()>,
) -> Result<(), usize> {
    if !reader.eat(open) {
        return Err(reader.at());
    }
    reader.skip_whitespace();
    if reader.eat(close) {
        return Ok(());
    }
    loop {
        item(reader).ok_or(reader.at())?;
        reader.skip_whitespace();
        match reader.peek() {
            Some(b',') => {
                reader.eat(b',');
                reader.skip_whitespace();
            }
            Some(byte) if byte == close => {
                reader.eat(close);
                return Ok(());
            }
            _ => return Err(reader.at()),
        }
    }
}

/// The value of a JSON string, given its text as a member or an element holds it;
/// `None` for any other value, and for a string holding a lone surrogate, which no Rust
/// string can.
///
/// ```
/// use reasons_transform::json;
///
/// assert_eq!(json::string(r#""tools\/call""#).as_deref(), Some("tools/call"));
/// assert_eq!(json::string(r#""\ud800""#), None); // a lone surrogate is no character
/// assert_eq!(json::string("1"), None);
/// ```
pub fn string(text: &str) -> Option<String> {
    String::from_utf8(wtf8(text)?.into_owned()).ok()
}

/// The value of a JSON string as a parser decodes it, in WTF-8: a lone surrogate escape,
/// which RFC 8259 allows and servers' parsers read, is kept as if it were a character;
/// borrowed from the text when it has no escapes. `None` for any other value.
///
/// ```
/// use reasons_transform::json;
///
/// assert_eq!(json::wtf8(r#""\u0072eason""#).as_deref(), Some(&b"reason"[..]));
/// assert_eq!(json::wtf8(r#""\ud800""#).as_deref(), Some(&b"\xed\xa0\x80"[..]));
/// ```
pub fn wtf8(text: &str) -> Option<Cow<'_, [u8]>> {
    let mut reader = Reader::new(text);
    let contents = decoded(&mut reader)?;
    reader.at_end().then_some(contents)
}

/// Reads a string; its contents with their escapes decoded, borrowed when there were none.
fn decoded<'a>(reader: &mut Reader<'a>) -> Option<Cow<'a, [u8]>> {
    let (contents, escaped) = reader.string_contents()?;
    Some(if escaped {
        Cow::Owned(unescape(contents)?)
    } else {
        Cow::Borrowed(contents)
    })
}

/// The values of a JSON list of strings; `None` for any other value.
pub(crate) fn strings(text: &str) -> Option<Vec<String>> {
    elements(text)?.into_iter().map(string).collect()
}

/// The value of `key` among `members`, the first it is given: for members known to
/// give each key once ([`repeated_key`] says whether they do).
pub fn member<'a>(members: &[Member<'a>], key: &str) -> Option<&'a str> {
    members
        .iter()
        .find(|member| *member.key == *key.as_bytes())
        .map(|member| member.value)
}

/// The first key `members` give more than once: where they do, parsers disagree on
/// which value counts, so a strict reader refuses them.
pub fn repeated_key<'m>(members: &'m [Member<'_>]) -> Option<&'m [u8]> {
    let mut seen = alloc::collections::BTreeSet::new();
    members
        .iter()
        .map(|member| member.key.as_ref())
        .find(|key| !seen.insert(*key))
}

/// Where `part`, a slice of `whole` (as every value this reader gives is), lies in it.
pub fn span(whole: &str, part: &str) -> core::ops::Range<usize> {
    let start = offset_in(whole, part);
    start..start + part.len()
}

/// Where `part`, a slice of `whole` (as every value this reader gives is), starts in it.
pub fn offset_in(whole: &str, part: &str) -> usize {
    (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_decoded_lone_surrogates_included_and_repeats_kept() {
        // R10
        let object =
            Object::parse(r#" {"\u0072eason":1, "\ud800" : [ 2 ], "a":3, "a":4} "#).unwrap();
        let keys: Vec<&[u8]> = object.members.iter().map(|m| m.key.as_ref()).collect();
        assert_eq!(keys, [&b"reason"[..], b"\xed\xa0\x80", b"a", b"a"]);
        assert_eq!(object.members[1].value, "[ 2 ]");
        for text in ["[]", "1", "{", "{} x", "\u{feff}{}"] {
            assert!(Object::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn strings_are_decoded_and_other_values_are_not_strings() {
        assert_eq!(
            wtf8(r#""tools\/call""#).as_deref(),
            Some(&b"tools/call"[..])
        );
        assert_eq!(wtf8(r#""\ud83d""#).as_deref(), Some(&b"\xed\xa0\xbd"[..]));
        assert_eq!(string(r#""\ud83d""#), None);
        assert!(wtf8("1").is_none());
        assert!(wtf8(r#""a" "b""#).is_none());
    }

    #[test]
    fn members_keep_order_repeats_and_unescape_keys() {
        let object = Object::parse(r#" {"b":1, "\u0072eason" : [1, 2], "b":2} "#).unwrap();
        let keys: Vec<_> = object.members.iter().map(|m| &*m.key).collect();
        assert_eq!(keys, [&b"b"[..], b"reason", b"b"]);
        assert_eq!(object.get("b").unwrap(), "2");
        assert_eq!(object.get("reason").unwrap(), "[1, 2]");
        assert_eq!(object.text, r#"{"b":1, "\u0072eason" : [1, 2], "b":2}"#);
    }

    #[test]
    fn only_objects_are_objects() {
        for text in [
            "",
            " ",
            "[]",
            "1",
            "\"x\"",
            "null",
            "{",
            "{}x",
            "{\"a\":}",
            "\u{feff}{}",
        ] {
            assert!(Object::parse(text).is_none(), "{text:?}");
        }
    }

    #[test]
    fn lists_and_strings_are_read_whole() {
        assert_eq!(elements(" [1, \"a\" ,{}] ").unwrap(), ["1", "\"a\"", "{}"]);
        assert_eq!(elements("[]").unwrap(), Vec::<&str>::new());
        assert_eq!(elements("[1] 2"), None);
        assert_eq!(
            string(r#""a\u00e9\ud83d\ude00\n""#).unwrap(),
            "a\u{e9}\u{1f600}\n"
        );
        assert_eq!(string(r#""a" "#), None);
        assert_eq!(
            string(r#""\ud800""#),
            None,
            "a lone surrogate is no Rust string"
        );
        assert_eq!(strings(r#"["a","b"]"#).unwrap(), ["a", "b"]);
        assert_eq!(strings(r#"["a",1]"#), None);
    }
}
