//! JSON-RPC messages, read strictly and edited in place. Strictly, because the proxy must
//! read a message as the server will (R18): a key given twice (parsers disagree on which
//! counts), a byte-order mark, text that is not UTF-8, an id that is null or not an id,
//! is not guessed at but refused with the JSON-RPC error for it. In place, because a
//! message the proxy does not change is relayed byte for byte, and one it changes keeps
//! every byte outside the one value it replaces.

use reasons_transform::json::{self, Member, Object};
use std::hash::{Hash, Hasher};

mod parsed;
pub use parsed::Parsed;

use std::ops::Range;

/// JSON-RPC's error codes, as the proxy uses them.
pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;

/// A message, read.
pub enum Message<'a> {
    /// A method and an id: it expects a response; `named` is the id's exact text, a
    /// slice of the message.
    Request {
        id: Id,
        named: &'a str,
        method: String,
        params: Option<&'a str>,
    },
    /// A method and no id.
    Notification {
        method: String,
        params: Option<&'a str>,
    },
    /// An id (`None`: null, for an error about a request whose id was unreadable) and a
    /// result or an error; `named` is the id's exact text, a slice of the message.
    Response {
        id: Option<Id>,
        named: &'a str,
        result: Option<&'a str>,
    },
}

/// One message of a line, with its exact text.
pub struct Read<'a> {
    pub text: &'a str,
    pub message: Result<Message<'a>, Refusal>,
}

/// What a line holds.
pub enum Line<'a> {
    One(Read<'a>),
    /// A JSON-RPC batch: each element, read on its own.
    Batch(Vec<Read<'a>>),
}

/// Why a message cannot be taken: the JSON-RPC error that answers it.
#[derive(Clone, Debug)]
pub struct Refusal {
    /// The id of the request refused, when it could be read.
    pub id: Option<Id>,
    pub code: i64,
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
fn not_utf8(error: std::str::Utf8Error) -> Refusal {
    let at = error.valid_up_to();
    Refusal::new(
        None,
        PARSE_ERROR,
        format!("the message is not UTF-8 (at byte {at}); it was not sent"),
    )
}

/// [`read_line`], of a line known to be text.
fn read_text(text: &str) -> Result<Line<'_>, Refusal> {
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
    let members = unique(text).map_err(|why| invalid(None, format!("the message {why}")))?;
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
    let params = member(&members, "params");
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
            let answered = result.is_some() != member(&members, "error").is_some();
            match id {
                Some(id) if answered => Ok(Message::Response {
                    id,
                    named: named.unwrap_or_default(),
                    result,
                }),
                _ => Err(invalid(
                    known_id,
                    "the message is not a request or a response".into(),
                )),
            }
        }
    }
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
    let mut seen = std::collections::HashSet::new();
    members
        .iter()
        .find(|member| !seen.insert(member.key.as_ref()))
        .map(|Member { key, .. }| {
            format!(
                "repeats the key {:?}, which parsers read differently",
                String::from_utf8_lossy(key)
            )
        })
}

/// The member `key` of `members`.
pub fn member<'a>(members: &[Member<'a>], key: &str) -> Option<&'a str> {
    members
        .iter()
        .find(|member| member.key.as_ref() == key.as_bytes())
        .map(|member| member.value)
}

/// A request id. Two ids are one when their values are (`1`, `1.0` and `1e0` are one id;
/// `"a"` and `"\u0061"` are one id), whatever their spelling; the text is the sender's,
/// to answer under.
#[derive(Clone, Debug)]
pub struct Id {
    value: Value,
    text: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Value {
    /// A string's characters, as WTF-8.
    String(Vec<u8>),
    /// A number's value: its significant digits and the power of ten after them.
    Number {
        negative: bool,
        digits: String,
        exponent: i64,
    },
}

impl PartialEq for Id {
    fn eq(&self, other: &Id) -> bool {
        self.value == other.value
    }
}

impl Eq for Id {}

impl Hash for Id {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.value.hash(state);
    }
}

impl Id {
    /// A string or number id; `None` for any other value.
    fn read(text: &str) -> Option<Id> {
        let value = match text.as_bytes().first()? {
            b'"' => Value::String(json::wtf8(text)?.into_owned()),
            b'-' | b'0'..=b'9' => number(text)?,
            _ => return None,
        };
        Some(Id {
            value,
            text: text.to_string(),
        })
    }

    /// The id, or progress token (the same kinds of value), whose JSON text is `text`.
    pub fn parse(text: &str) -> Option<Id> {
        let text = text.trim_matches([' ', '\t', '\n', '\r']);
        json::is_value(text).then(|| Id::read(text)).flatten()
    }

    /// An id of the proxy's own: a string no client can guess, so no client's can equal it.
    pub fn own() -> Id {
        Id::minted("reasons-proxy")
    }

    /// The id the HTTP front gives a request of its shared session, in place of its
    /// client's (which another client may also use): unguessable as the proxy's own are,
    /// and told apart from them.
    pub fn front() -> Id {
        Id::minted("reasons-front")
    }

    /// A fresh id of `kind`, drawn for this request alone from the operating system's
    /// random source: an id one has seen (a server may echo it) tells nothing of the next.
    fn minted(kind: &str) -> Id {
        let text = format!("\"{kind}/{}\"", crate::unguessable());
        Id {
            value: Value::String(text.trim_matches('"').as_bytes().to_vec()),
            text,
        }
    }

