//! The provider contract's values, as plain Rust, and the never-throw rule (R13).
//!
//! These mirror the WIT package's `types` interface one to one. The component's adapter
//! and the wasmtime host convert their generated types into these at the boundary, so the
//! transform, the host's layers and the tests all speak one language.

use alloc::collections::BTreeMap;
use alloc::string::String;
use alloc::vec::Vec;

/// JSON text, exactly as it travels.
pub type Json = String;

/// A tool's arguments, in the shape they travelled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Arguments {
    /// A JSON object the host already holds, serialised as JSON text.
    Object(Json),
    /// The JSON text a model's function call travels as; empty or blank means none.
    Text(String),
}

impl Arguments {
    /// The arguments' text, whichever shape they travelled in.
    pub fn text(&self) -> &str {
        match self {
            Arguments::Object(text) | Arguments::Text(text) => text,
        }
    }

    /// The same shape around other text.
    pub fn with_text(&self, text: String) -> Arguments {
        match self {
            Arguments::Object(_) => Arguments::Object(text),
            Arguments::Text(_) => Arguments::Text(text),
        }
    }
}

/// One call the model asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolCall {
    /// The host's id for the call.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments, in the shape they travelled.
    pub arguments: Arguments,
}

/// The answer to one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ToolResult {
    /// The id of the call this answers.
    pub call_id: String,
    /// What the tool returned, as JSON text.
    pub content: Json,
    /// True when this reports a failure to the model.
    pub is_error: bool,
}

impl ToolResult {
    /// A successful result for `call_id` with `content` (JSON text).
    pub fn ok(call_id: &str, content: &str) -> ToolResult {
        ToolResult {
            call_id: call_id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    /// An `is_error` result for `call_id` whose content is `message` as a JSON string.
    pub fn error(call_id: &str, message: &str) -> ToolResult {
        let mut content = String::with_capacity(message.len() + 2);
        crate::json::push_string(&mut content, message);
        ToolResult {
            call_id: call_id.into(),
            content,
            is_error: true,
        }
    }
}

/// Why a provider could not answer at all.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ProviderError {
    /// The provider tried and failed.
    Failed(String),
    /// Any other error.
    Other(String),
}

impl ProviderError {
    /// The error's message, whichever kind it is.
    pub fn message(&self) -> &str {
        match self {
            ProviderError::Failed(message) | ProviderError::Other(message) => message,
        }
    }
}

impl core::fmt::Display for ProviderError {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str(self.message())
    }
}

impl core::error::Error for ProviderError {}

/// The message of the result a call gets when the provider below gave it none (R13).
pub const NO_RESULT: &str = "The tool provider returned no result for this call";

/// Turns whatever the provider below answered into exactly one result per call, in the
/// callers' order, each carrying its call's id (R13).
///
/// A failure becomes one `is_error` result per call. Results that came back are passed
/// on as they came, matched to calls by id (the first unclaimed result for each call, so
/// repeated ids are answered in order); a call left without one gets an `is_error` result;
/// results for no call are dropped, because the caller has nowhere to put them.
///
/// This is the one place the rule is kept: the component calls it on what its provider
/// answers, and a host on what each layer or tool source it does not trust answers.
pub fn complete<'a>(
    call_ids: impl IntoIterator<Item = &'a str, IntoIter: Clone>,
    answer: Result<Vec<ToolResult>, ProviderError>,
) -> Vec<ToolResult> {
    complete_with(call_ids, answer, |_| String::from(NO_RESULT))
}

