//! Whether a parameters schema can take the reason property (R4) and whether it already
//! owns the name (R5).

use crate::json::{self, Object};

/// A schema the layer can extend.
pub(crate) struct Extensible<'a> {
    /// The schema object.
    pub schema: Object<'a>,
    /// Its `properties`, when present.
    pub properties: Option<Object<'a>>,
    /// Its `required` list's text and how many names it holds, when present.
    pub required: Option<(&'a str, usize)>,
}

/// Why a schema is passed through.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Untouched {
    /// There is no object schema to extend without inventing one (R4).
    Unreadable,
    /// The schema owns the name, or may own it (R5).
    Collision,
}

/// The composite keywords whose branches can declare properties of the schema itself.
const BRANCHES: [&str; 3] = ["allOf", "anyOf", "oneOf"];

/// Reads `text` as a parameters schema that the parameter `name` can be added to.
pub(crate) fn read<'a>(text: &'a str, name: &str) -> Result<Extensible<'a>, Untouched> {
    let schema = Object::parse(text).ok_or(Untouched::Unreadable)?;
    if let Some(kind) = schema.get("type")
        && json::string(kind).as_deref() != Some("object")
    {
        return Err(Untouched::Unreadable);
    }
    let properties = match schema.object("properties") {
        None => None,
        Some(properties) => Some(properties.ok_or(Untouched::Unreadable)?),
    };
    let required = match schema.get("required") {
        None => None,
        Some(raw) => Some((raw, json::strings(raw).ok_or(Untouched::Unreadable)?)),
    };
    if owns(
        &schema,
        properties.as_ref(),
        required.as_ref().map(|(_, names)| names),
        name,
    ) || branches_may_own(&schema, name)
    {
        return Err(Untouched::Collision);
    }
    Ok(Extensible {
        required: required.map(|(raw, names)| (raw, names.len())),
        schema,
        properties,
    })
}

/// Whether a schema (or a branch) owns `name`: declares it, requires it, or refers to a
/// definition the layer cannot see into.
fn owns(
    schema: &Object<'_>,
    properties: Option<&Object<'_>>,
    required: Option<&alloc::vec::Vec<alloc::string::String>>,
    name: &str,
) -> bool {
    (schema.has("$ref") && !cfg!(feature = "mutant-ignore-ref"))
        || properties.is_some_and(|properties| properties.has(name))
        || required.is_some_and(|required| required.iter().any(|n| n == name))
}

/// Whether any branch of a top-level `allOf`/`anyOf`/`oneOf` owns `name`. A composite
/// the layer cannot read is taken to own it: when in doubt, do not strip.
fn branches_may_own(schema: &Object<'_>, name: &str) -> bool {
    BRANCHES
        .iter()
        .filter_map(|keyword| schema.get(keyword))
        .any(|branches| match json::elements(branches) {
            None => true,
            Some(branches) => branches.iter().any(|branch| branch_may_own(branch, name)),
        })
}

fn branch_may_own(text: &str, name: &str) -> bool {
    let Some(branch) = Object::parse(text) else {
        // `true` and `false` are schemas too, and own nothing.
        return !matches!(text, "true" | "false");
    };
    let properties = match branch.object("properties") {
        None => None,
        Some(None) => return true,
        Some(Some(properties)) => Some(properties),
    };
    let required = match branch.get("required") {
        None => None,
        Some(raw) => match json::strings(raw) {
            None => return true,
            Some(required) => Some(required),
        },
    };
    owns(&branch, properties.as_ref(), required.as_ref(), name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verdict(schema: &str) -> Result<(), Untouched> {
        read(schema, "reason").map(|_| ())
    }

    #[test]
    fn unreadable_schemas() {
        // R4
        for schema in [
            "[]",
            "null",
            r#"{"type":"string"}"#,
            r#"{"type":["object","null"]}"#,
            r#"{"type":"object","properties":null}"#,
            r#"{"type":"object","properties":[]}"#,
            r#"{"type":"object","required":"reason"}"#,
            r#"{"type":"object","required":[1]}"#,
        ] {
            assert_eq!(verdict(schema), Err(Untouched::Unreadable), "{schema}");
        }
    }

    #[test]
    fn readable_schemas() {
        // R4
        for schema in [
            "{}",
            r#"{"type":"object"}"#,
            r#"{"type":"obj\u0065ct","properties":{}}"#,
            r#"{"properties":{"a":{}},"required":["a"]}"#,
            r#"{"allOf":[{"properties":{"a":{}}},true]}"#,
        ] {
            assert!(verdict(schema).is_ok(), "{schema}");
        }
    }

    #[test]
    fn collisions() {
        // R5
        for schema in [
            r#"{"properties":{"reason":{"type":"string"}}}"#,
            r#"{"properties":{"\u0072eason":{}}}"#,
            r#"{"required":["reason"]}"#,
            r##"{"$ref":"#/$defs/args"}"##,
            r#"{"allOf":[{"properties":{"reason":{}}}]}"#,
            r#"{"anyOf":[{"required":["reason"]}]}"#,
            r##"{"oneOf":[{"$ref":"#/$defs/a"}]}"##,
            r#"{"oneOf":{"properties":{}}}"#,
            r#"{"allOf":[{"properties":null}]}"#,
            r#"{"allOf":[1]}"#,
        ] {
            assert_eq!(verdict(schema), Err(Untouched::Collision), "{schema}");
        }
    }
}
