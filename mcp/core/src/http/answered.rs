//! What a server's answer to a POST is, read from its status and headers alone, before
//! its body: the client edge's one table (`--url` and the gateway's upstream), so that
//! each transport does what the kind says and decides nothing of its own.
//!
//! | the answer | to | kind |
//! |---|---|---|
//! | 3xx | any | [`Kind::Redirected`]: no answer, neither followed nor relayed ([`redirect`](super::redirect)) |
//! | 404, 405 | the first `initialize` of a revision with a handshake | [`Kind::Legacy`]: the 2024-11-05 HTTP+SSE transport, reached as its backwards-compatibility section says |
//! | 404 | a request in a session | [`Kind::Forgotten`]: the server ended the session and ran nothing |
//! | any other status outside 2xx | any | [`Kind::Failed`]: no answer but the JSON-RPC error its JSON body may hold |
//! | 2xx, `text/event-stream` | any | [`Kind::Stream`] |
//! | 2xx, anything else | any | [`Kind::Body`]: one JSON message, or nothing (202) |

/// What a POST's answer is.
#[derive(Debug, PartialEq, Eq)]
pub enum Kind {
    /// A redirect, refused: why, in words that start after the server's name.
    Redirected(String),
    /// The server speaks the legacy HTTP+SSE transport.
    Legacy,
    /// The session the request went in is gone.
    Forgotten,
    /// An error status; whether its body says it is JSON.
    Failed {
        /// The body says it is JSON: it may hold the JSON-RPC error.
        json: bool,
    },
    /// An event stream of messages.
    Stream,
    /// One body.
    Body,
}

/// What the request the answer is to was, as far as its kind depends on it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Asked {
    /// It is the first `initialize` of a revision with a handshake (a 2026-07-28
    /// request's 404 only says that revision has no such method).
    pub handshake: bool,
    /// It went in a session the server gave.
    pub in_session: bool,
}

/// The kind of the answer with `status`, its `Content-Type` and its `Location`, to a
/// request that was `asked`; `setting` names what the user sets to reach the server,
/// for a redirect's refusal.
pub fn kind(
    status: u16,
    content_type: Option<&[u8]>,
    location: Option<&[u8]>,
    asked: Asked,
    setting: &str,
) -> Kind {
    if let Some(why) = super::redirect::refusal(status, location, setting) {
        return Kind::Redirected(why);
    }
    match status {
        404 | 405 if asked.handshake => Kind::Legacy,
        404 if asked.in_session => Kind::Forgotten,
        200..=299 if is_event_stream(content_type) => Kind::Stream,
        200..=299 => Kind::Body,
        _ => Kind::Failed {
            json: is(content_type, b"application/json"),
        },
    }
}

/// Whether a `Content-Type` says an event stream (SSE), in any case, as media types are
/// named: every edge that reads an answer's body asks this.
pub fn is_event_stream(content_type: Option<&[u8]>) -> bool {
    is(content_type, b"text/event-stream")
}

/// Whether `content_type` names the media type `kind`, in any case.
fn is(content_type: Option<&[u8]>, kind: &[u8]) -> bool {
    content_type.is_some_and(|given| given.to_ascii_lowercase().starts_with(kind))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_answer_is_of_the_kind_the_table_says() {
        let (json, sse) = (
            Some(&b"application/json"[..]),
            Some(&b"Text/Event-Stream; charset=utf-8"[..]),
        );
        let plain = Asked::default();
        let handshake = Asked {
            handshake: true,
            in_session: false,
        };
        let in_session = Asked {
            handshake: false,
            in_session: true,
        };
        let cases = [
            (200, json, plain, Kind::Body),
            (202, None, in_session, Kind::Body),
            (200, sse, in_session, Kind::Stream),
            (404, None, handshake, Kind::Legacy),
            (405, json, handshake, Kind::Legacy),
            (404, json, in_session, Kind::Forgotten),
            // A 404 out of a session, or to a request of a revision without a handshake,
            // says the method or the path is not there: an error like any other.
            (404, json, plain, Kind::Failed { json: true }),
            (405, None, in_session, Kind::Failed { json: false }),
            (
                401,
                Some(&b"text/html"[..]),
                plain,
                Kind::Failed { json: false },
            ),
            (500, json, in_session, Kind::Failed { json: true }),
            // A stream under an error status is no stream.
            (400, sse, plain, Kind::Failed { json: false }),
        ];
        assert_eq!(cases.len(), 11);
        for (status, content_type, asked, expected) in cases {
            assert_eq!(
                kind(status, content_type, None, asked, "--url"),
                expected,
                "{status} {asked:?}"
            );
        }
        let moved = kind(307, None, Some(b"/mcp/"), handshake, "--url");
        let Kind::Redirected(why) = moved else {
            panic!("{moved:?}")
        };
        assert!(
            why.contains("307") && why.contains("/mcp/") && why.contains("--url"),
            "{why}"
        );
    }
}
