//! Which requests the front takes at all, before any session sees them: only what a
//! client means to send runs.
//!
//! A POST must say it is JSON and accept both answers (the core's
//! [`reasons_mcp::http::admission`] says why); and a request that carries a browser's `Origin` is taken only
//! from this listener's own origin or one the settings allow (`Listen::allow_origins`), which alone are
//! answered CORS preflights. Native clients send no `Origin` and go on as before.

use axum::http::{HeaderMap, HeaderValue, StatusCode, header};

/// The origins the settings allow (`Listen::allow_origins`), each as a browser spells it (`http://localhost:5173`).
#[derive(Clone, Debug, Default)]
pub struct AllowedOrigins(Vec<String>);

impl AllowedOrigins {
    /// Reads each allowed origin, or names the one that is no origin.
    pub fn new(origins: &[String]) -> Result<AllowedOrigins, String> {
        origins
            .iter()
            .map(|origin| {
                let lower = origin.to_ascii_lowercase();
                let host = lower
                    .strip_prefix("http://")
                    .or_else(|| lower.strip_prefix("https://"))
                    .filter(|host| !host.is_empty() && !host.contains(['/', '?', '#', '@', ' ']));
                match host {
                    Some(_) => Ok(lower),
                    None => Err(format!(
                        "--allow-origin {origin:?} is not an origin: a scheme and a host, with a \
                         port when it is not the scheme's own (http://localhost:5173)"
                    )),
                }
            })
            .collect::<Result<_, _>>()
            .map(AllowedOrigins)
    }

    fn contains(&self, origin: &str) -> bool {
        self.0.iter().any(|allowed| allowed == origin)
    }
}

/// Where a request comes from, as its `Origin` says.
#[derive(Debug, PartialEq)]
pub enum Origin {
    /// No `Origin`: a native client.
    Native,
    /// A page of this listener's own origin.
    Own,
    /// A page of an allowed origin, which the answer must name back.
    Allowed(String),
}

/// Where a request comes from, for a request already known to be for this listener (`host`, its `Host`);
/// `Err` names a page's origin that may not call.
pub fn origin_of(
    headers: &HeaderMap,
    host: &str,
    allowed: &AllowedOrigins,
) -> Result<Origin, String> {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return Ok(Origin::Native);
    };
    let origin = String::from_utf8_lossy(origin.as_bytes()).to_ascii_lowercase();
    if origin == format!("http://{}", host.to_ascii_lowercase()) {
        Ok(Origin::Own)
    } else if allowed.contains(&origin) {
        Ok(Origin::Allowed(origin))
    } else {
        Err(origin)
    }
}

/// Why a POST is not taken, as a status and words; `None` when it is.
pub fn refused_post(headers: &HeaderMap) -> Option<(StatusCode, String)> {
    let content_type = joined(headers, header::CONTENT_TYPE);
    let accept = joined(headers, header::ACCEPT);
    let (status, why) = reasons_mcp::http::admission::refused_post(&content_type, &accept)?;
    Some((StatusCode::from_u16(status).ok()?, why))
}

/// Why a legacy HTTP+SSE client's POST is not taken: its body must say it is JSON (its
/// answers come on its stream, so what it accepts is not asked).
pub fn refused_message(headers: &HeaderMap) -> Option<(StatusCode, String)> {
    let content_type = joined(headers, header::CONTENT_TYPE);
    let (status, why) = reasons_mcp::http::admission::refused_body(&content_type)?;
    Some((StatusCode::from_u16(status).ok()?, why))
}

/// Every value of the header `name`, as one list.
fn joined(headers: &HeaderMap, name: header::HeaderName) -> String {
    let values: Vec<String> = headers
        .get_all(name)
        .iter()
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .collect();
    values.join(", ")
}

/// The headers an answer to an allowed page's request carries, so that its script may
/// read the answer and the session it opened.
pub fn cors_headers(origin: &str) -> Vec<(header::HeaderName, HeaderValue)> {
    let origin = HeaderValue::from_str(origin).unwrap_or(HeaderValue::from_static("null"));
    vec![
        (header::ACCESS_CONTROL_ALLOW_ORIGIN, origin),
        (header::VARY, HeaderValue::from_static("Origin")),
        (
            header::ACCESS_CONTROL_EXPOSE_HEADERS,
            HeaderValue::from_static("Mcp-Session-Id, Mcp-Protocol-Version"),
        ),
    ]
}

