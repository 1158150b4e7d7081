//! What the proxy keeps of each `tools/call`: the audit record of each (one line of JSON,
//! made when the call's outcome is known, for the transport to append to its log: the
//! core writes nothing) and the reason coverage per tool. Neither ever goes to stdout,
//! which is the protocol stream.

use crate::Now;
use serde::{Serialize, Serializer};
use serde_json::value::RawValue;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::time::{Instant, SystemTime};

/// A `tools/call` on its way, remembered until its outcome arrives.
pub struct Call {
    time: SystemTime,
    started: Instant,
    tool: String,
    reason: Option<String>,
    forwarded: bool,
    sent: Option<String>,
    /// The client's `_meta["io.modelcontextprotocol/aiInvocation"]`, as its exact text.
    invocation: Option<String>,
}

/// Where MCP SEP-2817 has a client put what it asserts of a call's invocation.
pub const AI_INVOCATION: &str = "io.modelcontextprotocol/aiInvocation";

impl Call {
    /// A call to `tool` made `now`, with the model's `reason` (if the layer strips this
    /// tool's reason and the call had one), sent to the server with these arguments,
    /// digested for the record (`None`: sent without any, or no record is wanted).
    pub fn sent(tool: &str, reason: Option<String>, arguments: Option<&str>, now: Now) -> Call {
        Call {
            forwarded: true,
            sent: arguments.map(|arguments| format!("{:x}", Sha256::digest(arguments.as_bytes()))),
            ..Call::kept(tool, reason, now)
        }
    }

    /// A call to `tool` made `now` that is answered here and never sent.
    pub fn kept(tool: &str, reason: Option<String>, now: Now) -> Call {
        Call {
            time: now.wall,
            started: now.instant,
            tool: tool.to_string(),
            reason,
            forwarded: false,
            sent: None,
            invocation: None,
        }
    }

    /// The call, with what its client's request said of its invocation (SEP-2817's
    /// `aiInvocation` in `_meta`), as its exact text.
    pub fn invoked(self, invocation: Option<&str>) -> Call {
        Call {
            invocation: invocation.map(str::to_string),
            ..self
        }
    }
}

/// The call in MCP SEP-2817's words, for tooling made for that shape: the model's reason
/// (a string) as `invocationReason.text`, and the `turnId` and model the client's own
/// `aiInvocation` named. Client-asserted, as the reason is: never evidence (R12).
#[derive(Serialize)]
struct AiInvocation {
    #[serde(rename = "invocationReason", skip_serializing_if = "Option::is_none")]
    invocation_reason: Option<InvocationReason>,
    #[serde(rename = "turnId", skip_serializing_if = "Option::is_none")]
    turn_id: Option<serde_json::Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<serde_json::Value>,
}

#[derive(Serialize)]
struct InvocationReason {
    text: String,
}

impl AiInvocation {
    /// What SEP-2817 would say of `call`, when it has anything to say.
    fn of(call: &Call) -> Option<AiInvocation> {
        let text = (call.reason.as_deref()).and_then(|reason| serde_json::from_str(reason).ok());
        let client: serde_json::Value = (call.invocation.as_deref())
            .and_then(|text| serde_json::from_str(text).ok())
            .unwrap_or_default();
        let model = (client.get("model").and_then(|model| model.get("name")))
            .map(|name| serde_json::json!({ "name": name }));
        let invocation = AiInvocation {
            invocation_reason: text.map(|text| InvocationReason { text }),
            turn_id: client.get("turnId").cloned(),
            model,
        };
        let said = invocation.invocation_reason.is_some()
            || invocation.turn_id.is_some()
            || invocation.model.is_some();
        said.then_some(invocation)
    }
}

/// How a call ended.
#[derive(Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome<'a> {
    /// The server answered with a result; its `isError`.
    Result {
        /// The result's `isError`.
        #[serde(rename = "isError")]
        is_error: bool,
    },
    /// The server answered with a JSON-RPC error, its exact text.
    Error(Json<'a>),
    /// The layer answered it without sending it (a refusal, or a fault).
    Answered(&'a str),
    /// The server went away before answering.
    Lost(&'a str),
}

#[derive(Serialize)]
struct Record<'a> {
    time: String,
    /// The server's name in the client's config, when the proxy was told it.
    #[serde(skip_serializing_if = "Option::is_none")]
    server: Option<&'a str>,
    id: &'a RawValue,
    tool: &'a str,
    reason: Option<Json<'a>>,
    /// Whether the call was sent to the server at all.
    forwarded: bool,
    /// SHA-256 of the arguments' text exactly as the server received it; `null` when it
    /// was sent without arguments, or not sent.
    arguments_sha256: Option<&'a str>,
    outcome: Outcome<'a>,
    ms: f64,
    /// The same call in SEP-2817's words, when it has a reason or its client said any.
    #[serde(rename = "aiInvocation", skip_serializing_if = "Option::is_none")]
    ai_invocation: Option<AiInvocation>,
}

/// A JSON value's exact text, written into a record as the value it is. Text the proxy
/// read is JSON; should serde's writer refuse it (it nests deeper than serde reads), it is
/// written as a string, so that the record is still one line of JSON.
pub struct Json<'a>(pub &'a str);

