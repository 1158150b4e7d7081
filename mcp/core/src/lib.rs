//! The reasons MCP proxy's core, sans I/O: JSON-RPC messages read strictly, as a
//! server's parser reads them (`jsonrpc`, `json`), and the session's state machine
//! (`proxy`): a line from the client or the server in, the lines to write out, with
//! the audit record of each call. It is generic over the [`Layer`] it calls (the
//! reasons component through the plugin host, [`ComponentLayer`], or the transform
//! linked in, [`NativeLayer`]), so that
//! every transport (a server's stdio, Streamable HTTP, a wasi:http gateway) drives the
//! same core.

pub mod audit;
pub mod json;
pub mod jsonrpc;
pub mod layer;
mod now;
pub mod proxy;

pub use audit::Audit;
#[cfg(any(test, feature = "component"))]
pub use layer::ComponentLayer;
pub use layer::{Forward, Layer, NativeLayer};
pub use now::Now;
pub use proxy::{Out, Proxy};

/// 128 bits no client can know, read from the operating system's random source for each
/// use, as hex: each id of the proxy's own, each of the HTTP front's, each session id.
/// None can be derived from another (std's `RandomState`, used before, draws its keys
/// once per thread and counts up from them).
pub fn unguessable() -> String {
    let mut bits = [0u8; 16];
    // Without the operating system's random source no id can be unguessable, and the
    // proxy cannot keep its promises: nothing goes on.
    getrandom::fill(&mut bits).expect("the operating system's random source cannot be read");
    bits.iter().map(|byte| format!("{byte:02x}")).collect()
}
