//! wasi:http, blocking: reading a body, sending a request upstream, answering the client.

use crate::settings::{Settings, Upstream};
use std::cell::Cell;
use std::io::Read;
use std::time::{Duration, Instant};
use wasip2::clocks::monotonic_clock;
use wasip2::http::outgoing_handler;
use wasip2::http::types::{
    Fields, IncomingBody, IncomingRequest, IncomingResponse, Method, OutgoingBody, OutgoingRequest,
    OutgoingResponse, RequestOptions, ResponseOutparam, Scheme,
};
use wasip2::io::poll::{self, Pollable};
use wasip2::io::streams::{InputStream, OutputStream, StreamError};

/// Headers that belong to one connection (RFC 9110, 7.6.1) or that the gateway sets
/// itself: never passed on from either side. `mcp-method`, `mcp-name` and `mcp-param-*`
/// are rebuilt from the message as forwarded, so that none can carry what came off it.
fn passed_on(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    !matches!(
        name.as_str(),
        "connection"
            | "keep-alive"
            | "proxy-connection"
            | "proxy-authenticate"
            | "proxy-authorization"
            | "te"
            | "trailer"
            | "transfer-encoding"
            | "upgrade"
            | "host"
            | "content-length"
            | "content-type"
            | "accept"
            | "accept-encoding"
            | "content-encoding"
            | "mcp-method"
            | "mcp-name"
            | "forwarded"
    ) && !name.starts_with("mcp-param-")
        && !name.starts_with("x-forwarded-")
}

/// The client's end-to-end headers (its `Authorization`, its `Mcp-Session-Id`, its
/// protocol version), to pass upstream.
pub fn client_headers(request: &IncomingRequest) -> Vec<(String, Vec<u8>)> {
    end_to_end(&request.headers().entries())
}

/// The end-to-end headers among `entries`, either side's: none that belongs to one
/// connection, the gateway sets itself, or `Connection` names (RFC 9110, 7.6.1). Some
/// engines (wasmtime serve) drop `Connection` itself before the component sees it, and
/// with it the names; where it arrives, they are honoured.
fn end_to_end(entries: &[(String, Vec<u8>)]) -> Vec<(String, Vec<u8>)> {
    let named: Vec<String> = entries
        .iter()
        .filter(|(name, _)| name.eq_ignore_ascii_case("connection"))
        .flat_map(|(_, value)| {
            String::from_utf8_lossy(value)
                .split(',')
                .map(|name| name.trim().to_ascii_lowercase())
                .collect::<Vec<_>>()
        })
        .collect();
    entries
        .iter()
        .filter(|(name, _)| passed_on(name) && !named.contains(&name.to_ascii_lowercase()))
        .cloned()
        .collect()
}

/// Every value of the request's header `name`, joined as one list.
pub fn joined(request: &IncomingRequest, name: &str) -> String {
    let values: Vec<String> = request
        .headers()
        .get(name)
        .iter()
        .map(|value| String::from_utf8_lossy(value).into_owned())
        .collect();
    values.join(", ")
}

/// The upstream's end-to-end response headers (its `Mcp-Session-Id`, a 401's
/// `WWW-Authenticate`) for the client's answer, with `content_type` when it is not empty.
pub fn response_headers(
    upstream: &[(String, Vec<u8>)],
    content_type: &str,
) -> Vec<(String, Vec<u8>)> {
    let mut headers = end_to_end(upstream);
    if !content_type.is_empty() {
        headers.push(("content-type".into(), content_type.as_bytes().to_vec()));
    }
    headers
}

/// `line`, a message the proxy wrote, as one SSE event, with the event id `id` where the
/// stream can be resumed (`resumption.rs`). The proxy's lines hold no raw line break
/// (`one_line`), so no `data:` line can end early and start a second event.
pub fn event(line: &[u8], id: Option<&str>) -> Vec<u8> {
    let line = reasons_mcp::one_line(line);
    let id = id.map_or(String::new(), |id| format!("id: {id}\n"));
    let mut event = Vec::with_capacity(line.len() + id.len() + 16);
    event.extend_from_slice(b"event: message\n");
    event.extend_from_slice(id.as_bytes());
    event.extend_from_slice(b"data: ");
    event.extend_from_slice(&line);
    event.extend_from_slice(b"\n\n");
    event
}

/// The first value of header `name` among `headers`.
pub fn header<'a>(headers: &'a [(String, Vec<u8>)], name: &str) -> Option<&'a [u8]> {
    headers
        .iter()
        .find(|(key, _)| key.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.as_slice())
}

