//! What the tests of more than one crate share, kept free of the plugin host and of wasmtime
//! so that the fuzz target can use it too: the contract's independent model (the
//! oracle), the third-party peers the tests install, and an MCP session driver.

pub mod fuzz;
pub mod mcp;
pub mod model;
pub mod peers;
