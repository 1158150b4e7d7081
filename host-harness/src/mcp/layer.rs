//! The reasons component as the proxy drives it, through its direct surface (WIT 0.1.1):
//! `augment` for the catalogue the proxy holds, `route` for each call, which the proxy
//! then sends on itself. The host holds what the component routes to the same rule as
//! anything a plugin forwards (R16).

use crate::plugin::{Plugin, StripSet, WasmLayer};
use crate::provider::{Json, Provider};
use reasons_transform::{Arguments, Options, ProviderError, ToolCall, ToolResult};

/// What becomes of a `tools/call`.
pub enum Forward {
    /// Send it to the server with these arguments (the layer's output, byte for byte).
    Send(String),
    /// Send it as it came: the layer left its arguments untouched.
    AsItCame,
    /// Do not send it: the layer answered it (a refusal in required mode, or a fault).
    Answer(ToolResult),
}

/// The layer, reached directly: the proxy holds the catalogue and sends the calls.
pub struct ProxyLayer {
    layer: WasmLayer,
    strip_set: StripSet,
    param: String,
    /// Whether a call without the parameter is refused (and so must go through the layer).
    required: bool,
}

/// Below the proxy's layer: nothing. It is reached through `augment` and `route`, which
/// may not ask below (the gate is shut), and a fresh instance is given its catalogue
/// again by the host; a plugin that asks anyway is refused by the gate before this.
struct NothingBelow;

impl Provider for NothingBelow {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        Err(ProviderError::Failed(
            "the proxy's layer has nothing below it: the proxy lists the server".into(),
        ))
    }

    fn execute_tool_calls(&mut self, _: Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError> {
        Err(ProviderError::Failed(
            "the proxy's layer has nothing below it: the proxy sends the calls".into(),
        ))
    }
}

impl ProxyLayer {
    /// The plugin, configured with `options`.
    pub fn new(plugin: &Plugin, options: Options) -> anyhow::Result<ProxyLayer> {
        anyhow::ensure!(
            plugin.is_reasons(),
            "`{}` does not export agent:tools/reasons@0.1.1 (with `augment` and `route`): \
             the proxy needs it to know which calls carry the model's reason",
            plugin.name()
        );
        let mut layer = plugin.layer(Box::new(NothingBelow));
        let required = options.required;
        layer.configure(options)?;
        Ok(ProxyLayer {
            param: layer.reason_param()?,
            strip_set: layer.strip_set(),
            layer,
            required,
        })
    }

    /// The server's whole catalogue, as it was last listed, through the layer: the
    /// declarations as the model is to see them, one for one, and the strip set becomes
    /// this catalogue's (R8). A listing that fails leaves the set as it was.
    pub fn catalogue(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError> {
        self.layer.augment(tools)
    }

    /// What to do with a call to `tool` with `arguments` (the member's exact text, or
    /// `None` when the call has none).
    pub fn forward(&mut self, id: &str, tool: &str, arguments: Option<&str>) -> Forward {
        let call = ToolCall {
            id: id.to_string(),
            name: tool.to_string(),
            arguments: match arguments {
                Some(text) => Arguments::Object(text.to_string()),
                None => Arguments::Text(String::new()),
            },
        };
        match self.layer.route(call) {
            Ok(Ok(call)) => match (arguments, call.arguments) {
                (Some(before), Arguments::Object(after)) if after != before => Forward::Send(after),
                _ => Forward::AsItCame,
            },
            Ok(Err(answer)) => Forward::Answer(answer),
            // A fault of the layer's (a trap, a limit, a violation): the call is not sent.
            Err(fault) => Forward::Answer(ToolResult::error(id, fault.message())),
        }
    }

    /// Whether the layer strips `tool`'s reason: then a `reason` in its arguments is the
    /// model's, not the tool's own.
    pub fn strips(&self, tool: &str) -> bool {
        self.strip_set.contains(tool)
    }

    /// The parameter's name (R11).
    pub fn param(&self) -> &str {
        &self.param
    }

    /// Whether calls without the parameter are refused (the required mode).
    pub fn required(&self) -> bool {
        self.required
    }
}
