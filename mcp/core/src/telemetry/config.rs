//! Where telemetry goes, from the variables every OpenTelemetry SDK reads
//! (`OTEL_EXPORTER_OTLP_*`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, the signals'
//! `OTEL_*_EXPORTER`, `OTEL_SDK_DISABLED`): off unless an OTLP endpoint is named. A
//! variable that is set and wrong is an error naming it, never telemetry sent somewhere
//! the operator did not mean.

use super::otlp::Resource;
use crate::shown;
use std::time::Duration;

/// A day in milliseconds: the longest wait an `OTEL_*` variable may set.
const DAY_MILLIS: u64 = 86_400_000;

/// Where one signal goes: its URL, and the headers that go there and nowhere else (they
/// are credentials, often: one signal's API key never reaches the other's endpoint).
#[derive(Clone, Debug, PartialEq)]
pub struct Endpoint {
    /// The URL the signal is POSTed to.
    pub url: String,
    /// `OTEL_EXPORTER_OTLP_HEADERS`, each replaced by the signal's own header of the
    /// same name (`OTEL_EXPORTER_OTLP_TRACES_HEADERS`, …), as the OTLP exporter spec says.
    pub headers: Vec<(String, String)>,
}

/// Where and how to send.
#[derive(Clone, Debug, PartialEq)]
pub struct Config {
    /// Where spans are POSTed, unless their signal is off.
    pub traces: Option<Endpoint>,
    /// Where metrics are POSTed, unless their signal is off.
    pub metrics: Option<Endpoint>,
    /// How long a POST may take (`OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s).
    pub timeout: Duration,
    /// How often metrics go (`OTEL_METRIC_EXPORT_INTERVAL`, 60 s).
    pub metric_interval: Duration,
    /// How long a span may wait to go with others (`OTEL_BSP_SCHEDULE_DELAY`, 5 s).
    pub span_delay: Duration,
    /// Who sends.
    pub resource: Resource,
}

