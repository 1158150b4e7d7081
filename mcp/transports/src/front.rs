//! The HTTP front ([`Listen`]): the proxy served over Streamable HTTP on a loopback port,
//! for clients that take only a URL. Each legacy session (`initialize`, answered with an
//! `Mcp-Session-Id`) is a session of the proxy of its own, with its own server (started, or
//! connected to); 2026-07-28 requests, which carry their protocol version in `_meta` and
//! belong to no session, share one, their ids made unique on the way in and given back on
//! the way out. The HTTP side is axum on a small tokio runtime; each session runs the same
//! loop as over stdio (`session.rs`), on a thread of its own. At most
//! `Listen::max_sessions` legacy sessions are open at once, so that clients cannot start
//! servers without end: a new one ends the one used least recently (clients that never
//! DELETE, the MCP conformance suite among them, are served all the same), and starts its
//! server only once no more than `Listen::max_sessions` legacy sessions' servers run, those
//! still ending counted: at most one more than the limit runs at any moment.
//!
//! Fails closed: only loopback is served, and a request whose `Host` is not this listener
//! (a page that rebound its DNS name to 127.0.0.1) is refused with 403, as is a page's
//! whose `Origin` is neither this listener's nor one the settings allow; a POST that
//! does not say it is JSON, or does not accept the answers a client must, is refused
//! (`admission.rs`); a body that is not one JSON message is answered with an error,
//! never relayed.
//!
//! Its rooms: `sessions.rs` the legacy sessions held, `routes.rs` where each line a
//! session writes goes, `refused.rs` the answers to what is refused, `admission.rs`
//! which hosts and pages are served, `token.rs` the user's token, `resume.rs` the
//! streams a client may come back for, `legacy.rs` the legacy HTTP+SSE transport.

mod admission;
mod health;
mod legacy;
#[cfg(test)]
mod properties;
mod refused;
mod resume;
mod routes;
mod sessions;
mod token;

use super::outbox::{self, Feed};
use crate::ended::Ended;
use crate::error::Error;
use crate::event::Event;
use crate::inbox::Inbox;
use crate::lines::over_cap;
use crate::session::Session;
use crate::settings::{Listen, Server, Settings};
use crate::sources::Sources;
use admission::{AllowedOrigins, Origin};
use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use futures_util::StreamExt;
use reasons_host::Plugin;
use reasons_mcp::http::inbound;
use reasons_mcp::http::intake::{self, Posted};
use reasons_mcp::jsonrpc::{self, INVALID_REQUEST, Id, Parsed};
use reasons_transform::Options;
use refused::{Refused, busy, refuse, rejected, session_gone};
use routes::{Routed, Routes, Running, Sent};
use sessions::{PLACE_AT_MOST, Sessions};
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use token::Token;
use tokio::sync::mpsc::{Receiver, channel};

/// The messages one SSE stream holds for a client that has not read them: past that, the
/// stream is ended rather than the proxy's memory grown.
const STREAM_AHEAD: usize = 64;

/// The path the MCP endpoint is served at.
const PATH: &str = "/mcp";

