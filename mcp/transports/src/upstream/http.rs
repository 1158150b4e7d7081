//! Streamable HTTP to the server (`reasons mcp --url URL`), for both eras of MCP as they
//! are: every message the proxy sends is a POST, and what comes back (one JSON body, or
//! an SSE stream of them) goes to the loop as lines the server sent.
//!
//! - Legacy sessions (2024-11-05 to 2025-11-25): the `Mcp-Session-Id` the server gives
//!   `initialize` and the protocol version it answers ride on every later request; the
//!   GET stream, where the server offers one, carries what it sends on its own, and is
//!   resumed from its last event when it ends (`listen`); the session is ended with
//!   DELETE.
//! - 2026-07-28: each request carries its protocol version in `_meta`, mirrored into
//!   `MCP-Protocol-Version`, with `Mcp-Method`, `Mcp-Name` and `Mcp-Param-*` (see
//!   `headers.rs`).
//!
//! - 2024-11-05's HTTP+SSE transport, for a server that has nothing to POST the first
//!   `initialize` to (404, 405), as the specification's backwards-compatibility section
//!   says (`legacy.rs`).
//!
//! Fails closed: a request the server does not answer (an error status, a connection
//! that cannot be made, a stream that ends or breaks off first) gets a JSON-RPC error
//! naming the server and what happened, never silence.

mod legacy;

use crate::ended::Ended;
use crate::error::Error;
use crate::event::{Ending, Event};
use crate::outbox::{self, Backlog, Feed};
use crate::outgoing::{self, Agent, Secrets};
use crate::say::say;
use crate::signin::{self, Bearer, SignIn};
use reasons_mcp::http::answered::{self, Asked, Kind};
use reasons_mcp::http::headers;
use reasons_mcp::http::sse::{self, RECONNECTS};
use reasons_mcp::jsonrpc::{Id, Parsed};
use reasons_mcp::shown::url as shown;
use reasons_mcp::{Learnt, Outline};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;
use ureq::RequestBuilder;
use ureq::http::{HeaderName, HeaderValue};
use ureq::typestate::{WithBody, WithoutBody};

/// The headers the transport sets itself, which a user's own headers may not replace.
const OWN_HEADERS: [&str; 6] = [
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "mcp-method",
    "mcp-name",
];

/// How much of an error status's body is read for a JSON-RPC error to pass on.
const ERROR_BODY: u64 = 1 << 20;

/// The default read timeout (`Remote::read_timeout`), in seconds: longer than any tool's own timeout in the
/// clients people use, so that the client, not the proxy, gives up on a slow tool.
pub const DEFAULT_READ_TIMEOUT_SECS: u16 = 300;

/// How long the DELETE that ends a session may take: a server that never answers it must
/// not hold the proxy's exit.
const DELETE_AT_MOST: Duration = Duration::from_secs(3);

/// Where the server is, what every request to it carries, and how long it may be silent.
#[derive(Clone, Debug)]
pub struct Remote {
    url: String,
    /// The URL as messages name it: without the credentials a URL may carry (its user
    /// and password, its query), which a message would show the client and its model.
    shown: String,
    /// The user's headers, each bound to the server's origin (`outgoing.rs`).
    secrets: Secrets,
    read_timeout: Duration,
    /// Signing in, when the server asks and the user gave no credentials of their own.
    sign_in: Option<Arc<SignIn>>,
}

impl Remote {
    /// `url`, with `headers` (`Name: value`) and `from_env` (`Name=VARIABLE`, the value
    /// read from the environment so that a secret stays out of a client's config), each
    /// a secret of the server's origin alone. An error names the flag that is wrong and
    /// why: a header for a server reached in clear off this machine among them.
    pub fn new(url: &str, headers: &[String], from_env: &[String]) -> Result<Remote, Error> {
        let parsed = url::Url::parse(url)
            .map_err(|_| Error::Setting(format!("--url {:?} is not a URL", shown(url))))?;
        if !matches!(parsed.scheme(), "http" | "https") || !parsed.has_host() {
            return Err(Error::Setting(format!(
                "--url {:?} is not an http:// or https:// URL",
                shown(url)
            )));
        }
        let mut secrets = Secrets::for_origin_of(&parsed);
        // A header is named by its name alone: its value is often a credential, and an
        // error goes to stderr, which clients keep in their logs.
        for (at, flag) in headers.iter().enumerate() {
            let (name, value) = flag.split_once(':').ok_or_else(|| {
                Error::Setting(format!(
                    "--header number {} is not `Name: value` (not shown: it may be a secret)",
                    at + 1
                ))
            })?;
            let label = format!("--header {:?}", name.trim());
            secrets = with_header(secrets, name.trim(), value.trim(), &label)?;
        }
        for flag in from_env {
            let (name, variable) = flag.split_once('=').ok_or_else(|| {
                Error::Setting(format!("--header-env {flag:?} is not `Name=VARIABLE`"))
            })?;
            let label = format!("--header-env {flag:?}");
            let value = variable_of(variable, &label)?;
            secrets = with_header(secrets, name.trim(), &value, &label)?;
        }
        Ok(Remote {
            url: url.to_string(),
            shown: shown(url),
            secrets,
            read_timeout: Duration::from_secs(DEFAULT_READ_TIMEOUT_SECS.into()),
            sign_in: None,
        })
    }

