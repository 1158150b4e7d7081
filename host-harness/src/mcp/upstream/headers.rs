//! What a POST carries beside its body (MCP 2026-07-28, Streamable HTTP, "Request
//! Metadata"): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-*`
//! headers a tool's schema asks for with `x-mcp-header`. Those are read from the
//! arguments as forwarded, after the reason came off: no header can carry it.

use base64::Engine;
use serde_json::Value;
use std::collections::HashMap;

/// The `_meta` key a 2026-07-28 request carries its protocol version under.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// What the transport needs to know of one message the proxy sends.
#[derive(Debug, Default)]
pub struct Outline {
    /// The ids of its requests: each is owed an answer.
    pub ids: Vec<Value>,
    /// Its method, for a single request or notification.
    pub method: Option<String>,
    /// `params.name`, or `params.uri`.
    pub name: Option<String>,
    /// The protocol version its `_meta` names (2026-07-28 and later).
    pub version: Option<String>,
    /// A `tools/call`'s arguments.
    pub arguments: Option<Value>,
}

impl Outline {
    /// The outline of `message`, one JSON value the proxy already read strictly.
    pub fn of(message: &[u8]) -> Outline {
        let Ok(value) = serde_json::from_slice::<Value>(message) else {
            return Outline::default();
        };
        if let Value::Array(batch) = &value {
            return Outline {
                ids: batch.iter().filter_map(request_id).collect(),
                ..Outline::default()
            };
        }
        let params = value.get("params");
        let text = |value: Option<&Value>| value.and_then(Value::as_str).map(str::to_string);
        Outline {
            ids: request_id(&value).into_iter().collect(),
            method: text(value.get("method")),
            name: text(params.and_then(|params| params.get("name")))
                .or_else(|| text(params.and_then(|params| params.get("uri")))),
            version: text(
                params
                    .and_then(|params| params.get("_meta"))
                    .and_then(|meta| meta.get(VERSION_KEY)),
            ),
            arguments: params.and_then(|params| params.get("arguments")).cloned(),
        }
    }

    /// The standard headers this message carries: `Mcp-Method`, and `Mcp-Name` for the
    /// methods that name what they act on.
    pub fn standard(&self) -> Vec<(String, String)> {
        let Some(method) = &self.method else {
            return Vec::new();
        };
        let mut headers = vec![("Mcp-Method".to_string(), encode(method))];
        if let ("tools/call" | "resources/read" | "prompts/get", Some(name)) =
            (method.as_str(), &self.name)
        {
            headers.push(("Mcp-Name".to_string(), encode(name)));
        }
        headers
    }
}

/// The id of `message` when it is a request (a method and an id), which is owed an answer.
fn request_id(message: &Value) -> Option<Value> {
    message.get("method")?;
    message.get("id").cloned()
}

/// The `Mcp-Param-*` headers each tool's schema asks for, learnt from the server's
/// listings as they pass.
#[derive(Debug, Default)]
pub struct ParamHeaders {
    by_tool: HashMap<String, Vec<Mirrored>>,
}

/// One parameter mirrored into a header.
#[derive(Debug)]
struct Mirrored {
    header: String,
    /// The chain of `properties` keys from the schema's root.
    path: Vec<String>,
}

impl ParamHeaders {
    /// Learns the headers of every tool in a `tools/list` result. A tool whose
    /// annotations break the rules (not a header token, repeated, on no plain property
    /// path) gets none: a header the server could misread is not sent.
    pub fn learn(&mut self, result: &Value) {
        let Some(tools) = result.get("tools").and_then(Value::as_array) else {
            return;
        };
        for tool in tools {
            let Some(name) = tool.get("name").and_then(Value::as_str) else {
                continue;
            };
            let mut mirrored = Vec::new();
            if let Some(schema) = tool.get("inputSchema") {
                collect(schema, &mut Vec::new(), &mut mirrored);
            }
            let mut seen = std::collections::HashSet::new();
            let valid = mirrored
                .iter()
                .all(|one| is_token(&one.header) && seen.insert(one.header.to_ascii_lowercase()));
            if !valid {
                mirrored.clear();
            }
            self.by_tool.insert(name.to_string(), mirrored);
        }
    }

