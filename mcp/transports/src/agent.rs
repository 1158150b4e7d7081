//! The one way the proxy makes an HTTP client: every request it sends (to a server, to
//! sign in, to a collector) goes through an agent begun here, so none of them follows a
//! redirect. A 3xx could take a call, a token or a collector's API key to a place nobody
//! named; it is an answer like any other error status, read by whoever sent the request.

use ureq::config::ConfigBuilder;
use ureq::typestate::AgentScope;

/// An agent's settings with redirects not followed and error statuses read as answers;
/// each caller adds its own timeouts.
pub fn begun() -> ConfigBuilder<AgentScope> {
    ureq::Agent::config_builder()
        .http_status_as_error(false)
        .max_redirects(0)
}