    /// `Authorization: Bearer` and the token in the environment variable `variable`
    /// (what Codex's `bearer_token_env_var` asks of a client).
    pub fn bearer_from(mut self, variable: &str) -> Result<Remote, Error> {
        let flag = format!("--bearer-env {variable}");
        let token = variable_of(variable, &flag)?;
        if self.secrets.has("authorization") {
            return Err(Error::Setting(format!(
                "{flag}: another flag already gives `Authorization`"
            )));
        }
        self.secrets = with_header(
            self.secrets,
            "Authorization",
            &format!("Bearer {token}"),
            &flag,
        )?;
        Ok(self)
    }

    /// Signs in when the server asks (a 401, or a 403 asking for more scope), as
    /// `settings` say; unless the user's own headers give `Authorization`, which is
    /// then what the server gets.
    pub fn signing_in(mut self, settings: &signin::Settings) -> Result<Remote, Error> {
        if self.secrets.has("authorization") {
            return Ok(self);
        }
        self.sign_in = Some(SignIn::of(&self.url, settings).map_err(Error::Setting)?);
        Ok(self)
    }

    /// This server, never signed in to (a readiness probe's: nobody asked it to open a
    /// browser); a 401 is answered as it came.
    pub fn never_signing_in(mut self) -> Remote {
        self.sign_in = None;
        self
    }

    /// The longest the server may send nothing while it owes a request an answer
    /// (`Remote::read_timeout`): the request is then answered with an error saying so.
    pub fn read_timeout(mut self, timeout: Duration) -> Remote {
        self.read_timeout = timeout;
        self
    }
}

/// `secrets` and one user header, checked: a valid name the transport does not set, a
/// valid value, and an origin it may go to (`outgoing.rs`).
fn with_header(secrets: Secrets, name: &str, value: &str, flag: &str) -> Result<Secrets, Error> {
    let name = HeaderName::from_bytes(name.as_bytes())
        .map_err(|_| Error::Setting(format!("{flag}: {name:?} is not a header name")))?;
    if OWN_HEADERS.contains(&name.as_str()) {
        return Err(Error::Setting(format!(
            "{flag}: `{name}` is set by the transport itself"
        )));
    }
    let value = HeaderValue::from_str(value)
        .map_err(|_| Error::Setting(format!("{flag}: the value is not a valid header value")))?;
    secrets.with(name, value, flag).map_err(Error::Setting)
}

/// How a request to the server is begun: [`Agent::get`], [`Agent::post`] or
/// [`Agent::delete`].
type Method<B> = fn(&Agent, &str, &[&Secrets]) -> Result<RequestBuilder<B>, String>;

/// The value of the environment's `variable`, which `flag` names: a secret, so that an
/// error names the variable and never its value.
fn variable_of(variable: &str, flag: &str) -> Result<String, Error> {
    std::env::var(variable).map_err(|_| {
        Error::Setting(format!(
            "{flag}: the environment has no {variable} (or it is not UTF-8)"
        ))
    })
}

/// The server at a URL, as the loop drives it.
pub struct Http {
    connection: Connection,
    /// Messages to send, in order, to the thread that sends them.
    outbox: Option<Sender<(Vec<u8>, Outline)>>,
    /// The bytes of those not yet sent: the client is not read from while they are over
    /// an outbox's budget.
    queued: Backlog,
}

/// The requests sent and not yet answered at most, each on a thread of its own: the next
/// waits for one of them to finish.
const IN_FLIGHT_AT_MOST: usize = 64;

/// What every request needs, shared by the threads that make them.
#[derive(Clone)]
struct Connection {
    remote: Arc<Remote>,
    agent: Agent,
    session: Arc<Mutex<Established>>,
    events: Feed,
    /// The cap on one message the server sends, a JSON body or an SSE event
    /// (`Settings::max_message`).
    max_message: usize,
}

