//! A request the front refuses: an HTTP error whose body is the JSON-RPC error, under
//! the request's id when it is known.

use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};
use reasons_mcp::http::inbound;
use reasons_mcp::jsonrpc::{self, INVALID_REQUEST, Id};

/// A request refused: an HTTP error whose body is a JSON-RPC error, under the request's
/// id when it is known.
#[derive(Debug)]
pub(super) struct Refused {
    status: StatusCode,
    code: i64,
    message: String,
    pub(super) id: Option<Id>,
    /// The error's `data`, JSON text, where the specification gives it one (boxed: a
    /// `Result`'s error is best kept small).
    data: Option<Box<str>>,
}

pub(super) fn refuse(status: StatusCode, code: i64, message: &str) -> Refused {
    Refused {
        status,
        code,
        message: format!("reasons mcp: {message}"),
        id: None,
        data: None,
    }
}

/// A request refused on the way in as the specification says ([`inbound::check`]).
pub(super) fn rejected(rejected: inbound::Rejected) -> Refused {
    let status = StatusCode::from_u16(rejected.status).unwrap_or(StatusCode::BAD_REQUEST);
    let refusal = *rejected.refusal;
    Refused {
        id: refusal.id,
        data: refusal.data.map(String::into_boxed_str),
        ..refuse(status, refusal.code, &refusal.message)
    }
}

impl Refused {
    /// The refusal, answered under the request's `id`.
    pub(super) fn under(self, id: Id) -> Refused {
        Refused {
            id: Some(id),
            ..self
        }
    }
}

impl IntoResponse for Refused {
    fn into_response(self) -> Response {
        let data = self.data.as_deref();
        let body = jsonrpc::error_with_data(self.id.as_ref(), self.code, &self.message, data);
        (
            self.status,
            [(header::CONTENT_TYPE, "application/json")],
            body,
        )
            .into_response()
    }
}

/// The answer to an `initialize` that finds no place: 503, try again.
pub(super) fn busy(message: &str) -> Refused {
    refuse(
        StatusCode::SERVICE_UNAVAILABLE,
        jsonrpc::INTERNAL_ERROR,
        message,
    )
}

/// The answer to a request for a session whose loop has ended: 404, the specification's
/// word to initialize again.
pub(super) fn session_gone() -> Refused {
    refuse(
        StatusCode::NOT_FOUND,
        INVALID_REQUEST,
        "the session has ended: initialize again",
    )
}
