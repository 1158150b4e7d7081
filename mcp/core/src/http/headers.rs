//! What a POST carries beside its body (MCP 2026-07-28, Streamable HTTP, "Request
//! Metadata"): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-*`
//! headers a tool's schema asks for with `x-mcp-header`. Those are read from the
//! arguments as forwarded, after the reason came off: no header can carry it.

use crate::jsonrpc::{self, Page};
use crate::outline::Outline;
use base64::Engine;
use reasons_transform::json;
use std::collections::{HashMap, HashSet};

/// The request headers `outline`'s message carries: `Mcp-Method`, `Mcp-Name` for the
/// methods that name what they act on, and a call's `Mcp-Param-*` (its outline's).
pub fn standard(outline: &Outline) -> Vec<(String, String)> {
    let Some(method) = &outline.method else {
        return Vec::new();
    };
    let mut headers = vec![("Mcp-Method".to_string(), encode(method))];
    if let ("tools/call" | "resources/read" | "prompts/get", Some(name)) =
        (method.as_str(), &outline.name)
    {
        headers.push(("Mcp-Name".to_string(), encode(name)));
    }
    headers.extend(outline.params.iter().cloned());
    headers
}

/// The `Mcp-Param-*` headers each tool's schema asks for, learnt from the server's
/// listings as they pass.
#[derive(Debug, Default)]
pub struct ParamHeaders {
    by_tool: HashMap<String, Vec<Mirrored>>,
    /// The tools whose annotations break the rules, which an HTTP client drops.
    broken: HashSet<String>,
}

/// One parameter mirrored into a header.
#[derive(Debug)]
struct Mirrored {
    header: String,
    /// The chain of `properties` keys from the schema's root.
    path: Vec<String>,
    /// Whether the property is of a type a header may carry: a string, an integer or a
    /// boolean, as its schema says (`type`).
    primitive: bool,
}

impl ParamHeaders {
    /// Learns the headers of every tool in a `tools/list` result. A tool whose
    /// annotations break the rules (not a header token, repeated, on no plain property
    /// path, in a schema that repeats a key) gets none: a header the server could
    /// misread is not sent.
    pub fn learn(&mut self, page: &Page) {
        for (at, name) in page.names.iter().enumerate() {
            let Some(name) = name else {
                continue;
            };
            let mut mirrored = Vec::new();
            let readable = page
                .member(at, "inputSchema")
                .is_none_or(|schema| collect(schema, &mut Vec::new(), &mut mirrored));
            let mut seen = HashSet::new();
            let valid = readable
                && mirrored.iter().all(|one| {
                    one.primitive
                        && is_token(&one.header)
                        && seen.insert(one.header.to_ascii_lowercase())
                });
            if valid {
                self.broken.remove(name);
            } else {
                mirrored.clear();
                self.broken.insert(name.clone());
            }
            self.by_tool.insert(name.clone(), mirrored);
        }
    }

    /// Whether `tool`'s `x-mcp-header` annotations break the rules (2026-07-28: a header
    /// name that is no token or repeats, in any case; one on a property that is not a
    /// string, an integer or a boolean; a schema that cannot be read one way), for which
    /// an HTTP client MUST drop it from the tools it lists.
    pub fn breaks_rules(&self, tool: &str) -> bool {
        self.broken.contains(tool)
    }

    /// The `Mcp-Param-*` headers of a call to `tool` with `arguments` (their JSON text).
    /// A value that is absent, null, or not a string, integer or boolean is omitted.
    pub fn of(&self, tool: &str, arguments: &str) -> Vec<(String, String)> {
        let Some(mirrored) = self.by_tool.get(tool) else {
            return Vec::new();
        };
        mirrored
            .iter()
            .filter_map(|one| {
                let path: Vec<&str> = one.path.iter().map(String::as_str).collect();
                let value = jsonrpc::at(arguments, &path)?;
                let text = match value {
                    "true" | "false" => value.to_string(),
                    _ if is_integer(value) => value.to_string(),
                    _ => json::string(value)?,
                };
                Some((format!("Mcp-Param-{}", one.header), encode(&text)))
            })
            .collect()
    }
}

/// Whether the JSON number `text` is an integer as written (no fraction, no exponent)
/// that a 64-bit integer holds, as the specification's integer headers are.
fn is_integer(text: &str) -> bool {
    text.parse::<i64>().is_ok() || text.parse::<u64>().is_ok()
}

