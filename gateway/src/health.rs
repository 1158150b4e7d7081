//! The paths a load balancer asks: `/livez`, answered by the instance alone, and
//! `/readyz`, answered after the upstream has answered the MCP handshake and listed its
//! tools ([`reasons_mcp::ready`]) with the operator's headers and no client's. The gateway
//! keeps nothing, so every readiness request is one probe of the upstream: a balancer
//! asks every few seconds, not for every request it routes.

use crate::settings::Settings;
use crate::wire::{self, Deadline};
use reasons_mcp::ready::{ANSWER_AT_MOST, Answer, Ask, Next, Probe, Verdict};
use wasip2::http::types::{Method, ResponseOutparam};

/// Where liveness is asked.
pub const LIVE: &str = "/livez";
/// Where readiness is asked.
pub const READY: &str = "/readyz";

/// Answers a liveness request: an instance that runs this answers.
pub fn live(out: ResponseOutparam) {
    wire::json(out, 200, &[], br#"{"live":true}"#);
}

/// Answers a readiness request with what a probe of the upstream found.
pub fn ready(settings: &Settings, out: ResponseOutparam) {
    let verdict = probe(settings);
    wire::json(out, verdict.status(), &[], verdict.body().as_bytes());
}

/// Probes the upstream, each request within the read timeout.
fn probe(settings: &Settings) -> Verdict {
    let (mut probe, mut ask) = Probe::start();
    loop {
        let answered = match send(settings, &ask) {
            Ok(answered) => answered,
            Err(why) => return Verdict::NotReady(why),
        };
        let (status, headers, body) = answered;
        let answer = Answer {
            status,
            content_type: wire::header(&headers, "content-type"),
            session: wire::header(&headers, "mcp-session-id"),
            body: &body,
        };
        match probe.answered(&answer) {
            Next::Ask(next) => ask = next,
            Next::Found(verdict, end) => {
                // The session is ended as a client ends one; its answer changes nothing.
                if let Some(end) = end {
                    let _ = send(settings, &end);
                }
                return verdict;
            }
        }
    }
}

/// The upstream's status, headers and body for `ask`.
type Answered = (u16, Vec<(String, Vec<u8>)>, Vec<u8>);

/// Makes `ask` of the upstream; its answer, read whole, or why there is none.
fn send(settings: &Settings, ask: &Ask) -> Result<Answered, String> {
    let deadline = Deadline::after(settings.read_timeout);
    let headers: Vec<(String, Vec<u8>)> = (ask.headers.iter())
        .map(|(name, value)| (name.to_string(), value.clone().into_bytes()))
        .collect();
    let method = if ask.delete {
        Method::Delete
    } else {
        Method::Post
    };
    let body = ask.body.as_deref().map(str::as_bytes);
    let answer = wire::send(settings, method, &headers, body, &deadline)?;
    let (status, headers) = (answer.status, answer.headers);
    let body = match answer.response.consume() {
        Ok(body) => {
            wire::read_whole(body, ANSWER_AT_MOST, &deadline).map_err(|unread| unread.why)?
        }
        Err(()) => Vec::new(),
    };
    Ok((status, headers, body))
}
