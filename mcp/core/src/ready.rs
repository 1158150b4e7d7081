//! Whether the MCP server behind a proxy is ready to serve: it answers the handshake and
//! lists its tools. A load balancer asks before it sends a replica clients, and again
//! while it does. Sans I/O, as the rest of the core: a [`Probe`] says each HTTP request
//! to make and reads each answer; its transport makes them (the gateway over wasi:http,
//! `reasons mcp --listen` through its own front, so that the probe takes the way every
//! client's request takes).
//!
//! The probe is a client of its own, with its own ids, and what it learns goes nowhere
//! but into its verdict: it lists, and calls nothing.

use crate::http::sse;
use crate::jsonrpc::{self, Id, Line, Message};
use reasons_transform::json;
use serde_json::Value;

/// The revision the probe's handshake asks for: the latest with a handshake, which a
/// server of any revision since 2025-03-26 answers with the one it speaks.
const REVISION: &str = "2025-11-25";

/// The most of an answer the probe reads: a listing's first page, however many tools.
pub const ANSWER_AT_MOST: usize = 16 << 20;

/// The most characters of a server's error message a verdict quotes.
const SERVER_WORDS_AT_MOST: usize = 200;

/// A request of the probe's own.
#[derive(Debug, PartialEq)]
pub struct Ask {
    /// POST, or DELETE for the session the probe opened.
    pub delete: bool,
    /// Its headers besides those every POST of the transport's carries (its content
    /// type, what it accepts, its length).
    pub headers: Vec<(&'static str, String)>,
    /// A POST's message.
    pub body: Option<String>,
}

/// What an answer to an [`Ask`] was.
pub struct Answer<'a> {
    /// Its HTTP status.
    pub status: u16,
    /// Its `Content-Type`, if it had one.
    pub content_type: Option<&'a [u8]>,
    /// Its `Mcp-Session-Id`, if it had one.
    pub session: Option<&'a [u8]>,
    /// Its body, at most [`ANSWER_AT_MOST`] of it.
    pub body: &'a [u8],
}

/// The probe's finding.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// The server answered the handshake and listed this many tools on the first page.
    Ready {
        /// The tools on the listing's first page.
        tools: usize,
    },
    /// The server answered, with the status that asks each user to sign in (401, 403):
    /// it is up, and lists for a client that brings its user's credentials, which the
    /// probe has none of.
    SignsIn {
        /// 401 or 403.
        status: u16,
    },
    /// Every session the proxy may hold is open: each serves, and no probe ends one to
    /// make room for its own.
    Full {
        /// The sessions open.
        sessions: usize,
    },
    /// Why the server cannot serve now.
    NotReady(String),
}

impl Verdict {
    /// The HTTP status a load balancer reads: 200 for a server that serves, 503 for one
    /// that cannot.
    pub fn status(&self) -> u16 {
        match self {
            Verdict::Ready { .. } | Verdict::SignsIn { .. } | Verdict::Full { .. } => 200,
            Verdict::NotReady(_) => 503,
        }
    }

    /// The body a person reads: JSON, with the finding.
    pub fn body(&self) -> String {
        let body = match self {
            Verdict::Ready { tools } => serde_json::json!({"ready": true, "tools": tools}),
            Verdict::SignsIn { status } => serde_json::json!({
                "ready": true,
                "why": format!("the MCP server answered HTTP {status}: it lists for signed-in users only"),
            }),
            Verdict::Full { sessions } => serde_json::json!({
                "ready": true,
                "why": format!("all {sessions} sessions --max-sessions allows are open and serving"),
            }),
            Verdict::NotReady(why) => serde_json::json!({"ready": false, "why": why}),
        };
        body.to_string()
    }
}

/// What the probe does next.
#[derive(Debug, PartialEq)]
pub enum Next {
    /// Make this request, then give the probe its answer.
    Ask(Ask),
    /// The finding, and the session to end (a DELETE whose answer does not matter).
    Found(Verdict, Option<Ask>),
}

/// Where the probe is.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Step {
    Initialize,
    Initialized,
    List,
}

/// What the proxy's answer to every request of a server that wants credentials it has
/// not got says (401, 403), through `--url` and its fronts: `doctor` and the probe tell
/// such a server from a broken one by it.
pub const NEEDS_SIGN_IN: &str = "sign in with `reasons login";