/// What the server told the proxy that later requests carry.
#[derive(Default)]
struct Established {
    /// The legacy session's id.
    id: Option<String>,
    /// The protocol version `initialize` was answered with (legacy).
    version: Option<String>,
    /// Whether the GET stream was asked for.
    listening: bool,
    /// Whether the session was ended: the GET stream is not asked for again.
    closed: bool,
    /// Where every message goes, when the server speaks the legacy HTTP+SSE transport.
    legacy: Option<String>,
}

impl Http {
    /// Starts the thread that sends what the proxy says to `remote`; what comes back goes
    /// to `events`, each message at most `max_message` bytes.
    pub fn connect(remote: Remote, events: Feed, max_message: usize) -> Http {
        let agent = outgoing::settings()
            .timeout_connect(Some(Duration::from_secs(30)))
            // A server that goes silent while it owes an answer: each read waits this long
            // at most (the GET stream, silent by nature, is exempt).
            .timeout_per_read(Some(remote.read_timeout))
            // Nagle's algorithm would hold a request's last small write back until the
            // server's delayed ACK (ureq's default, said here because it matters).
            .no_delay(true)
            .build();
        let agent = Agent::new(agent);
        let connection = Connection {
            remote: Arc::new(remote),
            agent,
            session: Arc::default(),
            events,
            max_message,
        };
        let (outbox, messages) = mpsc::channel();
        let worker = connection.clone();
        let queued = Backlog::new(outbox::BUDGET);
        let sent = queued.clone();
        std::thread::spawn(move || worker.send_all(messages, &sent));
        Http {
            connection,
            outbox: Some(outbox),
            queued,
        }
    }

    /// Sends one message.
    pub fn send(&mut self, message: &[u8], outline: &Outline) {
        if let Some(outbox) = &self.outbox {
            self.queued.add(message.len());
            let _ = outbox.send((message.to_vec(), outline.clone()));
        }
    }

    /// What waits to be sent, for the reader of the client it holds back.
    pub fn backlog(&self) -> Backlog {
        self.queued.clone()
    }

    /// Keeps what later requests carry: the protocol version `initialize` settled.
    pub fn learnt(&mut self, learnt: &Learnt) {
        let Learnt::Version(version) = learnt;
        self.connection.lock().version = Some(version.clone());
    }

    /// Ends the session: a legacy session is deleted (a server that keeps none answers
    /// 405, which is as good), and every connection of it is closed, the streams being
    /// read among them: a server keeps a stream open until its client closes it (the
    /// legacy HTTP+SSE transport's stream is the session), and the thread reading it
    /// would wait for ever.
    pub fn close(&mut self) {
        if self.outbox.take().is_none() {
            return;
        }
        let connection = &self.connection;
        // The token first, without waiting: a sign-in under way holds it, and the end of
        // the session waits on nobody (the DELETE then goes without it).
        let bearer = (connection.remote.sign_in.as_ref())
            .map_or_else(Bearer::default, |sign_in| sign_in.bearer_at_once());
        let mut session = connection.lock();
        session.closed = true;
        if session.id.is_some() {
            let url = &connection.remote.url;
            let delete = connection.carrying(Agent::delete, url, &session, None, &bearer);
            drop(session);
            if let Ok(delete) = delete {
                let _ = (delete.config().timeout_global(Some(DELETE_AT_MOST)).build()).call();
            }
        }
        connection.agent.clone().shutdown();
    }

    /// Ends the session, as `how` says.
    pub fn end(&mut self, how: Ending) -> Ended {
        self.close();
        Ended::Remote {
            signal: match how {
                Ending::Signal(signal) => Some(signal),
                Ending::Closed | Ending::Overdue => None,
            },
        }
    }
}

impl Connection {
    fn lock(&self) -> std::sync::MutexGuard<'_, Established> {
        self.session.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Sends each message in turn. A request other than `initialize` is answered on a
    /// thread of its own, so that a slow tool holds up nothing behind it; `initialize`
    /// and what is owed no answer (notifications, responses) are sent in order, so that
    /// what follows them carries what they established. At most [`IN_FLIGHT_AT_MOST`]
    /// wait for their answers at once; a message is counted off `queued` once it is sent.
    fn send_all(self, messages: Receiver<(Vec<u8>, Outline)>, queued: &Backlog) {
        let in_flight = Backlog::new(IN_FLIGHT_AT_MOST);
        for (message, outline) in messages {
            if outline.ids.is_empty() || outline.method.as_deref() == Some("initialize") {
                queued.done(message.len());
                self.post(&message, &outline);
            } else {
                in_flight.wait_for_room();
                in_flight.add(1);
                queued.done(message.len());
                let (connection, answered) = (self.clone(), in_flight.clone());
                std::thread::spawn(move || {
                    connection.post(&message, &outline);
                    answered.done(1);
                });
            }
        }
    }

