//! The gateway's settings, from its environment (`wasi:cli/environment`, which every
//! engine can set). A setting that is missing or cannot be read is named in the error
//! every request then gets.
//!
//! | variable | what it is |
//! |---|---|
//! | `REASONS_UPSTREAM` | the upstream MCP server's Streamable HTTP URL (required) |
//! | `REASONS_NAME` | the parameter's name (`reason`) |
//! | `REASONS_DESCRIPTION` | the parameter's description, as the model reads it |
//! | `REASONS_REQUIRED` | `true`: the parameter is required, and calls without it refused |
//! | `REASONS_POSITION` | `first` (the default) or `last`: where the property goes |
//! | `REASONS_LEAVE_ALONE` | tools never augmented, never stripped: names, comma-separated |
//! | `REASONS_HEADERS` | headers the gateway adds of its own: `Name: value`, one per line |
//! | `REASONS_READ_TIMEOUT_SECS` | how long a message may take to come, or to be taken, from either side (300; at most a day) |
//! | `REASONS_MAX_MESSAGE_MIB` | the largest message taken from either side (256) |
//! | `OTEL_EXPORTER_OTLP_ENDPOINT`, … | an OpenTelemetry collector, as every SDK reads them |

use reasons_mcp::shown;
use reasons_mcp::telemetry::config::{Config, Endpoint};
use reasons_mcp::telemetry::otlp::Resource;
use reasons_transform::{Options, Position};
use std::ops::RangeInclusive;
use std::time::Duration;

/// What the gateway was configured with.
pub struct Settings {
    pub upstream: Upstream,
    pub options: Options,
    /// Headers of the gateway's own, sent with every request upstream.
    pub headers: Vec<(String, String)>,
    pub read_timeout: Duration,
    pub max_message: usize,
    /// Where each request's spans and metrics go, when a collector is named.
    pub telemetry: Option<Telemetry>,
}

/// An OpenTelemetry collector, as the `OTEL_*` variables name it
/// ([`reasons_mcp::telemetry::config`]), its URLs in the parts an outgoing request takes.
pub struct Telemetry {
    pub traces: Option<Collector>,
    pub metrics: Option<Collector>,
    pub timeout: Duration,
    pub resource: Resource,
}

/// The collector the `OTEL_*` variables `get` reads name, if they name one.
fn telemetry<'a>(get: &impl Fn(&str) -> Option<&'a str>) -> Result<Option<Telemetry>, String> {
    let Some(config) = Config::from(|name| get(name).map(str::to_string), "reasons-gateway")?
    else {
        return Ok(None);
    };
    let collector = |name: &str, endpoint: Option<Endpoint>| {
        let collector = |Endpoint { url, headers }| {
            let to = url_parts(name, &url)?;
            Ok::<_, String>(Collector { to, headers })
        };
        endpoint.map(collector).transpose()
    };
    Ok(Some(Telemetry {
        traces: collector("the traces' OTLP endpoint", config.traces)?,
        metrics: collector("the metrics' OTLP endpoint", config.metrics)?,
        timeout: config.timeout,
        resource: config.resource,
    }))
}

/// Where one signal goes: the collector's URL in its parts, and the headers that go
/// there and nowhere else.
pub struct Collector {
    pub to: Upstream,
    pub headers: Vec<(String, String)>,
}

/// The upstream's URL, in the parts an outgoing request takes.
pub struct Upstream {
    pub https: bool,
    pub authority: String,
    pub path: String,
}

/// Headers the gateway sets itself, or that belong to one connection: never taken from
/// the configuration.
const OWN: &[&str] = &[
    "host",
    "content-length",
    "content-type",
    "accept",
    "connection",
    "transfer-encoding",
    "mcp-session-id",
];