impl Config {
    /// The configuration `variable` gives (it reads one variable), `service` naming the
    /// sender unless `OTEL_SERVICE_NAME` does; `None` when telemetry is off.
    pub fn from(
        variable: impl Fn(&str) -> Option<String>,
        service: &str,
    ) -> Result<Option<Config>, String> {
        let set = |name: &str| variable(name).filter(|value| !value.trim().is_empty());
        if set("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
            return Ok(None);
        }
        let base = set("OTEL_EXPORTER_OTLP_ENDPOINT");
        let generic = "OTEL_EXPORTER_OTLP_HEADERS";
        let generic = pairs(generic, set(generic).as_deref())?;
        let endpoint = |signal: &str, path: &str| -> Result<Option<Endpoint>, String> {
            let upper = signal.to_ascii_uppercase();
            let exporter = format!("OTEL_{upper}_EXPORTER");
            match set(&exporter).as_deref().map(str::trim) {
                None | Some("otlp") => {}
                Some("none") => return Ok(None),
                Some(other) => {
                    return Err(format!("{exporter}={other:?}: only otlp (or none) is sent"));
                }
            }
            for name in [
                "OTEL_EXPORTER_OTLP_PROTOCOL".to_string(),
                format!("OTEL_EXPORTER_OTLP_{upper}_PROTOCOL"),
            ] {
                if let Some(protocol) = set(&name).filter(|value| value.trim() != "http/json") {
                    return Err(format!(
                        "{name}={protocol:?}: only http/json is sent (OTLP over HTTP, JSON)"
                    ));
                }
            }
            let own = format!("OTEL_EXPORTER_OTLP_{upper}_ENDPOINT");
            let url = match (set(&own), &base) {
                (Some(url), _) => (own, url.trim().to_string()),
                (None, Some(base)) => (
                    "OTEL_EXPORTER_OTLP_ENDPOINT".to_string(),
                    format!("{}/{path}", base.trim().trim_end_matches('/')),
                ),
                (None, None) => return Ok(None),
            };
            let url = http_url(&url.0, &url.1)?;
            let own = format!("OTEL_EXPORTER_OTLP_{upper}_HEADERS");
            let own = pairs(&own, set(&own).as_deref())?;
            let mut headers: Vec<(String, String)> = (generic.iter())
                .filter(|(name, _)| !own.iter().any(|(mine, _)| mine.eq_ignore_ascii_case(name)))
                .cloned()
                .collect();
            headers.extend(own);
            Ok(Some(Endpoint { url, headers }))
        };
        let traces = endpoint("traces", "v1/traces")?;
        let metrics = endpoint("metrics", "v1/metrics")?;
        if traces.is_none() && metrics.is_none() {
            return Ok(None);
        }
        let mut attributes = pairs(
            "OTEL_RESOURCE_ATTRIBUTES",
            set("OTEL_RESOURCE_ATTRIBUTES").as_deref(),
        )?;
        let named = attributes.iter().position(|(key, _)| key == "service.name");
        let from_attributes = named.map(|at| attributes.remove(at).1);
        let service = (set("OTEL_SERVICE_NAME").map(|name| name.trim().to_string()))
            .or(from_attributes)
            .unwrap_or_else(|| service.to_string());
        // At most a day: each is added to the clock, which a number past that could
        // carry beyond what it can hold.
        let millis = |name: &str, default: u64| -> Result<Duration, String> {
            match set(name) {
                None => Ok(Duration::from_millis(default)),
                Some(value) => match value.trim().parse::<u64>() {
                    Ok(millis) if (1..=DAY_MILLIS).contains(&millis) => {
                        Ok(Duration::from_millis(millis))
                    }
                    _ => Err(format!(
                        "{name}={value:?}: not a number of milliseconds from 1 to \
                         {DAY_MILLIS} (a day)"
                    )),
                },
            }
        };
        Ok(Some(Config {
            traces,
            metrics,
            timeout: millis("OTEL_EXPORTER_OTLP_TIMEOUT", 10_000)?,
            metric_interval: millis("OTEL_METRIC_EXPORT_INTERVAL", 60_000)?,
            span_delay: millis("OTEL_BSP_SCHEDULE_DELAY", 5_000)?,
            resource: Resource {
                service,
                attributes,
            },
        }))
    }
}

/// `url`, from `name`, when it is an http or https URL with a host and no user. An error
/// shows the URL as [`shown::url`] does: a collector's URL may carry credentials.
fn http_url(name: &str, url: &str) -> Result<String, String> {
    let bad = |why: &str| Err(format!("{name}={:?}: {why}", shown::url(url)));
    let Some(rest) = (url.strip_prefix("http://")).or_else(|| url.strip_prefix("https://")) else {
        return bad("not an http:// or https:// URL");
    };
    if rest.is_empty() || rest.starts_with('/') || url.chars().any(char::is_whitespace) {
        return bad("names no host");
    }
    if shown::has_user(url) {
        return bad(
            "names a user before its host, which is not taken: a collector's credentials \
             go in OTEL_EXPORTER_OTLP_HEADERS",
        );
    }
    Ok(url.to_string())
}

/// The `key=value` pairs, comma-separated, of the variable `name` (W3C baggage's form,
/// values percent-encoded), or an error naming the pair that is not one by its place and
/// key, never its value: the pairs of a header variable are credentials.
fn pairs(name: &str, value: Option<&str>) -> Result<Vec<(String, String)>, String> {
    let Some(value) = value else {
        return Ok(Vec::new());
    };
    let mut pairs = Vec::new();
    let given = value.split(',').filter(|pair| !pair.trim().is_empty());
    for (at, pair) in given.enumerate() {
        let place = at + 1;
        let (key, value) = pair.split_once('=').ok_or_else(|| {
            format!("{name}: pair {place} is not key=value (not shown: it may be a secret)")
        })?;
        let key = key.trim();
        if !crate::http::headers::is_token(key) {
            return Err(format!(
                "{name}: the key of pair {place} is not a name (not shown: it may hold a secret)"
            ));
        }
        let value = percent_decoded(value.trim())
            .ok_or_else(|| format!("{name}: the value of {key} is not percent-encoded UTF-8"))?;
        if value.chars().any(char::is_control) {
            return Err(format!(
                "{name}: the value of {key} holds a control character"
            ));
        }
        pairs.push((key.to_string(), value));
    }
    Ok(pairs)
}

