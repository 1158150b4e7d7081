//! The reasons layer: one optional `reason` parameter added to every tool declaration a
//! model sees, and stripped from every call before it reaches the tool's server.
//!
//! The transform is plain Rust over JSON text ([`Reasons`]), tested natively. Built for
//! `wasm32-wasip2`, the same code is a component of the `agent:tools/reasons` world
//! (`wit/tools.wit`) that imports nothing but the provider below it.
//!
//! ```
//! use reasons::{Arguments, Reasons, ToolCall};
//!
//! let mut layer = Reasons::new();
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
#![cfg_attr(target_arch = "wasm32", no_std)]
#![deny(missing_docs)]
// On wasm a panic is a trap that kills the instance: no input may reach one.
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
mod json;
mod layer;
mod listing;
mod options;
mod protocol;
mod schema;
mod shape;

#[cfg(all(target_arch = "wasm32", feature = "component"))]
mod component;
#[cfg(target_arch = "wasm32")]
mod runtime;

pub use layer::Reasons;
pub use options::{DEFAULT_DESCRIPTION, DEFAULT_NAME, Options, Position};
pub use protocol::{
    Arguments, CallIds, Json, NO_RESULT, ProviderError, ToolCall, ToolResult, answer, complete,
    complete_with, in_order,
};
