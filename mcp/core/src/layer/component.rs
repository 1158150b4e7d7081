//! The reasons component as the proxy drives it, through its direct surface (WIT 0.1.1):
//! `augment` for the catalogue the proxy holds, `route` for each call, which the proxy
//! then sends on itself. The host holds what the component routes to the same rule as
//! anything a plugin forwards (R16).

use super::{Layer, Routing};
use reasons_host::plugin::{AugmentedTools, ConfigureError, Plugin, Unconfigured, WasmLayer};
use reasons_host::provider::{Json, Provider};
use reasons_transform::{Options, ProviderError, ToolCall, ToolResult};

/// The component, reached directly: the proxy holds the catalogue and sends the calls.
pub struct ComponentLayer {
    layer: WasmLayer,
    augmented_tools: AugmentedTools,
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

impl ComponentLayer {
    /// The plugin, configured with `options`.
    pub fn new(plugin: &Plugin, options: Options) -> Result<ComponentLayer, ConfigureError> {
        if !plugin.is_reasons() {
            return Err(ConfigureError::new(plugin.name(), Unconfigured::NotReasons));
        }
        let mut layer = plugin.layer(Box::new(NothingBelow));
        let required = options.required;
        Ok(ComponentLayer {
            param: layer.configure(options)?,
            augmented_tools: layer.augmented_tools(),
            layer,
            required,
        })
    }
}

impl Layer for ComponentLayer {
    fn augment(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError> {
        self.layer.augment(tools).map_err(ProviderError::from)
    }

    fn route(&mut self, id: &str, tool: &str, arguments: Option<&str>) -> Routing {
        match self.layer.route(super::call(id, tool, arguments)) {
            Ok(routed) => Routing::of(arguments, routed),
            // A fault of the layer's (a trap, a limit, a violation): the call is not sent.
            Err(fault) => Routing::Answer(ToolResult::error(id, fault.message())),
        }
    }

    fn strips(&self, tool: &str) -> bool {
        self.augmented_tools.contains(tool)
    }

    fn param(&self) -> &str {
        &self.param
    }

    fn required(&self) -> bool {
        self.required
    }
}
