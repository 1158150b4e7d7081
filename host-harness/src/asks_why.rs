//! The tools that already ask the model why: a property of a tool's own whose name or
//! description says it is the call's reason, purpose, intent, justification or
//! explanation (PostHog's required `context`, Cursor-style `explanation`, coder's
//! `model_intent`). Such a tool's server expects its own field, so adding `reason` asks
//! the model twice: `doctor` and the dry run name the field and the way to leave the tool
//! alone. A hint for people, and only that: what is stripped is decided by R5 alone
//! (only `reason` itself is a collision), never by this guess.

use serde_json::Value;
use std::collections::BTreeMap;

/// Names that say a property is the call's why, as `snake_case`, `kebab-case` or
/// `camelCase` spell them.
const NAMES: [&str; 9] = [
    "explanation",
    "justification",
    "purpose",
    "intent",
    "model_intent",
    "rationale",
    "reasoning",
    "why",
    "motivation",
];

/// Words of a description that say the property is the call's why.
const DESCRIBED: [&str; 6] = [
    "why are you calling",
    "why this tool",
    "why you are calling",
    "why the tool is being",
    "reason for calling",
    "purpose of this call",
];

/// The top-level properties of the tool `declaration` (in any shape R3 reads) that ask
/// the model why it calls it; `param` (the layer's own) is not one of them.
pub fn asks_why(declaration: &Value, param: &str) -> Vec<String> {
    let schema = ["inputSchema", "input_schema", "parameters"]
        .iter()
        .find_map(|key| declaration.get(*key))
        .or_else(|| declaration.get("function")?.get("parameters"));
    let Some(properties) = schema.and_then(|schema| schema.get("properties")?.as_object()) else {
        return Vec::new();
    };
    properties
        .iter()
        .filter(|(name, _)| name.as_str() != param)
        .filter(|(name, property)| named_why(name) || described_why(property))
        .map(|(name, _)| name.clone())
        .collect()
}

/// What to tell of the tool `tool` that asks the model why itself, in `fields`: the model
/// is asked twice, and the way to leave the tool as its server declares it. Names are the
/// server's words: shown inert (R12).
pub fn note(tool: &str, fields: &[String]) -> String {
    let fields: Vec<String> = fields
        .iter()
        .map(|field| format!("`{}`", reasons_inert::inert(field, 64)))
        .collect();
    format!(
        "`{tool}` asks the model why itself ({}): its server expects that field, and \
         `reason` asks a second time; --leave-alone {tool} leaves the tool as it is",
        fields.join(", "),
        tool = reasons_inert::inert(tool, 64),
    )
}

/// Each tool of `declarations` (JSON text, as a server listed them) that asks the model
/// why itself, by its name, with its fields that do.
pub fn by_tool(declarations: &[String], param: &str) -> BTreeMap<String, Vec<String>> {
    declarations
        .iter()
        .filter_map(|text| serde_json::from_str::<Value>(text).ok())
        .filter_map(|tool| {
            let name = (tool
                .get("name")
                .or_else(|| tool.get("function")?.get("name")))
            .and_then(Value::as_str)?
            .to_string();
            let fields = asks_why(&tool, param);
            (!fields.is_empty()).then_some((name, fields))
        })
        .collect()
}

/// What to tell of each tool of `declarations` that asks the model why itself, one note
/// a tool, in the order of their names.
pub fn notes(declarations: &[String], param: &str) -> Vec<String> {
    let by_tool = by_tool(declarations, param);
    by_tool
        .iter()
        .map(|(tool, fields)| note(tool, fields))
        .collect()
}

fn named_why(name: &str) -> bool {
    let spelt: String = name
        .chars()
        .flat_map(|c| match c {
            '-' => vec!['_'],
            c if c.is_ascii_uppercase() => vec!['_', c.to_ascii_lowercase()],
            c => vec![c],
        })
        .collect();
    NAMES.contains(&spelt.trim_start_matches('_'))
}

fn described_why(property: &Value) -> bool {
    let Some(description) = property.get("description").and_then(Value::as_str) else {
        return false;
    };
    let description = description.to_lowercase();
    DESCRIBED.iter().any(|words| description.contains(words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_tool_s_own_why_field_is_named_by_its_name_or_its_description() {
        let posthog = json!({"name": "query", "inputSchema": {"type": "object", "properties": {
            "query": {"type": "string"},
            "context": {"type": "string", "description":
                "Why are you calling this tool? Briefly describe the user's goal."},
        }, "required": ["query", "context"]}});
        assert_eq!(asks_why(&posthog, "reason"), ["context"]);
        let cursor = json!({"type": "function", "function": {"name": "grep", "parameters": {
            "properties": {"explanation": {"type": "string"}, "modelIntent": {}, "pattern": {}}}}});
        assert_eq!(asks_why(&cursor, "reason"), ["explanation", "modelIntent"]);
        let plain = json!({"name": "read", "input_schema": {"properties": {
            "path": {"description": "Which file, and why it matters to nobody"},
            "reason": {"type": "string"}}}});
        assert_eq!(asks_why(&plain, "reason"), Vec::<String>::new());
        assert_eq!(
            asks_why(&json!({"name": "bare"}), "reason"),
            Vec::<String>::new()
        );
    }
}