impl Settings {
    /// The settings from `variables`.
    pub fn from(variables: &[(String, String)]) -> Result<Settings, String> {
        let get = |name: &str| {
            variables
                .iter()
                .rev()
                .find(|(key, _)| key == name)
                .map(|(_, value)| value.as_str())
        };
        let url = get("REASONS_UPSTREAM").ok_or(
            "REASONS_UPSTREAM is not set: it names the upstream MCP server's URL \
             (http://host:port/mcp)",
        )?;
        let mut options = Options::default();
        if let Some(name) = get("REASONS_NAME") {
            options.name = name.to_string();
        }
        if let Some(description) = get("REASONS_DESCRIPTION") {
            options.description = description.to_string();
        }
        if let Some(required) = get("REASONS_REQUIRED") {
            options.required = match required {
                "true" => true,
                "false" => false,
                other => {
                    return Err(format!(
                        "REASONS_REQUIRED must be true or false, not {other:?}"
                    ));
                }
            };
        }
        if let Some(position) = get("REASONS_POSITION") {
            options.position = match position {
                "first" => Position::First,
                "last" => Position::Last,
                other => {
                    return Err(format!(
                        "REASONS_POSITION must be first or last, not {other:?}"
                    ));
                }
            };
        }
        if let Some(names) = get("REASONS_LEAVE_ALONE") {
            options.leave_alone = names
                .split(',')
                .map(str::trim)
                .filter(|name| !name.is_empty())
                .map(str::to_string)
                .collect();
        }
        // The options are checked as the layer will check them, so that a bad one is
        // named here, before any request goes anywhere.
        reasons_mcp::NativeLayer::new(options.clone()).map_err(|why| {
            format!(
                "the layer's options (REASONS_NAME, REASONS_DESCRIPTION, …) were refused: {why}"
            )
        })?;
        Ok(Settings {
            upstream: url_parts("REASONS_UPSTREAM", url)?,
            telemetry: telemetry(&get)?,
            options,
            headers: get("REASONS_HEADERS")
                .map(headers)
                .transpose()?
                .unwrap_or_default(),
            // At most a day: a deadline is the clock plus this, which a number past
            // that could carry beyond what the clock holds.
            read_timeout: Duration::from_secs(number(
                get("REASONS_READ_TIMEOUT_SECS"),
                "REASONS_READ_TIMEOUT_SECS",
                300,
                1..=86_400,
            )?),
            max_message: mib(
                get("REASONS_MAX_MESSAGE_MIB"),
                "REASONS_MAX_MESSAGE_MIB",
                256,
                1..=u64::MAX,
            )?,
        })
    }
}

/// `value` as a whole number `within`, or `default` when unset.
fn number(
    value: Option<&str>,
    name: &str,
    default: u64,
    within: RangeInclusive<u64>,
) -> Result<u64, String> {
    let (least, most) = (within.start(), within.end());
    let bounds = match *most {
        u64::MAX => format!("of at least {least}"),
        most => format!("from {least} to {most}"),
    };
    match value {
        None => Ok(default),
        Some(text) => (text.parse().ok())
            .filter(|number| within.contains(number))
            .ok_or(format!(
                "{name} must be a whole number {bounds}, not {text:?}"
            )),
    }
}

/// [`number`] mebibytes, in bytes.
fn mib(
    value: Option<&str>,
    name: &str,
    default: u64,
    within: RangeInclusive<u64>,
) -> Result<usize, String> {
    let mib = number(value, name, default, within)?;
    Ok(usize::try_from(mib)
        .unwrap_or(usize::MAX)
        .saturating_mul(1 << 20))
}