/// `text` with each `%XX` made its byte, when the result is UTF-8.
fn percent_decoded(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        if bytes[at] == b'%' {
            let hex = text.get(at + 1..at + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            at += 3;
        } else {
            out.push(bytes[at]);
            at += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(variables: &[(&str, &str)]) -> Result<Option<Config>, String> {
        let lookup = |name: &str| {
            (variables.iter())
                .find(|(given, _)| *given == name)
                .map(|(_, value)| value.to_string())
        };
        Config::from(lookup, "reasons")
    }

    #[test]
    fn telemetry_is_off_until_an_endpoint_is_named() {
        assert_eq!(config(&[]), Ok(None));
        assert_eq!(config(&[("OTEL_SERVICE_NAME", "x")]), Ok(None));
        let on = [("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318/")];
        let config_on = config(&on).unwrap().unwrap();
        let url = |endpoint: Option<Endpoint>| endpoint.map(|endpoint| endpoint.url);
        assert_eq!(
            url(config_on.traces).as_deref(),
            Some("http://127.0.0.1:4318/v1/traces")
        );
        assert_eq!(
            url(config_on.metrics).as_deref(),
            Some("http://127.0.0.1:4318/v1/metrics")
        );
        assert_eq!(config_on.resource.service, "reasons");
        assert_eq!(config_on.timeout, Duration::from_secs(10));
        let disabled = [on[0], ("OTEL_SDK_DISABLED", "TRUE")];
        assert_eq!(config(&disabled), Ok(None));
        let none = [
            on[0],
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_METRICS_EXPORTER", "none"),
        ];
        assert_eq!(config(&none), Ok(None));
    }

    #[test]
    fn each_signal_s_own_variables_win_and_the_rest_are_read_as_the_sdks_read_them() {
        let given = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "https://collector:4318"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT",
                "http://metrics:9000/in",
            ),
            ("OTEL_TRACES_EXPORTER", "none"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "api-key=a%20b, x-tenant = t1"),
            ("OTEL_RESOURCE_ATTRIBUTES", "service.name=named,team=core"),
            ("OTEL_METRIC_EXPORT_INTERVAL", "250"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "http/json"),
        ];
        let config = config(&given).unwrap().unwrap();
        assert_eq!(config.traces, None);
        let metrics = config.metrics.unwrap();
        assert_eq!(metrics.url, "http://metrics:9000/in");
        assert_eq!(
            metrics.headers,
            [
                ("api-key".to_string(), "a b".to_string()),
                ("x-tenant".to_string(), "t1".to_string())
            ]
        );
        assert_eq!(config.resource.service, "named");
        assert_eq!(
            config.resource.attributes,
            [("team".to_string(), "core".to_string())]
        );
        assert_eq!(config.metric_interval, Duration::from_millis(250));
    }

    #[test]
    fn a_variable_set_wrong_is_an_error_naming_it() {
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        let cases: [(&[(&str, &str)], &str); 10] = [
            (
                &[("OTEL_EXPORTER_OTLP_ENDPOINT", "127.0.0.1:4318")],
                "OTEL_EXPORTER_OTLP_ENDPOINT",
            ),
            (
                &[("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "http:///v1")],
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
            ),
            (
                &[on, ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")],
                "OTEL_EXPORTER_OTLP_PROTOCOL",
            ),
            (
                &[on, ("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/protobuf")],
                "OTEL_EXPORTER_OTLP_METRICS_PROTOCOL",
            ),
            (
                &[on, ("OTEL_TRACES_EXPORTER", "zipkin")],
                "OTEL_TRACES_EXPORTER",
            ),
            (
                &[on, ("OTEL_EXPORTER_OTLP_HEADERS", "novalue")],
                "OTEL_EXPORTER_OTLP_HEADERS",
            ),
            (
                &[on, ("OTEL_EXPORTER_OTLP_HEADERS", "k=%0a")],
                "OTEL_EXPORTER_OTLP_HEADERS",
            ),
            (
                &[on, ("OTEL_METRIC_EXPORT_INTERVAL", "0")],
                "OTEL_METRIC_EXPORT_INTERVAL",
            ),
            (
                &[on, ("OTEL_EXPORTER_OTLP_TIMEOUT", "18446744073709551615")],
                "OTEL_EXPORTER_OTLP_TIMEOUT",
            ),
            (
                &[on, ("OTEL_BSP_SCHEDULE_DELAY", "86400001")],
                "OTEL_BSP_SCHEDULE_DELAY",
            ),
        ];
        for (variables, named) in cases {
            let error = config(variables).unwrap_err();
            assert!(error.starts_with(named), "{variables:?}: {error}");
        }
    }

    #[test]
    fn an_error_never_shows_what_may_be_a_secret() {
        // The errors go to stderr, and from the gateway to every client that asks.
        let on = ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318");
        let cases: [(&[(&str, &str)], &str); 7] = [
            (
                &[(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "http://user:s3cret@collector:4318",
                )],
                "names a user before its host",
            ),
            (
                &[(
                    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                    "https://s3cret@collector",
                )],
                "names a user before its host",
            ),
            (
                &[(
                    "OTEL_EXPORTER_OTLP_ENDPOINT",
                    "ftp://u:s3cret@c/?key=s3cret",
                )],
                "not an http:// or https:// URL",
            ),
            (
                &[
                    on,
                    (
                        "OTEL_EXPORTER_OTLP_HEADERS",
                        "api-key=a,Authorization: Bearer s3cret",
                    ),
                ],
                "pair 2 is not key=value",
            ),
            (
                &[
                    on,
                    (
                        "OTEL_EXPORTER_OTLP_HEADERS",
                        "Authorization: Bearer s3cret=x",
                    ),
                ],
                "the key of pair 1 is not a name",
            ),
            (
                &[
                    on,
                    ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=s3cret%zz"),
                ],
                "the value of api-key is not percent-encoded",
            ),
            (
                &[
                    on,
                    ("OTEL_EXPORTER_OTLP_METRICS_HEADERS", "api-key=s3cret%0a"),
                ],
                "the value of api-key holds a control character",
            ),
        ];
        for (variables, says) in cases {
            let error = config(variables).unwrap_err();
            assert!(error.contains(says), "{variables:?}: {error}");
            assert!(!error.contains("s3cret"), "{variables:?}: {error}");
        }
    }

    #[test]
    fn each_signal_s_headers_go_to_its_own_endpoint_only_and_replace_the_generic_ones() {
        let given = [
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector:4318"),
            ("OTEL_EXPORTER_OTLP_HEADERS", "Api-Key=generic,x-tenant=t1"),
            ("OTEL_EXPORTER_OTLP_TRACES_HEADERS", "api-key=traces-key"),
            (
                "OTEL_EXPORTER_OTLP_METRICS_HEADERS",
                "x-metrics=metrics-key",
            ),
        ];
        let config = config(&given).unwrap().unwrap();
        let pair = |name: &str, value: &str| (name.to_string(), value.to_string());
        assert_eq!(
            config.traces.unwrap().headers,
            [pair("x-tenant", "t1"), pair("api-key", "traces-key")]
        );
        assert_eq!(
            config.metrics.unwrap().headers,
            [
                pair("Api-Key", "generic"),
                pair("x-tenant", "t1"),
                pair("x-metrics", "metrics-key")
            ]
        );
    }
}
