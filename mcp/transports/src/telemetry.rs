//! Spans and metrics sent to an OpenTelemetry collector over OTLP/HTTP (JSON) as the
//! core writes them ([`reasons_mcp::telemetry`]), from a thread of their own: every
//! session of the process hands its spans over without waiting, a batch goes when it is
//! full or has waited `OTEL_BSP_SCHEDULE_DELAY`, the metrics every
//! `OTEL_METRIC_EXPORT_INTERVAL`, and what is left when the proxy ends.
//!
//! A collector that is slow or gone never holds a session up: spans wait in a bounded
//! queue, and when it is full a new one is dropped (the human running the proxy is told
//! once), as they are told once of a collector that cannot be reached.

use crate::outgoing::{self, Agent, Secrets};
use crate::say::say;
use reasons_mcp::shown::url as shown;
use reasons_mcp::telemetry::config::{Config, Endpoint};
use reasons_mcp::telemetry::otlp::{self, Temporality};
use reasons_mcp::telemetry::{Metrics, Span};
use std::sync::mpsc::{Receiver, RecvTimeoutError, SyncSender, TrySendError, sync_channel};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant, SystemTime};
use ureq::http::{HeaderName, HeaderValue};

/// The most spans waiting to be sent: past that, a new one is dropped.
const QUEUE: usize = 4096;

/// The most spans in one POST (`OTEL_BSP_MAX_EXPORT_BATCH_SIZE`'s default).
const BATCH: usize = 512;

/// How long the thread sleeps once a span has come before it takes the others: the queue
/// holds what 80,000 spans a second bring in that time.
const TICK: Duration = Duration::from_millis(50);

/// The exporter, shared by every session of the process; the last of it to go sends
/// what is left.
#[derive(Clone)]
pub struct Telemetry(Arc<Exporter>);

struct Exporter {
    spans: Mutex<Option<SyncSender<Span>>>,
    thread: Mutex<Option<std::thread::JoinHandle<()>>>,
    /// Set when the proxy ends: by when what is left must have gone.
    last_call: Arc<OnceLock<Instant>>,
    timeout: Duration,
}

impl std::fmt::Debug for Telemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("Telemetry")
    }
}

impl Telemetry {
    /// Starts sending as the process's `OTEL_*` variables say, as `service` unless they
    /// name it; `None` when they name no collector; an error naming a variable set wrong.
    pub fn from_env(service: &str) -> Result<Option<Telemetry>, String> {
        let config = Config::from(|name| std::env::var(name).ok(), service)?;
        config.map(Telemetry::start).transpose()
    }

    /// Starts sending as `config` says; or why not: a signal's headers would go in clear.
    fn start(config: Config) -> Result<Telemetry, String> {
        let signals = Signal::both(&config)?;
        let (spans, queue) = sync_channel(QUEUE);
        let last_call = Arc::new(OnceLock::new());
        let timeout = config.timeout;
        let sender = Sender::new(config, signals, last_call.clone());
        let thread = std::thread::spawn(move || sender.run(&queue));
        Ok(Telemetry(Arc::new(Exporter {
            spans: Mutex::new(Some(spans)),
            thread: Mutex::new(Some(thread)),
            last_call,
            timeout,
        })))
    }

    /// Hands `span` over, never waiting: when the queue is full it is dropped.
    pub fn span(&self, span: Span) {
        let spans = self.0.spans.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(spans) = spans.as_ref()
            && let Err(TrySendError::Full(_)) = spans.try_send(span)
        {
            dropped();
        }
    }
}

/// A span dropped: the human is told the first time.
fn dropped() {
    static DROPPED: std::sync::Once = std::sync::Once::new();
    DROPPED.call_once(|| {
        say(&format!(
            "telemetry: the collector takes spans slower than they come; past {QUEUE} \
             waiting, spans are dropped"
        ));
    });
}

impl Drop for Exporter {
    fn drop(&mut self) {
        // The queue closed, the thread sends what is left and ends: within one timeout
        // from now, so that a collector slow or gone holds the proxy's end no longer.
        let _ = self.last_call.set(Instant::now() + self.timeout);
        drop(
            self.spans
                .get_mut()
                .unwrap_or_else(PoisonError::into_inner)
                .take(),
        );
        let thread = self
            .thread
            .get_mut()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(thread) = thread.take() {
            let _ = thread.join();
        }
    }
}

