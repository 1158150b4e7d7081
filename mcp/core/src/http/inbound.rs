//! What a client's 2026-07-28 POST must say of itself before any server sees it (MCP
//! 2026-07-28, Streamable HTTP, "Request Metadata", and the per-request `_meta`
//! envelope): its `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers must agree
//! with its body, and the body must carry the envelope its header promises, in a
//! revision the proxy reads.
//!
//! A server that reads the body MUST reject a request whose headers are missing or
//! disagree with it, and an intermediary MUST answer it with an HTTP error: whatever
//! routed, logged or authorized the request by its headers saw a request other than the
//! one the server would run. The proxy rebuilds the headers from the body on the way
//! out, so the server never sees the disagreement; it must refuse it here instead, as the
//! server would have. A message of a revision it does not know is one it cannot read,
//! and fail-closed, it goes no further.

use crate::http::headers;
use crate::jsonrpc::{self, INVALID_PARAMS, Message, Read, Refusal};
use crate::outline::{CAPABILITIES_KEY, VERSION_KEY};
use reasons_transform::json;

/// The revisions whose requests carry their own protocol version (the per-request
/// `_meta` envelope), which the proxy reads.
pub const MODERN: &[&str] = &["2026-07-28"];

/// The JSON-RPC error of a request whose headers disagree with its body.
pub const HEADER_MISMATCH: i64 = -32020;
/// The JSON-RPC error of a request that needs a capability its client did not declare.
pub const MISSING_CAPABILITY: i64 = -32021;
/// The JSON-RPC error of a request in a protocol revision the receiver does not serve.
pub const UNSUPPORTED_VERSION: i64 = -32022;

/// A request refused on the way in: the HTTP status that answers it, with its error.
#[derive(Debug)]
pub struct Rejected {
    /// The HTTP status of the answer.
    pub status: u16,
    /// Boxed, as a `Result`'s error is best kept small.
    pub refusal: Box<Refusal>,
}

/// Checks `read`, a message a client POSTed, against the headers it came with
/// (`header(name)`, the named header's value, any case of its name); a message of an
/// earlier revision, which carries no envelope and whose header names none of
/// [`MODERN`], passes as it is.
pub fn check(read: &Read, header: impl Fn(&str) -> Option<String>) -> Result<(), Rejected> {
    let (id, method, params) = match &read.message {
        Ok(Message::Request {
            id, method, params, ..
        }) => (Some(id), method, params.as_ref()),
        Ok(Message::Notification { method, params })
            if !cfg!(feature = "mutant-inbound-notifications-pass") =>
        {
            (None, method, params.as_ref())
        }
        _ => return Ok(()),
    };
    let refuse = |status: u16, code: i64, message: String| Rejected {
        status,
        refusal: Box::new(Refusal::new(id.cloned(), code, message)),
    };
    let member = |key: &str| params.and_then(|params| params.get(key));
    let meta = member("_meta");
    let in_meta = |key: &str| params.and_then(|params| params.in_meta(key));
    let said = header("mcp-protocol-version");
    let Some(claim) = in_meta(VERSION_KEY) else {
        // No envelope: an earlier revision's message, unless its header says otherwise.
        return match said.filter(|version| MODERN.contains(&version.as_str())) {
            Some(version) => {
                let missing = if meta.is_none() { "_meta" } else { VERSION_KEY };
                let why = format!(
                    "the MCP-Protocol-Version header names {version}, but the request lacks the \
                     per-request envelope's {missing}"
                );
                let data = serde_json::json!({"envelope": {"missing": [missing]}});
                Err(refuse(400, INVALID_PARAMS, why).with_data(data))
            }
            None => Ok(()),
        };
    };
    let Some(version) = json::string(claim) else {
        let why = format!("the envelope's {VERSION_KEY} is not a string");
        return Err(refuse(400, INVALID_PARAMS, why));
    };
    disagrees("MCP-Protocol-Version", said, &version).map_err(|why| mismatch(refuse, why))?;
    if !MODERN.contains(&version.as_str()) {
        let why = format!("protocol version {version:?} is not one the proxy reads");
        let data = serde_json::json!({"supported": MODERN, "requested": version});
        return Err(refuse(400, UNSUPPORTED_VERSION, why).with_data(data));
    }
    if in_meta(CAPABILITIES_KEY).is_none_or(|capabilities| !capabilities.starts_with('{')) {
        let why = format!("the per-request envelope lacks its {CAPABILITIES_KEY} object");
        let data = serde_json::json!({"envelope": {"missing": [CAPABILITIES_KEY]}});
        return Err(refuse(400, INVALID_PARAMS, why).with_data(data));
    }
    disagrees("Mcp-Method", header("mcp-method"), method).map_err(|why| mismatch(refuse, why))?;
    let named = match method.as_str() {
        "tools/call" => member("name"),
        _ if cfg!(feature = "mutant-inbound-calls-only") => None,
        "prompts/get" => member("name"),
        "resources/read" if cfg!(feature = "mutant-inbound-uri-as-name") => member("name"),
        "resources/read" => member("uri"),
        _ => None,
    };
    if let Some(name) = named.and_then(json::string) {
        disagrees("Mcp-Name", header("mcp-name"), &name).map_err(|why| mismatch(refuse, why))?;
    }
    Ok(())
}

