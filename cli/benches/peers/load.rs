//! The load: a path's sessions side by side, each a client in a closed loop (a request,
//! its answer, the next), one thread each; the time of every request, and the wall time
//! of all of them.

use reasons_test_support::mcp::{INITIALIZED, Session, answered};
use std::sync::Barrier;
use std::time::{Duration, Instant};

/// The `initialize` every session starts with, in the revision every peer speaks (the
/// tests' own, `mcp::INITIALIZE`, asks for 2025-06-18).
const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"reasons-bench","version":"1.0.0"}}}"#;

/// A client of one session.
pub trait Client: Send {
    /// Sends `request` and waits for its answer: the answer's text.
    fn ask(&mut self, request: &str) -> String;
}

/// A client over stdio, of a server or of a proxy that stands for one.
pub struct Stdio(pub Session);

impl Stdio {
    /// Starts `session` and initializes it.
    pub fn open(mut session: Session) -> Stdio {
        session.ask(INITIALIZE);
        session.send(INITIALIZED);
        Stdio(session)
    }
}

impl Client for Stdio {
    fn ask(&mut self, request: &str) -> String {
        self.0.ask(request)
    }
}

/// A client over Streamable HTTP, in a 2025-11-25 session: the session's id and
/// protocol version on every request after `initialize`, over one kept-alive connection.
pub struct Http {
    agent: ureq::Agent,
    url: String,
    session: String,
}

impl Http {
    /// Initializes a session at `url`.
    pub fn open(url: &str) -> Http {
        let agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .timeout_global(Some(Duration::from_secs(60)))
            .build()
            .new_agent();
        let mut http = Http {
            agent,
            url: url.to_string(),
            session: String::new(),
        };
        let (status, session, messages) = answered(http.post(INITIALIZE));
        assert_eq!(status, 200, "{url} did not initialize: {messages:?}");
        http.session = session;
        let (status, _, _) = answered(http.post(INITIALIZED));
        assert!(
            status == 202 || status == 200,
            "{url}: initialized got {status}"
        );
        http
    }

    fn post(&self, body: &str) -> ureq::http::Response<ureq::Body> {
        let mut post = self
            .agent
            .post(&self.url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        if !self.session.is_empty() {
            post = post
                .header("Mcp-Session-Id", &self.session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        post.send(body).expect("the path answers")
    }
}

impl Client for Http {
    fn ask(&mut self, request: &str) -> String {
        let (status, _, messages) = answered(self.post(request));
        assert_eq!(status, 200, "{}: {messages:?}", self.url);
        // An SSE answer may carry notifications first: the answer is the last message.
        let answer = messages.last().expect("an answer");
        answer.to_string()
    }
}

/// The time each request of a run took, by kind, and the run's wall time.
#[derive(Default)]
pub struct Times {
    pub calls: Vec<Duration>,
    pub lists: Vec<Duration>,
    pub wall: Duration,
    pub requests: usize,
}

impl Times {
    /// Adds `other`'s samples to these.
    pub fn extend(&mut self, other: Times) {
        self.calls.extend(other.calls);
        self.lists.extend(other.lists);
        self.wall += other.wall;
        self.requests += other.requests;
    }

    /// Requests answered per second of wall time.
    pub fn throughput(&self) -> f64 {
        self.requests as f64 / self.wall.as_secs_f64()
    }
}

/// The tool a path's calls go to: its name on the path, and the argument it takes.
pub struct Call {
    pub tool: String,
    pub argument: &'static str,
}

impl Call {
    /// The call with `id`, its argument `a` and the model's reason.
    pub fn text(&self, id: usize) -> String {
        let Call { tool, argument } = self;
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{{"{argument}":"a","reason":"to measure"}}}}}}"#
        )
    }
}

/// The requests of a session: a call with the model's reason, then a listing, in turn.
fn request(round: usize, call: &Call) -> (bool, String) {
    let id = round + 1;
    match round % 2 {
        0 => (true, call.text(id)),
        _ => (
            false,
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#),
        ),
    }
}

/// Runs `each` requests on every one of `clients` at once, each client on a thread of its
/// own, all starting together.
pub fn drive(clients: &mut [Box<dyn Client>], each: usize, call: &Call) -> Times {
    let start = Barrier::new(clients.len());
    let runs: Vec<(Times, Instant, Instant)> = std::thread::scope(|scope| {
        let threads: Vec<_> = clients
            .iter_mut()
            .map(|client| {
                let start = &start;
                scope.spawn(move || {
                    let requests: Vec<(bool, String)> =
                        (0..each).map(|round| request(round, call)).collect();
                    let mut times = Times::default();
                    start.wait();
                    let began = Instant::now();
                    for (call, request) in &requests {
                        let sent = Instant::now();
                        client.ask(request);
                        let took = sent.elapsed();
                        match call {
                            true => times.calls.push(took),
                            false => times.lists.push(took),
                        }
                    }
                    times.requests = requests.len();
                    (times, began, Instant::now())
                })
            })
            .collect();
        threads
            .into_iter()
            .map(|thread| thread.join().unwrap())
            .collect()
    });
    assert_eq!(runs.len(), clients.len(), "a run per session");
    let began = runs.iter().map(|run| run.1).min().unwrap();
    let ended = runs.iter().map(|run| run.2).max().unwrap();
    let mut all = Times::default();
    for (times, _, _) in runs {
        all.extend(times);
    }
    all.wall = ended - began;
    all
}

/// The `fraction` quantile of `samples` (sorted here).
pub fn quantile(samples: &mut [Duration], fraction: f64) -> Duration {
    assert!(!samples.is_empty(), "samples to take a quantile of");
    samples.sort();
    let at = ((samples.len() as f64 * fraction) as usize).min(samples.len() - 1);
    samples[at]
}
