//! A server reached over HTTP that forgets the session (it restarted): the client's
//! session goes on. The proxy starts a new one with the client's own `initialize`, lists
//! the server again, and sends again what the old session refused, each call classified
//! against the new listing (R18), never against the one the old session made.

use super::*;

/// The only line to the server in `out`: its number, its text, and whether it is the
/// proxy's own.
fn sent(out: Vec<Out>) -> (u64, String, bool) {
    let sent: Vec<(u64, String, bool)> = (out.into_iter())
        .filter_map(|out| match out {
            Out::Server { line, outline } => Some((
                outline.exchange,
                String::from_utf8(line).unwrap(),
                outline.own,
            )),
            _ => None,
        })
        .collect();
    assert_eq!(sent.len(), 1, "one line to the server: {sent:?}");
    sent.into_iter().next().unwrap()
}

/// A legacy session over HTTP, its handshake done and `tools` listed by the client.
fn over_http(tools: &[&str]) -> Proxy<ComponentLayer> {
    ready(Options::default(), tools).over_http()
}

/// `declaration` as the server declares it after its restart.
const PLAIN_OWNING_REASON: &str = r#"{"name":"plain","inputSchema":{"type":"object","properties":{"text":{"type":"string"},"reason":{"type":"string"}}}}"#;
const OWN_NO_LONGER: &str =
    r#"{"name":"own","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}"#;

/// Restarts the server under a call sent in `out`: the 404, the new `initialize` (its
/// id), and the line that follows its answer.
fn restart_under(proxy: &mut Proxy<ComponentLayer>, out: Vec<Out>) -> Wire {
    let (exchange, _, _) = sent(out);
    let lost = proxy.session_lost(exchange, "the session was forgotten", true, now());
    let (_, initialize, own) = sent(lost);
    assert!(own, "the new initialize is the proxy's own");
    let again: Value = serde_json::from_str(&initialize).unwrap();
    assert_eq!(again["method"], "initialize");
    // The client's own params: the server is asked what the client asked of it.
    assert_eq!(again["params"], json!({}));
    assert_ne!(again["id"], json!(0), "an id of the proxy's own");
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"tools":{{}}}}}}}}"#,
        again["id"]
    );
    server(proxy, &answer)
}

#[test]
fn a_call_the_old_session_refused_is_sent_again_as_the_new_listing_says() {
    // R18, R5: before the restart `own` owned its `reason` and `plain` did not; after it,
    // the other way round. A call to each that the old session refused is sent again in
    // the new one, each classified against the new listing: `own`'s reason, which the
    // old listing called the tool's own, is stripped; `plain`'s goes to it as its own.
    for (tool, arguments, forwarded) in [
        (
            "own",
            r#"{"text":"a","reason":"the model's"}"#,
            r#"{"text":"a"}"#,
        ),
        (
            "plain",
            r#"{"text":"b","reason":"its own"}"#,
            r#"{"text":"b","reason":"its own"}"#,
        ),
    ] {
        let mut proxy = over_http(&[PLAIN, OWN]);
        let request = call("5", tool, arguments);
        let out = proxy.client_sent(request.clone().into_bytes(), now());
        let started = restart_under(&mut proxy, out);
        // The answer to the proxy's initialize reaches no client; the server is told
        // the handshake is done, then listed, before anything else.
        assert!(started.client.is_empty(), "{started:?}");
        assert_eq!(started.server.len(), 2, "{started:?}");
        assert_eq!(started.server[0], INITIALIZED);
        assert_eq!(started.learnt, [Learnt::Version("2025-06-18".into())]);
        let listed = answer_own_listing(
            &mut proxy,
            &started.server,
            &[PLAIN_OWNING_REASON, OWN_NO_LONGER],
        );
        assert_eq!(listed.server, [call("5", tool, forwarded)], "{tool}");
        assert!(listed.client.is_empty(), "{listed:?}");
        // Its answer reaches the client, once.
        let answer = r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#;
        assert_eq!(server(&mut proxy, answer).client, [answer]);
    }
}

