//! The reasons layer as a Streamable HTTP MCP gateway: a component of the `wasi:http/proxy`
//! world that serves MCP at `/mcp` and forwards to one upstream MCP server, for engines that
//! load wasi:http components (`wasmtime serve`, jco, Spin, wasmCloud).
//!
//! It is stateless by design, so that replicas need no sticky sessions and an engine may
//! give every request a fresh instance: each request drives a fresh [`Proxy`] of the same
//! core `reasons mcp` drives, over the transform linked in. A call is stripped only when
//! the upstream's current listing for this caller (its session id, its credentials, its
//! `_meta`) is one the transform augments: the core lists on its own before it sends a
//! call, and a call it cannot classify is answered with an error, never forwarded (R18).
//! An instance keeps nothing, listings least of all: no instance can learn of a change
//! of tools announced to another (see `exchange`).
//!
//! It serves native clients: a web page's request is refused unless the page is of the
//! gateway's own origin on a loopback name (`reasons_mcp::http::admission`).
//!
//! The settings are read natively too, so that their tests run under `cargo test`; the
//! rest is the component's.
//!
//! [`Proxy`]: reasons_mcp::Proxy

// Natively only its tests use it: the component is its one user.
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod settings;

#[cfg(target_arch = "wasm32")]
mod exchange;
#[cfg(target_arch = "wasm32")]
mod handler;
// Natively only its tests use it, as the settings'.
#[cfg(target_arch = "wasm32")]
mod health;
#[cfg_attr(not(target_arch = "wasm32"), allow(dead_code))]
mod resumption;
#[cfg(target_arch = "wasm32")]
mod telemetry;
#[cfg(target_arch = "wasm32")]
mod wire;
