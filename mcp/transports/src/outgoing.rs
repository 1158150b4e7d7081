//! The one way the proxy sends an HTTP request (to a server, to sign in, to a collector),
//! and the one rule for the secrets a request carries.
//!
//! A secret (a `--header`, `--header-env` or `--bearer-env` value, a token signed in
//! for, an OTLP header, a client secret) lives in [`Secrets`], made for the one origin it
//! was configured or issued for; an [`Agent`] builds a request only from a URL and the
//! secrets it carries, and refuses one whose URL is on another origin. Secrets are never
//! made for an origin reached in clear off this machine (RFC 6750 §5.3: a bearer token
//! travels over TLS). The request an OAuth exchange builds (a code, a refresh token, a
//! client secret in it) is sent only to the token endpoint it was built for
//! ([`Agent::exchange`]). So no later feature can send a secret anywhere else: it has
//! no other way to a request.
//!
//! No request follows a redirect: a 3xx could take a call, a token or a collector's API
//! key to a place nobody named; it is an answer like any other error status, read by
//! whoever sent the request. A server's certificate is checked against the platform's
//! trust, as curl and the platform's other tools check it: its store, and
//! `SSL_CERT_FILE`/`SSL_CERT_DIR` where set (an organisation's private CA), not a list
//! of roots built into the binary.

use ureq::config::{Config, ConfigBuilder};
use ureq::http::{HeaderName, HeaderValue};
use ureq::tls::{RootCerts, TlsConfig};
use ureq::typestate::{AgentScope, WithBody, WithoutBody};
use ureq::{Body, RequestBuilder};
use url::Url;

/// An agent's settings with redirects not followed, error statuses read as answers and
/// the platform's trust; each caller adds its own timeouts and makes its [`Agent`].
pub fn settings() -> ConfigBuilder<AgentScope> {
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .tls_config(tls)
}

/// Where a URL's host is, as far as what it may be sent is concerned, nearest first.
#[derive(Debug, PartialEq, PartialOrd)]
pub enum Place {
    /// This machine: a loopback address, or `localhost`.
    Loopback,
    /// A private network's address, link-local (cloud metadata services), or none.
    Private,
    Elsewhere,
}

/// Where `url`'s host is.
pub fn place(url: &Url) -> Place {
    let v4 = |address: std::net::Ipv4Addr| match () {
        _ if address.is_loopback() => Place::Loopback,
        _ if address.is_private() || address.is_link_local() || address.is_unspecified() => {
            Place::Private
        }
        _ => Place::Elsewhere,
    };
    match url.host() {
        Some(url::Host::Domain(name)) if name.eq_ignore_ascii_case("localhost") => Place::Loopback,
        Some(url::Host::Domain(_)) | None => Place::Elsewhere,
        Some(url::Host::Ipv4(address)) => v4(address),
        Some(url::Host::Ipv6(address)) => match address.to_ipv4_mapped() {
            Some(address) => v4(address),
            None if address.is_loopback() => Place::Loopback,
            None if address.is_unique_local()
                || address.is_unicast_link_local()
                || address.is_unspecified() =>
            {
                Place::Private
            }
            None => Place::Elsewhere,
        },
    }
}

/// Headers that are someone's secret, bound to the one origin they belong to.
#[derive(Clone, Debug)]
pub struct Secrets {
    origin: url::Origin,
    /// Whether the origin is reached in clear off this machine: nothing may be added.
    in_clear: bool,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl Secrets {
    /// None yet, for `url`'s origin: whatever is added goes there alone.
    pub fn for_origin_of(url: &Url) -> Secrets {
        Secrets {
            origin: url.origin(),
            in_clear: url.scheme() != "https" && place(url) != Place::Loopback,
            headers: Vec::new(),
        }
    }

    /// These and `name: value`, which `what` names; or why not: the origin is reached
    /// in clear off this machine, where anyone on the way would read it.
    pub fn with(
        mut self,
        name: HeaderName,
        value: HeaderValue,
        what: &str,
    ) -> Result<Secrets, String> {
        if self.in_clear {
            return Err(format!(
                "{what} would travel in clear to {} (http off this machine): give the \
                 server's https:// URL, or reach it through a tunnel on this machine",
                self.origin.ascii_serialization()
            ));
        }
        self.headers.push((name, value));
        Ok(self)
    }

    /// Whether one of them is named `name`.
    pub fn has(&self, name: &str) -> bool {
        self.headers.iter().any(|(own, _)| own == name)
    }

    /// Each name, with its value, for a test to read what a request would carry.
    #[cfg(test)]
    pub fn values(&self) -> Vec<(&str, String)> {
        let shown = |value: &HeaderValue| String::from_utf8_lossy(value.as_bytes()).into_owned();
        (self.headers.iter())
            .map(|(name, value)| (name.as_str(), shown(value)))
            .collect()
    }

    /// Ok when a request to `url` may carry these; else why not.
    fn may_go_to(&self, url: &Url) -> Result<(), String> {
        if url.origin() == self.origin {
            return Ok(());
        }
        Err(format!(
            "a request to {} would carry what belongs to {}: not sent",
            url.origin().ascii_serialization(),
            self.origin.ascii_serialization()
        ))
    }
}

/// The one HTTP client of each part of the proxy: a request is built from its URL and
/// the secrets it carries, and no other way.
#[derive(Clone)]
pub struct Agent(ureq::Agent);

impl Agent {
    /// An agent with `config`, begun from [`settings`].
    pub fn new(config: Config) -> Agent {
        Agent(config.new_agent())
    }

