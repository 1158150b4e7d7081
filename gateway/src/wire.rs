//! wasi:http, blocking: reading a body, sending a request upstream, answering the client.

use crate::settings::Settings;
use std::io::Read;
use std::time::Duration;
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
    let entries = request.headers().entries();
    // A header `Connection` names is hop-by-hop too (RFC 9110, 7.6.1). Some engines
    // (wasmtime serve) drop `Connection` itself before the component sees the request,
    // and with it the names; where it arrives, they are honoured.
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
        .into_iter()
        .filter(|(name, _)| passed_on(name) && !named.contains(&name.to_ascii_lowercase()))
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
    let mut headers: Vec<(String, Vec<u8>)> = upstream
        .iter()
        .filter(|(name, _)| passed_on(name) && !name.eq_ignore_ascii_case("content-length"))
        .cloned()
        .collect();
    if !content_type.is_empty() {
        headers.push(("content-type".into(), content_type.as_bytes().to_vec()));
    }
    headers
}

/// `line`, a message the proxy wrote, as one SSE event. The proxy's lines hold no raw
/// line break (`one_line`), so no `data:` line can end early and start a second event.
pub fn event(line: &[u8]) -> Vec<u8> {
    let line = reasons_mcp::one_line(line);
    let mut event = Vec::with_capacity(line.len() + 16);
    event.extend_from_slice(b"event: message\ndata: ");
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

/// A body, read whole up to `cap` bytes, each read waiting at most `wait`; why not,
/// past the cap or when it breaks off or goes silent.
pub fn read_whole(body: IncomingBody, cap: usize, wait: Duration) -> Result<Vec<u8>, String> {
    let mut reader = Body::new(&body, wait)?;
    let mut text = Vec::new();
    let read = (&mut reader)
        .take(u64::try_from(cap).unwrap_or(u64::MAX).saturating_add(1))
        .read_to_end(&mut text);
    drop(reader);
    let _ = IncomingBody::finish(body);
    match read {
        Err(error) => Err(format!("the body broke off: {error}")),
        Ok(_) if text.len() > cap => Err(format!(
            "the message is over the {} MiB cap on one message",
            cap >> 20
        )),
        Ok(_) => Ok(text),
    }
}

/// Whether `ready` is ready within `wait`, by the engine's monotonic clock. The gateway
/// keeps its own time: an engine may not honour a request's timeouts (jco's does not).
fn within(ready: &Pollable, wait: Duration) -> bool {
    let nanos = u64::try_from(wait.as_nanos()).unwrap_or(u64::MAX);
    let timer = monotonic_clock::subscribe_duration(nanos);
    poll::poll(&[ready, &timer]).contains(&0)
}

/// An incoming body as a reader: what the SSE parser reads from. A read that waits
/// longer than `wait` fails with `TimedOut`, as the parser knows a silent server.
pub struct Body {
    stream: Option<InputStream>,
    wait: Duration,
}

impl Body {
    pub fn new(body: &IncomingBody, wait: Duration) -> Result<Body, String> {
        let stream = body
            .stream()
            .map_err(|()| "the body could not be read".to_string())?;
        Ok(Body {
            stream: Some(stream),
            wait,
        })
    }
}

impl Read for Body {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(stream) = &self.stream else {
            return Ok(0);
        };
        let want = u64::try_from(buf.len()).unwrap_or(u64::MAX).min(64 * 1024);
        loop {
            match stream.read(want) {
                Ok(bytes) if bytes.is_empty() => {
                    if !within(&stream.subscribe(), self.wait) {
                        let why = format!("nothing came for {} s", self.wait.as_secs());
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
        header(&self.headers, "content-type")
            .is_some_and(|kind| kind.to_ascii_lowercase().starts_with(b"text/event-stream"))
    }
}

/// Sends `method` upstream with `headers` and `body`; the upstream's answer, or why
/// there is none.
pub fn send(
    settings: &Settings,
    method: Method,
    headers: &[(String, Vec<u8>)],
    body: Option<&[u8]>,
) -> Result<Answer, String> {
    let upstream = &settings.upstream;
    let mut all: Vec<(String, Vec<u8>)> = headers.to_vec();
    for (name, value) in &settings.headers {
        all.push((name.clone(), value.clone().into_bytes()));
    }
    if body.is_some() {
        all.push(("content-type".into(), b"application/json".to_vec()));
    }
    all.push((
        "accept".into(),
        match method {
            Method::Get => b"text/event-stream".to_vec(),
            _ => b"application/json, text/event-stream".to_vec(),
        },
    ));
    let fields = Fields::from_list(&all)
        .map_err(|error| format!("a header could not be sent: {error:?}"))?;
    let request = OutgoingRequest::new(fields);
    let scheme = match upstream.https {
        true => Scheme::Https,
        false => Scheme::Http,
    };
    let set = request
        .set_method(&method)
        .and_then(|()| request.set_scheme(Some(&scheme)))
        .and_then(|()| request.set_authority(Some(&upstream.authority)))
        .and_then(|()| request.set_path_with_query(Some(&upstream.path)));
    set.map_err(|()| "the upstream's URL could not be given to the engine".to_string())?;
    let outgoing = request
        .body()
        .map_err(|()| "the request's body could not be opened".to_string())?;
    let options = RequestOptions::new();
    let wait = u64::try_from(settings.read_timeout.as_nanos()).unwrap_or(u64::MAX);
    // An engine that sets no timeouts of its own still takes these; one that cannot set
    // them keeps its own.
    let _ = options.set_first_byte_timeout(Some(wait));
    let _ = options.set_between_bytes_timeout(Some(wait));
    let future = outgoing_handler::handle(request, Some(options))
        .map_err(|error| format!("cannot reach the MCP server: {error:?}"))?;
    if let Some(body) = body {
        let stream = outgoing
            .write()
            .map_err(|()| "the request's body could not be written".to_string())?;
        write_all(&stream, body).map_err(|why| format!("the request could not be sent: {why}"))?;
        drop(stream);
    }
    OutgoingBody::finish(outgoing, None)
        .map_err(|error| format!("the request could not be sent: {error:?}"))?;
    if !within(&future.subscribe(), settings.read_timeout) {
        // Dropping the future cancels the request.
        return Err(
            "the MCP server sent nothing for as long as the gateway waits (REASONS_READ_TIMEOUT_SECS)"
                .into(),
        );
    }
    let response = match future.get() {
        Some(Ok(Ok(response))) => response,
        Some(Ok(Err(error))) => return Err(describe(&error)),
        Some(Err(())) | None => return Err("the engine lost the upstream's answer".into()),
    };
    Ok(Answer {
        status: response.status(),
        headers: response.headers().entries(),
        response,
    })
}

/// Why the upstream gave no answer, as a person reads it.
fn describe(error: &wasip2::http::types::ErrorCode) -> String {
    use wasip2::http::types::ErrorCode;
    match error {
        ErrorCode::ConnectionTimeout | ErrorCode::ConnectionReadTimeout => {
            "the MCP server sent nothing for as long as the gateway waits (REASONS_READ_TIMEOUT_SECS)".into()
        }
        ErrorCode::ConnectionRefused => "cannot reach the MCP server: the connection was refused".into(),
        ErrorCode::DnsError(_) => "cannot reach the MCP server: its host name does not resolve".into(),
        other => format!("cannot reach the MCP server: {other:?}"),
    }
}

/// Writes all of `bytes` to `stream`, in the pieces the stream takes.
fn write_all(stream: &OutputStream, bytes: &[u8]) -> Result<(), String> {
    // `blocking-write-and-flush` takes at most 4096 bytes at a time.
    for piece in bytes.chunks(4096) {
        stream
            .blocking_write_and_flush(piece)
            .map_err(|error| format!("{error:?}"))?;
    }
    Ok(())
}

/// The response to the client, opened when its status and headers are known; its body
/// written as it comes.
pub struct Reply {
    body: OutgoingBody,
    stream: Option<OutputStream>,
}

impl Reply {
    /// Answers the client with `status` and `headers`; the body follows.
    pub fn open(
        out: ResponseOutparam,
        status: u16,
        headers: &[(String, Vec<u8>)],
    ) -> Option<Reply> {
        let fields = Fields::from_list(headers).ok()?;
        let response = OutgoingResponse::new(fields);
        response.set_status_code(status).ok()?;
        let body = response.body().ok()?;
        ResponseOutparam::set(out, Ok(response));
        let stream = body.write().ok();
        Some(Reply { body, stream })
    }

    /// Writes `bytes`; `false` when the client is gone.
    pub fn write(&mut self, bytes: &[u8]) -> bool {
        match &self.stream {
            Some(stream) => write_all(stream, bytes).is_ok(),
            None => false,
        }
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

/// Answers the client with `status`, `headers` and the JSON `body`.
pub fn json(out: ResponseOutparam, status: u16, headers: &[(String, Vec<u8>)], body: &[u8]) {
    let mut all = headers.to_vec();
    all.push(("content-type".into(), b"application/json".to_vec()));
    if let Some(mut reply) = Reply::open(out, status, &all) {
        reply.write(body);
        reply.finish();
    }
}