impl Serialize for Json<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match serde_json::from_str::<&RawValue>(self.0) {
            Ok(raw) => raw.serialize(serializer),
            Err(_) => self.0.serialize(serializer),
        }
    }
}

/// The audit's records and the counts behind the stats.
#[derive(Default)]
pub struct Audit {
    /// Whether records are wanted: a transport keeps a log.
    records: bool,
    /// The server's name, for every record.
    server: Option<String>,
    /// Whether the stats will be printed.
    stats: bool,
    coverage: BTreeMap<String, Coverage>,
}

#[derive(Default)]
struct Coverage {
    calls: u64,
    with_reason: u64,
}

impl Audit {
    /// An audit making a record of each call if `records` (for a log the transport
    /// keeps), and counting for the stats if `stats`.
    pub fn new(records: bool, stats: bool) -> Audit {
        Audit {
            records,
            server: None,
            stats,
            coverage: BTreeMap::new(),
        }
    }

    /// The audit, each record naming the server `server`.
    pub fn named(self, server: Option<String>) -> Audit {
        Audit { server, ..self }
    }

    /// Whether anything will be made of the model's reasons: reading them costs a parse
    /// of each call's arguments, which a proxy with neither a log nor stats skips.
    pub fn wants_reasons(&self) -> bool {
        self.records || self.stats
    }

    /// Whether a record is made of each call: only then is the digest of its arguments
    /// worth computing.
    pub fn wants_records(&self) -> bool {
        self.records
    }

    /// Whether the stats were asked for.
    pub fn stats_wanted(&self) -> bool {
        self.stats
    }

    /// Counts `call`, answered under `id`, as ending `now` with `outcome`; its record,
    /// one line of JSON without its line break, when records are wanted.
    pub fn record(&mut self, id: &str, call: Call, outcome: Outcome, now: Now) -> Option<String> {
        let coverage = self.coverage.entry(call.tool.clone()).or_default();
        coverage.calls += 1;
        coverage.with_reason += u64::from(call.reason.is_some());
        if !self.records {
            return None;
        }
        let id = serde_json::from_str::<&RawValue>(id).ok()?;
        let record = Record {
            time: humantime::format_rfc3339_millis(call.time).to_string(),
            server: self.server.as_deref(),
            id,
            tool: &call.tool,
            reason: call.reason.as_deref().map(Json),
            forwarded: call.forwarded,
            arguments_sha256: call.sent.as_deref(),
            outcome,
            // Whole microseconds, so that the figure is the one a person would write
            // (0.125, not 0.12500000000000003): the nearest double to a thousandth prints
            // as that thousandth.
            ms: now
                .instant
                .saturating_duration_since(call.started)
                .as_micros() as f64
                / 1000.0,
            ai_invocation: AiInvocation::of(&call),
        };
        serde_json::to_string(&record).ok()
    }

    /// Calls per tool and how many carried a reason, for a human on stderr. A tool's name
    /// is what a client's call spelt: each is shown as inert text (R12) on a row of its
    /// own.
    pub fn stats(&self) -> String {
        let (calls, with_reason) = self.coverage.values().fold((0, 0), |(calls, with), tool| {
            (calls + tool.calls, with + tool.with_reason)
        });
        let mut out = format!(
            "reasons: {}, {with_reason} with a reason ({})\n",
            counted(calls, "tool call", "tool calls"),
            percent(with_reason, calls)
        );
        let rows: Vec<(String, &Coverage)> = self
            .coverage
            .iter()
            .map(|(tool, coverage)| (reasons_inert::inert(tool, TOOL_NAME_CAP), coverage))
            .collect();
        let width = rows
            .iter()
            .map(|(tool, _)| tool.chars().count())
            .max()
            .unwrap_or(0);
        for (tool, coverage) in rows {
            out.push_str(&format!(
                "  {tool:width$}  {:>11}  {:>5} with a reason ({})\n",
                counted(coverage.calls, "call", "calls"),
                coverage.with_reason,
                percent(coverage.with_reason, coverage.calls)
            ));
        }
        out
    }
}

/// The most characters of a tool's name that `--stats` shows.
const TOOL_NAME_CAP: usize = 64;

/// `count` with its noun, as a person writes it: "1 call", "2 calls".
fn counted(count: u64, one: &str, many: &str) -> String {
    match count {
        1 => format!("1 {one}"),
        _ => format!("{count} {many}"),
    }
}

fn percent(part: u64, whole: u64) -> String {
    match whole {
        0 => "-".into(),
        _ => format!("{}%", part * 100 / whole),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn a_call_s_duration_is_written_as_a_person_writes_it() {
        let mut audit = Audit::new(true, false);
        let mut lines = Vec::new();
        let start = Now {
            instant: Instant::now(),
            wall: SystemTime::UNIX_EPOCH,
        };
        for micros in [125, 1, 100_000, 2_000_300] {
            let end = Now {
                instant: start.instant + Duration::from_micros(micros),
                ..start
            };
            let call = Call::kept("t", None, start);
            lines.push(
                audit
                    .record("1", call, Outcome::Answered("x"), end)
                    .unwrap(),
            );
        }
        let figures: Vec<&str> = lines
            .iter()
            .map(|line| line.rsplit_once("\"ms\":").unwrap().1)
            .collect();
        assert_eq!(figures, ["0.125}", "0.001}", "100.0}", "2000.3}"]);
    }
}