/// Where one signal goes, with its headers as secrets of that endpoint's origin alone
/// (an API key for the traces' collector never reaches the metrics').
#[derive(Clone)]
struct Signal {
    url: String,
    headers: Secrets,
}

impl Signal {
    /// Where spans go and where metrics go, as `config` says, unless off.
    fn both(config: &Config) -> Result<[Option<Signal>; 2], String> {
        let traces = Signal::of(config.traces.as_ref(), "TRACES")?;
        Ok([traces, Signal::of(config.metrics.as_ref(), "METRICS")?])
    }

    /// `endpoint`'s signal, named `what` in an error: why its headers may not go there.
    fn of(endpoint: Option<&Endpoint>, what: &str) -> Result<Option<Signal>, String> {
        let Some(endpoint) = endpoint else {
            return Ok(None);
        };
        let url = url::Url::parse(&endpoint.url).map_err(|_| {
            format!(
                "telemetry: the {what} endpoint {:?} is not a URL",
                shown(&endpoint.url)
            )
        })?;
        let mut headers = Secrets::for_origin_of(&url);
        for (name, value) in &endpoint.headers {
            // The core's reading of the variables took only valid names and values.
            let label = format!("OTEL_EXPORTER_OTLP_{what}_HEADERS' (or the generic) {name}");
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("{label} is not a header name"))?;
            let value = HeaderValue::from_str(value)
                .map_err(|_| format!("{label}: the value is not a header's value"))?;
            headers = headers.with(name, value, &format!("telemetry: {label}"))?;
        }
        Ok(Some(Signal {
            url: endpoint.url.clone(),
            headers,
        }))
    }
}

/// The sending thread's state.
struct Sender {
    config: Config,
    /// Where spans go, and metrics, unless off.
    traces: Option<Signal>,
    metrics_to: Option<Signal>,
    agent: Agent,
    batch: Vec<Span>,
    metrics: Metrics,
    /// Whether the last POST failed, so that a collector that stays down is reported
    /// once, and again once it came back and went.
    failing: bool,
    /// Once the proxy ends, by when every POST must be done.
    last_call: Arc<OnceLock<Instant>>,
    /// Spans left at the proxy's end that the collector did not take in time.
    unsent: usize,
}

impl Sender {
    fn new(
        config: Config,
        [traces, metrics_to]: [Option<Signal>; 2],
        last_call: Arc<OnceLock<Instant>>,
    ) -> Sender {
        // Each POST sets its own timeout (`time_left`).
        let agent = Agent::new(outgoing::settings().build());
        Sender {
            traces,
            metrics_to,
            agent,
            batch: Vec::new(),
            metrics: Metrics::new(SystemTime::now()),
            failing: false,
            last_call,
            unsent: 0,
            config,
        }
    }