/// The headers a page's request may carry: those of both eras (2026-07-28's
/// `Mcp-Method` and `Mcp-Name` among them), and each `Mcp-Param-*` a tool's schema asks
/// for, which no fixed list can name.
const ALLOWED_HEADERS: &str = "Content-Type, Accept, Authorization, Mcp-Session-Id, \
                               Mcp-Protocol-Version, Last-Event-ID, Mcp-Method, Mcp-Name";

/// The answer to an allowed page's CORS preflight, whose request `headers` name what it
/// will send: what it may send. The `Mcp-Param-*` headers it names are allowed by name.
pub fn preflight_headers(
    origin: &str,
    headers: &HeaderMap,
) -> Vec<(header::HeaderName, HeaderValue)> {
    let requested = joined(headers, header::ACCESS_CONTROL_REQUEST_HEADERS);
    let params: Vec<&str> = requested
        .split(',')
        .map(str::trim)
        .filter(|name| {
            name.len() > "mcp-param-".len()
                && name[.."mcp-param-".len()].eq_ignore_ascii_case("mcp-param-")
                && header::HeaderName::from_bytes(name.as_bytes()).is_ok()
        })
        .collect();
    let allowed = std::iter::once(ALLOWED_HEADERS)
        .chain(params)
        .collect::<Vec<_>>()
        .join(", ");
    let mut answer = cors_headers(origin);
    answer.extend([
        (
            header::ACCESS_CONTROL_ALLOW_METHODS,
            HeaderValue::from_static("GET, POST, DELETE"),
        ),
        (
            header::ACCESS_CONTROL_ALLOW_HEADERS,
            HeaderValue::from_str(&allowed).unwrap_or(HeaderValue::from_static(ALLOWED_HEADERS)),
        ),
        (
            header::ACCESS_CONTROL_MAX_AGE,
            HeaderValue::from_static("600"),
        ),
    ]);
    answer
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn a_post_must_say_it_is_json_and_accept_both_answers() {
        let json = ("content-type", "application/json");
        let both = ("accept", "application/json, text/event-stream");
        assert_eq!(refused_post(&headers(&[json, both])), None);
        for fine in [
            headers(&[("content-type", "Application/JSON; charset=utf-8"), both]),
            headers(&[json, ("accept", "*/*")]),
            headers(&[json, ("accept", "application/*;q=0.9, text/*")]),
            headers(&[
                json,
                ("accept", "application/json"),
                ("accept", "text/event-stream"),
            ]),
        ] {
            assert_eq!(refused_post(&fine), None, "{fine:?}");
        }
        for (sent, status) in [
            (
                headers(&[("content-type", "text/plain;charset=UTF-8"), both]),
                415,
            ),
            (
                headers(&[("content-type", "application/x-www-form-urlencoded"), both]),
                415,
            ),
            (
                headers(&[("content-type", "multipart/form-data; boundary=x"), both]),
                415,
            ),
            (headers(&[both]), 415),
            (headers(&[json]), 406),
            (headers(&[json, ("accept", "application/json")]), 406),
            (
                headers(&[json, ("accept", "text/html,application/xhtml+xml")]),
                406,
            ),
            (
                headers(&[json, ("accept", "application/json, text/event-stream;q=0")]),
                406,
            ),
        ] {
            let refused = refused_post(&sent).map(|(status, _)| status.as_u16());
            assert_eq!(refused, Some(status), "{sent:?}");
        }
    }

    #[test]
    fn a_page_is_taken_only_from_its_own_origin_or_one_allowed() {
        let allowed = AllowedOrigins::new(&["http://LOCALHOST:5173".into()]).unwrap();
        let host = "127.0.0.1:8931";
        let from =
            |origin: &'static str| origin_of(&headers(&[("origin", origin)]), host, &allowed);
        assert_eq!(
            origin_of(&HeaderMap::new(), host, &allowed),
            Ok(Origin::Native)
        );
        assert_eq!(from("http://127.0.0.1:8931"), Ok(Origin::Own));
        assert_eq!(
            from("http://localhost:5173"),
            Ok(Origin::Allowed("http://localhost:5173".into()))
        );
        for refused in [
            "http://localhost:3000",
            "http://127.0.0.1:5173",
            "https://localhost:5173",
            "null",
            "http://evil.example",
        ] {
            assert!(from(refused).is_err(), "{refused}");
        }
        for bad in ["localhost:5173", "http://", "http://a/b", "ftp://x"] {
            assert!(AllowedOrigins::new(&[bad.into()]).is_err(), "{bad}");
        }
    }
}
