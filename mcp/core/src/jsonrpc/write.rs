//! The messages the proxy writes itself: its answers and errors, and its own requests.

use super::Id;

/// How every response the proxy makes begins: its id follows, at [`ID_AT`].
const RESPONSE: &str = r#"{"jsonrpc":"2.0","id":"#;

/// Where the id of a response the proxy made ([`result`], [`error`]) begins.
pub const ID_AT: usize = RESPONSE.len();

/// A response with `result`.
pub fn result(id: &Id, result: &str) -> String {
    format!(r#"{RESPONSE}{},"result":{result}}}"#, id.json())
}

/// An error response (under `null` when the request's id is unknown).
pub fn error(id: Option<&Id>, code: i64, message: &str) -> String {
    error_with_data(id, code, message, None)
}

/// An error response with the error's `data` (JSON text), when it has any.
pub fn error_with_data(id: Option<&Id>, code: i64, message: &str, data: Option<&str>) -> String {
    let message = serde_json::to_string(message).unwrap_or_default();
    let id = id.map_or("null", Id::json);
    let data = data.map_or(String::new(), |data| format!(r#","data":{data}"#));
    format!(r#"{RESPONSE}{id},"error":{{"code":{code},"message":{message}{data}}}}}"#)
}

/// A request of the proxy's own.
pub fn request(id: &Id, method: &str, params: Option<&str>) -> String {
    match params {
        Some(params) => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{method}","params":{params}}}"#,
            id.json()
        ),
        None => format!(
            r#"{{"jsonrpc":"2.0","id":{},"method":"{method}"}}"#,
            id.json()
        ),
    }
}
