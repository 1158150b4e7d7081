//! JSON-RPC messages, read strictly and edited in place. Strictly, because the proxy must
//! read a message as the server will (R18): a key given twice (parsers disagree on which
//! counts), a byte-order mark, text that is not UTF-8, an id that is null or not an id,
//! is not guessed at but refused with the JSON-RPC error for it. In place, because a
//! message the proxy does not change is relayed byte for byte, and one it changes keeps
//! every byte outside the one value it replaces.
//!
//! One room per job: `read.rs` reads a line's messages (or refuses them), `id.rs` is what
//! an id is and when two are one, `parsed.rs` keeps a line read once with the places a
//! transport needs, `params.rs` reads the params the proxy acts on, `write.rs` writes
//! the messages the proxy makes, and `places.rs` finds and replaces a value's text.

mod id;
mod params;
mod parsed;
mod places;
mod read;
mod write;

pub use id::Id;
pub use params::{CallParams, Page, Params};
pub use parsed::Parsed;
pub(crate) use places::moved;
pub use places::{at, member_range, replace, span};
pub use read::{Line, Message, Read, Refusal, member, read_line, repeated, unique};
pub use write::{ID_AT, error, error_with_data, request, result, unanswerable};

/// JSON-RPC's error for text that is not one JSON value.
pub const PARSE_ERROR: i64 = -32700;
/// JSON-RPC's error for JSON that is not a request.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's error for a method the server does not have.
pub const METHOD_NOT_FOUND: i64 = -32601;
/// JSON-RPC's error for params the method cannot take.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's error for what went wrong on the way, not in the request.
pub const INTERNAL_ERROR: i64 = -32603;