    /// The `Mcp-Param-*` headers of a call to `tool` with `arguments`. A value that is
    /// absent, null, or not a string, integer or boolean is omitted.
    pub fn of(&self, tool: &str, arguments: &Value) -> Vec<(String, String)> {
        let Some(mirrored) = self.by_tool.get(tool) else {
            return Vec::new();
        };
        mirrored
            .iter()
            .filter_map(|one| {
                let value = one
                    .path
                    .iter()
                    .try_fold(arguments, |value, key| value.get(key))?;
                let text = match value {
                    Value::String(text) => text.clone(),
                    Value::Bool(flag) => flag.to_string(),
                    Value::Number(number) if number.is_i64() || number.is_u64() => {
                        number.to_string()
                    }
                    _ => return None,
                };
                Some((format!("Mcp-Param-{}", one.header), encode(&text)))
            })
            .collect()
    }
}

/// Every `x-mcp-header` on a property reachable from `schema` through `properties` alone.
fn collect(schema: &Value, path: &mut Vec<String>, into: &mut Vec<Mirrored>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        path.push(key.clone());
        if let Some(header) = property.get("x-mcp-header") {
            into.push(Mirrored {
                // Not a string: an empty name, which fails the token check.
                header: header.as_str().unwrap_or_default().to_string(),
                path: path.clone(),
            });
        }
        collect(property, path, into);
        path.pop();
    }
}

/// Whether `name` is an HTTP field-name token (RFC 9110, section 5.1).
fn is_token(name: &str) -> bool {
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_encoded_as_the_specification_shows() {
        // The specification's own table of examples.
        assert_eq!(encode("us-west1"), "us-west1");
        assert_eq!(encode("Hello, 世界"), "=?base64?SGVsbG8sIOS4lueVjA==?=");
        assert_eq!(encode(" padded "), "=?base64?IHBhZGRlZCA=?=");
        assert_eq!(encode("line1\nline2"), "=?base64?bGluZTEKbGluZTI=?=");
        assert_eq!(
            encode("=?base64?literal?="),
            "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="
        );
    }

    #[test]
    fn params_are_read_from_the_arguments_as_forwarded() {
        let mut headers = ParamHeaders::default();
        headers.learn(&json!({"tools": [{
            "name": "sql",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "options": {"properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
                "limit": {"type": "integer", "x-mcp-header": "Limit"},
                "query": {"type": "string"}
            }}
        }]}));
        let arguments = json!({"region": "eu", "options": {"dry": true}, "limit": null});
        let mut got = headers.of("sql", &arguments);
        got.sort();
        assert_eq!(
            got,
            [
                ("Mcp-Param-Dry".to_string(), "true".to_string()),
                ("Mcp-Param-Region".to_string(), "eu".to_string()),
            ]
        );
        assert!(headers.of("other", &arguments).is_empty());
    }

    #[test]
    fn a_tool_whose_annotations_break_the_rules_gets_no_headers() {
        let mut headers = ParamHeaders::default();
        headers.learn(&json!({"tools": [
            {"name": "twice", "inputSchema": {"properties": {
                "a": {"x-mcp-header": "Same"}, "b": {"x-mcp-header": "same"}}}},
            {"name": "spaced", "inputSchema": {"properties": {
                "a": {"x-mcp-header": "Not a token"}}}}
        ]}));
        let arguments = json!({"a": "x", "b": "y"});
        assert!(headers.of("twice", &arguments).is_empty());
        assert!(headers.of("spaced", &arguments).is_empty());
    }

    #[test]
    fn an_outline_names_what_a_message_is_owed_and_carries() {
        let outline = Outline::of(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sql",
                "arguments":{"q":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(outline.ids, [json!(7)]);
        assert_eq!(outline.version.as_deref(), Some("2026-07-28"));
        assert_eq!(
            outline.standard(),
            [
                ("Mcp-Method".to_string(), "tools/call".to_string()),
                ("Mcp-Name".to_string(), "sql".to_string())
            ]
        );
        // A response the client sends to the server is owed nothing.
        assert!(
            Outline::of(br#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
                .ids
                .is_empty()
        );
        let batch = Outline::of(br#"[{"id":1,"method":"a"},{"method":"b"},{"id":2,"result":{}}]"#);
        assert_eq!(batch.ids, [json!(1)]);
    }
}
