//! The legacy HTTP+SSE transport (2024-11-05), which servers still speak, reached as the
//! specification's backwards-compatibility section says: when the server has nothing to
//! POST the first `initialize` to (404, 405), the client GETs the same URL for a stream
//! whose first event (`endpoint`) names where to POST every message, and every answer,
//! and whatever else the server sends, comes on that stream.
//!
//! Fails closed: an endpoint on another origin, where the user's own headers' credentials would
//! go, is refused (and no request carrying them could be built there: `outgoing.rs`); a stream that names no endpoint within the read timeout is given up;
//! and a stream that ends ends the session, so that every request still waiting is
//! answered.

use super::Connection;
use crate::event::Event;
use crate::outgoing::Agent;
use reasons_mcp::Outline;
use reasons_mcp::http::sse;
use std::sync::mpsc::{self, Sender};

impl Connection {
    /// Opens the server's event stream and waits for its endpoint, the URL every message
    /// goes to, or says why there is none.
    pub(super) fn open_legacy(&self) -> Result<String, String> {
        let (response, ()) = self.signing_in(|bearer| {
            let request = self.event_stream(&self.lock(), bearer, false)?;
            Ok((request.call(), ()))
        })?;
        let status = response.status();
        if !status.is_success() || !super::is_event_stream(&response) {
            return Err(format!(
                "its GET answered HTTP {status}, not an event stream"
            ));
        }
        let (found, endpoint) = mpsc::channel();
        let connection = self.clone();
        std::thread::spawn(move || connection.read_legacy(response.into_body(), found));
        endpoint
            .recv_timeout(self.remote.read_timeout)
            .unwrap_or_else(|_| {
                Err(format!(
                    "its event stream named no endpoint within {} s",
                    self.remote.read_timeout.as_secs()
                ))
            })
    }

    /// Reads the event stream: its endpoint first, sent to `found`; then each message,
    /// to the loop. When it ends, the session is over.
    fn read_legacy(&self, body: ureq::Body, found: Sender<Result<String, String>>) {
        let mut found = Some(found);
        let read = super::super::event_stream(body);
        let mut place = sse::Place::default();
        let ended = sse::read_events(read, &mut place, self.max_message, |kind, data| {
            if let Some(waiting) = found.take() {
                match kind {
                    "endpoint" => {
                        let endpoint = self.endpoint(&data);
                        if let Ok(url) = &endpoint {
                            self.lock().legacy = Some(url.clone());
                        }
                        let _ = waiting.send(endpoint);
                    }
                    // Nothing before the endpoint belongs to a session yet.
                    _ => found = Some(waiting),
                }
                return;
            }
            // Messages only once the endpoint was taken: a refused one ends nothing
            // here, but nothing of that stream reaches the client.
            if kind == "message" && self.lock().legacy.is_some() {
                self.pass(data.into_bytes());
            }
        });
        let session = self.lock();
        if session.legacy.is_some() && !session.closed {
            drop(session);
            let how = match ended {
                Ok(()) => "it ended".to_string(),
                Err(error) => format!("it broke off: {error}"),
            };
            crate::say::say(&format!(
                "the MCP server's event stream is its session, and {how}"
            ));
            self.events.control(Event::ServerClosed);
        }
    }

    /// The endpoint an `endpoint` event names, resolved against the server's URL, when
    /// it is on the same origin.
    fn endpoint(&self, named: &str) -> Result<String, String> {
        let base = url::Url::parse(&self.remote.url).map_err(|error| error.to_string())?;
        let endpoint = base
            .join(named.trim())
            .map_err(|_| format!("its endpoint {named:?} is not a URL"))?;
        if endpoint.origin() != base.origin() {
            return Err(format!(
                "its endpoint is on another origin ({}), where the proxy's headers would \
                 go: refused",
                endpoint.origin().ascii_serialization()
            ));
        }
        Ok(endpoint.into())
    }

    /// POSTs one message to the legacy `endpoint`; its answer, if it is owed one, comes
    /// on the event stream. A request the server refuses is answered here.
    pub(super) fn post_legacy(&self, message: &[u8], outline: &Outline, endpoint: &str) {
        let sent = self.signing_in(|bearer| {
            // The session's lock is let go before the request goes.
            let request = self.carrying(Agent::post, endpoint, &self.lock(), None, bearer)?;
            let request = request.header("Content-Type", "application/json");
            Ok((request.send(message), ()))
        });
        let url = &self.remote.shown;
        match sent {
            Ok((response, ())) if response.status().is_success() => {}
            Ok((response, ())) => self.unanswered(
                outline,
                &format!(
                    "the MCP server at {url} answered HTTP {} to a message",
                    response.status()
                ),
            ),
            Err(why) => self.unanswered(outline, &why),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Http, Remote};

    #[test]
    fn a_legacy_endpoint_is_taken_only_on_the_server_s_own_origin() {
        // The endpoint event says where every message, and its --header credentials, go:
        // another origin (a host, a port, a scheme) is refused.
        let (events, _inbox) = crate::outbox::channel();
        let remote = Remote::new("http://127.0.0.1:8000/mcp/sse", &[], &[]).unwrap();
        let http = Http::connect(remote, events, 1 << 20);
        let endpoint = |named: &str| http.connection.endpoint(named);
        assert_eq!(
            endpoint("/messages?sessionId=a").unwrap(),
            "http://127.0.0.1:8000/messages?sessionId=a"
        );
        assert_eq!(
            endpoint("messages").unwrap(),
            "http://127.0.0.1:8000/mcp/messages"
        );
        for elsewhere in [
            "http://evil.example/messages",
            "http://127.0.0.1:8001/messages",
            "https://127.0.0.1:8000/messages",
            "//evil.example/messages",
        ] {
            let refused = endpoint(elsewhere).unwrap_err();
            assert!(refused.contains("another origin"), "{elsewhere}: {refused}");
        }
    }
}
