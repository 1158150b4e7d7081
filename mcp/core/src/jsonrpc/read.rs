//! Reading a line of the stream: one message or a batch, each message's envelope read
//! strictly, as a server's parser reads it, or refused with the error that answers it.

use super::write::error_with_data;
use super::{INVALID_REQUEST, Id, PARSE_ERROR, Params};
use reasons_transform::json::{self, Member, Object};

/// A message, read.
pub enum Message<'a> {
    /// A method and an id: it expects a response; `named` is the id's exact text, a
    /// slice of the message.
    Request {
        /// The id, read.
        id: Id,
        /// The id's exact text.
        named: &'a str,
        /// The method, decoded.
        method: String,
        /// The params, read.
        params: Option<Params<'a>>,
    },
    /// A method and no id.
    Notification {
        /// The method, decoded.
        method: String,
        /// The params, read.
        params: Option<Params<'a>>,
    },
    /// An id (`None`: null, for an error about a request whose id was unreadable) and a
    /// result or an error; `named` is the id's exact text, a slice of the message.
    Response {
        /// The id, read (`None`: null).
        id: Option<Id>,
        /// The id's exact text.
        named: &'a str,
        /// The result's exact text; `None` for an error.
        result: Option<&'a str>,
        /// An error's code, where it is an integer; `None` for a result.
        code: Option<i64>,
    },
}

/// One message of a line, with its exact text.
pub struct Read<'a> {
    /// The message's exact text.
    pub text: &'a str,
    /// The message, or why it cannot be taken.
    pub message: Result<Message<'a>, Refusal>,
}

/// What a line holds.
pub enum Line<'a> {
    /// One message.
    One(Read<'a>),
    /// A JSON-RPC batch: each element, read on its own.
    Batch(Vec<Read<'a>>),
}

impl<'a> Line<'a> {
    /// Its messages, in order: the one, or the batch's.
    pub fn reads(&self) -> &[Read<'a>] {
        match self {
            Line::One(read) => std::slice::from_ref(read),
            Line::Batch(reads) => reads,
        }
    }

    /// The requests it answers: each response's id.
    pub fn answered(&self) -> impl Iterator<Item = &Id> {
        self.reads().iter().filter_map(|read| match &read.message {
            Ok(Message::Response { id: Some(id), .. }) => Some(id),
            _ => None,
        })
    }
}

/// Why a message cannot be taken: the JSON-RPC error that answers it.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The id of the request refused, when it could be read.
    pub id: Option<Id>,
    /// The JSON-RPC error code.
    pub code: i64,
    /// The error's message.
    pub message: String,
    /// The error's `data`, as JSON text, where the specification gives the error one.
    pub data: Option<String>,
}

impl Refusal {
    /// A refusal with the JSON-RPC error `code` and why, under `id` when it is known.
    pub fn new(id: Option<Id>, code: i64, message: impl Into<String>) -> Refusal {
        Refusal {
            id,
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The refusal with the error's `data`, JSON text.
    pub fn with_data(self, data: String) -> Refusal {
        Refusal {
            data: Some(data),
            ..self
        }
    }

    /// The error response that answers it.
    pub fn answer(&self) -> String {
        error_with_data(
            self.id.as_ref(),
            self.code,
            &self.message,
            self.data.as_deref(),
        )
    }
}

/// Reads one line of the stream: a message or a batch, or the refusal of the whole line.
pub fn read_line(bytes: &[u8]) -> Result<Line<'_>, Refusal> {
    read_text(std::str::from_utf8(bytes).map_err(not_utf8)?)
}

/// The refusal of a line that is not UTF-8.
pub(super) fn not_utf8(error: std::str::Utf8Error) -> Refusal {
    let at = error.valid_up_to();
    Refusal::new(
        None,
        PARSE_ERROR,
        format!("the message is not UTF-8 (at byte {at}); it was not sent"),
    )
}

/// [`read_line`], of a line known to be text.
pub(super) fn read_text(text: &str) -> Result<Line<'_>, Refusal> {
    if text.starts_with('\u{feff}') {
        return Err(Refusal::new(
            None,
            PARSE_ERROR,
            "the message begins with a byte-order mark, which JSON does not allow; it was not sent",
        ));
    }
    let not_json = || {
        Refusal::new(
            None,
            PARSE_ERROR,
            "the message is not one JSON value; it was not sent",
        )
    };
    let trimmed = text.trim_start_matches([' ', '\t', '\n', '\r']);
    if !trimmed.starts_with('[') {
        let one = read(text);
        // Reading the envelope read the whole text; only a message it refused is read
        // again, to tell text that is not JSON from JSON that is not a message.
        if one.message.is_err() && !json::is_value(text) {
            return Err(not_json());
        }
        return Ok(Line::One(one));
    }
    let elements = json::elements(text).ok_or_else(not_json)?;
    if elements.is_empty() {
        return Err(Refusal::new(
            None,
            INVALID_REQUEST,
            "an empty batch is not a request",
        ));
    }
    Ok(Line::Batch(elements.into_iter().map(read).collect()))
}

/// Reads one message's envelope.
fn read(text: &str) -> Read<'_> {
    Read {
        text,
        message: envelope(text),
    }
}

