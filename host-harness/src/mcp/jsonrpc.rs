//! JSON-RPC messages, read only as far as the proxy needs and edited in place: a message
//! the proxy does not change is never re-serialised, and one it changes keeps every byte
//! outside the one value it replaces.

use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::ops::Range;

/// A message's envelope. Every field is the member's exact text; unknown members are
/// ignored (and kept, since the message's text is never rebuilt).
#[derive(Deserialize)]
pub struct Envelope<'a> {
    #[serde(borrow, default)]
    pub id: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub method: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    pub params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    pub error: Option<&'a RawValue>,
}

/// What a message is, as far as the relay cares.
pub enum Message<'a> {
    /// A request: it has a method and an id, and expects a response.
    Request(Id, Envelope<'a>),
    /// A notification: a method, no id.
    Notification(Envelope<'a>),
    /// A response: an id and a result or an error.
    Response(Id, Envelope<'a>),
    /// Anything else (not an object, an envelope that makes no sense): relayed as it is.
    Other,
}

impl<'a> Message<'a> {
    /// Reads `text`, one message (not a batch).
    pub fn read(text: &'a str) -> Message<'a> {
        let Ok(envelope) = serde_json::from_str::<Envelope>(text) else {
            return Message::Other;
        };
        let id = envelope.id.map(Id::of);
        match (id, &envelope.method) {
            (Some(id), Some(_)) => Message::Request(id, envelope),
            (None, Some(_)) => Message::Notification(envelope),
            (Some(id), None) if envelope.result.is_some() || envelope.error.is_some() => {
                Message::Response(id, envelope)
            }
            _ => Message::Other,
        }
    }
}

impl Envelope<'_> {
    /// The method, or "" for a response.
    pub fn method(&self) -> &str {
        self.method.as_deref().unwrap_or_default()
    }
}

const OWN: &str = "reasons-proxy/";

/// A request id, in one spelling whatever the sender's whitespace or escapes, to match
/// a response to its request.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Id(String);

impl Id {
    fn of(raw: &RawValue) -> Id {
        match serde_json::from_str::<serde_json::Value>(raw.get()) {
            Ok(value) => Id(value.to_string()),
            Err(_) => Id(raw.get().to_string()),
        }
    }

    /// An id of the proxy's own, in a namespace no client is expected to use.
    pub fn own(number: u64) -> Id {
        Id(format!("\"{OWN}{number}\""))
    }

    /// Whether this is one of the proxy's own ids.
    pub fn is_own(&self) -> bool {
        self.0
            .strip_prefix('"')
            .is_some_and(|id| id.starts_with(OWN))
    }

    /// The id as JSON text.
    pub fn json(&self) -> &str {
        &self.0
    }
}

/// The elements of `text` if it is a batch (a JSON array), each its exact text.
pub fn batch(text: &str) -> Option<Vec<&RawValue>> {
    text.trim_start()
        .starts_with('[')
        .then(|| serde_json::from_str(text).ok())
        .flatten()
}

/// Where `part`, a slice of `whole` (as serde's borrowed values are), lies in it.
pub fn span(whole: &str, part: &str) -> Range<usize> {
    let start = (part.as_ptr() as usize).wrapping_sub(whole.as_ptr() as usize);
    start..start + part.len()
}

/// `whole` with the slice `part` of it replaced by `with`.
pub fn replace(whole: &str, part: &str, with: &str) -> String {
    let range = span(whole, part);
    let mut out = String::with_capacity(whole.len() - range.len() + with.len());
    out.push_str(&whole[..range.start]);
    out.push_str(with);
    out.push_str(&whole[range.end..]);
    out
}

/// A response with `result`.
pub fn result(id: &Id, result: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{result}}}"#,
        id.json()
    )
}

/// An error response with JSON-RPC's internal-error code.
pub fn error(id: &Id, message: &str) -> String {
    let message = serde_json::to_string(message).unwrap_or_default();
    format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32603,"message":{message}}}}}"#,
        id.json()
    )
}

/// A request of the proxy's own.
pub fn request(id: &Id, method: &str, params: Option<&str>) -> String {
    match params {
        Some(params) => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{params}}}"#,
            id.json()
        ),
        None => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{method}"}}"#,
            id.json()
        ),
    }
}

/// The parts of `tools/call`'s params the proxy reads.
#[derive(Deserialize)]
pub struct CallParams<'a> {
    #[serde(borrow)]
    pub name: Cow<'a, str>,
    #[serde(borrow, default)]
    pub arguments: Option<&'a RawValue>,
}

/// A `tools/list` result, as far as the proxy reads it.
pub struct Page<'a> {
    /// The `tools` member's exact text: what the proxy replaces.
    pub array: &'a str,
    /// Each declaration's exact text.
    pub tools: Vec<&'a str>,
    /// The cursor for the next page, if there is one.
    pub next_cursor: Option<&'a RawValue>,
}

impl<'a> Page<'a> {
    /// Reads `result`; `None` when it is not a list of tools.
    pub fn read(result: &'a RawValue) -> Option<Page<'a>> {
        #[derive(Deserialize)]
        struct ListResult<'a> {
            #[serde(borrow)]
            tools: &'a RawValue,
            #[serde(borrow, default, rename = "nextCursor")]
            next_cursor: Option<&'a RawValue>,
        }
        let result: ListResult = serde_json::from_str(result.get()).ok()?;
        let tools: Vec<&RawValue> = serde_json::from_str(result.tools.get()).ok()?;
        Some(Page {
            array: result.tools.get(),
            tools: tools.into_iter().map(RawValue::get).collect(),
            next_cursor: result.next_cursor.filter(|cursor| cursor.get() != "null"),
        })
    }
}

/// Whether an `initialize` result says the server has tools.
pub fn has_tools(result: &RawValue) -> bool {
    #[derive(Deserialize)]
    struct Initialize {
        #[serde(default)]
        capabilities: Capabilities,
    }
    #[derive(Default, Deserialize)]
    struct Capabilities {
        #[serde(default)]
        tools: Option<serde::de::IgnoredAny>,
    }
    serde_json::from_str::<Initialize>(result.get())
        .is_ok_and(|initialize| initialize.capabilities.tools.is_some())
}
