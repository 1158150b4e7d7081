//! What the benchmarks of `reasons mcp` and of the gateway share: round trips timed
//! alternately, so that whatever else the shared machine does falls on every path alike,
//! and a 2026-07-28 request as a client POSTs it.

use reasons_test_support::mcp::mirrored;
use std::time::Duration;

mod timing;
pub use timing::{alternately_for, ms, rounds, summary};

/// A request timed over HTTP, as a 2026-07-28 client sends it.
pub struct Request {
    /// What the benchmark's table calls it.
    pub name: &'static str,
    pub body: String,
    /// The headers a 2026-07-28 client sends with it, read from it once, before timing.
    headers: Vec<(&'static str, String)>,
}

/// A 2026-07-28 request's `_meta` (the envelope a request of that revision carries),
/// which the HTTP servers check against its headers.
const MODERN: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

/// The requests timed over HTTP: a listing, and a call with the model's reason.
pub fn requests() -> [Request; 2] {
    [
        Request::new(
            "tools/list",
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{MODERN}}}}}"#),
        ),
        Request::new(
            "tools/call with a reason",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"record","arguments":{{"text":"a","reason":"to measure"}},{MODERN}}}}}"#
            ),
        ),
    ]
}

impl Request {
    fn new(name: &'static str, body: String) -> Request {
        let headers = mirrored(&body, &[]);
        Request {
            name,
            body,
            headers,
        }
    }

    /// POSTs this to `url` with the headers a 2026-07-28 client sends, over `agent`'s
    /// kept-alive connection: the answer's body.
    pub fn post(&self, agent: &ureq::Agent, url: &str) -> String {
        let mut post = agent
            .post(url)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream");
        for (name, value) in &self.headers {
            post = post.header(*name, value);
        }
        let mut answer = post.send(self.body.as_bytes()).unwrap();
        answer.body_mut().read_to_string().unwrap()
    }
}

/// Runs each of `paths` once per round, in turn, for 100 rounds of warm-up (JIT, caches,
/// connections) and then [`rounds`] more: the times of each, in its order.
pub fn alternately(paths: Vec<Box<dyn FnMut() + '_>>) -> Vec<Vec<Duration>> {
    alternately_for(rounds(), 100, paths)
}
