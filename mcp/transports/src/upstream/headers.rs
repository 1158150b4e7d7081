//! What a POST carries beside its body (MCP 2026-07-28, Streamable HTTP, "Request
//! Metadata"): `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, and the `Mcp-Param-*`
//! headers a tool's schema asks for with `x-mcp-header`. Those are read from the
//! arguments as forwarded, after the reason came off: no header can carry it.

use base64::Engine;
use reasons_mcp::json;
use reasons_mcp::jsonrpc::{self, Id, Line, Message, Page};
use serde_json::value::RawValue;
use std::collections::HashMap;

/// The `_meta` key a 2026-07-28 request carries its protocol version under.
const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";

/// What the transport needs to know of one message the proxy sends, read by the proxy's
/// own strict reader, as the proxy read it: whatever it relays (a lone surrogate, any
/// depth of nesting) is outlined, so that every request is owed its answer and carries
/// its era's headers.
#[derive(Debug, Default)]
pub struct Outline {
    /// The ids of its requests: each is owed an answer.
    pub ids: Vec<Id>,
    /// Its method, for a single request or notification.
    pub method: Option<String>,
    /// `params.name`, or `params.uri`.
    pub name: Option<String>,
    /// The protocol version its `_meta` names (2026-07-28 and later).
    pub version: Option<String>,
    /// A `tools/call`'s arguments, as their exact text.
    pub arguments: Option<String>,
}

