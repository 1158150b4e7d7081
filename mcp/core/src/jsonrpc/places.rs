//! Places in a message's text: where a value lies, and the text with it replaced, so
//! that an edit keeps every other byte.

use super::{member, unique};
use reasons_transform::json;
use std::ops::Range;

pub use json::span;

/// Moves `at`, a place in a text, as the text's `replaced` place gets `by` bytes in its
/// stead: a place after it moves with it, a place around it stretches, a place before it
/// stays.
pub(crate) fn moved(at: &mut Range<usize>, replaced: &Range<usize>, by: usize) {
    let grown = |end: usize| end + by - replaced.len();
    if at.start >= replaced.end {
        *at = grown(at.start)..grown(at.end);
    } else if at.start <= replaced.start && at.end >= replaced.end {
        at.end = grown(at.end);
    }
}

/// `whole` with the slice `part` of it replaced by `with`.
pub fn replace(whole: &str, part: &str, with: &str) -> String {
    let range = span(whole, part);
    let mut out = String::with_capacity(whole.len() - range.len() + with.len());
    out.push_str(&whole[..range.start]);
    out.push_str(with);
    out.push_str(&whole[range.end..]);
    out
}

/// Where in `object`, a JSON object's text, the member whose value is the slice `value`
/// lies with one comma that separates it from another, so that the object without it is
/// `object` with that range taken out: `{"a":1,"b":2}` less `b` is `{"a":1}`, less `a` is
/// `{"b":2}`. `None` when `value` is no member's value of `object`.
pub fn member_range(object: &str, value: &str) -> Option<Range<usize>> {
    let Range { start, end } = span(object, value);
    let bytes = object.as_bytes();
    let before = |at: usize| object[..at].trim_end_matches([' ', '\t', '\n', '\r']).len();
    let after = |at: usize| {
        object.len()
            - object[at..]
                .trim_start_matches([' ', '\t', '\n', '\r'])
                .len()
    };
    let colon = before(start)
        .checked_sub(1)
        .filter(|&at| bytes[at] == b':')?;
    let closing = before(colon)
        .checked_sub(1)
        .filter(|&at| bytes[at] == b'"')?;
    // The key's opening quote: the first going back that no odd run of backslashes
    // escapes (within a string, a quote is always escaped).
    let escaped = |at: usize| {
        bytes[..at]
            .iter()
            .rev()
            .take_while(|&&byte| byte == b'\\')
            .count()
            % 2
            == 1
    };
    let opening = (0..closing)
        .rev()
        .find(|&at| bytes[at] == b'"' && !escaped(at))?;
    let previous = before(opening).checked_sub(1)?;
    match bytes[previous] {
        // A member before it: the comma between them, and the space before that, go
        // with it.
        b',' => Some(before(previous)..end),
        // The first member: the comma after it goes with it, where another follows.
        b'{' => {
            let next = after(end);
            match bytes.get(next) {
                Some(b',') => Some(opening..after(next + 1)),
                Some(b'}') => Some(opening..end),
                _ => None,
            }
        }
        _ => None,
    }
}

/// The exact text of the value at `path` (a chain of keys) in the JSON object `text`, a
/// slice of it; `None` when there is none, or when a key on the way repeats.
pub fn at<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(text, |value, key| member(&unique(value).ok()?, key))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `object` without its member `key`, as [`member_range`] cuts it.
    fn without(object: &str, key: &str) -> String {
        let value = member(&unique(object).unwrap(), key).unwrap();
        let range = member_range(object, value).unwrap();
        format!("{}{}", &object[..range.start], &object[range.end..])
    }

    #[test]
    fn a_member_comes_out_with_one_comma_and_every_other_byte_stays() {
        let cases = [
            (r#"{"a":1,"b":2}"#, "b", r#"{"a":1}"#),
            (r#"{"a":1,"b":2}"#, "a", r#"{"b":2}"#),
            (r#"{"a":1}"#, "a", r#"{}"#),
            (
                r#"{ "a" : 1 , "b" : "x" , "c" : [] }"#,
                "b",
                r#"{ "a" : 1 , "c" : [] }"#,
            ),
            (r#"{ "b" : "x" , "c" : [] }"#, "b", r#"{ "c" : [] }"#),
            // A key spelt with escapes, a quote and a backslash among them.
            (
                r#"{"a\"\\":1,"next\u0043ursor":"x"}"#,
                "nextCursor",
                r#"{"a\"\\":1}"#,
            ),
            (r#"{"\\":0,"t":[1]}"#, "t", r#"{"\\":0}"#),
        ];
        assert_eq!(cases.len(), 7);
        for (object, key, expected) in cases {
            assert_eq!(without(object, key), expected, "{object} less {key}");
        }
        // A slice that is no member's value of the object is no member.
        let object = r#"{"a":[1,2]}"#;
        let inner = &object[6..7];
        assert_eq!(member_range(object, inner), None);
    }
}