/// Why the header `name`, `said`, does not say `body`: it is missing, or its value (as
/// [`headers::encode`] would write it, decoded) is another.
fn disagrees(name: &str, said: Option<String>, body: &str) -> Result<(), String> {
    let decode = |said: &str| match cfg!(feature = "mutant-inbound-raw-value") {
        true => Some(said.to_string()),
        false => headers::decode(said),
    };
    match said.as_deref().map(decode) {
        None => Err(format!(
            "the body says {body:?}, but the {name} header is missing"
        )),
        Some(Some(value)) if value == body => Ok(()),
        Some(_) => Err(format!(
            "the body says {body:?}, but the {name} header says {:?}",
            said.unwrap_or_default()
        )),
    }
}

/// The rejection of a request whose headers and body disagree, as `why` says.
fn mismatch(refuse: impl Fn(u16, i64, String) -> Rejected, why: String) -> Rejected {
    let data = serde_json::json!({"mismatch": why});
    refuse(
        400,
        HEADER_MISMATCH,
        format!("the request's headers and body disagree: {why}"),
    )
    .with_data(data)
}

impl Rejected {
    fn with_data(self, data: serde_json::Value) -> Rejected {
        Rejected {
            refusal: Box::new(self.refusal.with_data(data.to_string())),
            ..self
        }
    }
}

/// A header as [`check`] reads it: every value it was given (`values`), as text, joined
/// as one list, since a header given twice says two things and agrees with no body;
/// `None` when it was given none.
pub fn joined<'a>(values: impl IntoIterator<Item = &'a [u8]>) -> Option<String> {
    let mut values: Vec<_> = values.into_iter().map(String::from_utf8_lossy).collect();
    if cfg!(feature = "mutant-inbound-first-value") {
        values.truncate(1);
    }
    (!values.is_empty()).then(|| values.join(", "))
}

/// The HTTP status a 2026-07-28 request's answer goes under when it is the error `code`:
/// the specification's own for a method the server does not have (404), for a request
/// it cannot serve as sent (400); any other error, like any result, under 200. A server
/// on stdio, or one behind the proxy's own session, has no status to give: the front
/// gives it, as the server would have over HTTP.
pub fn status_of_error(code: i64) -> u16 {
    match code {
        jsonrpc::METHOD_NOT_FOUND => 404,
        HEADER_MISMATCH | MISSING_CAPABILITY | UNSUPPORTED_VERSION => 400,
        _ => 200,
    }
}

/// The status an answer goes under, given the core's reading of it (its error's code,
/// [`About::Answer`](crate::delivery::About::Answer)): [`status_of_error`]'s for an
/// error, 200 for a result.
pub fn answer_status(code: Option<i64>) -> u16 {
    code.map_or(200, status_of_error)
}

#[cfg(test)]
mod tests;
