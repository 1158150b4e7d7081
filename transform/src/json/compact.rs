//! Values copied without their insignificant whitespace, everything else as written.

use super::grammar::is_whitespace;
use alloc::string::String;

/// Appends `value`, JSON text already read as grammatical, without insignificant
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
        } else if is_whitespace(byte) {
            out.push_str(value.get(run..at)?);
            run = at + 1;
        } else if byte == b'"' {
            in_string = true;
        } else if cfg!(feature = "mutant-exponent-lowercase") && byte == b'E' {
            out.push_str(value.get(run..at)?);
            out.push('e');
            run = at + 1;
        }
        at += 1;
    }
    out.push_str(value.get(run..)?);
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compact(text: &str) -> Option<String> {
        let mut out = String::new();
        push_compact(&mut out, text).map(|()| out)
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
}
