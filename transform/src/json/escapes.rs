//! String contents both ways: escapes decoded into the key a parser reads, and text
//! written as a JSON string. Written as serde_json writes them, so that text the layer
//! wrote before its reader was its own reads the same byte for byte.

use alloc::string::String;
use alloc::vec::Vec;

/// The contents of a string, between its quotes and known to be grammatical, with its
/// escapes decoded into WTF-8: a surrogate pair is its character; a lone surrogate,
/// which RFC 8259 allows and UTF-8 cannot hold, is encoded as if it were a character
/// (`ED A0..BF xx`), so that it is a key like any other and can be written back as the
/// escape it was. `None` only for contents that were not grammatical after all.
pub(crate) fn unescape(contents: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(contents.len());
    let mut rest = contents;
    while let Some(at) = memchr::memchr(b'\\', rest) {
        out.extend_from_slice(rest.get(..at)?);
        let (&kind, after) = rest.get(at + 1..)?.split_first()?;
        rest = after;
        let byte = match kind {
            b'"' | b'\\' | b'/' => kind,
            b'b' => 0x08,
            b'f' => 0x0C,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let (unit, after) = hex_escape(rest)?;
                rest = after;
                let pair = (0xD800..0xDC00).contains(&unit).then(|| {
                    let (low, after) = rest.strip_prefix(b"\\u").and_then(hex_escape)?;
                    (0xDC00..0xE000).contains(&low).then_some((low, after))
                });
                match pair.flatten() {
                    Some((low, after)) => {
                        rest = after;
                        push_wtf8(&mut out, 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00));
                    }
                    // A lone surrogate; if a `\u` follows, it is read on its own next.
                    None => push_wtf8(&mut out, unit),
                }
                continue;
            }
            _ => return None,
        };
        out.push(byte);
    }
    out.extend_from_slice(rest);
    Some(out)
}

/// The four hex digits at the start of `bytes` as a code unit, and the bytes after them.
fn hex_escape(bytes: &[u8]) -> Option<(u32, &[u8])> {
    let (digits, after) = bytes.split_at_checked(4)?;
    let unit = digits.iter().try_fold(0, |unit, &digit| {
        Some(unit << 4 | char::from(digit).to_digit(16)?)
    })?;
    Some((unit, after))
}

/// Appends a code point as UTF-8 does, surrogates included (WTF-8).
fn push_wtf8(out: &mut Vec<u8>, code: u32) {
    // Each `as u8` keeps the low bits the encoding puts in that byte.
    match code {
        0..0x80 => out.push(code as u8),
        0x80..0x800 => out.extend([0xC0 | (code >> 6) as u8, 0x80 | (code & 0x3F) as u8]),
        0x800..0x10000 => out.extend([
            0xE0 | (code >> 12) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
        _ => out.extend([
            0xF0 | (code >> 18) as u8,
            0x80 | ((code >> 12) & 0x3F) as u8,
            0x80 | ((code >> 6) & 0x3F) as u8,
            0x80 | (code & 0x3F) as u8,
        ]),
    }
}

/// Appends `text` to `out` as a JSON string: a quote and a backslash escaped, a
/// control character as its short escape or `\u00xx`, everything else as it is.
pub(crate) fn push_string(out: &mut String, text: &str) {
    out.push('"');
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c == '"' || c == '\\' || c < ' ') {
        let (plain, special) = rest.split_at(at);
        out.push_str(plain);
        let mut chars = special.chars();
        match chars.next() {
            Some('"') => out.push_str("\\\""),
            Some('\\') => out.push_str("\\\\"),
            Some('\u{8}') => out.push_str("\\b"),
            Some('\u{c}') => out.push_str("\\f"),
            Some('\n') => out.push_str("\\n"),
            Some('\r') => out.push_str("\\r"),
            Some('\t') => out.push_str("\\t"),
            Some(control) => push_unit(out, u32::from(control)),
            None => {}
        }
        rest = chars.as_str();
    }
    out.push_str(rest);
    out.push('"');
}

/// Appends `key`, as a member's key holds it (WTF-8), as a JSON string: a lone
/// surrogate goes back as the `\uxxxx` escape it was read from.
pub(crate) fn push_key(out: &mut String, key: &[u8]) {
    if let Ok(key) = core::str::from_utf8(key) {
        if cfg!(feature = "mutant-raw-key") {
            out.push('"');
            out.push_str(key);
            out.push('"');
            return;
        }
        return push_string(out, key);
    }
    out.push('"');
    let mut quoted = String::new();
    let mut rest = key;
    while !rest.is_empty() {
        let valid = match core::str::from_utf8(rest) {
            Ok(valid) => valid,
            // `valid_up_to` is a char boundary by definition.
            Err(error) => core::str::from_utf8(rest.get(..error.valid_up_to()).unwrap_or_default())
                .unwrap_or_default(),
        };
        // The run between surrogates, written as a string without its quotes.
        quoted.clear();
        push_string(&mut quoted, valid);
        out.push_str(
            quoted
                .get(1..quoted.len().saturating_sub(1))
                .unwrap_or_default(),
        );
        rest = rest.get(valid.len()..).unwrap_or_default();
        let Some((surrogate, after)) = split_surrogate(rest) else {
            // Only WTF-8 that `unescape` wrote gets here, so this is the end.
            break;
        };
        push_unit(out, surrogate);
        rest = after;
    }
    out.push('"');
}

/// Appends `\u` and a code unit as four lowercase hex digits.
fn push_unit(out: &mut String, unit: u32) {
    out.push_str("\\u");
    for shift in [12, 8, 4, 0] {
        out.extend(char::from_digit((unit >> shift) & 0xF, 16));
    }
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
    use crate::json::Object;

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

    #[test]
    fn escapes_decode_as_parsers_read_them() {
        for (contents, decoded) in [
            (r#"a\"\\\/\b\f\n\r\t"#, &b"a\"\\/\x08\x0c\n\r\t"[..]),
            (r"\u0041\u00e9\u20ac", "A\u{e9}\u{20ac}".as_bytes()),
            (r"\ud83d\ude00", "\u{1f600}".as_bytes()),
            (r"\ud800", b"\xed\xa0\x80"),
            (r"\udc00\ud800", b"\xed\xb0\x80\xed\xa0\x80"),
            (r"\ud800\ud83d\ude00", b"\xed\xa0\x80\xf0\x9f\x98\x80"),
            (r"\ud800\n", b"\xed\xa0\x80\n"),
            (r"\ud800\u0041", b"\xed\xa0\x80A"),
        ] {
            assert_eq!(
                unescape(contents.as_bytes()).unwrap(),
                decoded,
                "{contents}"
            );
        }
    }

    #[test]
    fn strings_are_written_as_serde_json_writes_them() {
        for (text, written) in [
            ("plain", r#""plain""#),
            ("a\"b\\c", r#""a\"b\\c""#),
            ("\u{8}\u{c}\n\r\t", r#""\b\f\n\r\t""#),
            ("\u{0}\u{1f}\u{7f}é", "\"\\u0000\\u001f\u{7f}é\""),
        ] {
            let mut out = String::new();
            push_string(&mut out, text);
            assert_eq!(out, written, "{text:?}");
        }
    }
}
