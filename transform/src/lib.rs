//! The reasons transform: one optional `reason` parameter added to every tool declaration
//! a model sees, and stripped from every call before it reaches the tool's server.
//!
//! Plain `no_std` Rust over JSON text ([`Transform`]), tested natively. The component
//! (`guest/`) puts it behind the WIT interfaces of `wit/tools.wit`; the plugin host runs it
//! natively beside the component, and both are held to the same vectors.
//!
//! ```
//! use reasons_transform::{Arguments, ToolCall, Transform};
//!
//! let mut layer = Transform::new();
//! let listed = layer.list(vec![
//!     r#"{"name":"fs_read","inputSchema":{"type":"object","properties":{"path":{"type":"string"}}}}"#.into(),
//! ]);
//! assert!(listed[0].contains(r#""reason":{"type":"string""#));
//!
//! let call = ToolCall {
//!     id: "1".into(),
//!     name: "fs_read".into(),
//!     arguments: Arguments::Text(r#"{"path":"a.txt","reason":"The user asked for it."}"#.into()),
//! };
//! let results = layer.execute(vec![call], |forwarded| {
//!     assert_eq!(forwarded[0].arguments, Arguments::Text(r#"{"path":"a.txt"}"#.into()));
//!     Ok(vec![])
//! });
//! assert!(results[0].is_error); // the provider answered nothing for the call
//! ```
#![cfg_attr(not(test), no_std)]
#![deny(missing_docs)]
// In the component a panic is a trap that kills the instance: no input may reach one.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::panic,
        clippy::indexing_slicing,
        clippy::unreachable,
        clippy::todo
    )
)]

extern crate alloc;

mod call;
pub mod json;
mod listing;
mod options;
mod protocol;
mod schema;
mod shape;
mod transform;

pub use options::{DEFAULT_DESCRIPTION, DEFAULT_NAME, Options, Position};
pub use protocol::{
    Arguments, CallIds, Json, NO_RESULT, ProviderError, ToolCall, ToolResult, answer, complete,
    complete_with,
};
pub use transform::Transform;