fn envelope(text: &str) -> Result<Message<'_>, Refusal> {
    let invalid = |id: Option<Id>, why: String| Refusal::new(id, INVALID_REQUEST, why);
    // The params' members are read in the same pass as the message's.
    let (members, inner) = Object::read_with(text, "params")
        .map(|(object, inner)| (object.members, inner))
        .map_err(|_| invalid(None, "the message is not a JSON object".into()))?;
    if let Some(why) = repeated(&members) {
        return Err(invalid(None, format!("the message {why}")));
    }
    let named = member(&members, "id");
    let id = match named {
        None => None,
        Some("null") => Some(None),
        Some(raw) => Some(Some(Id::read(raw).ok_or_else(|| {
            invalid(None, format!("the id {raw} is not a string or a number"))
        })?)),
    };
    let known_id = id.clone().flatten();
    if member(&members, "jsonrpc").and_then(json::wtf8).as_deref() != Some(b"2.0") {
        return Err(invalid(known_id, "the message is not JSON-RPC 2.0".into()));
    }
    let params = member(&members, "params").map(|params| Params::with(params, inner));
    match member(&members, "method") {
        Some(method) => {
            let method = json::string(method)
                .ok_or_else(|| invalid(known_id.clone(), "the method is not text".into()))?;
            match id {
                None => Ok(Message::Notification { method, params }),
                Some(Some(id)) => Ok(Message::Request {
                    id,
                    named: named.unwrap_or_default(),
                    method,
                    params,
                }),
                Some(None) => Err(invalid(None, "a request's id may not be null".into())),
            }
        }
        None => {
            let result = member(&members, "result");
            let error = member(&members, "error");
            let answered = result.is_some() != error.is_some();
            match id {
                Some(id) if answered => Ok(Message::Response {
                    id,
                    named: named.unwrap_or_default(),
                    result,
                    code: error.and_then(code),
                }),
                _ => Err(invalid(
                    known_id,
                    "the message is not a request or a response".into(),
                )),
            }
        }
    }
}

/// The code of `error`, an error object, where it is an integer.
fn code(error: &str) -> Option<i64> {
    member(&Object::parse(error)?.members, "code")?.parse().ok()
}

/// `text`'s members, when it is an object whose every key is given once.
pub fn unique(text: &str) -> Result<Vec<Member<'_>>, String> {
    let members = Object::parse(text).ok_or("is not a JSON object")?.members;
    match repeated(&members) {
        Some(why) => Err(why),
        None => Ok(members),
    }
}

/// Why `members` cannot be read one way only: the first key they repeat.
pub fn repeated(members: &[Member<'_>]) -> Option<String> {
    json::repeated_key(members).map(|key| {
        format!(
            "repeats the key {:?}, which parsers read differently",
            String::from_utf8_lossy(key)
        )
    })
}

/// The member `key` of `members`.
pub use json::member;

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(bytes: &[u8]) -> Refusal {
        match read_line(bytes) {
            Err(refusal) => refusal,
            Ok(Line::One(Read {
                message: Err(refusal),
                ..
            })) => refusal,
            Ok(_) => panic!("{} was read", String::from_utf8_lossy(bytes)),
        }
    }

    #[test]
    fn what_cannot_be_read_as_the_server_would_is_refused() {
        // R18
        for (line, code, why) in [
            (
                &b"\xef\xbb\xbf{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"[..],
                PARSE_ERROR,
                "byte-order mark",
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"x\xff\"}",
                PARSE_ERROR,
                "not UTF-8",
            ),
            (
                b"{\"jsonrpc\":\"2.0\",\"id\":1",
                PARSE_ERROR,
                "not one JSON value",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
                INVALID_REQUEST,
                "repeats the key \"method\"",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}"#,
                INVALID_REQUEST,
                "repeats the key \"id\"",
            ),
            (
                br#"{"jsonrpc":"2.0","id":null,"method":"tools/call"}"#,
                INVALID_REQUEST,
                "may not be null",
            ),
            (
                br#"{"jsonrpc":"2.0","id":[1],"method":"ping"}"#,
                INVALID_REQUEST,
                "not a string or a number",
            ),
            (
                br#"{"id":1,"method":"ping"}"#,
                INVALID_REQUEST,
                "not JSON-RPC 2.0",
            ),
            (
                br#"{"jsonrpc":"2.0","id":1,"method":"\ud800"}"#,
                INVALID_REQUEST,
                "method is not text",
            ),
            (b"[]", INVALID_REQUEST, "empty batch"),
        ] {
            let refusal = refusal(line);
            assert_eq!(refusal.code, code, "{}", String::from_utf8_lossy(line));
            assert!(refusal.message.contains(why), "{}", refusal.message);
        }
    }

    #[test]
    fn escaped_method_names_are_the_method() {
        // R18 R20: read decoded, as the server reads them.
        let Ok(Line::One(read)) =
            read_line(br#"{"jsonrpc":"2\u002e0","id":1,"method":"tools\/c\u0061ll"}"#)
        else {
            panic!()
        };
        let Ok(Message::Request { method, .. }) = read.message else {
            panic!()
        };
        assert_eq!(method, "tools/call");
    }
}
