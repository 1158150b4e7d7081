//! Where and how a text leaves JSON's grammar, in words a model can act on (R10).
//!
//! Lenient readers accept what RFC 8259 refuses (Python's `json.loads` reads `NaN`,
//! `strict=False` a raw newline in a string, `JSON.parse` after a `TextDecoder` a
//! byte-order mark), so a call whose text could hold the parameter but is not JSON is
//! refused, not forwarded; the refusal says what to fix so that the model's next try is
//! JSON.

use alloc::format;
use alloc::string::String;

/// The first place a text breaks the grammar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Fault {
    /// The offset, in bytes, of the byte that broke it (the text's length when it ended
    /// early).
    pub at: usize,
    /// What is there, described.
    pub what: String,
}

impl Fault {
    /// The fault at `at` in `text`, as the grammar's reader left it.
    pub fn at(text: &str, at: usize) -> Fault {
        Fault {
            at,
            what: describe(text, at),
        }
    }
}

fn describe(text: &str, at: usize) -> String {
    let rest = text.get(at..).unwrap_or_default();
    let Some(first) = rest.chars().next() else {
        return "the text ends before the JSON does".into();
    };
    let after_backslash = at
        .checked_sub(1)
        .and_then(|before| text.as_bytes().get(before))
        == Some(&b'\\');
    for word in ["NaN", "Infinity"] {
        if rest.starts_with(word) {
            return format!("`{word}`, which is not a JSON number");
        }
    }
    match first {
        '\u{feff}' => "a byte-order mark".into(),
        '\'' => "a single quote, where JSON wants a double quote".into(),
        control if control < ' ' => format!(
            "a raw control character (U+{:04X}), which a JSON string holds only escaped",
            u32::from(control)
        ),
        escape if after_backslash => format!("`\\{escape}`, which is not a JSON escape"),
        other => format!("an unexpected {other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::super::Object;
    use super::*;

    /// The fault [`Object::read`] finds in `text`.
    fn fault(text: &str) -> Fault {
        let Err(at) = Object::read(text) else {
            panic!("{text:?} read as an object");
        };
        Fault::at(text, at)
    }

    #[test]
    fn each_fault_is_named_where_it_is() {
        // R10: the refusal names what is wrong and at which byte.
        for (text, at, what) in [
            (r#"{"a":NaN}"#, 5, "`NaN`, which is not a JSON number"),
            (
                r#"{"a":-Infinity}"#,
                6,
                "`Infinity`, which is not a JSON number",
            ),
            ("{\"a\":\"x\ny\"}", 7, "a raw control character (U+000A)"),
            ("\u{feff}{}", 0, "a byte-order mark"),
            ("{'a':1}", 1, "a single quote"),
            (r#"{"a":"\x"}"#, 7, "`\\x`, which is not a JSON escape"),
            (r#"{"a":"\u12g4"}"#, 10, "an unexpected 'g'"),
            (r#"{"a":1,}"#, 7, "an unexpected '}'"),
            (r#"{"a":01}"#, 6, "an unexpected '1'"),
            (r#"{"a":tru}"#, 8, "an unexpected '}'"),
            (r#"{"a":1"#, 6, "the text ends before the JSON does"),
            (r#"{"a":1} x"#, 8, "an unexpected 'x'"),
            ("[1]", 0, "an unexpected '['"),
            (r#"{"a":1.}"#, 7, "an unexpected '}'"),
            (r#"{"é":é}"#, 6, "an unexpected 'é'"),
        ] {
            let fault = fault(text);
            assert_eq!(fault.at, at, "{text:?}: {}", fault.what);
            assert!(fault.what.starts_with(what), "{text:?}: {}", fault.what);
        }
    }
}
