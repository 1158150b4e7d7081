//! The layer the proxy calls: for the catalogue it holds (`catalogue`) and for each call
//! (`forward`), which the proxy then sends on itself. The reasons component through the
//! plugin host is one ([`ComponentLayer`]); the core knows only this trait, so that it
//! builds where no plugin host does (wasm32-wasip2).

use reasons_transform::{Json, ProviderError, ToolResult};

#[cfg(any(test, feature = "component"))]
mod component;
#[cfg(any(test, feature = "component"))]
pub use component::ComponentLayer;

/// What becomes of a `tools/call`.
pub enum Forward {
    /// Send it to the server with these arguments (the layer's output, byte for byte).
    Send(String),
    /// Send it as it came: the layer left its arguments untouched.
    AsItCame,
    /// Do not send it: the layer answered it (a refusal in required mode, or a fault).
    Answer(ToolResult),
}

/// A layer, reached directly: the proxy holds the catalogue and sends the calls.
pub trait Layer {
    /// The server's whole catalogue, as it was last listed, through the layer: the
    /// declarations as the model is to see them, one for one, and the tools whose
    /// reason it strips become this catalogue's (R8). A listing that fails leaves them
    /// as they were.
    fn catalogue(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError>;

    /// What to do with a call to `tool` with `arguments` (the member's exact text, or
    /// `None` when the call has none), under the JSON text of its id.
    fn forward(&mut self, id: &str, tool: &str, arguments: Option<&str>) -> Forward;

    /// Whether the layer strips `tool`'s reason: then a `reason` in its arguments is the
    /// model's, not the tool's own.
    fn strips(&self, tool: &str) -> bool;

    /// The parameter's name (R11).
    fn param(&self) -> &str;

    /// Whether calls without the parameter are refused (the required mode).
    fn required(&self) -> bool;
}