/// When a wait ends. Bytes never move it: a stream of comments, keep-alives or a body
/// dripped a byte at a time waits no longer than silence would. Only its owner moves
/// it, when what it waits for (a message) has come.
pub struct Deadline(Cell<Instant>);

impl Deadline {
    /// A deadline `wait` from now.
    pub fn after(wait: Duration) -> Deadline {
        Deadline::at(Instant::now() + wait)
    }

    /// A deadline at `at`.
    pub fn at(at: Instant) -> Deadline {
        Deadline(Cell::new(at))
    }

    /// Moves the deadline to `at`.
    pub fn set(&self, at: Instant) {
        self.0.set(at);
    }

    /// Whether `ready` is ready before the deadline, by the engine's monotonic clock.
    /// The gateway keeps its own time: an engine may not honour a request's timeouts
    /// (jco's does not).
    fn met(&self, ready: &Pollable) -> bool {
        let left = self.0.get().saturating_duration_since(Instant::now());
        let nanos = u64::try_from(left.as_nanos()).unwrap_or(u64::MAX);
        let timer = monotonic_clock::subscribe_duration(nanos);
        poll::poll(&[ready, &timer]).contains(&0)
    }
}

/// Why a body was not read whole, with the status a client's request gets for it.
pub struct Unread {
    /// 413 past the cap, 408 not done in time, 400 broken off.
    pub status: u16,
    pub why: String,
}

/// A body, read whole up to `cap` bytes before `deadline`; why not, past the cap or
/// when it breaks off or is not done in time.
pub fn read_whole(body: IncomingBody, cap: usize, deadline: &Deadline) -> Result<Vec<u8>, Unread> {
    let broken = |why: String| Unread { status: 400, why };
    let mut reader = Body::new(&body, deadline).map_err(broken)?;
    let mut text = Vec::new();
    let read = (&mut reader)
        .take(u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut text);
    drop(reader);
    let _ = IncomingBody::finish(body);
    match read {
        Err(error) if error.kind() == std::io::ErrorKind::TimedOut => Err(Unread {
            status: 408,
            why: format!("the body did not come whole in time: {error}"),
        }),
        Err(error) => Err(broken(format!("the body broke off: {error}"))),
        Ok(_) if text.len() > cap => Err(Unread {
            status: 413,
            why: format!(
                "the message is over the {} MiB cap on one message",
                cap >> 20
            ),
        }),
        Ok(_) => Ok(text),
    }
}

/// An incoming body as a reader: what the SSE parser reads from. A read still waiting
/// at the deadline fails with `TimedOut`, as the parser knows a silent server.
pub struct Body<'a> {
    stream: Option<InputStream>,
    deadline: &'a Deadline,
}

impl<'a> Body<'a> {
    pub fn new(body: &IncomingBody, deadline: &'a Deadline) -> Result<Body<'a>, String> {
        let stream = body
            .stream()
            .map_err(|()| "the body could not be read".to_string())?;
        Ok(Body {
            stream: Some(stream),
            deadline,
        })
    }
}

impl Read for Body<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(stream) = &self.stream else {
            return Ok(0);
        };
        let want = u64::try_from(buf.len()).unwrap_or(u64::MAX).min(64 * 1024);
        loop {
            match stream.read(want) {
                Ok(bytes) if bytes.is_empty() => {
                    if !self.deadline.met(&stream.subscribe()) {
                        let why = "no message came in time";
                        return Err(std::io::Error::new(std::io::ErrorKind::TimedOut, why));
                    }
                }
                Ok(bytes) => {
                    buf[..bytes.len()].copy_from_slice(&bytes);
                    return Ok(bytes.len());
                }
                Err(StreamError::Closed) => {
                    self.stream = None;
                    return Ok(0);
                }
                Err(StreamError::LastOperationFailed(error)) => {
                    let why = error.to_debug_string();
                    // wasi:http reports a body that waited past `between-bytes-timeout`
                    // as a failed read naming the timeout.
                    let kind = match why.to_ascii_lowercase().contains("timeout") {
                        true => std::io::ErrorKind::TimedOut,
                        false => std::io::ErrorKind::Other,
                    };
                    return Err(std::io::Error::new(kind, why));
                }
            }
        }
    }
}

/// What the upstream answered a request with, its body not yet read.
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, Vec<u8>)>,
    pub response: IncomingResponse,
}

impl Answer {
    /// Whether its body is an event stream.
    pub fn is_stream(&self) -> bool {
        reasons_mcp::http::answered::is_event_stream(header(&self.headers, "content-type"))
    }
}

