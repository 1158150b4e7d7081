//! The messages the proxy writes itself: its answers and errors, and its own requests.

use super::{Id, Line, Message, Parsed, Refusal};

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

/// The answer to every request of a client's line that no server will answer, each an
/// error with `message` (a batch's in one batch, a line that could not be read refused as
/// it is); `None` when the line holds no request.
pub fn unanswerable(line: &Result<Parsed, Refusal>, code: i64, message: &str) -> Option<String> {
    let line = match line {
        Err(refusal) => return Some(refusal.answer()),
        Ok(line) => line,
    };
    let answer = |read: &super::Read| match &read.message {
        Ok(Message::Request { id, .. }) => Some(error(Some(id), code, message)),
        Ok(_) => None,
        Err(refusal) => Some(refusal.answer()),
    };
    match line.line() {
        Line::One(read) => answer(&read),
        Line::Batch(reads) => {
            let answers: Vec<String> = reads.iter().filter_map(answer).collect();
            (!answers.is_empty()).then(|| format!("[{}]", answers.join(",")))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_request_of_a_line_no_server_will_answer_is_answered_once() {
        // R19
        let read = |text: &str| Parsed::read(text.as_bytes().to_vec());
        let why = "the MCP server could not be started";
        let one = read(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#);
        assert_eq!(
            unanswerable(&one, -32603, why).as_deref(),
            Some(
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32603,"message":"the MCP server could not be started"}}"#
            )
        );
        let note = read(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
        assert_eq!(unanswerable(&note, -32603, why), None);
        let batch = read(
            r#"[{"jsonrpc":"2.0","id":"a","method":"ping"},{"jsonrpc":"2.0","method":"n"},{"jsonrpc":"2.0","id":2,"method":"ping"}]"#,
        );
        let answered = unanswerable(&batch, -32603, why).unwrap();
        let answered: serde_json::Value = serde_json::from_str(&answered).unwrap();
        let ids: Vec<&serde_json::Value> = (answered.as_array().unwrap().iter())
            .map(|answer| &answer["id"])
            .collect();
        assert_eq!(ids.len(), 2);
        assert_eq!(ids, [&serde_json::json!("a"), &serde_json::json!(2)]);
        let garbage = read("{not json");
        assert!(
            unanswerable(&garbage, -32603, why)
                .unwrap()
                .contains("-32700")
        );
    }
}