    fn run(mut self, queue: &Receiver<Span>) {
        let mut spans_due: Option<Instant> = None;
        let mut metrics_due = Instant::now() + self.config.metric_interval;
        loop {
            let due = spans_due.map_or(metrics_due, |due| due.min(metrics_due));
            let wait = due.saturating_duration_since(Instant::now());
            match queue.recv_timeout(wait) {
                Ok(span) => {
                    // The spans that follow are taken a tick later, all at once: a
                    // session that hands one over while this thread waits for it pays
                    // for waking it (tens of µs a call, measured), one that hands it
                    // over while it sleeps does not.
                    std::thread::sleep(TICK.min(wait));
                    for span in std::iter::once(span).chain(queue.try_iter()) {
                        self.metrics.observe(&span);
                        if self.traces.is_some() {
                            self.batch.push(span);
                            spans_due.get_or_insert(Instant::now() + self.config.span_delay);
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => break,
            }
            if self.batch.len() >= BATCH || spans_due.is_some_and(|due| Instant::now() >= due) {
                self.send_spans();
                spans_due = None;
            }
            if Instant::now() >= metrics_due {
                self.send_metrics();
                metrics_due = Instant::now() + self.config.metric_interval;
            }
        }
        self.send_spans();
        self.send_metrics();
        if self.unsent > 0 {
            say(&format!(
                "telemetry: {} spans left at the end were not sent: the collector did not \
                 take them within OTEL_EXPORTER_OTLP_TIMEOUT of it",
                self.unsent
            ));
        }
    }

    fn send_spans(&mut self) {
        let Some(to) = self.traces.clone() else {
            return;
        };
        while !self.batch.is_empty() {
            let batch: Vec<Span> = self.batch.drain(..self.batch.len().min(BATCH)).collect();
            let body = otlp::traces(&self.config.resource, &batch);
            if !self.post(&to, &body) && self.last_call.get().is_some() {
                self.unsent += batch.len();
            }
        }
    }

    fn send_metrics(&mut self) {
        let Some(to) = self.metrics_to.clone() else {
            return;
        };
        if self.metrics.is_empty() {
            return;
        }
        let now = SystemTime::now();
        let body = otlp::metrics(
            &self.config.resource,
            &self.metrics,
            now,
            Temporality::Cumulative,
        );
        self.post(&to, &body);
    }

    /// How long the next POST may take: the collector's timeout, or once the proxy ends,
    /// what is left of one timeout from then; `None` when nothing is.
    fn time_left(&self) -> Option<Duration> {
        let Some(last_call) = self.last_call.get() else {
            return Some(self.config.timeout);
        };
        let left = last_call.saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left.min(self.config.timeout))
    }

    /// POSTs `body` to `to` with its own headers, or does not when the proxy's end leaves
    /// no time; a failure is told once until a POST succeeds again. Whether it was sent.
    fn post(&mut self, to: &Signal, body: &str) -> bool {
        let url = to.url.as_str();
        let Some(timeout) = self.time_left() else {
            return false;
        };
        let failed = match self.agent.post(url, &[&to.headers]) {
            Ok(request) => {
                let request = (request.config().timeout_global(Some(timeout)).build())
                    .header("Content-Type", "application/json");
                match request.send(body) {
                    Ok(response) if response.status().is_success() => None,
                    Ok(response) => {
                        Some(format!("it answered HTTP {}", response.status().as_u16()))
                    }
                    Err(error) => Some(error.to_string()),
                }
            }
            Err(why) => Some(why),
        };
        match &failed {
            Some(why) if !self.failing => {
                say(&format!("telemetry: cannot send to {}: {why}", shown(url)));
                self.failing = true;
            }
            Some(_) => {}
            None => self.failing = false,
        }
        failed.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The signals' endpoints as `variables` set them.
    fn signals(variables: &[(&str, &str)]) -> Result<[Option<Signal>; 2], String> {
        let variable = |name: &str| {
            let set = variables.iter().find(|(own, _)| *own == name);
            set.map(|(_, value)| value.to_string())
        };
        Signal::both(&Config::from(variable, "reasons")?.unwrap())
    }

    #[test]
    fn a_collector_s_key_never_goes_in_clear_off_this_machine() {
        let refused = signals(&[
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "http://collector.example:4318",
            ),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=k"),
        ])
        .err()
        .unwrap();
        assert!(refused.starts_with("telemetry: "), "{refused}");
        assert!(refused.contains("would travel in clear"), "{refused}");
        assert!(!refused.contains("=k"), "no value shown: {refused}");
        // Without a key, or on this machine, or over https, it goes.
        let plain = [(
            "OTEL_EXPORTER_OTLP_ENDPOINT",
            "http://collector.example:4318",
        )];
        assert!(signals(&plain).is_ok());
        for fine in ["http://127.0.0.1:4318", "https://collector.example:4318"] {
            let keyed = [
                ("OTEL_EXPORTER_OTLP_ENDPOINT", fine),
                ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=k"),
            ];
            assert!(signals(&keyed).is_ok(), "{fine}");
        }
    }

    #[test]
    fn each_signal_s_key_is_bound_to_its_own_endpoint() {
        let [traces, metrics] = signals(&[
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "https://traces.example/v1/traces",
            ),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=t"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "https://metrics.example/v1/metrics",
            ),
            ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "api-key=m"),
        ])
        .unwrap();
        let (traces, metrics) = (traces.unwrap(), metrics.unwrap());
        let agent = Agent::new(outgoing::settings().build());
        assert!(agent.post(&traces.url, &[&traces.headers]).is_ok());
        assert!(agent.post(&metrics.url, &[&metrics.headers]).is_ok());
        // A POST of one signal's key to the other's collector cannot be built.
        assert!(agent.post(&metrics.url, &[&traces.headers]).is_err());
        assert!(agent.post(&traces.url, &[&metrics.headers]).is_err());
    }
}