    fn post(&self, message: &[u8], outline: &Outline) {
        let legacy = self.lock().legacy.clone();
        if let Some(endpoint) = legacy {
            return self.post_legacy(message, outline, &endpoint);
        }
        let url = &self.remote.shown;
        let initialize = outline.method.as_deref() == Some("initialize");
        // A new session starts clean: no id or version of one the server ended, or gave
        // a request that was not `initialize` (a probe it refused), rides on it.
        if initialize {
            let mut session = self.lock();
            session.id = None;
            session.version = None;
        }
        // The answer, and the session the request went in, if any.
        let sent = self.signing_in(|bearer| {
            let (request, carried) = self.request(outline, bearer)?;
            Ok((request.send(message), carried))
        });
        let (response, carried) = match sent {
            Ok(sent) => sent,
            Err(why) => return self.unanswered(outline, &why),
        };
        let status = response.status();
        // The session is the one `initialize` was answered with, as the specification
        // assigns it: an id on any other answer (a refusal) is no session.
        if initialize
            && status.is_success()
            && let Some(id) = text_header(&response, "mcp-session-id")
        {
            self.lock().id = Some(id);
        }
        let asked = Asked {
            // A 2026-07-28 server's 404 for an `initialize` in that revision's envelope
            // only says that revision has no such method.
            handshake: initialize && outline.version.is_none(),
            in_session: carried.is_some(),
        };
        let header = |name: &str| response.headers().get(name).map(|value| value.as_bytes());
        let kind = answered::kind(
            status.as_u16(),
            header("content-type"),
            header("location"),
            asked,
            "--url",
        );
        let challenge = text_header(&response, "www-authenticate");
        let body = response.into_body();
        let why = match (kind, carried) {
            (Kind::Redirected(why), _) => {
                return self.unanswered(outline, &format!("the MCP server at {url} {why}"));
            }
            // Nothing to POST `initialize` to: its stream is asked for, and every message
            // goes where it says.
            (Kind::Legacy, _) => {
                drop(body);
                let why = match self.open_legacy() {
                    Ok(endpoint) => return self.post_legacy(message, outline, &endpoint),
                    Err(why) => why,
                };
                let message = format!(
                    "the MCP server at {url} answered HTTP {status}, and serves no HTTP+SSE stream either ({why})"
                );
                return self.unanswered(outline, &message);
            }
            (Kind::Forgotten, Some(carried)) => return self.forgotten(outline, &carried),
            (Kind::Failed { .. } | Kind::Forgotten, _) => {
                // A JSON-RPC error in the body answers the request it names; every other
                // request of the message gets one naming the status.
                if let Ok(line) = body.into_with_config().limit(ERROR_BODY).read_to_vec() {
                    let exchange = outline.exchange;
                    let line = Parsed::read(line);
                    self.events.line(Event::ServerAnswered { line, exchange });
                }
                let why = format!("the MCP server at {url} answered HTTP {status}");
                return self.unanswered(
                    outline,
                    &with_way_out((why, url), status.as_u16(), challenge, None),
                );
            }
            (Kind::Stream, _) => self.read_stream(body, outline),
            (Kind::Body, _) => self.read_body(body, status),
        };
        self.unanswered(
            outline,
            &format!("the MCP server at {url} did not answer: {why}"),
        );
        if outline.method.as_deref() == Some("notifications/initialized") {
            self.listen();
        }
    }

    /// The server forgot the session the line of `outline` went in (`carried`: HTTP 404
    /// for its id), and ran nothing: the proxy starts a new one and sends the request
    /// again, as the specification asks of a client that meets 404. Nothing more is sent
    /// under the dead id; the first line to meet it starts the new session.
    fn forgotten(&self, outline: &Outline, carried: &str) {
        let first = {
            let mut session = self.lock();
            let first = session.id.as_deref() == Some(carried);
            if first {
                session.id = None;
                // The new session's stream is asked for once it starts.
                session.listening = false;
            }
            first
        };
        self.events.control(Event::SessionLost {
            exchange: outline.exchange,
            why: format!(
                "reasons mcp: the MCP server at {} forgot the session (HTTP 404 for its \
                 Mcp-Session-Id); a batch is not sent again",
                self.remote.shown
            ),
            first,
        });
    }

