//! The params the proxy acts on, read once with their message: their members and
//! `_meta`'s, a call's tool and arguments, a listing's page of tools.

use super::{member, repeated, unique};
use reasons_transform::json::{self, Member, Object};

/// A message's params, read with it: their exact text, and their members when they are
/// one object whose every key is given once (else why not), and `_meta`'s: every later
/// step (the call's tool and arguments, the outline, admission, the inbound checks, the
/// `_meta` the proxy's own requests carry) takes them from here, and none reads the
/// params again.
#[derive(Debug)]
pub struct Params<'a> {
    /// The params' exact text.
    pub text: &'a str,
    /// Their members, repeats included; `None` when they are not one object.
    members: Option<Vec<Member<'a>>>,
    /// Why they cannot be read one way only: the first key they repeat.
    repeated: Option<String>,
    /// `_meta`'s members, when it is one object whose every key is given once.
    meta: Option<Vec<Member<'a>>>,
}

impl<'a> Params<'a> {
    /// Reads the params whose exact text is `text`.
    pub fn read(text: &'a str) -> Params<'a> {
        Params::with(text, Object::parse(text).map(|object| object.members))
    }

    /// The params whose exact text is `text` and whose members are `members` (read with
    /// the message, in the same pass; `None`: they are not an object).
    pub(super) fn with(text: &'a str, members: Option<Vec<Member<'a>>>) -> Params<'a> {
        let repeated = members.as_deref().and_then(repeated);
        let meta = match (&members, &repeated) {
            (Some(members), None) => member(members, "_meta").and_then(|meta| unique(meta).ok()),
            _ => None,
        };
        Params::of(text, members, repeated, meta)
    }

    /// Params from their parts, as a kept reading gives them back.
    pub(super) fn of(
        text: &'a str,
        members: Option<Vec<Member<'a>>>,
        repeated: Option<String>,
        meta: Option<Vec<Member<'a>>>,
    ) -> Params<'a> {
        Params {
            text,
            members,
            repeated,
            meta,
        }
    }

    /// Their members, or why they have none the proxy can read one way only.
    pub fn members(&self) -> Result<&[Member<'a>], String> {
        match (&self.members, &self.repeated) {
            (None, _) => Err("is not a JSON object".into()),
            (Some(_), Some(why)) => Err(why.clone()),
            (Some(members), None) => Ok(members),
        }
    }

    /// Every member, repeats included; `None` when they are not one object.
    pub(super) fn all_members(&self) -> Option<&[Member<'a>]> {
        self.members.as_deref()
    }

    /// Why they cannot be read one way only: the first key they repeat.
    pub fn repeated(&self) -> Option<&str> {
        self.repeated.as_deref()
    }

    /// `_meta`'s members, when it is one readable object.
    pub(super) fn meta_members(&self) -> Option<&[Member<'a>]> {
        self.meta.as_deref()
    }

    /// The exact text of the member `key`; `None` when there is none, or the params
    /// cannot be read one way only.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        member(self.members().ok()?, key)
    }

    /// The exact text of `_meta`'s member `key`.
    pub fn in_meta(&self, key: &str) -> Option<&'a str> {
        member(self.meta.as_deref()?, key)
    }

    /// The request's `_meta`, which a 2026-07-28 request carries its protocol version
    /// and capabilities in, for the proxy's own requests to carry the same: as JSON
    /// text, without the `progressToken` that belongs to that one request.
    pub fn meta_without_token(&self) -> Option<String> {
        let kept: Vec<String> = self
            .meta
            .as_deref()?
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
}

/// The parts of `tools/call`'s params the proxy reads.
pub struct CallParams<'a> {
    /// The tool's name.
    pub name: String,
    /// The arguments' exact text: an object, or `None` when the call has none.
    pub arguments: Option<&'a str>,
}

impl<'a> CallParams<'a> {
    /// Takes a call's tool and arguments from its `params`, or says what makes it a
    /// call no server could run as sent.
    pub fn read(params: Option<&Params<'a>>) -> Result<CallParams<'a>, String> {
        let params = params.ok_or("a tools/call without params")?;
        let members = params
            .members()
            .map_err(|why| format!("the params {why}"))?;
        let name = member(members, "name")
            .and_then(json::string)
            .ok_or("the tool's name is not text")?;
        let arguments = match member(members, "arguments") {
            None => None,
            Some(arguments) if arguments.starts_with('{') => Some(arguments),
            Some(_) => return Err("the arguments are not a JSON object".into()),
        };
        Ok(CallParams { name, arguments })
    }
}

/// A `tools/list` result, as far as the proxy reads it: read once, and shared by every
/// step that takes something from it (the headers a tool declares, the catalogue's
/// names, the page the client gets).
pub struct Page<'a> {
    /// The `tools` member's exact text: what the proxy replaces.
    pub array: &'a str,
    /// Each declaration's exact text.
    pub tools: Vec<&'a str>,
    /// Each declaration's top-level members, read once; `None` for one that is not an
    /// object whose every key is given once.
    pub members: Vec<Option<Vec<Member<'a>>>>,
    /// Each declaration's `name`, decoded once; `None` where it has none that is text.
    pub names: Vec<Option<String>>,
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
        let declarations = json::elements(tools)?;
        let members: Vec<_> = declarations.iter().map(|tool| unique(tool).ok()).collect();
        let names = (members.iter())
            .map(|members| member(members.as_deref()?, "name").and_then(json::string))
            .collect();
        Some(Page {
            array: tools,
            members,
            names,
            tools: declarations,
            next_cursor,
        })
    }

    /// The exact text of the member `key` of the declaration at `at`.
    pub fn member(&self, at: usize, key: &str) -> Option<&'a str> {
        member(self.members.get(at)?.as_deref()?, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn call_params_are_read_strictly() {
        // R18
        let params = |text| CallParams::read(Some(&Params::read(text)));
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
