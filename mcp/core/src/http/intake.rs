//! One intake for both HTTP servers, the `--listen` front and the gateway: a POST's body
//! read once, by the proxy's strict reader, as over stdio, and the session (or the
//! gateway's proxy) takes that reading. What the reader refuses (not JSON, a repeated
//! key, an id that is no id, a byte-order mark), a batch (JSON-RPC over HTTP serves one
//! message per POST since 2025-06-18), params that read two ways, and headers that
//! disagree with the body are refused here, before anything routes by the message or
//! its headers; what it takes (a lone surrogate, nesting of any depth) goes on as a
//! server would take it.

use super::admission::{self, Route};
use super::inbound::{self, Rejected};
use crate::jsonrpc::{INVALID_REQUEST, Id, Line, Message, Parsed, Refusal};

/// A POST's message, taken in.
#[derive(Debug)]
pub struct Posted {
    /// The message, as read.
    pub line: Parsed,
    /// Its method, when it has one.
    pub method: Option<String>,
    /// Its id, when it is a request.
    pub id: Option<Id>,
    /// Where it goes.
    pub route: Route,
}

/// `body`, a POST's, taken in with the headers it came with (`header(name)`, the named
/// header's every value joined, any case of its name); or refused, with the HTTP status
/// that answers it and its JSON-RPC error, under the request's id where it was read.
pub fn take(body: Vec<u8>, header: impl Fn(&str) -> Option<String>) -> Result<Posted, Rejected> {
    let line = Parsed::read(body).map_err(bad_request)?;
    let Line::One(read) = line.line() else {
        let why = "a batch is not served over HTTP: send each message in a POST of its own";
        return Err(bad_request(Refusal::new(None, INVALID_REQUEST, why)));
    };
    let (method, id) = match &read.message {
        Ok(Message::Request { id, method, .. }) => (Some(method.clone()), Some(id.clone())),
        Ok(Message::Notification { method, .. }) => (Some(method.clone()), None),
        Ok(Message::Response { .. }) => (None, None),
        Err(refusal) => return Err(bad_request(refusal.clone())),
    };
    let route = admission::route(&read).map_err(bad_request)?;
    // What the headers say must be what the body says, before anything routes by either.
    inbound::check(&read, header)?;
    Ok(Posted {
        line,
        method,
        id,
        route,
    })
}

/// `refusal` as a POST's answer: 400.
fn bad_request(refusal: Refusal) -> Rejected {
    Rejected {
        status: 400,
        refusal: Box::new(refusal),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn taken(body: &str, headers: &[(&str, &str)]) -> Result<Posted, (u16, i64, Option<String>)> {
        let header = |name: &str| {
            let given = headers
                .iter()
                .filter(|(own, _)| own.eq_ignore_ascii_case(name));
            inbound::joined(given.map(|(_, value)| value.as_bytes()))
        };
        take(body.as_bytes().to_vec(), header).map_err(|rejected| {
            let refusal = rejected.refusal;
            let id = refusal.id.map(|id| id.json().to_string());
            (rejected.status, refusal.code, id)
        })
    }

    #[test]
    fn a_message_is_read_once_and_what_it_is_kept() {
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":"p"}}}"#;
        let posted = taken(call, &[]).unwrap();
        assert_eq!(posted.method.as_deref(), Some("tools/call"));
        assert_eq!(
            posted.id.map(|id| id.json().to_string()).as_deref(),
            Some("7")
        );
        assert!(!posted.route.modern);
        assert!(posted.route.token.is_some());
        // The reading the session takes is of the bytes as sent.
        let Line::One(read) = posted.line.line() else {
            panic!("one message")
        };
        assert_eq!(read.text, call);
        let note = taken(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            &[],
        );
        let note = note.unwrap();
        assert_eq!(
            (note.method.as_deref(), note.id),
            (Some("notifications/initialized"), None)
        );
    }

    #[test]
    fn what_no_server_edge_takes_is_refused_with_400_under_its_id_where_read() {
        let modern = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;
        let cases = [
            ("not json", None),
            (r#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#, None),
            (
                "\u{feff}{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}",
                None,
            ),
            (r#"{"jsonrpc":"2.0","id":{},"method":"ping"}"#, None),
            (
                r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
                Some("2"),
            ),
            // A 2026-07-28 request without the headers that must say what its body says.
            (modern, Some("3")),
        ];
        assert_eq!(cases.len(), 6);
        for (body, id) in cases {
            let refused = taken(body, &[]).err().unwrap_or_else(|| panic!("{body}"));
            assert_eq!(refused.0, 400, "{body}");
            assert_eq!(refused.2.as_deref(), id, "{body}");
        }
    }
}
