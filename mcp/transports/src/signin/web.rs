//! The requests signing in makes (metadata, registration, tokens), through the proxy's
//! one agent (`outgoing.rs`: no redirect followed, a document or a token moved elsewhere
//! is not followed, the places it may come from are the ones the spec names; what is
//! secret goes to its own origin alone), each waiting a bounded time.

use crate::outgoing::{self, Agent, Place, Secrets, place};
use base64::Engine;
use std::time::Duration;
use ureq::http::{HeaderName, HeaderValue};
use url::Url;

/// How much of a metadata document, a registration or a token response is read.
const DOCUMENT_AT_MOST: u64 = 1 << 20;

/// How long one request of signing in may take.
const REQUEST_AT_MOST: Duration = Duration::from_secs(30);

pub struct Web {
    agent: Agent,
    /// Where the server signed in to is: no URL it (or an authorization server it
    /// names) names may be nearer this machine than it is.
    server: Place,
}

impl Web {
    /// The requests of signing in to the server at `server`.
    pub fn for_server(server: &Url) -> Web {
        Web::within(server, REQUEST_AT_MOST)
    }

    /// [`Web::for_server`], each request taking at most `patience`.
    pub fn within(server: &Url, patience: Duration) -> Web {
        let agent = Agent::new(outgoing::settings().timeout_global(Some(patience)).build());
        Web {
            agent,
            server: place(server),
        }
    }

    /// `text` as a URL signing in may use, or why not, naming `what` it is: https, or
    /// http on this machine alone (the spec's rule for every authorization endpoint).
    /// Anything else (`file:`, a `javascript:` page for the browser, a code or a secret
    /// sent in clear across a network) is refused; and a URL nearer this machine than
    /// the server is (this machine's own, or a private network's for a server on the
    /// internet), which a remote party would have the proxy request before any person
    /// acts.
    pub fn url(&self, text: &str, what: &str) -> Result<Url, String> {
        let url = Url::parse(text).map_err(|_| format!("{what} ({text:?}) is not a URL"))?;
        let place = place(&url);
        if place < self.server {
            return Err(format!(
                "{what} ({text:?}) is an address of this machine or of a private network, \
                 named by a server farther away: not requested"
            ));
        }
        match url.scheme() {
            "https" if url.has_host() => Ok(url),
            "http" if place == Place::Loopback => Ok(url),
            _ => Err(format!(
                "{what} ({text:?}) is not an https URL (or http on this machine)"
            )),
        }
    }

    /// The JSON document at `url`, or why not.
    pub fn get_json<T: serde::de::DeserializeOwned>(&self, url: &Url) -> Result<T, String> {
        let response = (self.agent.get(url.as_str(), &[]))?
            .header("Accept", "application/json")
            .call()
            .map_err(|error| format!("unreachable ({error})"))?;
        read_json(response)
    }

    /// POSTs `body` as JSON to `url`, for the JSON document it answers.
    pub fn post_json<T: serde::de::DeserializeOwned>(
        &self,
        url: &Url,
        body: &serde_json::Value,
    ) -> Result<T, String> {
        let response = (self.agent.post(url.as_str(), &[]))?
            .header("Accept", "application/json")
            .header("Content-Type", "application/json")
            .send(&serde_json::to_vec(body).unwrap_or_default())
            .map_err(|error| format!("unreachable ({error})"))?;
        read_json(response)
    }

    /// How the server at `server` answers a client's first request, `initialize`, sent
    /// without credentials: its status and its `WWW-Authenticate`.
    pub fn probe(&self, server: &Url) -> Result<(u16, Option<String>), String> {
        let initialize = serde_json::json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "reasons", "version": env!("CARGO_PKG_VERSION")},
            },
        });
        let response = (self.agent.post(server.as_str(), &[]))?
            .header("Accept", "application/json, text/event-stream")
            .header("Content-Type", "application/json")
            .send(&initialize.to_string())
            .map_err(|error| format!("cannot reach it ({error})"))?;
        let challenge = response
            .headers()
            .get("www-authenticate")
            .and_then(|value| value.to_str().ok())
            .map(str::to_string);
        Ok((response.status().as_u16(), challenge))
    }

    /// POSTs `form` to `url` (a revocation endpoint, RFC 7009), with `basic`'s
    /// credentials as HTTP Basic where given: whether it took it (200), or why not.
    pub fn post_form(
        &self,
        url: &Url,
        form: &[(&str, &str)],
        basic: Option<(&str, &str)>,
    ) -> Result<(), String> {
        let body: String = url::form_urlencoded::Serializer::new(String::new())
            .extend_pairs(form)
            .finish();
        // The form holds a token, and `basic` a client secret: both the endpoint's alone.
        let mut secrets = Secrets::for_origin_of(url);
        if let Some((id, secret)) = basic {
            // RFC 6749 §2.3.1: each form-encoded before they are joined.
            let encoded = |text: &str| {
                url::form_urlencoded::byte_serialize(text.as_bytes()).collect::<String>()
            };
            let pair = format!("{}:{}", encoded(id), encoded(secret));
            let basic = base64::engine::general_purpose::STANDARD.encode(pair);
            // Base64 is ASCII: always a header's value.
            let basic = HeaderValue::from_str(&format!("Basic {basic}"))
                .map_err(|_| "the client's credentials are not a header's value".to_string())?;
            let name = HeaderName::from_static("authorization");
            secrets = secrets.with(name, basic, "the client secret")?;
        }
        let response = (self.agent.post(url.as_str(), &[&secrets]))?
            .header("Content-Type", "application/x-www-form-urlencoded")
            .send(body.as_bytes())
            .map_err(|error| format!("unreachable ({error})"))?;
        match response.status().as_u16() {
            200 => Ok(()),
            status => Err(format!("it answered HTTP {status}")),
        }
    }

    /// What the oauth2 crate sends its requests to `token_endpoint` through: to that
    /// endpoint's origin alone.
    pub fn oauth(&self, token_endpoint: &str) -> Result<OAuthHttp<'_>, String> {
        let endpoint = self.url(token_endpoint, "its token endpoint")?;
        Ok(OAuthHttp(&self.agent, endpoint))
    }
}