/// What that answer says when the server refused the credentials given (403).
pub const REFUSED_CREDENTIALS: &str = "it refused the credentials given";

/// A probe of one server, from its handshake to its listing.
#[derive(Debug)]
pub struct Probe {
    step: Step,
    /// The session the server gave, if it gives them.
    session: Option<String>,
    /// The revision the server answered the handshake with.
    revision: String,
}

impl Probe {
    /// A probe, and its first request: `initialize`.
    pub fn start() -> (Probe, Ask) {
        let params = serde_json::json!({
            "protocolVersion": REVISION,
            "capabilities": {},
            "clientInfo": {"name": "reasons-readiness", "version": env!("CARGO_PKG_VERSION")},
        });
        let probe = Probe {
            step: Step::Initialize,
            session: None,
            revision: REVISION.to_string(),
        };
        let ask = probe.post(Some(1), "initialize", Some(params));
        (probe, ask)
    }

    /// Reads the answer to the last request; what to do next.
    pub fn answered(&mut self, answer: &Answer) -> Next {
        if matches!(answer.status, 401 | 403) {
            return self.found(Verdict::SignsIn {
                status: answer.status,
            });
        }
        match self.step {
            Step::Initialize => {
                let result = match result_of(answer, 1) {
                    Ok(result) => result,
                    Err(Unanswered::SignsIn(status)) => {
                        return self.found(Verdict::SignsIn { status });
                    }
                    Err(Unanswered::Why(why)) => {
                        return self.found(Verdict::NotReady(format!("initialize: {why}")));
                    }
                };
                if let Some(revision) =
                    jsonrpc::at(&result, &["protocolVersion"]).and_then(json::string)
                {
                    self.revision = revision;
                }
                self.session = answer
                    .session
                    .and_then(|session| std::str::from_utf8(session).ok())
                    .map(str::to_string);
                self.step = Step::Initialized;
                Next::Ask(self.post(None, "notifications/initialized", None))
            }
            Step::Initialized => {
                if !(200..300).contains(&answer.status) {
                    let why = format!(
                        "notifications/initialized: the MCP server answered HTTP {}",
                        answer.status
                    );
                    return self.found(Verdict::NotReady(why));
                }
                self.step = Step::List;
                Next::Ask(self.post(Some(2), "tools/list", None))
            }
            Step::List => {
                let verdict = match result_of(answer, 2) {
                    Ok(result) => match jsonrpc::at(&result, &["tools"]).and_then(json::elements) {
                        Some(tools) => Verdict::Ready { tools: tools.len() },
                        None => Verdict::NotReady("tools/list: the result has no tools".into()),
                    },
                    Err(Unanswered::SignsIn(status)) => Verdict::SignsIn { status },
                    Err(Unanswered::Why(why)) => Verdict::NotReady(format!("tools/list: {why}")),
                };
                self.found(verdict)
            }
        }
    }

    /// `verdict`, with the DELETE that ends the session, if one was opened.
    fn found(&self, verdict: Verdict) -> Next {
        let end = self.session.as_ref().map(|_| Ask {
            delete: true,
            headers: self.session_headers(),
            body: None,
        });
        Next::Found(verdict, end)
    }

    /// A POST of `method` (a request under `id`, or a notification), within the session.
    fn post(&self, id: Option<u64>, method: &str, params: Option<Value>) -> Ask {
        let mut message = serde_json::json!({"jsonrpc": "2.0", "method": method});
        if let Some(id) = id {
            message["id"] = id.into();
        }
        if let Some(params) = params {
            message["params"] = params;
        }
        let mut headers = self.session_headers();
        headers.push(("mcp-method", method.to_string()));
        Ask {
            delete: false,
            headers,
            body: Some(message.to_string()),
        }
    }

    /// The session's headers: its id and revision, once the handshake gave them.
    fn session_headers(&self) -> Vec<(&'static str, String)> {
        let mut headers = Vec::new();
        if self.step != Step::Initialize {
            headers.push(("mcp-protocol-version", self.revision.clone()));
        }
        if let Some(session) = &self.session {
            headers.push(("mcp-session-id", session.clone()));
        }
        headers
    }
}