#[test]
fn what_the_client_sends_during_the_restart_waits_for_it_in_order() {
    // R18, R19: a request sent while the new session starts goes after it, behind the
    // call sent again; a late 404 of the old session (a line sent before it was
    // forgotten) starts no second session and is sent again too.
    let mut proxy = over_http(&[PLAIN]);
    let first = proxy.client_sent(call("1", "plain", r#"{"text":"a"}"#).into_bytes(), now());
    let (late, _, _) =
        sent(proxy.client_sent(call("2", "plain", r#"{"text":"b"}"#).into_bytes(), now()));
    let (exchange, _, _) = sent(first);
    let lost = wire(proxy.session_lost(exchange, "forgotten", true, now()));
    assert_eq!(lost.server.len(), 1, "{lost:?}");
    let initialize: Value = serde_json::from_str(&lost.server[0]).unwrap();
    let ping = r#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#;
    let waiting = client(&mut proxy, ping);
    assert!(waiting.server.is_empty(), "{waiting:?}");
    let again = wire(proxy.session_lost(late, "forgotten", false, now()));
    assert!(
        again.server.is_empty() && again.client.is_empty(),
        "{again:?}"
    );
    let answer = format!(
        r#"{{"jsonrpc":"2.0","id":{},"result":{{"capabilities":{{}}}}}}"#,
        initialize["id"]
    );
    let started = server(&mut proxy, &answer);
    assert_eq!(started.server.len(), 2, "{started:?}");
    let listed = answer_own_listing(&mut proxy, &started.server, &[PLAIN]);
    assert_eq!(
        listed.server,
        [
            call("1", "plain", r#"{"text":"a"}"#),
            call("2", "plain", r#"{"text":"b"}"#),
            ping.to_string()
        ]
    );
}

#[test]
fn a_server_that_refuses_the_new_session_refuses_what_waits() {
    // R19, R18: the new initialize answered with an error: the call waiting for it is
    // answered with an error saying so, never sent.
    let mut proxy = over_http(&[PLAIN]);
    let out = proxy.client_sent(
        call("1", "plain", r#"{"text":"a","reason":"r"}"#).into_bytes(),
        now(),
    );
    let (exchange, _, _) = sent(out);
    let (_, initialize, _) = sent(proxy.session_lost(exchange, "forgotten", true, now()));
    let initialize: Value = serde_json::from_str(&initialize).unwrap();
    let refusal = format!(
        r#"{{"jsonrpc":"2.0","id":{},"error":{{"code":-32600,"message":"no more sessions"}}}}"#,
        initialize["id"]
    );
    let refused = server(&mut proxy, &refusal);
    assert!(refused.server.is_empty(), "{refused:?}");
    assert_eq!(refused.client.len(), 1, "{refused:?}");
    let (id, code, message) = error_of(&refused.client[0]);
    assert_eq!((id, code), (json!(1), INTERNAL_ERROR));
    assert!(message.contains("no more sessions"), "{message}");
}

#[test]
fn a_batch_the_old_session_refused_is_answered_with_why() {
    // R19: a batch is not sent again (its answers are assembled as it goes); each of its
    // requests is answered with why, once, and the session goes on.
    let mut proxy = over_http(&[PLAIN]);
    let batch = format!("[{}]", call("1", "plain", r#"{"text":"a"}"#));
    let (exchange, _, _) = sent(proxy.client_sent(batch.into_bytes(), now()));
    let lost = wire(proxy.session_lost(exchange, "forgotten", true, now()));
    assert_eq!(lost.server.len(), 1, "{lost:?}");
    assert_eq!(lost.client.len(), 1, "{lost:?}");
    let (id, code, message) = error_of(&lost.client[0]);
    assert_eq!(
        (id, code, message.as_str()),
        (json!(1), INTERNAL_ERROR, "forgotten")
    );
}

#[test]
fn a_server_that_ends_while_the_session_starts_again_answers_only_the_client_s_requests() {
    // R19: the proxy's own initialize, under way when the server ends, is answered to no
    // client; the client's call that waited for the new session gets its error, once.
    let mut proxy = over_http(&[PLAIN]);
    let out = proxy.client_sent(call("1", "plain", r#"{"text":"a"}"#).into_bytes(), now());
    let (exchange, _, _) = sent(out);
    sent(proxy.session_lost(exchange, "forgotten", true, now()));
    let ended = wire(proxy.server_gone("it exited", now()));
    assert_eq!(ended.client.len(), 1, "{ended:?}");
    let (id, code, _) = error_of(&ended.client[0]);
    assert_eq!((id, code), (json!(1), INTERNAL_ERROR));
}

#[test]
fn a_server_that_forgets_every_session_is_not_given_another_without_end() {
    // R19: each session started again is forgotten before it answers anything; after
    // three, the call is answered with why, once, and no fourth initialize is sent.
    let mut proxy = over_http(&[PLAIN]);
    let mut out = proxy.client_sent(call("1", "plain", r#"{"text":"a"}"#).into_bytes(), now());
    for _ in 0..3 {
        let (exchange, _, _) = sent(out);
        let (_, initialize, _) = sent(proxy.session_lost(exchange, "forgotten", true, now()));
        let initialize: Value = serde_json::from_str(&initialize).unwrap();
        let answer = format!(
            r#"{{"jsonrpc":"2.0","id":{},"result":{{}}}}"#,
            initialize["id"]
        );
        let started = server(&mut proxy, &answer);
        let id = own_listing(&started.server).expect("listed again");
        out = proxy.server_sent(listing(&id, &[PLAIN], "").into_bytes(), now());
    }
    let (exchange, resent, _) = sent(out);
    assert_eq!(resent, call("1", "plain", r#"{"text":"a"}"#));
    let given_up = wire(proxy.session_lost(exchange, "forgotten", true, now()));
    assert!(given_up.server.is_empty(), "{given_up:?}");
    assert_eq!(given_up.client.len(), 1, "{given_up:?}");
    let (id, _, message) = error_of(&given_up.client[0]);
    assert_eq!(id, json!(1));
    assert!(message.contains("no other is started"), "{message}");
}
