//! The one way the proxy makes an HTTP client: every request it sends (to a server, to
//! sign in, to a collector) goes through an agent begun here, so none of them follows a
//! redirect. A 3xx could take a call, a token or a collector's API key to a place nobody
//! named; it is an answer like any other error status, read by whoever sent the request.
//!
//! A server's certificate is checked against the platform's trust, as curl and the
//! platform's other tools check it: its store, and `SSL_CERT_FILE`/`SSL_CERT_DIR` where
//! set (an organisation's private CA), not a list of roots built into the binary.

use ureq::config::ConfigBuilder;
use ureq::tls::{RootCerts, TlsConfig};
use ureq::typestate::AgentScope;

/// An agent's settings with redirects not followed, error statuses read as answers and
/// the platform's trust; each caller adds its own timeouts.
pub fn begun() -> ConfigBuilder<AgentScope> {
    let tls = TlsConfig::builder()
        .root_certs(RootCerts::PlatformVerifier)
        .build();
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
        .tls_config(tls)
}
