//! Which POSTs a Streamable HTTP server of the proxy's takes at all (the front of
//! `reasons mcp --listen`, the gateway): only what a client means to send.
//!
//! A web page can send a POST that needs no CORS preflight (a no-cors `fetch`, a plain
//! HTML form) with `Content-Type: text/plain` or `application/x-www-form-urlencoded`, and
//! a form's `text/plain` body can be made to read as JSON. So a POST must say it is JSON
//! (`Content-Type: application/json`, which a page can only send after a preflight) and
//! accept what the specification says a client accepts (`application/json` and
//! `text/event-stream`).
//!
//! What a POST's message says of where it goes ([`route`]) is read here too, from the
//! proxy's own reading of it, so that a front routes it without reading it again.

use crate::jsonrpc::{self, INVALID_PARAMS, Id, Message, Read, Refusal};
use crate::outline::VERSION_KEY;
use std::ops::Range;

/// Why a POST with these `Content-Type` and `Accept` values (each header's values
/// joined with commas) is not taken, as an HTTP status and words; `None` when it is.
pub fn refused_post(content_type: &str, accept: &str) -> Option<(u16, String)> {
    if let Some(refused) = refused_body(content_type) {
        return Some(refused);
    }
    if !(accepts(accept, "application", "json") && accepts(accept, "text", "event-stream")) {
        return Some((
            406,
            format!(
                "a POST is answered as application/json or text/event-stream: its Accept must admit both, not {accept:?}"
            ),
        ));
    }
    None
}

/// Why a POST whose `Content-Type` is `content_type` is not taken: its body must say it is
/// JSON, which a page cannot send another origin without asking first (a preflight).
pub fn refused_body(content_type: &str) -> Option<(u16, String)> {
    let is_json = content_type
        .parse::<mime::Mime>()
        .is_ok_and(|kind| kind.essence_str() == "application/json");
    (!is_json).then(|| {
        (
            415,
            format!(
                "a POST's body is one JSON message: its Content-Type must be application/json, not {content_type:?}"
            ),
        )
    })
}

/// Whether the `Accept` list admits `kind/subtype`: a range that matches it (`*/*`,
/// `kind/*` or itself) with a quality above zero.
fn accepts(accept: &str, kind: &str, subtype: &str) -> bool {
    accept
        .split(',')
        .filter_map(|range| range.trim().parse::<mime::Mime>().ok())
        .filter(|range| {
            range
                .get_param("q")
                .is_none_or(|q| q.as_str().parse::<f32>().is_ok_and(|q| q > 0.0))
        })
        .any(|range| {
            let (t, s) = (range.type_().as_str(), range.subtype().as_str());
            (t == "*" && s == "*") || (t == kind && (s == "*" || s == subtype))
        })
}

/// Whether a page at `origin` is the same origin as a server reached as `authority`
/// (its `Host`) on a loopback name: a page served by this machine to itself. A page
/// that rebound its own DNS name to the server's address sends its own name as `Host`
/// and `Origin` alike, so a same origin on any other name proves nothing.
pub fn loopback_same_origin(origin: &str, authority: &str) -> bool {
    let authority = authority.to_ascii_lowercase();
    // The name, less a port (`[::1]:8080`, `localhost`).
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority.as_str(),
    };
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
    let origin = origin.to_ascii_lowercase();
    loopback
        && (origin == format!("http://{authority}") || origin == format!("https://{authority}"))
}

/// Where a client's message goes, as a front serving several sessions needs to know.
#[derive(Debug, PartialEq, Eq)]
pub struct Route {
    /// Whether it is of 2026-07-28 or later: its `_meta` names its protocol version, and
    /// it belongs to no session.
    pub modern: bool,
    /// Its progress token, when it is one (a string or a number), and where it is in
    /// it: a session clients share renames it.
    pub token: Option<(Id, Range<usize>)>,
}

/// Where `read`, a message the proxy read, goes. That is read from its params, which
/// must then read one way only: params that repeat a key (parsers disagree on which
/// counts) are refused, under the request's id, as the session would refuse them.
pub fn route(read: &Read) -> Result<Route, Refusal> {
    let (id, params) = match &read.message {
        Ok(Message::Request { id, params, .. }) => (Some(id), params.as_ref()),
        Ok(Message::Notification { params, .. }) => (None, params.as_ref()),
        _ => (None, None),
    };
    if let Some(why) = params.and_then(jsonrpc::Params::repeated) {
        return Err(Refusal::new(
            id.cloned(),
            INVALID_PARAMS,
            format!("the params {why}"),
        ));
    }
    let in_meta = |key: &str| params.and_then(|params| params.in_meta(key));
    Ok(Route {
        modern: in_meta(VERSION_KEY).is_some(),
        token: in_meta("progressToken")
            .and_then(|token| Some((Id::parse(token)?, jsonrpc::span(read.text, token)))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jsonrpc::{Line, read_line};

    fn route_of(text: &str) -> Result<Route, Refusal> {
        let Ok(Line::One(read)) = read_line(text.as_bytes()) else {
            panic!("one message: {text}");
        };
        route(&read)
    }

    #[test]
    fn a_message_says_its_era_and_where_its_token_is() {
        let modern = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"progressToken":"t","io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let route = route_of(modern).unwrap();
        assert!(route.modern);
        let (token, at) = route.token.unwrap();
        assert_eq!(
            (token, &modern[at]),
            (Id::parse(r#""t""#).unwrap(), r#""t""#)
        );
        let legacy = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert_eq!(
            route_of(legacy).unwrap(),
            Route {
                modern: false,
                token: None
            }
        );
        // Params that repeat a key are refused under the request's id.
        let twice = r#"{"jsonrpc":"2.0","id":4,"method":"m","params":{"_meta":{},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
        let refused = route_of(twice).unwrap_err();
        assert_eq!(refused.code, INVALID_PARAMS);
        assert_eq!(
            refused.id.map(|id| id.json().to_string()).as_deref(),
            Some("4")
        );
    }

    #[test]
    fn only_a_loopback_page_of_the_servers_own_origin_may_call() {
        let cases = [
            ("http://localhost:8080", "localhost:8080", true),
            ("http://LOCALHOST:8080", "localhost:8080", true),
            ("http://127.0.0.1:8080", "127.0.0.1:8080", true),
            ("http://[::1]:8080", "[::1]:8080", true),
            ("https://localhost", "localhost", true),
            // Another port, another origin.
            ("http://localhost:5173", "localhost:8080", false),
            // A rebound name: its own origin, but no loopback name.
            ("http://evil.example:8080", "evil.example:8080", false),
            (
                "http://localhost.evil.example:8080",
                "localhost.evil.example:8080",
                false,
            ),
            ("null", "localhost:8080", false),
            ("", "localhost:8080", false),
        ];
        assert_eq!(cases.len(), 10);
        for (origin, authority, may) in cases {
            assert_eq!(
                loopback_same_origin(origin, authority),
                may,
                "{origin} {authority}"
            );
        }
    }
}
