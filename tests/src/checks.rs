//! Assertions the tests share, one line each at the call site.

use reasons_transform::{ToolCall, ToolResult};

/// Each result's call id and whether it is an error, to compare with one `assert_eq!`.
pub fn error_flags(results: &[ToolResult]) -> Vec<(&str, bool)> {
    results
        .iter()
        .map(|result| (result.call_id.as_str(), result.is_error))
        .collect()
}

/// Asserts that `result` is an error result whose content mentions `text`.
pub fn assert_error_mentions(result: &ToolResult, text: &str) {
    assert!(
        result.is_error && result.content.contains(text),
        "{result:?} should mention {text:?}"
    );
}

/// The arguments' text of each call.
pub fn arguments(calls: &[ToolCall]) -> Vec<&str> {
    calls.iter().map(|call| call.arguments.text()).collect()
}
