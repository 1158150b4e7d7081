//! The legacy HTTP+SSE transport (2024-11-05), for clients that speak only it: a GET of
//! [`STREAM_PATH`] opens a session and its one stream, whose first event names the
//! endpoint the client POSTs its messages to (`/messages?sessionId=…`); every message for
//! the client, answers included, comes on that stream, and the session ends when the
//! client closes it. It is a session as `initialize` opens one over Streamable HTTP,
//! counted against `Listen::max_sessions`, with the same admission before any handler (Host,
//! Origin, the token), a body that says it is JSON, and one message per POST, read by
//! the proxy's strict reader.

use super::{
    Front, INVALID_REQUEST, Id, Parsed, Posted, Refused, Running, STREAM_AHEAD, Sent, admission,
    forward, lock, one_message, refuse, session_gone,
};
use axum::body::Bytes;
use axum::extract::{RawQuery, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event as SseEvent, Sse};
use axum::response::{IntoResponse, Response};
use std::convert::Infallible;
use std::sync::Arc;
use tokio::sync::mpsc::{Receiver, channel};

/// Where a legacy client opens its session's stream.
pub const STREAM_PATH: &str = "/sse";

/// Where a legacy client POSTs its messages, its session named in the query.
pub const MESSAGES_PATH: &str = "/messages";

/// Opens a session and answers with its stream: first the endpoint to POST to, then each
/// message for the client as the session writes it.
pub async fn on_stream(State(front): State<Arc<Front>>, RawQuery(query): RawQuery) -> Response {
    let (running, session) = match front.open_session().await {
        Ok(opened) => opened,
        Err(refused) => return refused.into_response(),
    };
    let (lines, stream) = channel(STREAM_AHEAD);
    {
        let mut routes = lock(&running.routes);
        routes.stream = Some(lines.clone());
        routes.legacy = Some(lines);
    }
    let endpoint = SseEvent::default()
        .event("endpoint")
        .data(endpoint(&session, query.as_deref()));
    let open = Open { front, session };
    let first = futures_util::stream::once(async { Ok::<_, Infallible>(endpoint) });
    let messages = futures_util::stream::unfold((stream, open), next_message);
    Sse::new(futures_util::StreamExt::chain(first, messages)).into_response()
}

/// The next message of a session's stream, as an event, until the session ends.
async fn next_message(
    (mut lines, open): (Receiver<Sent>, Open),
) -> Option<(Result<SseEvent, Infallible>, (Receiver<Sent>, Open))> {
    let sent = lines.recv().await?;
    let event = SseEvent::default()
        .event("message")
        .data(String::from_utf8_lossy(&sent.line));
    Some((Ok(event), (lines, open)))
}

/// The endpoint a session's client POSTs to, relative to its stream's URL. A client that
/// gave the token in the stream's URL (a client that takes only a URL) finds it in the
/// endpoint too: it goes only to that client, on the stream it opened with the token.
fn endpoint(session: &str, query: Option<&str>) -> String {
    let token = query
        .into_iter()
        .flat_map(|query| query.split('&'))
        .find(|pair| pair.starts_with("token="));
    match token {
        Some(token) => format!("{MESSAGES_PATH}?sessionId={session}&{token}"),
        None => format!("{MESSAGES_PATH}?sessionId={session}"),
    }
}

/// A legacy session's stream, open: when its client closes it, the session ends, as
/// DELETE ends one over Streamable HTTP.
struct Open {
    front: Arc<Front>,
    session: String,
}

impl Drop for Open {
    fn drop(&mut self) {
        lock(&self.front.sessions).end(&self.session);
    }
}

/// Takes a message for a session opened on [`STREAM_PATH`]: accepted (202) once it is on
/// its way; what answers it comes on the session's stream.
pub async fn on_message(
    State(front): State<Arc<Front>>,
    RawQuery(query): RawQuery,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    if let Some((status, why)) = admission::refused_message(&headers) {
        return refuse(status, INVALID_REQUEST, &why).into_response();
    }
    let session = query
        .iter()
        .flat_map(|query| url::form_urlencoded::parse(query.as_bytes()))
        .find(|(name, _)| name == "sessionId")
        .map(|(_, session)| session.into_owned());
    let Some(session) = session else {
        let why = "a message is POSTed to the endpoint its session's stream named \
                   (?sessionId=…): open one with a GET of /sse";
        return refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, why).into_response();
    };
    let Posted {
        line, id, route, ..
    } = match one_message(&front, &headers, body) {
        Ok(posted) => posted,
        Err(refused) => return refused.into_response(),
    };
    let running = lock(&front.sessions).touch(&session);
    let Some(running) = running else {
        return refuse(
            StatusCode::NOT_FOUND,
            INVALID_REQUEST,
            "no such session: open one with a GET of /sse",
        )
        .into_response();
    };
    let line = match id {
        Some(id) => match admitted(&running, id, line, route.token) {
            Ok(line) => line,
            Err(refused) => return refused.into_response(),
        },
        None => line,
    };
    if !forward(&running.events, line).await {
        return session_gone().into_response();
    }
    StatusCode::ACCEPTED.into_response()
}

/// A request of the running session `running` admitted to wait for its answer on the session's
/// stream; the refusal when the session's stream is not there (a session opened over
/// Streamable HTTP, or one that has ended).
fn admitted(
    running: &Running,
    id: Id,
    line: Parsed,
    token: Option<(Id, std::ops::Range<usize>)>,
) -> Result<Parsed, Refused> {
    let mut routes = lock(&running.routes);
    if routes.ended {
        return Err(session_gone());
    }
    let Some(stream) = routes.legacy.clone() else {
        let why = "the session was opened over Streamable HTTP: POST its messages to /mcp";
        return Err(refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, why));
    };
    routes.admit(id, line, token, stream).map(|(_, line)| line)
}