    /// Reads a POST's event stream, passing on each message, and resuming it where the
    /// server ended it owing answers: why what is still owed of `outline`'s is owed.
    fn read_stream(&self, body: ureq::Body, outline: &Outline) -> String {
        let read = super::event_stream(body);
        let (mut place, mut owed) = (sse::Place::default(), outline.ids.clone());
        let seen = |data: String| self.pass_owed(&mut owed, data);
        match sse::read_from(read, &mut place, self.max_message, seen) {
            Ok(()) => self.resume(&mut place, &mut owed),
            Err(sse::Broken::Silent) => self.silent(),
            Err(error) => format!("its event stream broke off: {error}"),
        }
    }

    /// Reads a POST's one JSON body (answered `status`), up to the cap, and passes it on:
    /// why what it does not answer is not answered.
    fn read_body(&self, body: ureq::Body, status: ureq::http::StatusCode) -> String {
        let cap = u64::try_from(self.max_message).unwrap_or(u64::MAX);
        match body.into_with_config().limit(cap).read_to_vec() {
            Ok(text) if text.is_empty() => format!("it answered HTTP {status} with nothing"),
            Ok(text) => {
                self.pass(text);
                format!("its answer (HTTP {status}) did not answer it")
            }
            Err(ureq::Error::Timeout(_)) => self.silent(),
            Err(error) => format!("its answer broke off: {error}"),
        }
    }

    /// Sends what `send` sends with the token to send now, signing in and sending it again
    /// where the server asks (401, or 403 for more scope): once for a token, once more
    /// for a step-up's scope, since a server that refuses past that would have the person
    /// sign in without end. The answer, with what `send` returned beside it; or why there
    /// is none, with the way out.
    fn signing_in<T>(
        &self,
        send: impl Fn(&Bearer) -> Result<Sent<T>, String>,
    ) -> Result<(ureq::http::Response<ureq::Body>, T), String> {
        let url = &self.remote.shown;
        let mut signed_in = 0;
        loop {
            let bearer = self.bearer();
            let (sent, beside) =
                send(&bearer).map_err(|why| format!("to the MCP server at {url}: {why}"))?;
            let response = match sent {
                Ok(response) => response,
                Err(ureq::Error::Timeout(_)) => {
                    return Err(format!("the MCP server at {url} {}", self.silent()));
                }
                Err(error) => return Err(format!("cannot reach the MCP server at {url}: {error}")),
            };
            let status = response.status().as_u16();
            let Some(sign_in) =
                (self.remote.sign_in.as_ref()).filter(|_| matches!(status, 401 | 403))
            else {
                return Ok((response, beside));
            };
            let challenge = text_header(&response, "www-authenticate");
            let refused = if signed_in == SIGN_IN_TRIES {
                Err("it refused the token reasons signed in for again".to_string())
            } else {
                sign_in.refused(bearer.generation, status, challenge.as_deref())
            };
            if let Err(why) = refused {
                let said = format!("the MCP server at {url} answered HTTP {status}");
                return Err(with_way_out((said, url), status, challenge, Some(why)));
            }
            signed_in += 1;
        }
    }

    /// A GET of the server's event stream, carrying what every request to the server
    /// carries: silent until the server has something to say, so with no read timeout
    /// unless `owed` (a request waits on what it brings).
    fn event_stream(
        &self,
        session: &Established,
        bearer: &Bearer,
        owed: bool,
    ) -> Result<RequestBuilder<WithoutBody>, String> {
        let get = self.carrying(Agent::get, &self.remote.url, session, None, bearer)?;
        let get = match owed {
            true => get,
            false => get.config().timeout_per_read(None).build(),
        };
        Ok(get.header("Accept", "text/event-stream"))
    }

    /// A GET that comes back for a stream from `place` (with `Last-Event-ID`, once the
    /// server gave an id), carrying what every request carries; `None` once the session
    /// is over. `owed`: a request waits on what it brings, so the server's silence is
    /// bounded by --read-timeout; the session's own stream may be silent for as long as
    /// it likes.
    fn coming_back(&self, place: &sse::Place, owed: bool) -> Option<RequestBuilder<WithoutBody>> {
        let bearer = self.bearer();
        let session = self.lock();
        if session.closed {
            return None;
        }
        let mut get = self.event_stream(&session, &bearer, owed).ok()?;
        if let Some(id) = &place.last_event_id {
            get = get.header("Last-Event-ID", id);
        }
        Some(get)
    }

    /// Why a request is answered when the server went silent on it.
    fn silent(&self) -> String {
        format!(
            "sent nothing for {} s while it owed an answer (--read-timeout)",
            self.remote.read_timeout.as_secs()
        )
    }

    /// The token requests carry now, when the proxy signed in.
    fn bearer(&self) -> Bearer {
        (self.remote.sign_in.as_ref()).map_or_else(Bearer::default, |sign_in| sign_in.bearer())
    }

