//! Checking what a plugin answers before anyone above relies on it. A plugin is
//! third-party code: an answer that does not fit the question is a fault to contain, like
//! a trap, and the message names the plugin and the fault (R13, R15).

use crate::provider::Json;
use reasons_transform::{CallIds, ProviderError, ToolResult};
use std::collections::HashMap;

/// One result per call, in the callers' order: results that match a call pass on, and a
/// call left without one gets an `is_error` result saying what was wrong with the answer.
pub fn complete(
    plugin: &str,
    ids: &CallIds,
    answer: Result<Vec<ToolResult>, ProviderError>,
) -> Vec<ToolResult> {
    reasons_transform::complete_with(ids.iter(), answer, |results| fault(plugin, ids, results))
}

fn fault(plugin: &str, ids: &CallIds, results: &[ToolResult]) -> String {
    let mut wanted: HashMap<&str, usize> = HashMap::new();
    for id in ids.iter() {
        *wanted.entry(id).or_default() += 1;
    }
    let (mut unknown, mut extra) = (0, 0);
    for result in results {
        match wanted.get_mut(result.call_id.as_str()) {
            None => unknown += 1,
            Some(0) => extra += 1,
            Some(left) => *left -= 1,
        }
    }
    format!(
        "The plugin `{plugin}` returned no result for this call: it answered {} results \
         for {} calls ({unknown} for unknown ids, {extra} more than once)",
        results.len(),
        ids.iter().len()
    )
}

/// Whether every declaration a plugin listed is JSON or one the provider below listed
/// (which a layer passes through as it came, JSON or not: R4); if not, the words naming
/// the first that is neither.
pub fn check_declarations(
    plugin: &str,
    below: &[Json],
    declarations: &[Json],
) -> Result<(), String> {
    for (index, declaration) in declarations.iter().enumerate() {
        if let Err(error) = serde_json::from_str::<serde::de::IgnoredAny>(declaration) {
            if below.contains(declaration) {
                continue;
            }
            return Err(format!(
                "the plugin `{plugin}` listed a declaration that is not JSON \
                 (declaration {index}: {error})"
            ));
        }
    }
    Ok(())
}
