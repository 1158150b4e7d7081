//! The paths a supervisor asks: `/livez`, answered by the front alone (no token needed:
//! it says nothing but that the process serves), and `/readyz`, answered after a probe
//! ([`reasons_mcp::ready`]) has opened a session the way a client does, through the
//! front's own handlers, and the server has listed its tools.
//!
//! A probe starts the server as a session does (a process, or a connection to the
//! URL), so it needs the token, and runs once at a time: a verdict is kept for
//! [`KEPT`], and those who ask meanwhile get it. Its session takes no client's place
//! and is never the one ended to make room for a client's: when every place is taken,
//! the sessions that hold them are serving, and the listener is ready.

use super::{Front, lock, on_delete, on_post};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use reasons_mcp::ready::{ANSWER_AT_MOST, Answer, Ask, Next, Probe, Verdict};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Where liveness is asked.
pub(super) const LIVE: &str = "/livez";
/// Where readiness is asked.
pub(super) const READY: &str = "/readyz";

/// How long a verdict answers for: probes more often start no more servers.
const KEPT: Duration = Duration::from_secs(5);

tokio::task_local! {
    /// Set while the probe's own requests are handled: its session takes no place.
    static PROBING: ();
}

/// Whether the request being handled is the readiness probe's own.
pub(super) fn probing() -> bool {
    PROBING.try_with(|_| ()).is_ok()
}

/// The last verdict, and when it was found.
pub(super) type Kept = tokio::sync::Mutex<Option<(Instant, Verdict)>>;

pub(super) async fn on_live() -> Response {
    json(StatusCode::OK, r#"{"live":true}"#.into())
}

pub(super) async fn on_ready(State(front): State<Arc<Front>>) -> Response {
    // Held while probing: one probe at a time, the others wait for its verdict.
    let mut kept = front.ready.lock().await;
    let fresh = kept.as_ref().filter(|(found, _)| found.elapsed() < KEPT);
    let verdict = match fresh {
        Some((_, verdict)) => verdict,
        None => &kept.insert((Instant::now(), probe(&front).await)).1,
    };
    let status = StatusCode::from_u16(verdict.status()).unwrap_or(StatusCode::OK);
    json(status, verdict.body())
}

fn json(status: StatusCode, body: String) -> Response {
    (status, [(header::CONTENT_TYPE, "application/json")], body).into_response()
}

/// Opens a session, lists, and ends it, as a client would.
async fn probe(front: &Arc<Front>) -> Verdict {
    {
        let sessions = lock(&front.sessions);
        if sessions.clients() + sessions.opening >= front.max_sessions {
            return Verdict::Full {
                sessions: sessions.clients(),
            };
        }
    }
    let (mut probe, mut ask) = Probe::start();
    loop {
        let (status, headers, body) = send(front, &ask).await;
        let header = |name: HeaderName| headers.get(name).map(HeaderValue::as_bytes);
        let answer = Answer {
            status: status.as_u16(),
            content_type: header(header::CONTENT_TYPE),
            session: header(HeaderName::from_static("mcp-session-id")),
            body: &body,
        };
        match probe.answered(&answer) {
            Next::Ask(next) => ask = next,
            Next::Found(verdict, end) => {
                if let Some(end) = end {
                    send(front, &end).await;
                }
                return verdict;
            }
        }
    }
}

/// `ask` made of the front's own handlers, as a client's request would be.
async fn send(front: &Arc<Front>, ask: &Ask) -> (StatusCode, HeaderMap, Bytes) {
    let mut headers = HeaderMap::new();
    for (name, value) in &ask.headers {
        if let Ok(value) = HeaderValue::from_str(value) {
            headers.insert(*name, value);
        }
    }
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(
        header::ACCEPT,
        HeaderValue::from_static("application/json, text/event-stream"),
    );
    let state = State(front.clone());
    let response = PROBING.scope((), async {
        match &ask.body {
            Some(body) => on_post(state, headers, Ok(Bytes::from(body.clone()))).await,
            None => on_delete(state, headers).await,
        }
    });
    let response = response.await;
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, ANSWER_AT_MOST)
        .await
        .unwrap_or_default();
    (parts.status, parts.headers, body)
}