    /// A GET of `url` carrying `secrets`, or why it may not be sent.
    pub fn get(
        &self,
        url: &str,
        secrets: &[&Secrets],
    ) -> Result<RequestBuilder<WithoutBody>, String> {
        let url = checked(url, secrets)?;
        Ok(carrying(self.0.get(url.as_str()), secrets))
    }

    /// A POST to `url` carrying `secrets`, or why it may not be sent.
    pub fn post(
        &self,
        url: &str,
        secrets: &[&Secrets],
    ) -> Result<RequestBuilder<WithBody>, String> {
        let url = checked(url, secrets)?;
        Ok(carrying(self.0.post(url.as_str()), secrets))
    }

    /// A DELETE of `url` carrying `secrets`, or why it may not be sent.
    pub fn delete(
        &self,
        url: &str,
        secrets: &[&Secrets],
    ) -> Result<RequestBuilder<WithoutBody>, String> {
        let url = checked(url, secrets)?;
        Ok(carrying(self.0.delete(url.as_str()), secrets))
    }

    /// Sends `request`, an OAuth exchange holding its secrets (a code and its verifier,
    /// a refresh token, a client secret), if it goes to `token_endpoint`'s origin, the
    /// authorization server's the client was registered with; or why not.
    pub fn exchange(
        &self,
        request: ureq::http::Request<Vec<u8>>,
        token_endpoint: &Url,
    ) -> Result<ureq::http::Response<Body>, String> {
        let bound = Secrets::for_origin_of(token_endpoint);
        checked(&request.uri().to_string(), &[&bound])?;
        self.0.run(request).map_err(|error| error.to_string())
    }

    /// Closes every connection it keeps.
    pub fn shutdown(self) {
        self.0.shutdown();
    }
}

/// `url` read, when every one of `secrets` may go there; else why not.
fn checked(url: &str, secrets: &[&Secrets]) -> Result<Url, String> {
    let parsed = Url::parse(url).map_err(|_| format!("{url:?} is not a URL"))?;
    for one in secrets {
        one.may_go_to(&parsed)?;
    }
    Ok(parsed)
}

/// `request` with every header of `secrets`.
fn carrying<B>(mut request: RequestBuilder<B>, secrets: &[&Secrets]) -> RequestBuilder<B> {
    for (name, value) in secrets.iter().flat_map(|one| &one.headers) {
        request = request.header(name, value);
    }
    request
}

#[cfg(test)]
mod tests {
    use super::*;

    fn url(text: &str) -> Url {
        Url::parse(text).unwrap()
    }

    fn key() -> (HeaderName, HeaderValue) {
        (
            HeaderName::from_static("x-api-key"),
            HeaderValue::from_static("k"),
        )
    }

    #[test]
    fn a_secret_goes_to_its_own_origin_and_nowhere_else() {
        let (name, value) = key();
        let secrets = Secrets::for_origin_of(&url("https://mcp.example.com/mcp"))
            .with(name, value, "--header-env")
            .unwrap();
        let agent = Agent::new(settings().build());
        for same in [
            "https://mcp.example.com/mcp",
            "https://mcp.example.com:443/other?x=1",
            "https://MCP.example.com/mcp",
        ] {
            assert!(agent.post(same, &[&secrets]).is_ok(), "{same}");
        }
        for other in [
            "https://evil.example.com/mcp",
            "http://mcp.example.com/mcp",
            "https://mcp.example.com:8443/mcp",
            "https://mcp.example.com.evil.example/mcp",
            "https://user@evil.example/mcp",
            "not a url",
        ] {
            assert!(agent.get(other, &[&secrets]).is_err(), "{other}");
            assert!(agent.post(other, &[&secrets]).is_err(), "{other}");
            assert!(agent.delete(other, &[&secrets]).is_err(), "{other}");
        }
        // With nothing secret bound to it, a request goes wherever its sender says.
        assert!(agent.get("https://evil.example.com/mcp", &[]).is_ok());
        // Each of several sets must belong there.
        let elsewhere = Secrets::for_origin_of(&url("https://as.example.com/token"));
        let why = (agent.post("https://mcp.example.com/mcp", &[&secrets, &elsewhere]))
            .err()
            .unwrap();
        assert!(why.contains("https://as.example.com"), "{why}");
    }

    #[test]
    fn no_secret_is_made_for_an_origin_reached_in_clear_off_this_machine() {
        for clear in [
            "http://mcp.example.com/mcp",
            "http://10.0.0.5/mcp",
            "http://192.168.1.2:8080/mcp",
            "http://localhost.evil.example/mcp",
        ] {
            let (name, value) = key();
            let why = (Secrets::for_origin_of(&url(clear)).with(name, value, "--bearer-env T"))
                .unwrap_err();
            assert!(
                why.starts_with("--bearer-env T would travel in clear"),
                "{clear}: {why}"
            );
        }
        for fine in [
            "https://mcp.example.com/mcp",
            "http://127.0.0.1:3000/mcp",
            "http://localhost:3000/mcp",
            "http://[::1]:3000/mcp",
        ] {
            let (name, value) = key();
            assert!(
                (Secrets::for_origin_of(&url(fine)).with(name, value, "it")).is_ok(),
                "{fine}"
            );
        }
    }

    #[test]
    fn an_exchange_goes_only_to_its_token_endpoint_s_origin() {
        let agent = Agent::new(settings().build());
        let request = |to: &str| {
            ureq::http::Request::post(to)
                .body(b"grant_type=refresh_token&refresh_token=secret".to_vec())
                .unwrap()
        };
        let endpoint = url("https://as.example.com/token");
        let why =
            (agent.exchange(request("https://evil.example.com/token"), &endpoint)).unwrap_err();
        assert!(why.contains("not sent"), "{why}");
    }
}
