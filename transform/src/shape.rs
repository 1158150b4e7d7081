//! The wire shapes a tool declaration comes in (R3), and where each keeps its schema.
//!
//! A shape is a row in [`SHAPES`]: supporting another host's format is one more row.

use crate::json::{self, Object};
use alloc::string::String;
use alloc::vec::Vec;

/// One wire shape of a tool declaration.
pub(crate) struct Shape {
    /// The top-level key whose presence decides the shape.
    pub key: &'static str,
    /// The object holding the name, the schema and `strict`: the declaration itself
    /// when `None`, else the object at this key of it.
    pub container: Option<&'static str>,
    /// The key, in the container, of the parameters' JSON Schema.
    pub schema: &'static str,
    /// Whether the shape has OpenAI's `strict` flag (R6).
    pub has_strict: bool,
}

/// Every shape the layer reads.
pub(crate) const SHAPES: [Shape; 4] = [
    // OpenAI chat completions: {"type":"function","function":{"name","parameters","strict"?}}
    Shape {
        key: "function",
        container: Some("function"),
        schema: "parameters",
        has_strict: true,
    },
    // OpenAI Responses: {"type":"function","name","parameters","strict"?}
    Shape {
        key: "parameters",
        container: None,
        schema: "parameters",
        has_strict: true,
    },
    // Anthropic messages: {"name","input_schema"}
    Shape {
        key: "input_schema",
        container: None,
        schema: "input_schema",
        has_strict: false,
    },
    // MCP tools/list: {"name","inputSchema"}
    Shape {
        key: "inputSchema",
        container: None,
        schema: "inputSchema",
        has_strict: false,
    },
];

/// A declaration read through its shape.
pub(crate) struct Found<'a> {
    /// The tool's name.
    pub name: String,
    /// The schema's text (not yet known to be an object).
    pub schema: &'a str,
    /// Whether the tool is an OpenAI strict tool.
    pub strict: bool,
}

/// Reads `declaration` in the one shape it has; `None` when it has no shape, more than
/// one (ambiguous), no string name, or no schema where its shape keeps one (R3, R4).
pub(crate) fn find<'a>(declaration: &Object<'a>) -> Option<Found<'a>> {
    let mut shapes = SHAPES.iter().filter(|shape| declaration.has(shape.key));
    let shape = shapes.next()?;
    if shapes.next().is_some() && !cfg!(feature = "mutant-ambiguous-shape") {
        return None;
    }
    let container = match shape.container {
        None => None,
        Some(key) => Some(declaration.object(key)??),
    };
    let container = container.as_ref().unwrap_or(declaration);
    Some(Found {
        name: json::string(container.get("name")?)?,
        schema: container.get(shape.schema)?,
        strict: shape.has_strict
            && container.get("strict").is_some_and(|v| {
                v == "true" || cfg!(feature = "mutant-strict-truthy") && v != "false"
            }),
    })
}

/// Every name a declaration could be known by, read or not: a host may route a call to
/// any of them, so an unreadable declaration must still poison its names (R7).
pub(crate) fn names(declaration: &Object<'_>) -> Vec<String> {
    let nested = SHAPES
        .iter()
        .filter_map(|shape| shape.container)
        .filter_map(|key| declaration.object(key).flatten());
    let mut names: Vec<String> = nested
        .filter_map(|container| container.get("name").and_then(json::string))
        .collect();
    names.extend(declaration.get("name").and_then(json::string));
    names
}
