//! The layer the proxy calls: for the catalogue it holds (`augment`, as the WIT names it)
//! and for each call (`route`), which the proxy then sends on itself. The reasons
//! component through the plugin host is one ([`ComponentLayer`]), the transform linked in
//! another ([`NativeLayer`]); the core knows only this trait, so that it builds where no
//! plugin host does (wasm32-wasip2).

use reasons_transform::{Arguments, Json, ProviderError, ToolCall, ToolResult};

#[cfg(any(test, feature = "component"))]
mod component;
mod native;
#[cfg(any(test, feature = "component"))]
pub use component::ComponentLayer;
pub use native::NativeLayer;

/// What becomes of a `tools/call`.
pub enum Routing {
    /// Send it to the server with these arguments (the layer's output, byte for byte).
    Send(String),
    /// Send it as it came: the layer left its arguments untouched.
    AsItCame,
    /// Do not send it: the layer answered it (a refusal in required mode, or a fault).
    Answer(ToolResult),
}

impl Routing {
    /// What a layer's routing of a call with `before` (its arguments' text, `None`
    /// when it had none) comes to: the call as routed, or the layer's own answer.
    pub fn of(before: Option<&str>, routed: Result<ToolCall, ToolResult>) -> Routing {
        match routed {
            Ok(call) => match (before, call.arguments) {
                (Some(before), Arguments::Object(after)) if after != before => Routing::Send(after),
                _ => Routing::AsItCame,
            },
            Err(answer) => Routing::Answer(answer),
        }
    }
}

/// The call the proxy asks a layer to route: `tool` under the JSON text of `id`, with
/// `arguments` (the member's exact text; `None` when it has none).
pub fn call(id: &str, tool: &str, arguments: Option<&str>) -> ToolCall {
    ToolCall {
        id: id.to_string(),
        name: tool.to_string(),
        arguments: match arguments {
            Some(text) => Arguments::Object(text.to_string()),
            None => Arguments::Text(String::new()),
        },
    }
}

/// A layer, reached directly: the proxy holds the catalogue and sends the calls.
pub trait Layer {
    /// The server's whole catalogue, as it was last listed, through the layer: the
    /// declarations as the model is to see them, one for one, and the tools whose
    /// reason it strips become this catalogue's (R8). A listing that fails leaves them
    /// as they were.
    fn augment(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError>;

    /// What to do with a call to `tool` with `arguments` (the member's exact text, or
    /// `None` when the call has none), under the JSON text of its id.
    fn route(&mut self, id: &str, tool: &str, arguments: Option<&str>) -> Routing;

    /// Whether the layer strips `tool`'s reason: then a `reason` in its arguments is the
    /// model's, not the tool's own.
    fn strips(&self, tool: &str) -> bool;

    /// The parameter's name (R11).
    fn param(&self) -> &str;

    /// Whether calls without the parameter are refused (the required mode).
    fn required(&self) -> bool;
}