    /// A request `method` begins to `url`, with what every request to the server
    /// carries: the user's headers and the token signed in for (secrets of the server's
    /// origin: a `url` elsewhere is refused), the legacy session's id, and the protocol
    /// version (`version`, a 2026-07-28 request's own, or else the one `initialize`
    /// settled).
    fn carrying<B>(
        &self,
        method: Method<B>,
        url: &str,
        session: &Established,
        version: Option<&String>,
        bearer: &Bearer,
    ) -> Result<RequestBuilder<B>, String> {
        let secrets: Vec<&Secrets> = std::iter::once(&self.remote.secrets)
            .chain(&bearer.token)
            .collect();
        let mut request = method(&self.agent, url, &secrets)?;
        if let Some(id) = &session.id {
            request = request.header("Mcp-Session-Id", id);
        }
        if let Some(version) = version.or(session.version.as_ref()) {
            request = request.header("MCP-Protocol-Version", version);
        }
        Ok(request)
    }

    /// A POST of `outline`'s message, with every header it is to carry, and the id of
    /// the session it goes in.
    fn request(
        &self,
        outline: &Outline,
        bearer: &Bearer,
    ) -> Result<(RequestBuilder<WithBody>, Option<String>), String> {
        let (url, version) = (&self.remote.url, outline.version.as_ref());
        let session = self.lock();
        let mut request = (self.carrying(Agent::post, url, &session, version, bearer))?
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in headers::standard(outline) {
            request = request.header(name, value);
        }
        Ok((request, session.id.clone()))
    }

    /// Hands one message the server sent to the loop, as a line: a line break in it is
    /// made a space where every line is written (`one_line`).
    fn pass(&self, line: Vec<u8>) {
        self.events.line(Event::Server(Parsed::read(line)));
    }

    /// [`pass`](Self::pass)es `data`, a message of a POST's stream, and strikes from
    /// `owed` the request it answers.
    fn pass_owed(&self, owed: &mut Vec<Id>, data: String) {
        let line = Parsed::read(data.into_bytes());
        if let Ok(read) = &line {
            let read = read.line();
            owed.retain(|id| !read.answered().any(|answered| answered == id));
        }
        self.events.line(Event::Server(line));
    }

    /// Follows a POST's stream that ended owing answers, as 2025-11-25's polling has a
    /// server end it: where the server gave its events ids, a GET with `Last-Event-ID`
    /// (after the wait it named) has it send what came since, until every answer in
    /// `owed` came, the server refuses, or [`RECONNECTS`] tries in a row bring no event.
    /// Why what is still owed is owed.
    fn resume(&self, place: &mut sse::Place, owed: &mut Vec<Id>) -> String {
        let ended = "its event stream ended first".to_string();
        let mut fruitless = 0;
        while !owed.is_empty() && fruitless < RECONNECTS {
            let Some(last) = place.last_event_id.clone() else {
                return ended;
            };
            wait_to_come_back(place);
            let Some(request) = self.coming_back(place, true) else {
                return ended;
            };
            fruitless += 1;
            let Ok(response) = request.call() else {
                continue;
            };
            let status = response.status();
            if !status.is_success() || !is_event_stream(&response) {
                return format!("{ended}, and resuming it (Last-Event-ID) got HTTP {status}");
            }
            let body = super::event_stream(response.into_body());
            let seen = |data: String| self.pass_owed(owed, data);
            if let Err(sse::Broken::Silent) = sse::read_from(body, place, self.max_message, seen) {
                return self.silent();
            }
            if place.last_event_id.as_ref() != Some(&last) {
                fruitless = 0;
            }
        }
        if owed.is_empty() {
            return ended;
        }
        format!("{ended}, and {RECONNECTS} resumptions (Last-Event-ID) in a row brought nothing")
    }

    /// Tells the loop that `outline`'s line gets no more answers, for `why`: the proxy
    /// answers each of its requests it has not answered with an error saying so.
    fn unanswered(&self, outline: &Outline, why: &str) {
        if outline.ids.is_empty() {
            return;
        }
        self.events.control(Event::Unanswered {
            exchange: outline.exchange,
            why: format!("reasons mcp: {why}"),
        });
    }

