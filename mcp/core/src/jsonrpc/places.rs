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

/// The exact text of the value at `path` (a chain of keys) in the JSON object `text`, a
/// slice of it; `None` when there is none, or when a key on the way repeats.
pub fn at<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(text, |value, key| member(&unique(value).ok()?, key))
}