/// [`complete`], with `missing` saying what a call left without a result is told, asked
/// only when the results do not answer the calls one for one: a host names the layer at
/// fault and what was wrong with its answer.
pub fn complete_with<'a>(
    call_ids: impl IntoIterator<Item = &'a str, IntoIter: Clone>,
    answer: Result<Vec<ToolResult>, ProviderError>,
    missing: impl FnOnce(&[ToolResult]) -> String,
) -> Vec<ToolResult> {
    let call_ids = call_ids.into_iter();
    let results = match answer {
        Ok(results) => results,
        Err(error) => {
            let message = alloc::format!("The tool provider failed: {}", error.message());
            return call_ids.map(|id| ToolResult::error(id, &message)).collect();
        }
    };
    // The common case, checked without building a map: `eq` also tells a longer or
    // shorter answer apart.
    if call_ids
        .clone()
        .eq(results.iter().map(|result| result.call_id.as_str()))
    {
        return results;
    }
    let missing = missing(&results);
    // Each id's results, last first, so that `pop` hands them out in the order they came.
    let mut by_id: BTreeMap<String, Vec<ToolResult>> = BTreeMap::new();
    for result in results.into_iter().rev() {
        by_id
            .entry(result.call_id.clone())
            .or_default()
            .push(result);
    }
    call_ids
        .map(|id| {
            by_id
                .get_mut(id)
                .and_then(Vec::pop)
                .unwrap_or_else(|| ToolResult::error(id, &missing))
        })
        .collect()
}

/// The ids of a batch, kept to match its results by once the calls themselves are handed
/// on: one buffer for the batch, not a string per call.
pub struct CallIds {
    text: String,
    ends: Vec<usize>,
}

impl CallIds {
    /// The ids of `calls`, in order.
    pub fn of(calls: &[ToolCall]) -> CallIds {
        let mut text = String::new();
        let mut ends = Vec::with_capacity(calls.len());
        for call in calls {
            text.push_str(&call.id);
            ends.push(text.len());
        }
        CallIds { text, ends }
    }

    /// Each id, in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &str> + Clone {
        // Every boundary was a string's end when it was pushed, so `get` always answers.
        self.ends.iter().enumerate().map(|(at, &end)| {
            let start = at.checked_sub(1).and_then(|before| self.ends.get(before));
            self.text
                .get(start.copied().unwrap_or(0)..end)
                .unwrap_or_default()
        })
    }
}

/// Answers a batch in which some calls are answered here and the rest by the provider
/// below: each call's route either passes it on (`Ok`, possibly rewritten) or answers it
/// (`Err`). The passed calls go down as one batch (none at all when every call was
/// answered here, R13) and every call gets exactly one result, in the caller's order.
pub fn answer(
    routes: impl ExactSizeIterator<Item = Result<ToolCall, ToolResult>>,
    below: impl FnOnce(Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError>,
) -> Vec<ToolResult> {
    let mut forward = Vec::with_capacity(routes.len());
    let answered_here: Vec<Option<ToolResult>> = routes
        .map(|route| match route {
            Ok(call) => {
                forward.push(call);
                None
            }
            Err(result) => Some(result),
        })
        .collect();
    let answered_below = if forward.is_empty() {
        Vec::new()
    } else {
        let ids = CallIds::of(&forward);
        complete(ids.iter(), below(forward))
    };
    let mut answered_below = answered_below.into_iter();
    answered_here
        .into_iter()
        .filter_map(|here| here.or_else(|| answered_below.next()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloc::vec;

    fn ok(id: &str, content: &str) -> ToolResult {
        ToolResult {
            call_id: id.into(),
            content: content.into(),
            is_error: false,
        }
    }

    #[test]
    fn a_failure_becomes_one_error_per_call_in_order() {
        // R13
        let results = complete(["b", "a"], Err(ProviderError::Failed("disk full".into())));
        assert_eq!(
            results,
            vec![
                ToolResult::error("b", "The tool provider failed: disk full"),
                ToolResult::error("a", "The tool provider failed: disk full"),
            ]
        );
        assert_eq!(
            results[0].content,
            r#""The tool provider failed: disk full""#
        );
    }

    #[test]
    fn results_are_matched_by_id_and_missing_ones_filled() {
        // R13
        let answer = Ok(vec![
            ok("c", "3"),
            ok("x", "stray"),
            ok("a", "1"),
            ok("a", "1b"),
        ]);
        let results = complete(["a", "b", "c", "a"], answer);
        assert_eq!(
            results,
            vec![
                ok("a", "1"),
                ToolResult::error("b", NO_RESULT),
                ok("c", "3"),
                ok("a", "1b")
            ]
        );
    }

    #[test]
    fn an_empty_batch_gets_an_empty_answer() {
        // R13
        assert!(complete([], Ok(vec![ok("a", "1")])).is_empty());
    }
}
