//! The rules of MCP over HTTP, sans I/O, on both edges: the server edge, where a client's
//! POST comes in (the `--listen` front and the gateway), and the client edge, where the
//! proxy posts to a server (`--url` and the gateway's upstream). Each transport passes
//! bytes and header values in and acts on what comes back; none writes a rule of its own.
//!
//! | Rule | Edge | Room |
//! |---|---|---|
//! | A POST is taken only when it says it is JSON and accepts what a client accepts; what its message says of where it goes | server | [`admission`] |
//! | A 2026-07-28 POST's headers agree with its body, and its envelope is one the proxy reads; the HTTP status an answer goes under | server | [`inbound`] |
//! | A POST's one message read once, and what no server edge takes refused, before anything routes by it | server | [`intake`] |
//! | The headers a forwarded message carries (`MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), rebuilt from it as forwarded | client | [`headers`] |
//! | A redirect is no answer: it is neither followed nor relayed | client | [`redirect`] |
//! | What a POST's answer is (a body, a stream, a redirect, the legacy transport, a session gone, an error), from its status and headers | client | [`answered`] |
//! | An event stream read as it arrives, and where to resume it | client | [`sse`] |

pub mod admission;
pub mod answered;
pub mod headers;
pub mod inbound;
pub mod intake;
pub mod redirect;
pub mod sse;