/// A successful answer's JSON body, or why not: an error status or a body that is not
/// the document, without the body itself (which may hold a secret).
fn read_json<T: serde::de::DeserializeOwned>(
    response: ureq::http::Response<ureq::Body>,
) -> Result<T, String> {
    let status = response.status();
    if !status.is_success() {
        return Err(format!("HTTP {status}"));
    }
    let body = response
        .into_body()
        .into_with_config()
        .limit(DOCUMENT_AT_MOST)
        .read_to_vec()
        .map_err(|error| format!("its answer broke off ({error})"))?;
    serde_json::from_slice(&body).map_err(|error| format!("not the JSON expected ({error})"))
}

/// The proxy's agent, as the oauth2 crate's HTTP client for the token endpoint it holds.
pub struct OAuthHttp<'a>(&'a Agent, Url);

impl oauth2::SyncHttpClient for OAuthHttp<'_> {
    type Error = oauth2::HttpClientError<ureq::Error>;

    fn call(&self, request: oauth2::HttpRequest) -> Result<oauth2::HttpResponse, Self::Error> {
        let response =
            (self.0.exchange(request, &self.1)).map_err(oauth2::HttpClientError::Other)?;
        let (parts, body) = response.into_parts();
        let body = body
            .into_with_config()
            .limit(DOCUMENT_AT_MOST)
            .read_to_vec()
            .map_err(Box::new)?;
        Ok(oauth2::HttpResponse::from_parts(parts, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_https_or_this_machine_s_http_is_used_to_sign_in() {
        let web = Web::for_server(&Url::parse("http://127.0.0.1:9/mcp").unwrap());
        for good in [
            "https://as.example.com/authorize",
            "http://localhost:3001/token",
            "http://127.0.0.1/x",
            "http://[::1]:9/x",
        ] {
            assert!(web.url(good, "it").is_ok(), "{good}");
        }
        for bad in [
            "http://as.example.com/authorize",
            "file:///etc/passwd",
            "javascript:alert(1)",
            "http://localhost.evil.com/x",
            "ftp://localhost/x",
            "not a url",
        ] {
            let why = web.url(bad, "its authorization endpoint").unwrap_err();
            assert!(why.starts_with("its authorization endpoint"), "{why}");
        }
    }

    #[test]
    fn a_server_elsewhere_cannot_have_this_machine_s_or_a_private_address_requested() {
        let web = Web::for_server(&Url::parse("https://mcp.example.com/mcp").unwrap());
        assert!(web.url("https://as.example.com/token", "it").is_ok());
        for inside in [
            "http://127.0.0.1:8080/admin",
            "https://localhost/x",
            "https://10.0.0.5/x",
            "https://192.168.1.1/x",
            "https://169.254.169.254/latest/meta-data",
            "https://[::1]/x",
            "https://[fd00::1]/x",
            "https://[::ffff:127.0.0.1]/x",
            "https://0.0.0.0/x",
        ] {
            let why = web.url(inside, "its resource_metadata").unwrap_err();
            assert!(why.contains("not requested"), "{inside}: {why}");
        }
        // A server on a private network names its own network's addresses.
        let intranet = Web::for_server(&Url::parse("https://10.0.0.5/mcp").unwrap());
        assert!(intranet.url("https://10.0.0.6/token", "it").is_ok());
        assert!(intranet.url("https://127.0.0.1/token", "it").is_err());
    }
}