/// Every `x-mcp-header` on a property reachable from `schema` through `properties` alone;
/// `false` when a key on the way repeats, or is no text.
fn collect(schema: &str, path: &mut Vec<String>, into: &mut Vec<Mirrored>) -> bool {
    let Some(properties) = jsonrpc::at(schema, &["properties"]) else {
        return true;
    };
    let Ok(members) = jsonrpc::unique(properties) else {
        // Not an object: no properties; an object that repeats a key: unreadable.
        return json::Object::parse(properties).is_none();
    };
    for json::Member {
        key,
        value: property,
    } in members
    {
        let Ok(key) = String::from_utf8(key.into_owned()) else {
            return false;
        };
        path.push(key);
        if jsonrpc::unique(property).is_err() && property.starts_with('{') {
            return false;
        }
        if let Some(header) = jsonrpc::at(property, &["x-mcp-header"]) {
            let kind = jsonrpc::at(property, &["type"]).and_then(json::string);
            into.push(Mirrored {
                // Not a string: an empty name, which fails the token check.
                header: json::string(header).unwrap_or_default(),
                path: path.clone(),
                primitive: matches!(kind.as_deref(), Some("string" | "integer" | "boolean")),
            });
        }
        if !collect(property, path, into) {
            return false;
        }
        path.pop();
    }
    true
}

/// Whether `name` is an HTTP field-name token (RFC 9110, section 5.1).
pub fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&byte))
}

/// A header value as the specification spells it: as it is when it is plain visible
/// ASCII without surrounding whitespace, otherwise `=?base64?…?=` of its UTF-8 (as is a
/// plain value that looks like that sentinel).
pub fn encode(value: &str) -> String {
    let plain = value
        .bytes()
        .all(|byte| (0x20..=0x7e).contains(&byte) || byte == b'\t');
    let trimmed = value.trim_matches([' ', '\t']) == value;
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    if plain && trimmed && !sentinel {
        return value.to_string();
    }
    let encoded = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
    format!("=?base64?{encoded}?=")
}