/// Sends `method` upstream with `headers` (the operator's own replacing any of the same
/// name) and `body`, before `deadline`; the upstream's answer, or why there is none.
/// A redirect is no answer (`reasons_mcp::http::redirect`).
pub fn send(
    settings: &Settings,
    method: Method,
    headers: &[(String, Vec<u8>)],
    body: Option<&[u8]>,
    deadline: &Deadline,
) -> Result<Answer, String> {
    let upstream = &settings.upstream;
    // A server that reads a header's first value must read the operator's: the
    // client's of the same name do not go at all.
    let operators = |name: &str| {
        settings
            .headers
            .iter()
            .any(|(own, _)| own.eq_ignore_ascii_case(name))
    };
    let mut all: Vec<(String, Vec<u8>)> = headers
        .iter()
        .filter(|(name, _)| !operators(name))
        .cloned()
        .collect();
    for (name, value) in &settings.headers {
        all.push((name.clone(), value.clone().into_bytes()));
    }
    if let Some(body) = body {
        all.push(("content-type".into(), b"application/json".to_vec()));
        // The body is held whole: its length is said, so that it goes as it came, not
        // chunked, which a server that reads only whole bodies (Python's http.server)
        // refuses.
        all.push(("content-length".into(), body.len().to_string().into_bytes()));
    }
    all.push((
        "accept".into(),
        match method {
            Method::Get => b"text/event-stream".to_vec(),
            _ => b"application/json, text/event-stream".to_vec(),
        },
    ));
    let answer = request(
        upstream,
        method,
        &all,
        body,
        settings.read_timeout,
        deadline,
    )?;
    let location = header(&answer.headers, "location");
    if let Some(why) =
        reasons_mcp::http::redirect::refusal(answer.status, location, "REASONS_UPSTREAM")
    {
        return Err(format!("the MCP server {why}"));
    }
    Ok(answer)
}

/// Sends `method` to `target` with exactly `headers` and `body`, each wait for the
/// other side at most `wait` and the whole before `deadline`; its answer, or why there
/// is none.
pub fn request(
    target: &Upstream,
    method: Method,
    headers: &[(String, Vec<u8>)],
    body: Option<&[u8]>,
    wait: Duration,
    deadline: &Deadline,
) -> Result<Answer, String> {
    let fields = Fields::from_list(headers)
        .map_err(|error| format!("a header could not be sent: {error:?}"))?;
    let request = OutgoingRequest::new(fields);
    let scheme = match target.https {
        true => Scheme::Https,
        false => Scheme::Http,
    };
    let set = request
        .set_method(&method)
        .and_then(|()| request.set_scheme(Some(&scheme)))
        .and_then(|()| request.set_authority(Some(&target.authority)))
        .and_then(|()| request.set_path_with_query(Some(&target.path)));
    set.map_err(|()| "the upstream's URL could not be given to the engine".to_string())?;
    let outgoing = request
        .body()
        .map_err(|()| "the request's body could not be opened".to_string())?;
    let options = RequestOptions::new();
    let wait = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
    // An engine that sets no timeouts of its own still takes these; one that cannot set
    // them keeps its own. The deadline bounds the whole either way.
    let _ = options.set_first_byte_timeout(Some(wait));
    let _ = options.set_between_bytes_timeout(Some(wait));
    let future = outgoing_handler::handle(request, Some(options))
        .map_err(|error| format!("cannot reach the MCP server: {error:?}"))?;
    if let Some(body) = body {
        let stream = outgoing
            .write()
            .map_err(|()| "the request's body could not be written".to_string())?;
        write_all(&stream, body, deadline)
            .map_err(|why| format!("the request could not be sent: the MCP server {why}"))?;
        drop(stream);
    }
    OutgoingBody::finish(outgoing, None)
        .map_err(|error| format!("the request could not be sent: {error:?}"))?;
    if !deadline.met(&future.subscribe()) {
        // Dropping the future cancels the request.
        return Err(SILENT.into());
    }
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(error))) => return Err(describe(&error)),
        Some(Err(())) | None => return Err("the engine lost the upstream's answer".into()),
    };
    let status = response.status();
    let headers = response.headers().entries();
    Ok(Answer {
        status,
        headers,
        response,
    })
}

/// Why a wait for the upstream ended.
pub const SILENT: &str = "the MCP server sent no message for as long as the gateway waits \
                      (REASONS_READ_TIMEOUT_SECS)";