/// Serves clients at `address` until a signal ends the proxy; each session's server is
/// ended with it.
pub fn serve(
    listen: &Listen,
    plugin: &Plugin,
    options: Options,
    settings: &Settings,
    signals: Inbox,
) -> Result<Ended, Error> {
    let address: SocketAddr = listen.address.parse().map_err(|_| {
        Error::Setting(format!(
            "--listen {:?} is not an address and port (127.0.0.1:8931)",
            listen.address
        ))
    })?;
    if !address.ip().is_loopback() {
        return Err(Error::Setting(format!(
            "--listen {address}: only a loopback address is served (127.0.0.1 or [::1]): \
             whoever reaches it runs the server's tools"
        )));
    }
    let allowed_origins = AllowedOrigins::new(&listen.allow_origins).map_err(Error::Setting)?;
    let token = match &listen.token_file {
        Some(file) => Token::kept_in(file).map_err(Error::Setting)?,
        None => Token::fresh(),
    };
    let listening = format!("cannot listen on {address}");
    let listener = std::net::TcpListener::bind(address)
        .and_then(|listener| listener.set_nonblocking(true).map(|()| listener))
        .map_err(Error::system(listening.clone()))?;
    let bound = listener
        .local_addr()
        .map_err(Error::system(listening.clone()))?;
    let front = Arc::new(Front {
        plugin: plugin.clone(),
        options,
        settings: settings.clone(),
        port: bound.port(),
        allowed_origins,
        token,
        max_sessions: listen.max_sessions,
        sessions: Mutex::default(),
        stateless: Mutex::default(),
        ready: health::Kept::default(),
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_io()
        .enable_time()
        .build()
        .map_err(Error::system("cannot start the HTTP runtime"))?;
    let app = Router::new()
        .route(
            PATH,
            axum::routing::post(on_post).get(on_get).delete(on_delete),
        )
        .route(legacy::STREAM_PATH, axum::routing::get(legacy::on_stream))
        .route(health::LIVE, axum::routing::get(health::on_live))
        .route(health::READY, axum::routing::get(health::on_ready))
        .route(
            legacy::MESSAGES_PATH,
            axum::routing::post(legacy::on_message),
        )
        .layer(axum::middleware::from_fn_with_state(
            front.clone(),
            admitted,
        ))
        // The one cap on a message, every transport's (`Settings::max_message`), in place of
        // axum's own 2 MiB: the front refuses nothing stdio would relay.
        .layer(axum::extract::DefaultBodyLimit::max(settings.max_message))
        .layer(tower_http::timeout::RequestBodyTimeoutLayer::new(
            BODY_PAUSE_AT_MOST,
        ))
        .with_state(front.clone());
    let listener = {
        let _entered = runtime.enter();
        tokio::net::TcpListener::from_std(listener).map_err(Error::system(listening))?
    };
    runtime.spawn(accept(listener, app));
    // A token kept in a file stays out of whatever keeps the proxy's stderr (a journal).
    match &listen.token_file {
        Some(file) => eprintln!(
            "reasons: serving MCP at http://{bound}{PATH} to clients that send the token in \
             {} (Authorization: Bearer TOKEN, or ?token=TOKEN in the URL); clients of the \
             legacy HTTP+SSE transport at http://{bound}{}",
            file.display(),
            legacy::STREAM_PATH
        ),
        None => eprintln!(
            "reasons: serving MCP at http://{bound}{PATH}?token={} (clients of the legacy \
             HTTP+SSE transport at http://{bound}{}?token={0})",
            front.token.text(),
            legacy::STREAM_PATH
        ),
    }
    let signal = loop {
        match signals.events.recv() {
            Ok(Event::Signal(signal)) => break signal,
            Ok(_) => continue,
            Err(_) => break libc::SIGTERM,
        }
    };
    front.end_all(signal);
    runtime.shutdown_background();
    Ok(Ended::Remote {
        signal: Some(signal),
    })
}

/// How long a client may take to send a request's headers, and to send the next bytes of
/// its body: a connection that sends half of either is not held open for as long as the
/// client likes.
const HEADERS_AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);
const BODY_PAUSE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(10);

/// Serves each connection `listener` accepts with `app`, as `axum::serve` would, with
/// the header timeout it cannot be given.
async fn accept(listener: tokio::net::TcpListener, app: Router) {
    loop {
        let Ok((tcp, _)) = listener.accept().await else {
            // Out of descriptors, say: a pause, not a loop that spins on the error.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            continue;
        };
        // Without TCP_NODELAY, Nagle's algorithm holds an answer's last small write back
        // until the client's delayed ACK: tens of milliseconds a call for some clients.
        let _ = tcp.set_nodelay(true);
        let service = hyper_util::service::TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            let mut http = hyper::server::conn::http1::Builder::new();
            http.timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(HEADERS_AT_MOST);
            let io = hyper_util::rt::TokioIo::new(tcp);
            let _ = http.serve_connection(io, service).await;
        });
    }
}

