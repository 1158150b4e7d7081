//! What a transport learns from the proxy instead of reading the server's messages
//! itself: whether a line is still owed an answer, the answers a line never got, the
//! answers an HTTP error's body holds, and what the server said that a transport keeps.

use super::*;
use crate::delivery::{About, Delivery};

/// The number of the only line the proxy sent the server in `out`, and the line.
fn the_line(out: Vec<Out>) -> (u64, String) {
    let sent: Vec<(u64, Vec<u8>)> = out
        .into_iter()
        .filter_map(|out| match out {
            Out::Server { line, outline } => Some((outline.exchange, line)),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "one line to the server");
    let (exchange, line) = sent.into_iter().next().unwrap();
    (exchange, String::from_utf8(line).unwrap())
}

#[test]
fn a_line_the_server_stops_answering_gets_each_missing_answer_once() {
    // R19: a batch's two calls; the server answers one, under `1.0`, which is the id
    // `1` by value. When the line's answer ends, only the other is answered, once.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let batch = format!(
        "[{},{}]",
        call("1", "plain", r#"{"text":"a"}"#),
        call("2", "plain", r#"{"text":"b"}"#)
    );
    let (line, _) = the_line(proxy.client_sent(batch.into_bytes(), now()));
    assert!(proxy.awaits(line));
    let one = r#"{"jsonrpc":"2.0","id":1.0,"result":{"content":[]}}"#;
    let answered = server(&mut proxy, one);
    assert_eq!(answered.client.len(), 1, "{answered:?}");
    assert!(proxy.awaits(line));
    let rest = wire(proxy.unanswered(line, "the stream ended", now()));
    assert_eq!(rest.client.len(), 1, "{rest:?}");
    let (id, code, message) = error_of(&rest.client[0]);
    assert_eq!((id, code), (json!(2), INTERNAL_ERROR));
    assert_eq!(message, "the stream ended");
    assert!(!proxy.awaits(line));
    assert!(
        wire(proxy.unanswered(line, "again", now()))
            .client
            .is_empty()
    );
}

#[test]
fn a_line_answers_only_its_own_requests_even_when_an_id_is_used_again() {
    // R19: the client uses the id 5 again once its first request was answered; the
    // first line's end owes the second request nothing.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let (first, _) = the_line(proxy.client_sent(call("5", "plain", "{}").into_bytes(), now()));
    let answered = server(&mut proxy, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#);
    assert_eq!(answered.client.len(), 1, "{answered:?}");
    let (second, _) = the_line(proxy.client_sent(call("5", "plain", "{}").into_bytes(), now()));
    assert_ne!(first, second);
    assert!(
        wire(proxy.unanswered(first, "ended", now()))
            .client
            .is_empty()
    );
    assert!(proxy.awaits(second));
    // A notification owes nothing.
    let (note, _) = the_line(proxy.client_sent(INITIALIZED.as_bytes().to_vec(), now()));
    assert!(!proxy.awaits(note));
}

#[test]
fn a_listing_of_the_proxys_own_left_unanswered_refuses_what_waits_for_it() {
    // R18: a 2026-07-28 call waits for the proxy's own listing; that line's answer
    // ends with nothing: the call is refused, never sent.
    let mut proxy = proxy();
    let sent = r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"plain","arguments":{"reason":"r"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#;
    let (listing, text) = the_line(proxy.client_sent(sent.as_bytes().to_vec(), now()));
    assert!(text.contains(r#""method":"tools/list""#), "{text}");
    assert!(proxy.awaits(listing));
    let refused = wire(proxy.unanswered(listing, "it answered HTTP 500", now()));
    assert!(refused.server.is_empty(), "{refused:?}");
    assert_eq!(refused.client.len(), 1, "{refused:?}");
    let (id, _, message) = error_of(&refused.client[0]);
    assert_eq!(id, json!(9));
    assert!(message.contains("not sent"), "{message}");
    assert!(proxy.idle());
}

#[test]
fn an_http_errors_body_is_taken_only_for_the_answers_it_owes() {
    // An error page, an error under no id, or an answer to another line's request in
    // the body of an HTTP error are dropped, unread by anyone; the line's own answer
    // is taken.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    let (other, _) = the_line(proxy.client_sent(call("1", "plain", "{}").into_bytes(), now()));
    let (line, _) = the_line(proxy.client_sent(call("2", "plain", "{}").into_bytes(), now()));
    let bodies = [
        "<html>Bad Gateway</html>".to_string(),
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"no session"}}"#.into(),
        r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.into(),
    ];
    assert_eq!(bodies.len(), 3);
    for body in bodies {
        let dropped = wire(proxy.server_answered(Parsed::read(body.into_bytes()), line, now()));
        assert!(
            dropped.client.is_empty() && dropped.notes.is_empty(),
            "{dropped:?}"
        );
    }
    assert!(proxy.awaits(other));
    let own = r#"{"jsonrpc":"2.0","id":2,"error":{"code":-32001,"message":"unauthorised"}}"#;
    let taken = wire(proxy.server_answered(Parsed::read(own.as_bytes().to_vec()), line, now()));
    assert_eq!(taken.client, [own]);
    assert!(!proxy.awaits(line));
}

#[test]
fn what_the_server_said_that_a_transport_keeps_comes_out_learnt() {
    // The version `initialize` settled; nothing else, a listing least of all: no
    // transport keeps one, since none can know of a change announced to another.
    let mut proxy = proxy();
    client(&mut proxy, INITIALIZE);
    let settled =
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-06-18","capabilities":{}}}"#;
    assert_eq!(
        server(&mut proxy, settled).learnt,
        [Learnt::Version("2025-06-18".into())]
    );
    client(&mut proxy, INITIALIZED);
    let (_, text) =
        the_line(proxy.client_sent(call("1", "plain", r#"{"reason":"r"}"#).into_bytes(), now()));
    let id = own_listing(&[text]).unwrap();
    let page = format!(r#"{{"tools":[{PLAIN}]}}"#);
    let listed = server(
        &mut proxy,
        &format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{page}}}"#),
    );
    assert_eq!(listed.learnt, []);
    let changed = r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#;
    assert_eq!(server(&mut proxy, changed).learnt, []);
}

#[test]
fn a_calls_param_headers_come_from_its_arguments_as_forwarded() {
    // R10: the headers a tool's declaration asks for are read from the arguments the
    // server gets, after the reason came off.
    let region = r#"{"name":"regional","inputSchema":{"type":"object","properties":{"region":{"type":"string","x-mcp-header":"Region"}}}}"#;
    let mut proxy = ready(Options::default(), &[region]);
    let sent = call("3", "regional", r#"{"region":"eu","reason":"the model's"}"#);
    let outline = outlines(proxy.client_sent(sent.into_bytes(), now()));
    assert_eq!(outline.len(), 1, "{outline:?}");
    assert_eq!(outline[0].arguments.as_deref(), Some(r#"{"region":"eu"}"#));
    assert_eq!(
        outline[0].params,
        [("Mcp-Param-Region".to_string(), "eu".to_string())]
    );
}

#[test]
fn an_augmented_listing_names_its_request_where_its_id_now_is() {
    // The server's answer puts its id after the tools, which the proxy augments: the
    // id's place moves, and the delivery says where it is now.
    let mut proxy = ready(Options::default(), &[PLAIN]);
    client(
        &mut proxy,
        r#"{"jsonrpc":"2.0","id":"l2","method":"tools/list"}"#,
    );
    let answer = format!(r#"{{"jsonrpc":"2.0","result":{{"tools":[{PLAIN}]}},"id":"l2"}}"#);
    let out = proxy.server_sent(answer.into_bytes(), now());
    let deliveries: Vec<Delivery> = out
        .into_iter()
        .filter_map(|out| match out {
            Out::Client(delivery) => Some(delivery),
            _ => None,
        })
        .collect();
    assert_eq!(deliveries.len(), 1);
    let delivery = &deliveries[0];
    let line = String::from_utf8(delivery.line.clone()).unwrap();
    assert!(line.contains(REASON), "augmented: {line}");
    assert_eq!(delivery.parts.len(), 1);
    let About::Answer { id, at, .. } = &delivery.parts[0].about else {
        panic!("an answer: {delivery:?}");
    };
    assert_eq!(id, &Id::parse(r#""l2""#).unwrap());
    assert_eq!(&line[at.clone()], r#""l2""#);
}

#[test]
fn a_resumed_request_s_answer_is_relayed_as_read_and_only_once() {
    // R19 (2025-11-25's resumable streams): a client comes back for a request's stream
    // through a proxy that never saw the request (a fresh gateway instance); its answer
    // reaches it byte for byte, once. An answer to a request nobody resumed is dropped.
    let answer =
        r#"{"jsonrpc":"2.0", "id":"c1","result":{"content":[{"type":"text","text":"ok"}]}}"#;
    let mut fresh = proxy();
    assert!(server(&mut fresh, answer).client.is_empty());
    let mut fresh = proxy();
    fresh.resumed(&Id::parse(r#""c1""#).unwrap());
    let relayed = server(&mut fresh, answer);
    assert_eq!(relayed.client, [answer]);
    assert!(server(&mut fresh, answer).client.is_empty(), "once");
    // Only an answer the proxy relays as read is resumed: a listing's and an
    // initialize's decide what it strips.
    assert!(answered_as_read("tools/call") && answered_as_read("resources/read"));
    assert!(!answered_as_read("tools/list") && !answered_as_read("initialize"));
}