/// The result of the probe's request `id` in `answer` (one JSON message, or an event
/// stream that carries it), or why there is none.
/// Why a request of the probe's has no result.
enum Unanswered {
    /// A proxy in front of a server that signs its users in, which the probe does not,
    /// answered so (the status the server asked with): the server is up for those who
    /// have signed in.
    SignsIn(u16),
    Why(String),
}

fn result_of(answer: &Answer, id: u64) -> Result<String, Unanswered> {
    let mut messages = Vec::new();
    if crate::http::answered::is_event_stream(answer.content_type) {
        sse::read(answer.body, ANSWER_AT_MOST, |data| messages.push(data)).map_err(|broken| {
            Unanswered::Why(format!("the MCP server's event stream broke off: {broken}"))
        })?;
    } else {
        messages.push(String::from_utf8_lossy(answer.body).into_owned());
    }
    // Its own answer; or else an error under no id, which refuses the one request the
    // probe has in flight (a proxy's refusal of what it could not serve). Each message
    // read once, by the proxy's own reader: a result's text, or an error's message.
    let asked = Id::parse(&id.to_string());
    let (mut own, mut unnamed) = (None, None);
    for text in &messages {
        let Ok(Line::One(read)) = jsonrpc::read_line(text.as_bytes()) else {
            continue;
        };
        let Ok(Message::Response { id, result, .. }) = &read.message else {
            continue;
        };
        let outcome = match result {
            Some(result) => Ok(result.to_string()),
            None => Err(jsonrpc::at(read.text, &["error", "message"]).and_then(json::string)),
        };
        match id {
            Some(id) if Some(id) == asked.as_ref() => {
                own = Some(outcome);
                break;
            }
            None if result.is_none() => {
                unnamed.get_or_insert(outcome);
            }
            _ => {}
        }
    }
    let status = answer.status;
    let why = |why: String| Err(Unanswered::Why(why));
    match own.or(unnamed) {
        Some(Ok(result)) => Ok(result),
        Some(Err(said)) => {
            let said = said.unwrap_or_else(|| "(no message)".into());
            if said.contains(NEEDS_SIGN_IN) {
                let refused = said.contains(REFUSED_CREDENTIALS);
                return Err(Unanswered::SignsIn(if refused { 403 } else { 401 }));
            }
            // The server's words go to whoever asks for readiness: inert and short, as
            // everything of another party's the proxy shows.
            let said = reasons_inert::inert(&said, SERVER_WORDS_AT_MOST);
            why(format!("the MCP server answered with an error: {said}"))
        }
        None if (200..300).contains(&status) => {
            why("the MCP server's answer holds no response to it".into())
        }
        None => why(format!("the MCP server answered HTTP {status}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(status: u16, body: &str) -> Answer<'_> {
        Answer {
            status,
            content_type: Some(b"application/json"),
            session: None,
            body: body.as_bytes(),
        }
    }

    fn asked(next: Next) -> Ask {
        match next {
            Next::Ask(ask) => ask,
            found => panic!("the probe stopped early: {found:?}"),
        }
    }

    fn message(ask: &Ask) -> Value {
        serde_json::from_str(ask.body.as_deref().unwrap()).unwrap()
    }

    #[test]
    fn a_server_with_sessions_is_ready_once_it_lists_and_its_session_is_ended() {
        let (mut probe, first) = Probe::start();
        assert_eq!(message(&first)["method"], "initialize");
        assert_eq!(message(&first)["params"]["protocolVersion"], "2025-11-25");
        assert_eq!(first.headers, [("mcp-method", "initialize".to_string())]);
        let initialized = asked(probe.answered(&Answer {
            status: 200,
            content_type: Some(b"text/event-stream"),
            session: Some(b"s-1"),
            body: b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"protocolVersion\":\"2025-06-18\"}}\n\n",
        }));
        assert_eq!(
            message(&initialized),
            serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"})
        );
        let session = [
            ("mcp-protocol-version", "2025-06-18".to_string()),
            ("mcp-session-id", "s-1".to_string()),
        ];
        assert_eq!(initialized.headers[..2], session);
        let list = asked(probe.answered(&json(202, "")));
        assert_eq!(message(&list)["method"], "tools/list");
        assert_eq!(message(&list)["id"], 2);
        // A notification on the stream before the answer is passed over.
        let listed = Answer {
            status: 200,
            content_type: Some(b"Text/Event-Stream; charset=utf-8"),
            session: None,
            body: b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"tools\":[{\"name\":\"a\"},{\"name\":\"b\"}]}}\n\n",
        };
        let end = Ask {
            delete: true,
            headers: session.to_vec(),
            body: None,
        };
        assert_eq!(
            probe.answered(&listed),
            Next::Found(Verdict::Ready { tools: 2 }, Some(end))
        );
    }

    #[test]
    fn a_server_without_sessions_is_ready_with_nothing_to_end() {
        let (mut probe, _) = Probe::start();
        let initialized = asked(probe.answered(&json(
            200,
            r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#,
        )));
        assert_eq!(
            initialized.headers,
            [
                ("mcp-protocol-version", "2025-11-25".to_string()),
                ("mcp-method", "notifications/initialized".to_string())
            ]
        );
        asked(probe.answered(&json(202, "")));
        let listed = json(200, r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[]}}"#);
        assert_eq!(
            probe.answered(&listed),
            Next::Found(Verdict::Ready { tools: 0 }, None)
        );
    }

    #[test]
    fn a_server_that_cannot_answer_or_list_is_not_ready_and_says_why() {
        let not_ready = |answers: &[Answer]| {
            let (mut probe, _) = Probe::start();
            let mut last = None;
            for answer in answers {
                last = Some(probe.answered(answer));
            }
            match last {
                Some(Next::Found(Verdict::NotReady(why), _)) => why,
                other => panic!("{other:?}"),
            }
        };
        let initialized = r#"{"jsonrpc":"2.0","id":1,"result":{}}"#;
        assert_eq!(
            not_ready(&[json(500, "oops")]),
            "initialize: the MCP server answered HTTP 500"
        );
        assert_eq!(
            not_ready(&[json(
                200,
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"no such revision"}}"#
            )]),
            "initialize: the MCP server answered with an error: no such revision"
        );
        // The server's words, shown inert and short.
        let long = format!("line\u{1b}[31m\nbreak{}", "x".repeat(5000));
        let refusal =
            serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": 1, "message": long}});
        let why = not_ready(&[json(200, &refusal.to_string())]);
        assert!(why.starts_with("initialize: the MCP server answered with an error: line"));
        assert!(!why.contains(['\u{1b}', '\n']), "{why:?}");
        assert!(why.chars().count() < 300, "{}", why.len());
        // Another request's answer is not the probe's.
        assert_eq!(
            not_ready(&[json(200, r#"{"jsonrpc":"2.0","id":7,"result":{}}"#)]),
            "initialize: the MCP server's answer holds no response to it"
        );
        assert_eq!(
            not_ready(&[json(200, initialized), json(400, "")]),
            "notifications/initialized: the MCP server answered HTTP 400"
        );
        assert_eq!(
            not_ready(&[
                json(200, initialized),
                json(202, ""),
                json(200, r#"{"jsonrpc":"2.0","id":2,"result":{"tools":{}}}"#)
            ]),
            "tools/list: the result has no tools"
        );
    }

    #[test]
    fn a_proxy_to_a_server_that_signs_its_users_in_is_up_and_says_so() {
        // The proxy's --listen front answers with its needs-sign-in error, in a 200.
        let said = format!(
            "the MCP server answered HTTP 401: it asks for credentials; {NEEDS_SIGN_IN} URL`"
        );
        let body = serde_json::json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": said}});
        let (mut probe, _) = Probe::start();
        let found = probe.answered(&json(200, &body.to_string()));
        assert_eq!(found, Next::Found(Verdict::SignsIn { status: 401 }, None));
    }

    #[test]
    fn a_server_that_signs_its_users_in_is_up_and_says_so() {
        let (mut probe, _) = Probe::start();
        let found = probe.answered(&json(401, ""));
        assert_eq!(found, Next::Found(Verdict::SignsIn { status: 401 }, None));
        let Next::Found(verdict, _) = found else {
            unreachable!()
        };
        assert_eq!(verdict.status(), 200);
        let body: Value = serde_json::from_str(&verdict.body()).unwrap();
        assert_eq!(body["ready"], true);
        assert_eq!(Verdict::NotReady("x".into()).status(), 503);
        assert_eq!(
            Verdict::NotReady("x".into()).body(),
            r#"{"ready":false,"why":"x"}"#
        );
    }
}
