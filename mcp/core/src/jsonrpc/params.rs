//! The params the proxy acts on: a call's tool and arguments, a request's `_meta`, a
//! listing's page of tools.

use super::{member, unique};
use reasons_transform::json::{self, Member};

/// The parts of `tools/call`'s params the proxy reads.
pub struct CallParams<'a> {
    /// The tool's name.
    pub name: String,
    /// The arguments' exact text: an object, or `None` when the call has none.
    pub arguments: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    /// Reads `params`, or says what makes it a call no server could run as sent.
    pub fn read(params: Option<&'a str>) -> Result<CallParams<'a>, String> {
        let params = params.ok_or("a tools/call without params")?;
        let members = unique(params).map_err(|why| format!("the params {why}"))?;
        let name = member(&members, "name")
            .and_then(json::string)
            .ok_or("the tool's name is not text")?;
        let arguments = match member(&members, "arguments") {
            None => None,
            Some(arguments) if arguments.starts_with('{') => Some(arguments),
            Some(_) => return Err("the arguments are not a JSON object".into()),
        };
        Ok(CallParams { name, arguments })
    }
}

/// The request's `params._meta`, which a 2026-07-28 request carries its protocol
/// version and capabilities in, for the proxy's own requests to carry the same: as JSON
/// text, without the `progressToken` that belongs to that one request.
pub fn meta(params: Option<&str>) -> Option<String> {
    let meta = member(&unique(params?).ok()?, "_meta")?;
    let members = unique(meta).ok()?;
    let kept: Vec<String> = members
        .iter()
        .filter(|member| member.key.as_ref() != b"progressToken")
        .map(|Member { key, value }| {
            let key = String::from_utf8_lossy(key);
            format!(
                "{}:{}",
                serde_json::to_string(&key).unwrap_or_default(),
                value
            )
        })
        .collect();
    Some(format!("{{{}}}", kept.join(",")))
}

/// A `tools/list` result, as far as the proxy reads it.
pub struct Page<'a> {
    /// The `tools` member's exact text: what the proxy replaces.
    pub array: &'a str,
    /// Each declaration's exact text.
    pub tools: Vec<&'a str>,
    /// The cursor for the next page, if there is one.
    pub next_cursor: Option<&'a str>,
}

impl<'a> Page<'a> {
    /// Reads `result`; `None` when it is not one unambiguous list of tools.
    pub fn read(result: &'a str) -> Option<Page<'a>> {
        let members = unique(result).ok()?;
        let tools = member(&members, "tools")?;
        let next_cursor = member(&members, "nextCursor").filter(|cursor| *cursor != "null");
        // A cursor is an opaque string (MCP's pagination): any other value names no
        // page the proxy can ask for, so the listing is not one it can finish.
        if next_cursor.is_some_and(|cursor| json::string(cursor).is_none()) {
            return None;
        }
        Some(Page {
            array: tools,
            tools: json::elements(tools)?,
            next_cursor,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_params_are_read_strictly() {
        // R18
        let params = |text| CallParams::read(Some(text));
        assert_eq!(
            params(r#"{"name":"a","arguments":{"x":1}}"#).unwrap().name,
            "a"
        );
        assert!(params(r#"{"name":"a"}"#).unwrap().arguments.is_none());
        for (text, why) in [
            (r#"{"name":"a","name":"b"}"#, "repeats the key"),
            (
                r#"{"name":"a","arguments":{},"arguments":{"reason":1}}"#,
                "repeats the key",
            ),
            (r#"{"name":5}"#, "name is not text"),
            (
                r#"{"name":"a","arguments":"{\"reason\":1}"}"#,
                "not a JSON object",
            ),
        ] {
            assert!(params(text).err().unwrap().contains(why), "{text}");
        }
    }
}
