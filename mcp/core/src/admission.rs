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