impl Outline {
    /// The outline of `message`, a line the proxy already read strictly.
    pub fn of(message: &[u8]) -> Outline {
        let read = match jsonrpc::read_line(message) {
            Ok(Line::One(read)) => read,
            Ok(Line::Batch(reads)) => {
                return Outline {
                    ids: reads.iter().filter_map(request_id).collect(),
                    ..Outline::default()
                };
            }
            Err(_) => return Outline::default(),
        };
        let (method, params) = match &read.message {
            Ok(Message::Request { method, params, .. }) => (method.clone(), *params),
            Ok(Message::Notification { method }) => (
                method.clone(),
                jsonrpc::at(read.text, &["params"]).and_then(raw),
            ),
            _ => return Outline::default(),
        };
        let params = params.map(RawValue::get);
        let text_at = |path: &[&str]| params.and_then(|params| text(jsonrpc::at(params, path)?));
        Outline {
            ids: request_id(&read).into_iter().collect(),
            method: Some(method),
            name: text_at(&["name"]).or_else(|| text_at(&["uri"])),
            version: text_at(&["_meta", VERSION_KEY]),
            arguments: params
                .and_then(|params| jsonrpc::at(params, &["arguments"]))
                .map(str::to_string),
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

/// The id of `read` when it is a request, which is owed an answer.
fn request_id(read: &jsonrpc::Read) -> Option<Id> {
    match &read.message {
        Ok(Message::Request { id, .. }) => Some(id.clone()),
        _ => None,
    }
}

/// `text` as the raw JSON value it is (a slice the strict reader already took).
fn raw(text: &str) -> Option<&RawValue> {
    serde_json::from_str(text).ok()
}

/// The characters of the JSON string whose text is `value`; `None` for another value,
/// or for a string no header could carry (a lone surrogate is no character).
fn text(value: &str) -> Option<String> {
    String::from_utf8(json::string(raw(value)?)?).ok()
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
    /// path, in a schema that repeats a key) gets none: a header the server could
    /// misread is not sent.
    pub fn learn(&mut self, result: &RawValue) {
        let Some(page) = Page::read(result) else {
            return;
        };
        for tool in page.tools {
            let Some(name) = jsonrpc::at(tool, &["name"]).and_then(text) else {
                continue;
            };
            let mut mirrored = Vec::new();
            let readable = jsonrpc::at(tool, &["inputSchema"])
                .is_none_or(|schema| collect(schema, &mut Vec::new(), &mut mirrored));
            let mut seen = std::collections::HashSet::new();
            let valid = readable
                && mirrored.iter().all(|one| {
                    is_token(&one.header) && seen.insert(one.header.to_ascii_lowercase())
                });
            if !valid {
                mirrored.clear();
            }
            self.by_tool.insert(name, mirrored);
        }
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
                    _ => text(value)?,
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
        return json::members(properties).is_none();
    };
    for (key, property) in members {
        let Ok(key) = String::from_utf8(key.into_owned()) else {
            return false;
        };
        let property = property.get();
        path.push(key);
        if jsonrpc::unique(property).is_err() && property.starts_with('{') {
            return false;
        }
        if let Some(header) = jsonrpc::at(property, &["x-mcp-header"]) {
            into.push(Mirrored {
                // Not a string: an empty name, which fails the token check.
                header: text(header).unwrap_or_default(),
                path: path.clone(),
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

    fn result(value: serde_json::Value) -> Box<RawValue> {
        RawValue::from_string(value.to_string()).unwrap()
    }

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
        headers.learn(&result(json!({"tools": [{
            "name": "sql",
            "inputSchema": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"},
                "options": {"properties": {"dry": {"type": "boolean", "x-mcp-header": "Dry"}}},
                "limit": {"type": "integer", "x-mcp-header": "Limit"},
                "query": {"type": "string"}
            }}
        }]})));
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
        headers.learn(&result(json!({"tools": [
            {"name": "twice", "inputSchema": {"properties": {
                "a": {"x-mcp-header": "Same"}, "b": {"x-mcp-header": "same"}}}},
            {"name": "spaced", "inputSchema": {"properties": {
                "a": {"x-mcp-header": "Not a token"}}}}
        ]})));
        // A schema that repeats a key reads two ways: no header is sent from it.
        let repeated = r#"{"tools":[{"name":"repeats","inputSchema":{"properties":{
            "a":{"x-mcp-header":"A"},"a":{"x-mcp-header":"B"}}}}]}"#;
        headers.learn(&RawValue::from_string(repeated.into()).unwrap());
        let arguments = r#"{"a":"x","b":"y"}"#;
        assert!(headers.of("twice", arguments).is_empty());
        assert!(headers.of("spaced", arguments).is_empty());
        assert!(headers.of("repeats", arguments).is_empty());
    }

    #[test]
    fn an_outline_names_what_a_message_is_owed_and_carries() {
        let outline = Outline::of(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"sql",
                "arguments":{"q":1},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#,
        );
        assert_eq!(outline.ids, [Id::parse("7").unwrap()]);
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
        let batch = Outline::of(br#"[{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},{"jsonrpc":"2.0","id":2,"result":{}}]"#);
        assert_eq!(batch.ids, [Id::parse("1").unwrap()]);
    }

    #[test]
    fn whatever_the_proxy_relays_is_outlined() {
        // R19, R20: a lone surrogate and nesting deeper than serde_json's 128 are what a
        // server takes, and the proxy relays them: the call is still owed its answer and
        // carries its headers.
        let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let message = format!(
            r#"{{"jsonrpc":"2.0","id":"c","method":"tools/call","params":{{"name":"sql","arguments":{{"q":"\ud800","deep":{deep}}},"_meta":{{"{VERSION_KEY}":"2026-07-28"}}}}}}"#
        );
        let outline = Outline::of(message.as_bytes());
        assert_eq!(outline.ids, [Id::parse(r#""c""#).unwrap()]);
        assert_eq!(outline.version.as_deref(), Some("2026-07-28"));
        assert_eq!(outline.standard().len(), 2, "{:?}", outline.standard());
        let mut headers = ParamHeaders::default();
        headers.learn(&result(
            json!({"tools": [{"name": "sql", "inputSchema": {"properties": {
            "q": {"x-mcp-header": "Q"}}}}]}),
        ));
        // A lone surrogate is no character a header could carry: the header is left out.
        assert!(
            headers
                .of("sql", outline.arguments.as_deref().unwrap())
                .is_empty()
        );
    }
}