/// A header value as [`encode`] wrote it: the text of a `=?base64?…?=` value, when its
/// base64 is UTF-8; any other value as it is.
pub fn decode(value: &str) -> Option<String> {
    let Some(encoded) = value
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Some(value.to_string());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn result(value: serde_json::Value) -> String {
        value.to_string()
    }

    /// What `headers` learn from a listing's `result`, read as the proxy reads it.
    fn learn(headers: &mut ParamHeaders, result: &str) {
        if let Some(page) = Page::read(result) {
            headers.learn(&page);
        }
    }

    #[test]
    fn values_are_encoded_as_the_specification_shows() {
        // The specification's own table of examples.
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        for value in ["us-west1", "Hello, 世界", " padded ", "=?base64?looks?="] {
            assert_eq!(decode(&encode(value)).as_deref(), Some(value));
        }
        assert_eq!(decode("=?base64?not base64?="), None);
        assert_eq!(
            encode("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn params_are_read_from_the_arguments_as_forwarded() {
        let mut headers = ParamHeaders::default();
        learn(
            &mut headers,
            &result(json!({"tools": [{
                "name": "sql",
                "inputSchema": {"type": "object", "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "options": {"properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
                    "limit": {"type": "integer", "x-mcp-header": "Limit"},
                    "query": {"type": "string"}
                }}
            }]})),
        );
        let arguments = r#"{"region":"eu","options":{"dry":true},"limit":null}"#;
        let mut got = headers.of("sql", arguments);
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-Dry".to_string(), "true".to_string()),
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
            ]
        );
        assert!(headers.of("other", arguments).is_empty());
    }

    #[test]
    fn a_tool_whose_annotations_break_the_rules_gets_no_headers() {
        let mut headers = ParamHeaders::default();
        learn(
            &mut headers,
            &result(json!({"tools": [
                {"name": "twice", "inputSchema": {"properties": {
                    "a": {"x-mcp-header": "Same"}, "b": {"x-mcp-header": "same"}}}},
                {"name": "spaced", "inputSchema": {"properties": {
                    "a": {"x-mcp-header": "Not a token"}}}}
            ]})),
        );
        // A schema that repeats a key reads two ways: no header is sent from it.
        let repeated = r#"{"tools":[{"name":"repeats","inputSchema":{"properties":{
            "a":{"x-mcp-header":"A"},"a":{"x-mcp-header":"B"}}}}]}"#;
        learn(&mut headers, repeated);
        let arguments = r#"{"a":"x","b":"y"}"#;
        assert!(headers.of("twice", arguments).is_empty());
        assert!(headers.of("spaced", arguments).is_empty());
        assert!(headers.of("repeats", arguments).is_empty());
        for tool in ["twice", "spaced", "repeats"] {
            assert!(headers.breaks_rules(tool), "{tool}");
        }
    }

    #[test]
    fn each_way_an_annotation_breaks_the_rules_is_known() {
        // The conformance suite's invalid declarations (http-invalid-tool-headers): a
        // name empty, spaced, with a colon, a control character or beyond ASCII; one
        // repeated in the same or another case; one on a number, null, object or array.
        let on = |kind: &str, header: &str| json!({"type": kind, "x-mcp-header": header});
        let broken = [
            vec![("v", on("string", ""))],
            vec![("v", on("string", "My Region"))],
            vec![("v", on("string", "Region:Primary"))],
            vec![("v", on("string", "Region\t1"))],
            vec![("v", on("string", "Région"))],
            vec![("a", on("string", "Region")), ("b", on("string", "Region"))],
            vec![
                ("a", on("string", "MyField")),
                ("b", on("string", "myfield")),
            ],
            vec![("v", on("number", "Score"))],
            vec![("v", on("null", "Nil"))],
            vec![("v", on("object", "Data"))],
            vec![("v", on("array", "Items"))],
            vec![("v", json!({"x-mcp-header": "Untyped"}))],
        ];
        assert_eq!(broken.len(), 12);
        let valid = [
            vec![("v", on("string", "Region"))],
            vec![
                ("v", on("integer", "Priority")),
                ("w", on("boolean", "Verbose")),
            ],
            vec![("v", json!({"type": "string"}))],
        ];
        let tool = |name: String, properties: &[(&str, serde_json::Value)]| {
            let properties: serde_json::Map<String, serde_json::Value> = properties
                .iter()
                .map(|(key, value)| (key.to_string(), value.clone()))
                .collect();
            json!({"name": name, "inputSchema": {"type": "object", "properties": properties}})
        };
        let mut tools: Vec<serde_json::Value> = Vec::new();
        for (at, properties) in broken.iter().enumerate() {
            tools.push(tool(format!("broken{at}"), properties));
        }
        for (at, properties) in valid.iter().enumerate() {
            tools.push(tool(format!("valid{at}"), properties));
        }
        let mut headers = ParamHeaders::default();
        learn(&mut headers, &result(json!({ "tools": tools })));
        for (at, properties) in broken.iter().enumerate() {
            assert!(
                headers.breaks_rules(&format!("broken{at}")),
                "{properties:?}"
            );
        }
        for (at, properties) in valid.iter().enumerate() {
            assert!(
                !headers.breaks_rules(&format!("valid{at}")),
                "{properties:?}"
            );
        }
        // A tool listed again without the fault is no longer held to it.
        learn(
            &mut headers,
            &result(json!({"tools": [tool("broken0".into(), &valid[0])]})),
        );
        assert!(!headers.breaks_rules("broken0"));
    }

    #[test]
    fn the_standard_headers_name_the_method_and_what_it_acts_on() {
        let call = Outline {
            method: Some("tools/call".into()),
            name: Some("sql".into()),
            ..Outline::default()
        };
        assert_eq!(
            standard(&call),
            [
                ("Mcp-Method".to_string(), "tools/call".to_string()),
                ("Mcp-Name".to_string(), "sql".to_string())
            ]
        );
        // A listing names nothing it acts on; a batch has no one method.
        let list = Outline {
            method: Some("tools/list".into()),
            name: Some("ignored".into()),
            ..Outline::default()
        };
        assert_eq!(standard(&list).len(), 1);
        // The Skills extension's methods name a skill or a folder, but no header of the
        // specification's names it: only the three methods above carry `Mcp-Name`.
        for (method, name) in [
            ("skills/get", "review"),
            ("resources/directory/read", "skill://review/"),
        ] {
            let other = Outline {
                method: Some(method.into()),
                name: Some(name.into()),
                ..Outline::default()
            };
            assert_eq!(
                standard(&other),
                [("Mcp-Method".to_string(), method.to_string())]
            );
        }
        assert!(standard(&Outline::default()).is_empty());
        // A call's Mcp-Param-* headers, learnt by the proxy, come with the rest.
        let param = ("Mcp-Param-Region".to_string(), "eu".to_string());
        let with_params = Outline {
            params: vec![param.clone()],
            ..call
        };
        assert_eq!(standard(&with_params).last(), Some(&param));
        assert_eq!(standard(&with_params).len(), 3);
    }
}