/// Why the upstream gave no answer, as a person reads it.
fn describe(error: &wasip2::http::types::ErrorCode) -> String {
    use wasip2::http::types::ErrorCode;
    match error {
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => SILENT.into(),
        ErrorCode::ConnectionRefused => {
            "cannot reach the MCP server: the connection was refused".into()
        }
        ErrorCode::DnsError(_) => {
            "cannot reach the MCP server: its host name does not resolve".into()
        }
        other => format!("cannot reach the MCP server: {other:?}"),
    }
}

/// Writes all of `bytes` to `stream` before `deadline`, in the pieces the stream takes
/// when it takes them: a reader that stops reading holds the gateway no longer than
/// silence would. Why not, as what the other side did.
fn write_all(stream: &OutputStream, bytes: &[u8], deadline: &Deadline) -> Result<(), String> {
    let late = || "took too long to read what was sent to it".to_string();
    let broken = |error: StreamError| format!("stopped reading ({error:?})");
    let mut rest = bytes;
    while !rest.is_empty() {
        let room = stream.check_write().map_err(broken)?;
        if room == 0 {
            if !deadline.met(&stream.subscribe()) {
                return Err(late());
            }
            continue;
        }
        let piece = usize::try_from(room).unwrap_or(usize::MAX).min(rest.len());
        stream.write(&rest[..piece]).map_err(broken)?;
        rest = &rest[piece..];
    }
    // Every byte is in. A body whose length was said is closed by the engine once its
    // last byte is in: closed from here on is done, not broken.
    let done = |checked: Result<u64, StreamError>| match checked {
        Ok(room) => Ok(room > 0),
        Err(StreamError::Closed) => Ok(true),
        Err(error) => Err(broken(error)),
    };
    if done(stream.flush().map(|()| 0))? {
        return Ok(());
    }
    // A flush is done when the stream takes writes again.
    loop {
        if done(stream.check_write())? {
            return Ok(());
        }
        if !deadline.met(&stream.subscribe()) {
            return Err(late());
        }
    }
}

/// The response to the client, opened when its status and headers are known; its body
/// written as it comes, each write within `wait`.
pub struct Reply {
    // Before the body: a stream outliving its body is a resource with children, which
    // the engine refuses to drop, however the reply ends.
    stream: Option<OutputStream>,
    body: OutgoingBody,
    wait: Duration,
}

impl Reply {
    /// Answers the client with `status` and `headers`; the body follows, each write of
    /// it taken within `wait` or the client taken to be gone.
    pub fn open(
        out: ResponseOutparam,
        status: u16,
        headers: &[(String, Vec<u8>)],
        wait: Duration,
    ) -> Option<Reply> {
        let fields = Fields::from_list(headers).ok()?;
        let response = OutgoingResponse::new(fields);
        response.set_status_code(status).ok()?;
        let body = response.body().ok()?;
        ResponseOutparam::set(out, Ok(response));
        let stream = body.write().ok();
        Some(Reply { stream, body, wait })
    }

    /// Writes `bytes`; `false` when the client is gone, or took longer than the wait to
    /// take them, and is written nothing more.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        let written = match &self.stream {
            Some(stream) => write_all(stream, bytes, &Deadline::after(self.wait)).is_ok(),
            None => false,
        };
        if !written {
            self.stream = None;
        }
        written
    }

    /// Whether the client still takes what is written.
    pub fn is_open(&self) -> bool {
        self.stream.is_some()
    }

    /// Ends the body.
    pub fn finish(mut self) {
        drop(self.stream.take());
        let _ = OutgoingBody::finish(self.body, None);
    }
}

/// Answers the client with `status` and a JSON-RPC error saying `why`, under no id: the
/// request was not read, or cannot be served.
pub fn refuse(out: ResponseOutparam, status: u16, why: &str) {
    let body = reasons_mcp::jsonrpc::error(None, reasons_mcp::jsonrpc::INVALID_REQUEST, why);
    json(out, status, &[], body.as_bytes());
}

/// How long a refusal may take to write: it is short, and the client is to be done with.
const REFUSAL_WAIT: Duration = Duration::from_secs(10);

/// Answers the client with `status`, `headers` and the JSON `body`.
pub fn json(out: ResponseOutparam, status: u16, headers: &[(String, Vec<u8>)], body: &[u8]) {
    let mut all = headers.to_vec();
    all.push(("content-type".into(), b"application/json".to_vec()));
    if let Some(mut reply) = Reply::open(out, status, &all, REFUSAL_WAIT) {
        reply.write(body);
        reply.finish();
    }
}