    /// The id as the sender wrote it.
    pub fn json(&self) -> &str {
        &self.text
    }
}

/// A JSON number's value, exactly: `1`, `1.0`, `10e-1` and `0.1e1` are one value.
fn number(text: &str) -> Option<Value> {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((mantissa, exponent)) => (mantissa, exponent.parse::<i64>().ok()?),
        None => (unsigned, 0),
    };
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let digits = significant.trim_end_matches('0');
    if digits.is_empty() {
        return Some(Value::Number {
            negative: false,
            digits: "0".into(),
            exponent: 0,
        });
    }
    let trailing = (significant.len() - digits.len()) as i64;
    Some(Value::Number {
        negative,
        digits: digits.to_string(),
        exponent: exponent
            .checked_sub(fraction.len() as i64)?
            .checked_add(trailing)?,
    })
}

/// Where `part`, a slice of `whole` (as the reader's values are), lies in it.
pub fn span(whole: &str, part: &str) -> Range<usize> {
    let start = json::offset_in(whole, part);
    start..start + part.len()
}

/// Moves `at`, a place in a text, as the text's `replaced` place gets `by` bytes in its
/// stead: a place after it moves with it, a place around it stretches, a place before it
/// stays.
pub(crate) fn moved(at: &mut Range<usize>, replaced: &Range<usize>, by: usize) {
    let grown = |end: usize| end + by - replaced.len();
    if at.start >= replaced.end {
        *at = grown(at.start)..grown(at.end);
    } else if at.start <= replaced.start && at.end >= replaced.end {
        at.end = grown(at.end);
    }
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

/// The exact text of the value at `path` (a chain of keys) in the JSON object `text`, a
/// slice of it; `None` when there is none, or when a key on the way repeats.
pub fn at<'a>(text: &'a str, path: &[&str]) -> Option<&'a str> {
    path.iter()
        .try_fold(text, |value, key| member(&unique(value).ok()?, key))
}

/// `text` with the value at `path` replaced by `with`; `None` when [`at`] finds none.
pub fn replace_at(text: &str, path: &[&str], with: &str) -> Option<String> {
    Some(replace(text, at(text, path)?, with))
}

/// How every response the proxy makes begins: its id follows, at [`ID_AT`].
const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":"#;

/// Where the id of a response the proxy made ([`result`], [`error`]) begins.
pub const ID_AT: usize = RESPONSE.len();

/// A response with `result`.
pub fn result(id: &Id, result: &str) -> String {
    format!(r#"{RESPONSE}{},"result":{result}}}"#, id.json())
}

/// An error response (under `null` when the request's id is unknown).
pub fn error(id: Option<&Id>, code: i64, message: &str) -> String {
    error_with_data(id, code, message, None)
}

/// An error response with the error's `data` (JSON text), when it has any.
pub fn error_with_data(id: Option<&Id>, code: i64, message: &str, data: Option<&str>) -> String {
    let message = serde_json::to_string(message).unwrap_or_default();
    let id = id.map_or("null", Id::json);
    let data = data.map_or(String::new(), |data| format!(r#","data":{data}"#));
    format!(r#"{RESPONSE}{id},"error":{{"code":{code},"message":{message}{data}}}}}"#)
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
pub struct CallParams<'a> {
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
    fn no_id_of_the_proxy_s_own_can_be_derived_from_another() {
        // R19: a server that echoes ids shows a client some of the proxy's and the
        // front's own; each is 128 bits of its own, so none tells anything of the next
        // (a session's nonce and a counter did, as RandomState's keys counting up would).
        let ids: Vec<String> = (0..64)
            .flat_map(|_| [Id::own(), Id::front()])
            .map(|id| id.json().trim_matches('"').to_string())
            .collect();
        assert_eq!(ids.len(), 128);
        let bits: Vec<u128> = ids
            .iter()
            .map(|id| {
                let (kind, hex) = id.split_once('/').unwrap();
                assert!(matches!(kind, "reasons-proxy" | "reasons-front"), "{id}");
                assert_eq!(hex.len(), 32, "{id}");
                u128::from_str_radix(hex, 16).unwrap()
            })
            .collect();
        for (at, a) in bits.iter().enumerate() {
            for b in &bits[at + 1..] {
                // Independent draws differ in about 64 bits; fewer than 24 would take
                // odds past 1 in 10^10.
                let differing = (a ^ b).count_ones();
                assert!(
                    differing >= 24,
                    "{a:032x} and {b:032x} differ in {differing} bits"
                );
            }
        }
    }

    fn id(text: &str) -> Id {
        Id::read(text).unwrap()
    }

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
    fn ids_are_one_when_their_values_are() {
        // R19
        for (a, b) in [
            ("1", "1.0"),
            ("1", "10e-1"),
            ("0", "-0.0"),
            ("120", "1.2e2"),
            (r#""a/b""#, r#""a\/b""#),
            (r#""\u0061""#, r#""a""#),
        ] {
            assert_eq!(id(a), id(b), "{a} {b}");
        }
        for (a, b) in [
            ("1", "2"),
            ("1", r#""1""#),
            ("1", "-1"),
            ("9007199254740993", "9007199254740992"),
        ] {
            assert_ne!(id(a), id(b), "{a} {b}");
        }
        assert_eq!(id("1.0").json(), "1.0", "answered as it was written");
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
