//! Which POSTs a Streamable HTTP server of the proxy's takes at all (the front of
//! `reasons mcp --listen`, the gateway): only what a client means to send.
//!
//! A web page can send a POST that needs no CORS preflight (a no-cors `fetch`, a plain
//! HTML form) with `Content-Type: text/plain` or `application/x-www-form-urlencoded`, and
//! a form's `text/plain` body can be made to read as JSON. So a POST must say it is JSON
//! (`Content-Type: application/json`, which a page can only send after a preflight) and
//! accept what the specification says a client accepts (`application/json` and
//! `text/event-stream`).

/// Why a POST with these `Content-Type` and `Accept` values (each header's values
/// joined with commas) is not taken, as an HTTP status and words; `None` when it is.
pub fn refused_post(content_type: &str, accept: &str) -> Option<(u16, String)> {
    let is_json = content_type
        .parse::<mime::Mime>()
        .is_ok_and(|kind| kind.essence_str() == "application/json");
    if !is_json {
        return Some((
            415,
            format!(
                "a POST's body is one JSON message: its Content-Type must be application/json, not {content_type:?}"
            ),
        ));
    }
    if !(accepts(accept, "application", "json") && accepts(accept, "text", "event-stream")) {
        return Some((
            406,
            format!(
                "a POST is answered as application/json or text/event-stream: its Accept must admit both, not {accept:?}"
            ),
        ));
    }
    None
}

/// Whether the `Accept` list admits `kind/subtype`: a range that matches it (`*/*`,
/// `kind/*` or itself) with a quality above zero.
fn accepts(accept: &str, kind: &str, subtype: &str) -> bool {
    accept
        .split(',')
        .filter_map(|range| range.trim().parse::<mime::Mime>().ok())
        .filter(|range| {
            range
                .get_param("q")
                .is_none_or(|q| q.as_str().parse::<f32>().is_ok_and(|q| q > 0.0))
        })
        .any(|range| {
            let (t, s) = (range.type_().as_str(), range.subtype().as_str());
            (t == "*" && s == "*") || (t == kind && (s == "*" || s == subtype))
        })
}

/// Whether a page at `origin` is the same origin as a server reached as `authority`
/// (its `Host`) on a loopback name: a page served by this machine to itself. A page
/// that rebound its own DNS name to the server's address sends its own name as `Host`
/// and `Origin` alike, so a same origin on any other name proves nothing.
pub fn loopback_same_origin(origin: &str, authority: &str) -> bool {
    let authority = authority.to_ascii_lowercase();
    // The name, less a port (`[::1]:8080`, `localhost`).
    let host = match authority.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => authority.as_str(),
    };
    let loopback = matches!(host, "localhost" | "127.0.0.1" | "[::1]");
    let origin = origin.to_ascii_lowercase();
    loopback
        && (origin == format!("http://{authority}") || origin == format!("https://{authority}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_loopback_page_of_the_servers_own_origin_may_call() {
        let cases = [
            ("http://localhost:8080", "localhost:8080", true),
            ("http://LOCALHOST:8080", "localhost:8080", true),
            ("http://127.0.0.1:8080", "127.0.0.1:8080", true),
            ("http://[::1]:8080", "[::1]:8080", true),
            ("https://localhost", "localhost", true),
            // Another port, another origin.
            ("http://localhost:5173", "localhost:8080", false),
            // A rebound name: its own origin, but no loopback name.
            ("http://evil.example:8080", "evil.example:8080", false),
            (
                "http://localhost.evil.example:8080",
                "localhost.evil.example:8080",
                false,
            ),
            ("null", "localhost:8080", false),
            ("", "localhost:8080", false),
        ];
        assert_eq!(cases.len(), 10);
        for (origin, authority, may) in cases {
            assert_eq!(
                loopback_same_origin(origin, authority),
                may,
                "{origin} {authority}"
            );
        }
    }
}