/// What every request handler shares.
struct Front {
    plugin: Plugin,
    options: Options,
    settings: Settings,
    port: u16,
    /// The pages' origins that may call besides this listener's own.
    allowed_origins: AllowedOrigins,
    /// What every request carries: the secret of the user who started the proxy.
    token: Token,
    /// The most legacy sessions open, or opening, at once.
    max_sessions: usize,
    sessions: Mutex<Sessions>,
    /// The session 2026-07-28 requests share, opened on the first.
    stateless: Mutex<Option<Arc<Running>>>,
    /// The readiness probe's last verdict.
    ready: health::Kept,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Front {
    /// A session of the proxy of its own, its loop on a thread; or the response that
    /// says why there cannot be one (a server that cannot start, say).
    fn open(&self, shared: bool) -> Result<Arc<Running>, Refused> {
        // The session's streams never hold the server back (each is bounded on its own),
        // so what the server sends is not gated; what clients send waits for the server.
        let (feed, inbox) = outbox::channel();
        // The readiness probe never signs in: nobody asked it to open a browser, and a
        // server that asks its users to sign in is ready for those who have.
        let mut probe_settings = None;
        if health::probing()
            && let Server::Url(remote) = &self.settings.server
        {
            let mut settings = self.settings.clone();
            settings.server = Server::Url(remote.clone().never_signing_in());
            probe_settings = Some(settings);
        }
        let settings = probe_settings.as_ref().unwrap_or(&self.settings);
        let session = Session::open(&self.plugin, &self.options, settings, feed.clone()).map_err(
            |error| {
                refuse(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    jsonrpc::INTERNAL_ERROR,
                    &error.to_string(),
                )
            },
        )?;
        let routes = Arc::new(Mutex::new(Routes {
            shared,
            ..Routes::default()
        }));
        let mut client = Routed(routes.clone());
        let server = session.server.backlog();
        let thread = std::thread::spawn(move || {
            session.serve(&mut Sources::new(inbox), &mut client);
            // The session is over: whatever still waits is answered with an error under
            // its client's id (R19), and nothing new is taken, before the loop's inbox
            // goes away.
            lock(&client.0).end();
        });
        Ok(Arc::new(Running {
            events: feed.gated(server),
            routes,
            thread: Mutex::new(Some(thread)),
        }))
    }

    /// The running session a message goes to, or the response that refuses it: its
    /// method, if it has one, and whether it carries a 2026-07-28 protocol version say
    /// where.
    async fn session_for(
        &self,
        headers: &HeaderMap,
        method: Option<&str>,
        modern: bool,
    ) -> Result<(Arc<Running>, Option<String>), Refused> {
        if let Some(session) = headers.get("mcp-session-id") {
            let session = session.to_str().unwrap_or_default();
            return match lock(&self.sessions).touch(session) {
                Some(running) => Ok((running, None)),
                None => Err(refuse(
                    StatusCode::NOT_FOUND,
                    INVALID_REQUEST,
                    "no such session: initialize again",
                )),
            };
        }
        if method == Some("initialize") {
            let (running, session) = self.open_session().await?;
            return Ok((running, Some(session)));
        }
        if !modern {
            return Err(refuse(
                StatusCode::BAD_REQUEST,
                INVALID_REQUEST,
                "a request without an Mcp-Session-Id is `initialize`, or carries its protocol \
                 version in `_meta` (2026-07-28)",
            ));
        }
        let mut stateless = lock(&self.stateless);
        if let Some(running) = stateless.as_ref().filter(|running| !running.ended()) {
            return Ok((running.clone(), None));
        }
        let running = self.open(true)?;
        *stateless = Some(running.clone());
        Ok((running, None))
    }

    /// Opens a legacy session, once it has a place ([`Front::take_a_place`]): its running
    /// session, and its id.
    async fn open_session(&self) -> Result<(Arc<Running>, String), Refused> {
        // The readiness probe takes no client's place, and ends none to make room.
        let probing = health::probing();
        if !probing {
            self.take_a_place().await?;
        }
        let opened = self.open(false);
        let mut sessions = lock(&self.sessions);
        if !probing {
            sessions.opening -= 1;
        }
        let running = opened?;
        // Each session's id is drawn afresh: knowing one's own tells nothing of another's.
        let session = reasons_mcp::unguessable();
        sessions.add(session.clone(), running.clone());
        if probing {
            sessions.probe = Some(session.clone());
        }
        Ok((running, session))
    }

    /// Takes a place for a session about to open. A session whose server has gone gives
    /// its place back; when every place is still taken, the session used least recently
    /// is ended to make room, as DELETE ends one, and its client's next request is
    /// answered 404, which tells a client to initialize again (servers expire sessions
    /// the same way). The new server starts once no more than `max_sessions` servers of
    /// legacy sessions run, those still ending counted, so that one more than the limit
    /// runs at most; refused when that takes longer than [`PLACE_AT_MOST`], or while
    /// every place is held by a session still starting.
    async fn take_a_place(&self) -> Result<(), Refused> {
        let until = std::time::Instant::now() + PLACE_AT_MOST;
        loop {
            {
                let mut sessions = lock(&self.sessions);
                sessions.prune();
                if sessions.clients() + sessions.opening >= self.max_sessions {
                    let least = sessions.least_used();
                    if !least.is_some_and(|id| sessions.end(&id)) {
                        let message = format!(
                            "{} sessions are starting at once, as many as --max-sessions \
                             allows: try again when one has started",
                            sessions.opening
                        );
                        return Err(busy(&message));
                    }
                }
                if sessions.servers() <= self.max_sessions {
                    sessions.opening += 1;
                    return Ok(());
                }
                if std::time::Instant::now() >= until {
                    let message = format!(
                        "the servers of {} ended sessions are still ending after {} s: \
                         try again when they are gone",
                        sessions.ending.len(),
                        PLACE_AT_MOST.as_secs()
                    );
                    return Err(busy(&message));
                }
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    }

    /// The request's `Host`, when it names this listener (a loopback name and its port).
    fn host<'h>(&self, headers: &'h HeaderMap) -> Option<&'h str> {
        let loopback = |host: &str| matches!(host, "127.0.0.1" | "localhost" | "[::1]");
        headers
            .get(header::HOST)
            .and_then(|host| host.to_str().ok())
            .filter(|host| {
                host.rsplit_once(':')
                    .is_some_and(|(host, port)| loopback(host) && port == self.port.to_string())
            })
    }

    /// Ends every session, those already ending too, and waits for their servers.
    fn end_all(&self, signal: i32) {
        let mut sessions = lock(&self.sessions);
        let mut all_running: Vec<Arc<Running>> = sessions
            .open
            .drain()
            .map(|(_, (running, _))| running)
            .collect();
        all_running.append(&mut sessions.ending);
        drop(sessions);
        all_running.extend(lock(&self.stateless).take());
        for running in &all_running {
            running.events.control(Event::Signal(signal));
        }
        for running in all_running {
            if let Some(thread) = lock(&running.thread).take() {
                let _ = thread.join();
            }
        }
    }
}

/// Refuses, before any handler, a request whose `Host` is not this listener or whose
/// `Origin` is a page's that may not call; answers an allowed page's CORS preflight; and
/// lets an allowed page read the answers to its requests.
async fn admitted(
    State(front): State<Arc<Front>>,
    request: axum::extract::Request,
    next: axum::middleware::Next,
) -> Response {
    let Some(host) = front.host(request.headers()) else {
        let message = "only this listener is served (Host must be its loopback address and port)";
        return refuse(StatusCode::FORBIDDEN, INVALID_REQUEST, message).into_response();
    };
    let from = match admission::origin_of(request.headers(), host, &front.allowed_origins) {
        Ok(from) => from,
        Err(origin) => {
            let message = format!(
                "a page at {origin:?} may not use this proxy (name it with --allow-origin to let it)"
            );
            return refuse(StatusCode::FORBIDDEN, INVALID_REQUEST, &message).into_response();
        }
    };
    if request.method() == axum::http::Method::OPTIONS {
        return match &from {
            Origin::Allowed(origin) => {
                let mut response = StatusCode::NO_CONTENT.into_response();
                response
                    .headers_mut()
                    .extend(admission::preflight_headers(origin, request.headers()));
                response
            }
            // A same-origin page and a native client never preflight.
            _ => StatusCode::METHOD_NOT_ALLOWED.into_response(),
        };
    }
    // A preflight carries no credentials; every request after it does, but liveness's,
    // which tells nothing and runs nothing.
    let live = request.uri().path() == health::LIVE;
    let admits = live || front.token.admits(request.headers(), request.uri().query());
    let mut response = match admits {
        true => next.run(request).await,
        false => unauthorized(),
    };
    if let Origin::Allowed(origin) = &from {
        response
            .headers_mut()
            .extend(admission::cors_headers(origin));
    }
    response
}

/// The answer to a request without the token: 403, naming what to send. Not 401: the
/// token is the user's own, not one a client can get, and a client that follows the
/// authorization spec takes a 401 for a server to sign in to, and goes looking for an
/// authorization server the proxy is not.
fn unauthorized() -> Response {
    let message = "only the clients of the user who started this proxy are served: send the \
                   token it printed at start (or keeps in its --token-file) as \
                   `Authorization: Bearer TOKEN`, or add ?token=TOKEN to the URL";
    refuse(StatusCode::FORBIDDEN, INVALID_REQUEST, message).into_response()
}

async fn on_post(
    State(front): State<Arc<Front>>,
    headers: HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Response {
    if let Some((status, why)) = admission::refused_post(&headers) {
        return refuse(status, INVALID_REQUEST, &why).into_response();
    }
    let Posted {
        line,
        method,
        id,
        route,
    } = match one_message(&front, &headers, body) {
        Ok(posted) => posted,
        Err(refused) => return refused.into_response(),
    };
    let stranger = not_from_a_stranger(method.as_deref(), id.is_some());
    let (running, session) = match front
        .session_for(&headers, method.as_deref(), route.modern)
        .await
    {
        Ok(found) => found,
        Err(refused) => return refused.into_response(),
    };
    let stateless = session.is_none() && headers.get("mcp-session-id").is_none();
    if stateless && let Some(why) = stranger {
        return refuse(StatusCode::BAD_REQUEST, INVALID_REQUEST, why).into_response();
    }
    let Some(id) = id else {
        // A notification or a response: accepted.
        if !forward(&running.events, line).await {
            return session_gone().into_response();
        }
        return StatusCode::ACCEPTED.into_response();
    };
    let (answers, stream) = channel(STREAM_AHEAD);
    if method.as_deref() == Some("initialize") {
        let asked = jsonrpc::at(line.text(), &["params", "protocolVersion"]);
        lock(&running.routes).version = asked.and_then(reasons_transform::json::string);
    }
    let admitted = lock(&running.routes).admit(id, line, route.token, answers);
    let (id, line) = match admitted {
        Ok(admitted) => admitted,
        Err(refused) => return refused.into_response(),
    };
    // In the shared session, closing the stream cancels the request (2026-07-28).
    let cancel = stateless.then(|| Cancel {
        running: running.clone(),
        id: id.clone(),
    });
    if !forward(&running.events, line).await {
        lock(&running.routes).waiting.shift_remove(&id);
        return session_gone().into_response();
    }
    let mut response = if route.modern {
        modern_answer(stream, cancel).await
    } else {
        // A session of 2025-11-25 or later is told its stream can be resumed.
        let said = headers
            .get("mcp-protocol-version")
            .and_then(|v| v.to_str().ok());
        let mut routes = lock(&running.routes);
        let version = said.or(routes.version.as_deref());
        // Not `initialize`'s: the revision is not settled until it is answered.
        let initialize = method.as_deref() == Some("initialize");
        let numbering = (!stateless && !initialize && resume::resumable(version))
            .then(|| routes.kept.open(id.clone()));
        drop(routes);
        sse(Vec::new(), stream, cancel, numbering).into_response()
    };
    if let Some(session) = session.and_then(|session| HeaderValue::from_str(&session).ok()) {
        response.headers_mut().insert("mcp-session-id", session);
    }
    response
}

/// A POST's one message, taken in by the core's intake, which both HTTP servers share:
/// what it refuses is answered here and never reaches a session, shared or not. A line
/// break in what it takes becomes a space where the session writes it on (`one_line`).
fn one_message(
    front: &Front,
    headers: &HeaderMap,
    body: Result<Bytes, axum::extract::rejection::BytesRejection>,
) -> Result<Posted, Refused> {
    let body = body.map_err(|rejection| {
        let why = match rejection.status() {
            StatusCode::PAYLOAD_TOO_LARGE => over_cap(front.settings.max_message),
            _ => format!("the body could not be read: {rejection}"),
        };
        refuse(rejection.status(), INVALID_REQUEST, &why)
    })?;
    let header =
        |name: &str| inbound::joined(headers.get_all(name).iter().map(HeaderValue::as_bytes));
    intake::take(body.to_vec(), header).map_err(rejected)
}

async fn on_get(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    let Some(session) = headers.get("mcp-session-id") else {
        // 2026-07-28 has no GET stream; a legacy client asks with its session.
        return StatusCode::METHOD_NOT_ALLOWED.into_response();
    };
    let running = lock(&front.sessions).touch(session.to_str().unwrap_or_default());
    let Some(running) = running else {
        // The spec's answer to a session the server no longer has: the client starts
        // another.
        return session_gone().into_response();
    };
    let (lines, stream) = channel(STREAM_AHEAD);
    let mut routes = lock(&running.routes);
    // A client that comes back for a request's stream (`Last-Event-ID` of one of its
    // events) gets what came after it, then what is still to come, here.
    let last = headers
        .get("last-event-id")
        .and_then(|last| last.to_str().ok());
    if let Some(resumed) = last.and_then(|last| routes.kept.after(last)) {
        let waiting = routes.waiting.get_mut(&resumed.request);
        if let Some((stream, _)) = waiting.filter(|_| !resumed.done) {
            *stream = lines;
        }
        return sse(resumed.messages, stream, None, Some(resumed.numbering)).into_response();
    }
    if routes.ended {
        // A stream opened on a session that is over would never end.
        return session_gone().into_response();
    }
    routes.stream = Some(lines);
    sse(Vec::new(), stream, None, None).into_response()
}

async fn on_delete(State(front): State<Arc<Front>>, headers: HeaderMap) -> Response {
    let session = headers
        .get("mcp-session-id")
        .and_then(|session| session.to_str().ok())
        .unwrap_or_default();
    if lock(&front.sessions).end(session) {
        StatusCode::OK.into_response()
    } else {
        StatusCode::NOT_FOUND.into_response()
    }
}

/// Sends a client's message to its session once the server has room for it, waiting off
/// the runtime's threads when it has not; `false` when the session has ended.
async fn forward(feed: &Feed, line: Parsed) -> bool {
    match feed.try_line(Event::Client(Ok(line))) {
        Ok(sent) => sent,
        Err(event) => {
            let feed = feed.clone();
            let sent = tokio::task::spawn_blocking(move || feed.line(*event));
            sent.await.unwrap_or(false)
        }
    }
}

/// The answer to a 2026-07-28 request: one JSON body when the answer comes first, under
/// the status the specification gives its error (404 for a method the server does not
/// have, which a server on stdio cannot say itself), as the core read it; otherwise an
/// event stream, from what came first. `cancel` is held while the first waits, so that
/// a client that leaves first cancels its request.
async fn modern_answer(mut lines: Receiver<Sent>, cancel: Option<Cancel>) -> Response {
    let Some(first) = lines.recv().await else {
        return sse(Vec::new(), lines, cancel, None).into_response();
    };
    match first.answer {
        Some(status) => (
            StatusCode::from_u16(status).unwrap_or(StatusCode::OK),
            [(header::CONTENT_TYPE, "application/json")],
            first.line,
        )
            .into_response(),
        None => sse(vec![first.line], lines, cancel, None).into_response(),
    }
}

/// An SSE response carrying `first`, then each line of `lines`, as an event, until it
/// ends; `cancel` goes with it, to cancel its request if the client closes it first.
/// A stream numbered (a resumable one, [`resume`]) gives each event its id, from the
/// numbering's next, and a new one opens with the priming event: an id, the wait before
/// coming back, and an empty `data:` line, which axum's events cannot write (an event
/// without one is not dispatched, so its id would not reach the client's code).
fn sse(
    first: Vec<Vec<u8>>,
    lines: Receiver<Sent>,
    cancel: Option<Cancel>,
    numbering: Option<resume::Numbering>,
) -> Response {
    let priming = numbering
        .filter(|numbering| numbering.prime)
        .map(|numbering| {
            let id = resume::event_id(numbering.number, 0);
            let retry = resume::RETRY.as_millis();
            format!("id: {id}\nretry: {retry}\ndata: \n\n")
        });
    let rest = futures_util::stream::unfold((lines, cancel), |(mut lines, cancel)| async move {
        let sent = lines.recv().await?;
        Some((sent.line, (lines, cancel)))
    });
    let events = futures_util::stream::iter(first)
        .chain(rest)
        .enumerate()
        .map(move |(at, line)| {
            // A line the session wrote has no line break in it (`one_line`); lossy UTF-8
            // as the client reads text.
            let data = String::from_utf8_lossy(&line).replace(['\r', '\n'], " ");
            let id = numbering.map_or(String::new(), |numbering| {
                let seq = numbering.next + at as u64;
                format!("id: {}\n", resume::event_id(numbering.number, seq))
            });
            format!("event: message\n{id}data: {data}\n\n")
        });
    let body = futures_util::stream::iter(priming)
        .chain(events)
        .map(|event| Ok::<_, Infallible>(Bytes::from(event)));
    (
        [
            (header::CONTENT_TYPE, "text/event-stream"),
            (header::CACHE_CONTROL, "no-cache"),
        ],
        axum::body::Body::from_stream(body),
    )
        .into_response()
}

/// Why a message of the shared session is not taken from a client: one that names a
/// request of the session's (a cancellation, a progress note, an answer to the server)
/// could name another client's, since a client there is known by nothing but its
/// requests. Over Streamable HTTP a 2026-07-28 client cancels a request by closing its
/// stream (`Cancel`), and the server asks such a client nothing.
fn not_from_a_stranger(method: Option<&str>, request: bool) -> Option<&'static str> {
    match (method, request) {
        (Some("notifications/cancelled"), false) => Some(
            "in the session 2026-07-28 clients share, a request is cancelled by closing its \
             stream; a notifications/cancelled could name another client's request, and was \
             not sent",
        ),
        (Some("notifications/progress"), false) => Some(
            "in the session 2026-07-28 clients share, the server asks no client anything, so \
             there is no progress of a client's to report; it was not sent",
        ),
        (None, _) => Some(
            "in the session 2026-07-28 clients share, the server asks no client anything, so \
             there is nothing to answer; it was not sent",
        ),
        _ => None,
    }
}

/// A shared session's request whose stream is open: when the stream goes before its
/// answer (the client closed it, which over Streamable HTTP is how a 2026-07-28 client
/// cancels), the server is told, under the front's id for the request, which no other
/// client's message can name.
struct Cancel {
    running: Arc<Running>,
    id: Id,
}

impl Drop for Cancel {
    fn drop(&mut self) {
        let mut routes = lock(&self.running.routes);
        if routes.waiting.shift_remove(&self.id).is_none() {
            // Answered, or the session ended: nothing to cancel.
            return;
        }
        routes.forget_finished();
        drop(routes);
        let note = format!(
            r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{},"reason":"the client closed its stream"}}}}"#,
            self.id.json()
        );
        (self.running.events).control_soon(Event::Client(Parsed::read(note.into_bytes())));
    }
}
