//! The reasons MCP proxy's core, sans I/O: JSON-RPC messages read strictly, as a
//! server's parser reads them (`jsonrpc`, over the transform's JSON reader, the
//! workspace's one), and the session's state machine
//! (`proxy`): a line from the client or the server in, the lines to write out, with
//! the audit record of each call. It is generic over the [`Layer`] it calls (the
//! reasons component through the plugin host, [`ComponentLayer`], or the transform
//! linked in, [`NativeLayer`]), so that
//! every transport (a server's stdio, Streamable HTTP, a wasi:http gateway) drives the
//! same core.
//!
//! The core reads every message once, and tells its transport what the transport needs
//! with each line it writes (an [`Outline`] to the server, a [`Delivery`] to the client,
//! [`Learnt`] for what the server said that a transport keeps), and which line to the
//! server is still owed an answer ([`Proxy::awaits`], [`Proxy::unanswered`]): no
//! transport reads a message the core read.

#![deny(missing_docs)]

pub mod audit;
pub mod delivery;
pub mod http;
pub mod jsonrpc;
pub mod layer;
mod now;
pub mod outline;
pub mod proxy;
pub mod ready;
pub mod shown;
pub mod telemetry;

pub use audit::Audit;
pub use delivery::{About, Delivery};
#[cfg(any(test, feature = "component"))]
pub use layer::ComponentLayer;
pub use layer::{Layer, NativeLayer, Routing};
pub use now::Now;
pub use outline::Outline;
pub use proxy::{Learnt, Out, Proxy};

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

/// `line` with every raw CR and LF made a space. Every line the proxy sends was read as
/// JSON (or written by it), where a raw line break can only be whitespace, so nothing it
/// means changes; but a reader that ends a line at a lone CR (Python's universal
/// newlines, Node's readline) or an SSE parser would otherwise read a second message the
/// proxy never read, a `tools/call` with its reason, say. Every transport, stdio or HTTP,
/// either side, gets its lines from here.
pub fn one_line(line: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    if !line.iter().any(|byte| matches!(byte, b'\r' | b'\n')) {
        return std::borrow::Cow::Borrowed(line);
    }
    let spaced = line
        .iter()
        .map(|&byte| {
            if matches!(byte, b'\r' | b'\n') {
                b' '
            } else {
                byte
            }
        })
        .collect();
    std::borrow::Cow::Owned(spaced)
}
