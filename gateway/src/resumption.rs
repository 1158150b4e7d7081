//! A client's stream made resumable by any instance. The gateway keeps nothing between
//! requests, so each event's id carries what an instance needs to pick the stream up
//! again: which of the client's requests it answers, and the server's own last event id.
//! A client whose connection broke comes back (a GET with `Last-Event-ID`, 2025-11-25) to
//! any instance, which asks the server for the rest of its stream from that id and relays
//! it, the answer included ([`Proxy::resumed`](reasons_mcp::Proxy::resumed)).
//!
//! Only a stream whose answer the proxy relays as read is given ids
//! ([`answered_as_read`](reasons_mcp::proxy::answered_as_read)), and only where the server
//! gave its own: a listing's answer decides what the proxy strips, and no instance can
//! decide by one it did not ask for. An id names nothing its client could not send
//! itself (its own request's id, a place in its own session's stream), and what comes
//! back on it goes only to that client, so a forged one gains it nothing.

use reasons_mcp::jsonrpc::Id;
use std::time::Duration;

/// The id of an event of the stream answering `request`, where the server's stream was
/// at `upstream`: the request's id in hex of its JSON, a dot, the server's id.
pub fn event_id(request: &Id, upstream: &str) -> String {
    let hex: String = (request.json().bytes())
        .map(|byte| format!("{byte:02x}"))
        .collect();
    format!("{hex}.{upstream}")
}

/// The request and the server's event id that `id`, one of [`event_id`]'s, names;
/// `None` for any other.
pub fn read(id: &str) -> Option<(Id, String)> {
    let (hex, upstream) = id.split_once('.')?;
    if hex.is_empty() || hex.len() % 2 != 0 || upstream.is_empty() {
        return None;
    }
    let bytes = (0..hex.len()).step_by(2).map(|at| {
        let pair = hex.get(at..at + 2)?;
        u8::from_str_radix(pair, 16).ok()
    });
    let json = String::from_utf8(bytes.collect::<Option<Vec<u8>>>()?).ok()?;
    Some((Id::parse(&json)?, upstream.to_string()))
}

/// An event that carries no message and only says where the stream is, with the wait
/// before coming back where one is given: a priming event, when it opens the stream.
pub fn place_event(id: &str, retry: Option<Duration>) -> Vec<u8> {
    let retry = retry.map_or(String::new(), |retry| {
        format!("retry: {}\n", retry.as_millis())
    });
    format!("id: {id}\n{retry}data: \n\n").into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_id_names_its_request_and_the_server_s_place_and_nothing_else_reads_as_one() {
        for (request, upstream) in [("7", "p1"), (r#""a.b""#, "s/1.2"), ("-1.5e3", "x")] {
            let request = Id::parse(request).unwrap();
            let id = event_id(&request, upstream);
            assert_eq!(read(&id), Some((request, upstream.to_string())), "{id}");
        }
        // The server's own ids, and anything a client makes up, are not the gateway's.
        for other in [
            "p1", "", ".", "37.", ".p1", "3.p1", "zz.p1", "7b7d.p1", "22.p",
        ] {
            assert_eq!(read(other), None, "{other}");
        }
    }

    #[test]
    fn a_place_event_carries_no_message() {
        let retry = Some(Duration::from_millis(1500));
        assert_eq!(
            place_event("a.b", retry),
            b"id: a.b\nretry: 1500\ndata: \n\n"
        );
        assert_eq!(place_event("a.b", None), b"id: a.b\ndata: \n\n");
    }
}
