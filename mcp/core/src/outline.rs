//! What a transport needs to know of a message the proxy sends to the server, told with
//! the message so that no transport reads it again: its number, the ids owed an answer,
//! and for Streamable HTTP's 2026-07-28 request headers the method, the name it acts on,
//! the protocol version its `_meta` names and the `Mcp-Param-*` headers of a call's
//! arguments as forwarded (after the reason came off, so that no header can carry it).

use crate::jsonrpc::{Id, Message, Params, Read};
use reasons_transform::json;

/// The `_meta` key a 2026-07-28 request carries its protocol version under.
pub(crate) const VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key a 2026-07-28 request carries its client's capabilities under.
pub(crate) const CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";

/// The outline of one line to the server: a message, or a batch of them.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Outline {
    /// The line's number, counting the lines the proxy sent the server from 1: how a
    /// transport names it to [`Proxy::awaits`](crate::Proxy::awaits) and
    /// [`Proxy::unanswered`](crate::Proxy::unanswered).
    pub exchange: u64,
    /// The ids of its requests: each is owed an answer.
    pub ids: Vec<Id>,
    /// Its method, for a single request or notification.
    pub method: Option<String>,
    /// `params.name`, or `params.uri`.
    pub name: Option<String>,
    /// The protocol version its `_meta` names (2026-07-28 and later).
    pub version: Option<String>,
    /// A `tools/call`'s arguments as forwarded, as their exact text.
    pub arguments: Option<String>,
    /// The `Mcp-Param-*` headers of a `tools/call`: what its tool's declaration, in the
    /// listings the proxy read, asks to mirror from the arguments as forwarded.
    pub params: Vec<(String, String)>,
    /// `params.cursor`: the page a listing asks for.
    pub cursor: Option<String>,
    /// Whether it is the proxy's own (a listing it needs), not a client's: its answer is
    /// the proxy's too, and reaches no client.
    pub own: bool,
}

impl Outline {
    /// The outline of `read`, a message the proxy read and sends; `forwarded` is a call's
    /// arguments when the proxy changed them.
    pub(crate) fn of(read: &Read, forwarded: Option<&str>) -> Outline {
        let (method, params) = match &read.message {
            Ok(Message::Request { method, params, .. })
            | Ok(Message::Notification { method, params }) => (method, params.as_ref()),
            _ => return Outline::default(),
        };
        Outline::request(request_id(read), method, params, forwarded)
    }

    /// The outline of a request or notification with these parts.
    pub(crate) fn request(
        id: Option<Id>,
        method: &str,
        params: Option<&Params>,
        forwarded: Option<&str>,
    ) -> Outline {
        // Taken from the params as they were read (params that repeat a key have no
        // member: no part of them is taken).
        let part = |key: &str| params.and_then(|params| params.get(key));
        let text = |key: &str| part(key).and_then(json::string);
        let version = params.and_then(|params| params.in_meta(VERSION_KEY));
        Outline {
            ids: id.into_iter().collect(),
            method: Some(method.to_string()),
            name: text("name").or_else(|| text("uri")),
            version: version.and_then(json::string),
            arguments: forwarded.or_else(|| part("arguments")).map(str::to_string),
            cursor: text("cursor"),
            ..Outline::default()
        }
    }

    /// The outline of a batch whose requests have these ids.
    pub(crate) fn batch(ids: Vec<Id>) -> Outline {
        Outline {
            ids,
            ..Outline::default()
        }
    }
}

/// The id of `read` when it is a request, which is owed an answer.
pub(crate) fn request_id(read: &Read) -> Option<Id> {
    match &read.message {
        Ok(Message::Request { id, .. }) => Some(id.clone()),
        _ => None,
    }
}