    /// Opens the GET stream, once, for what a legacy server sends on its own; a server
    /// that offers none answers 405, and then there is none. A stream that ends or breaks
    /// off is asked for again, after the wait the server asked for, with the id of the
    /// last event it gave (`Last-Event-ID`), so that it can send what came between, until
    /// the session ends or [`RECONNECTS`] tries in a row bring nothing.
    fn listen(&self) {
        if std::mem::replace(&mut self.lock().listening, true) {
            return;
        }
        let connection = self.clone();
        let (opened, is_open) = mpsc::channel();
        std::thread::spawn(move || {
            let mut place = sse::Place::default();
            let mut fruitless = 0;
            let mut opened = Some(opened);
            while fruitless < RECONNECTS {
                match connection.stream(&mut place, &mut opened) {
                    Stream::Delivered => fruitless = 0,
                    Stream::Fruitless => fruitless += 1,
                    Stream::Refused => return,
                }
                wait_to_come_back(&place);
            }
            // What the server sends on its own no longer reaches the client: said, as
            // no answer can carry it.
            say(&format!(
                "{}'s event stream ended {RECONNECTS} times in a row with nothing on it: \
                 not asked for again this session",
                shown(&connection.remote.url)
            ));
        });
        // What follows `initialized` is sent once the server answered the GET (or could
        // not): what the server sends on its own about those requests then has a
        // stream to come on, and a resumed stream is not taken for this one.
        let _ = is_open.recv_timeout(STREAM_OPENS_WITHIN);
    }

    /// Reads the GET stream once, from `place`, until it ends; `opened` is told once the
    /// server answered the GET.
    fn stream(&self, place: &mut sse::Place, opened: &mut Option<Sender<()>>) -> Stream {
        let Some(request) = self.coming_back(place, false) else {
            return Stream::Refused;
        };
        let response = request.call();
        if let Some(opened) = opened.take() {
            let _ = opened.send(());
        }
        let Ok(response) = response else {
            return Stream::Fruitless;
        };
        let status = response.status();
        // No stream offered (405), the session gone (404), or one elsewhere, which is not
        // followed (`reasons_mcp::http::redirect`): nothing to come back for.
        if matches!(status.as_u16(), 404 | 405 | 300..=399) {
            return Stream::Refused;
        }
        let stream = is_event_stream(&response);
        if !status.is_success() || !stream {
            return Stream::Fruitless;
        }
        let body = super::event_stream(response.into_body());
        let before = place.last_event_id.clone();
        let mut delivered = Stream::Fruitless;
        let _ = sse::read_from(body, place, self.max_message, |data| {
            delivered = Stream::Delivered;
            self.pass(data.into_bytes());
        });
        // A server that polls (2025-11-25) ends each stream after an event id and no
        // message: it is there, and asked again, as it asks.
        if place.last_event_id != before {
            delivered = Stream::Delivered;
        }
        delivered
    }
}

/// What sending a request came to, with what its sender keeps beside it.
type Sent<T> = (Result<ureq::http::Response<ureq::Body>, ureq::Error>, T);

/// How a GET stream ended; each but `Refused` is worth asking again for.
enum Stream {
    /// It ended or broke off after delivering at least one message.
    Delivered,
    /// It delivered nothing, or could not be had this time.
    Fruitless,
    /// The server offers none, or the session is over.
    Refused,
}

/// Waits before coming back for a stream, as long as the server asked, within bounds.
fn wait_to_come_back(place: &sse::Place) {
    std::thread::sleep(place.wait_before_coming_back());
}

/// How long what follows `initialized` waits for the server to answer the GET of its
/// stream.
const STREAM_OPENS_WITHIN: Duration = Duration::from_secs(5);

/// How many times one request is sent again after the proxy signed in for it.
const SIGN_IN_TRIES: u32 = 2;

pub use reasons_mcp::ready::NEEDS_SIGN_IN;

/// `why` a request went unanswered, with the way out when the server asked for
/// credentials (401) or refused the ones given (403): what signing in said (`tried`,
/// when the proxy tried), and how the user signs in ahead or gives a token of their own.
fn with_way_out(
    (why, url): (String, &str),
    status: u16,
    challenge: Option<String>,
    tried: Option<String>,
) -> String {
    let asked = match status {
        401 => "it asks for credentials",
        403 => reasons_mcp::ready::REFUSED_CREDENTIALS,
        _ => return why,
    };
    let challenge = challenge
        .map(|challenge| format!(" (WWW-Authenticate: {})", crate::say::quoted(&challenge)))
        .unwrap_or_default();
    let tried = tried.map(|why| format!(": {why}")).unwrap_or_default();
    format!(
        "{why}: {asked}{challenge}{tried}; {NEEDS_SIGN_IN} {url}` in a terminal, or give the \
         token your client would send with --bearer-env VARIABLE or --header-env \
         'Authorization=VARIABLE'"
    )
}