/// The parts of `url`, the variable `name`'s, an `http` or `https` URL with a host.
fn url_parts(name: &str, url: &str) -> Result<Upstream, String> {
    // The URL as messages show it: the error goes to every client that asks.
    let bad = |why: &str| format!("{name} ({:?}) {why}", shown::url(url));
    let (https, rest) = if let Some(rest) = url.strip_prefix("https://") {
        (true, rest)
    } else if let Some(rest) = url.strip_prefix("http://") {
        (false, rest)
    } else {
        return Err(bad("is not an http:// or https:// URL"));
    };
    let (authority, path) = match rest.find(['/', '?']) {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    if authority.is_empty() || authority.contains('@') || authority.contains(char::is_whitespace) {
        return Err(bad(
            "has no host the gateway can reach (user info is not taken)",
        ));
    }
    if path.contains('#') || path.contains(char::is_whitespace) {
        return Err(bad("has a fragment or a space in its path"));
    }
    let path = if path.starts_with('?') {
        format!("/{path}")
    } else {
        path.to_string()
    };
    Ok(Upstream {
        https,
        authority: authority.to_string(),
        path,
    })
}

/// `Name: value` lines, each a header the gateway adds of its own.
fn headers(text: &str) -> Result<Vec<(String, String)>, String> {
    (text.lines().enumerate())
        .filter(|(_, line)| !line.trim().is_empty())
        .map(|(at, line)| {
            // A line is named by its place and its header's name, never its text: the
            // value is the operator's credential, and the error goes to every client.
            let place = at + 1;
            let (name, value) = line.split_once(':').ok_or_else(|| {
                format!("REASONS_HEADERS: line {place} is not `Name: value` (not shown: it may be a secret)")
            })?;
            let name = name.trim();
            if !reasons_mcp::http::headers::is_token(name) {
                return Err(format!(
                    "REASONS_HEADERS: line {place} does not start with a header name (not shown: it may be a secret)"
                ));
            }
            let bad = |why: &str| format!("REASONS_HEADERS: line {place}, {name}, {why}");
            if OWN.contains(&name.to_ascii_lowercase().as_str()) {
                return Err(bad("is a header the gateway sets itself"));
            }
            let value = value.trim();
            if value
                .bytes()
                .any(|byte| byte.is_ascii_control() && byte != b'\t')
            {
                return Err(bad("has a control character in its value"));
            }
            Ok((name.to_string(), value.to_string()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(variables: &[(&str, &str)]) -> Result<Settings, String> {
        let variables: Vec<(String, String)> = variables
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string()))
            .collect();
        Settings::from(&variables)
    }

    const UPSTREAM: (&str, &str) = ("REASONS_UPSTREAM", "http://127.0.0.1:8080/mcp?x=1");

    #[test]
    fn the_upstream_and_the_layers_options_are_read() {
        let settings = with(&[
            UPSTREAM,
            ("REASONS_NAME", "why"),
            ("REASONS_REQUIRED", "true"),
            ("REASONS_POSITION", "last"),
            ("REASONS_LEAVE_ALONE", " fs_read, ,shell "),
            ("REASONS_HEADERS", "X-Tenant: acme\n\nX-Trace:  on "),
        ])
        .unwrap();
        assert!(!settings.upstream.https);
        assert_eq!(settings.upstream.authority, "127.0.0.1:8080");
        assert_eq!(settings.upstream.path, "/mcp?x=1");
        assert_eq!(settings.options.name, "why");
        assert!(settings.options.required);
        assert_eq!(settings.options.position, Position::Last);
        assert_eq!(settings.options.leave_alone, ["fs_read", "shell"]);
        assert_eq!(
            settings.headers,
            [
                ("X-Tenant".into(), "acme".into()),
                ("X-Trace".into(), "on".into())
            ]
        );
        assert_eq!(settings.read_timeout, Duration::from_secs(300));
        assert_eq!(settings.max_message, 256 << 20);
    }

    #[test]
    fn a_missing_or_bad_setting_is_named() {
        // Each case: the environment, and the variable its error must name.
        let cases: [(&[(&str, &str)], &str); 11] = [
            (&[], "REASONS_UPSTREAM is not set"),
            (&[("REASONS_UPSTREAM", "ftp://x/mcp")], "REASONS_UPSTREAM"),
            (
                &[("REASONS_UPSTREAM", "http://user@x/mcp")],
                "REASONS_UPSTREAM",
            ),
            (&[UPSTREAM, ("REASONS_REQUIRED", "yes")], "REASONS_REQUIRED"),
            (
                &[UPSTREAM, ("REASONS_POSITION", "middle")],
                "REASONS_POSITION",
            ),
            (&[UPSTREAM, ("REASONS_NAME", "")], "REASONS_NAME"),
            (
                &[UPSTREAM, ("REASONS_HEADERS", "Host: evil")],
                "REASONS_HEADERS",
            ),
            (
                &[UPSTREAM, ("REASONS_HEADERS", "X-A: a\rb")],
                "REASONS_HEADERS",
            ),
            (
                &[UPSTREAM, ("REASONS_READ_TIMEOUT_SECS", "0")],
                "REASONS_READ_TIMEOUT_SECS",
            ),
            (
                &[UPSTREAM, ("REASONS_MAX_MESSAGE_MIB", "0")],
                "REASONS_MAX_MESSAGE_MIB",
            ),
            (
                &[
                    UPSTREAM,
                    ("REASONS_READ_TIMEOUT_SECS", "18446744073709551615"),
                ],
                "REASONS_READ_TIMEOUT_SECS must be a whole number from 1 to 86400",
            ),
        ];
        assert_eq!(cases.len(), 11);
        for (variables, named) in cases {
            let Err(why) = with(variables) else {
                panic!("{variables:?} was accepted");
            };
            assert!(why.contains(named), "{variables:?}: {why}");
        }
    }

    #[test]
    fn a_collector_is_read_as_the_otel_variables_name_it_and_one_set_wrong_is_named() {
        let off = with(&[UPSTREAM]).unwrap();
        assert!(off.telemetry.is_none());
        let on = with(&[
            UPSTREAM,
            (
                "OTEL_EXPORTER_OTLP_ENDPOINT",
                "https://collector.example:4318/otlp/",
            ),
            ("OTEL_METRICS_EXPORTER", "none"),
        ])
        .unwrap();
        let telemetry = on.telemetry.unwrap();
        let traces = telemetry.traces.unwrap().to;
        assert!(traces.https);
        assert_eq!(traces.authority, "collector.example:4318");
        assert_eq!(traces.path, "/otlp/v1/traces");
        assert!(telemetry.metrics.is_none());
        assert_eq!(telemetry.resource.service, "reasons-gateway");
        let wrong = with(&[
            UPSTREAM,
            ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4318"),
            ("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc"),
        ]);
        let error = wrong.err().unwrap();
        assert!(error.starts_with("OTEL_EXPORTER_OTLP_PROTOCOL"), "{error}");
        let user = with(&[
            UPSTREAM,
            (
                "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
                "http://user@collector/v1/traces",
            ),
        ]);
        let error = user.err().unwrap();
        assert!(error.contains("names a user before its host"), "{error}");
    }

    #[test]
    fn an_error_never_shows_what_may_be_a_secret() {
        // Every client is answered with it while the settings are wrong.
        let cases: [(&[(&str, &str)], &str); 6] = [
            (
                &[("REASONS_UPSTREAM", "https://user:s3cret@x/mcp?key=s3cret")],
                "user info is not taken",
            ),
            (
                &[("REASONS_UPSTREAM", "ftp://user:s3cret@x/mcp")],
                "is not an http:// or https:// URL",
            ),
            (
                &[
                    UPSTREAM,
                    ("REASONS_HEADERS", "X-A: a\nAuthorization Bearer s3cret"),
                ],
                "line 2 is not `Name: value`",
            ),
            (
                &[UPSTREAM, ("REASONS_HEADERS", "Bearer s3cret: x")],
                "line 1 does not start with a header name",
            ),
            (
                &[
                    UPSTREAM,
                    ("REASONS_HEADERS", "Authorization: Bearer s3cret\u{7}"),
                ],
                "line 1, Authorization, has a control character",
            ),
            (
                &[
                    UPSTREAM,
                    ("OTEL_EXPORTER_OTLP_ENDPOINT", "http://collector"),
                    ("OTEL_EXPORTER_OTLP_HEADERS", "Authorization: Bearer s3cret"),
                ],
                "pair 1 is not key=value",
            ),
        ];
        for (variables, says) in cases {
            let Err(why) = with(variables) else {
                panic!("{variables:?} was accepted");
            };
            assert!(why.contains(says), "{variables:?}: {why}");
            assert!(!why.contains("s3cret"), "{variables:?}: {why}");
        }
    }
}