/// Whether `response` is an event stream (SSE).
fn is_event_stream(response: &ureq::http::Response<ureq::Body>) -> bool {
    let content_type = response.headers().get("content-type");
    answered::is_event_stream(content_type.map(HeaderValue::as_bytes))
}

fn text_header(response: &ureq::http::Response<ureq::Body>, name: &str) -> Option<String> {
    response
        .headers()
        .get(name)
        .and_then(|value| value.to_str().ok())
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_flags_are_refused_naming_them() {
        let refused = |url: &str, headers: &[&str], env: &[&str]| {
            let headers: Vec<String> = headers.iter().map(|h| h.to_string()).collect();
            let env: Vec<String> = env.iter().map(|h| h.to_string()).collect();
            format!("{:#}", Remote::new(url, &headers, &env).unwrap_err())
        };
        assert!(refused("ftp://host/mcp", &[], &[]).contains("not an http"));
        // A secret in the URL is never in a message.
        let secret = refused("ftp://me:s3cret@host/mcp?api_key=s3cret", &[], &[]);
        assert!(
            secret.contains("ftp://host/mcp") && !secret.contains("s3cret"),
            "{secret}"
        );
        assert!(refused("not a url", &[], &[]).contains("--url"));
        let url = "http://127.0.0.1:1/mcp";
        let no_colon = refused(url, &["X-A: a", "Bearer s3cret"], &[]);
        assert!(no_colon.contains("--header number 2"), "{no_colon}");
        assert!(refused(url, &["Bad Name: x"], &[]).contains("not a header name"));
        // A header's value is a credential as often as not: never in a message.
        let broken = refused(url, &["Authorization: Bearer s3cret\nx"], &[]);
        assert!(broken.contains("not a valid header value"), "{broken}");
        assert!(broken.contains("\"Authorization\""), "{broken}");
        assert!(!no_colon.contains("s3cret") && !broken.contains("s3cret"));
        assert!(refused(url, &["Mcp-Session-Id: 1"], &[]).contains("set by the transport"));
        let missing = refused(url, &[], &["Authorization=REASONS_NO_SUCH_VARIABLE"]);
        assert!(missing.contains("REASONS_NO_SUCH_VARIABLE"), "{missing}");
        assert!(Remote::new(url, &["Authorization: Bearer x".into()], &[]).is_ok());
    }

    #[test]
    fn no_header_of_the_user_s_goes_in_clear_off_this_machine() {
        // PATH is set wherever tests run; its value stands in for a token.
        let clear = "http://mcp.example.com/mcp";
        let refusals = [
            Remote::new(clear, &["X-Api-Key: k".into()], &[]).unwrap_err(),
            Remote::new(clear, &[], &["X-Api-Key=PATH".into()]).unwrap_err(),
            (Remote::new(clear, &[], &[]).unwrap().bearer_from("PATH")).unwrap_err(),
        ];
        assert_eq!(refusals.len(), 3);
        for refused in refusals {
            let refused = format!("{refused:#}");
            assert!(refused.contains("would travel in clear"), "{refused}");
            assert!(refused.contains("https://"), "the way out: {refused}");
        }
        // Over https, or on this machine, each is taken; with none, plain http is too.
        let https = Remote::new("https://mcp.example.com/mcp", &["X-Api-Key: k".into()], &[]);
        assert!(https.unwrap().bearer_from("PATH").is_ok());
        assert!(Remote::new("http://localhost:9/mcp", &["X-Api-Key: k".into()], &[]).is_ok());
        assert!(Remote::new(clear, &[], &[]).is_ok());
    }

    #[test]
    fn a_bearer_token_comes_from_its_variable_alone() {
        let url = "http://127.0.0.1:1/mcp";
        let remote = Remote::new(url, &[], &[]).unwrap();
        let missing = format!(
            "{:#}",
            remote.bearer_from("REASONS_NO_SUCH_VARIABLE").unwrap_err()
        );
        assert!(
            missing.contains("--bearer-env REASONS_NO_SUCH_VARIABLE"),
            "{missing}"
        );
        // PATH is set wherever tests run; its value stands in for a token.
        let path = std::env::var("PATH").unwrap();
        let remote = Remote::new(url, &[], &[])
            .unwrap()
            .bearer_from("PATH")
            .unwrap();
        assert_eq!(
            remote.secrets.values(),
            [("authorization", format!("Bearer {path}"))]
        );
        let twice = Remote::new(url, &["Authorization: Bearer x".into()], &[]).unwrap();
        let twice = format!("{:#}", twice.bearer_from("PATH").unwrap_err());
        assert!(twice.contains("already gives `Authorization`"), "{twice}");
    }
}
