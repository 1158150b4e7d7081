//! The reasons component as the proxy drives it: messages come in one at a time, so the
//! layer sits over a relay that hands it the catalogue the server just listed and keeps
//! the calls the layer forwards, which the proxy then sends on to the server. The host's
//! gate (R16) checks every call the component forwards, as for any plugin.

use crate::plugin::{Plugin, StripSet, WasmLayer};
use crate::provider::{Json, Provider};
use reasons_transform::{Arguments, Options, ProviderError, ToolCall, ToolResult};
use std::sync::{Arc, Mutex, PoisonError};

/// What becomes of a `tools/call`.
pub enum Forward {
    /// Send it to the server with these arguments (the layer's output, byte for byte).
    Send(String),
    /// Send it as it came: the layer left its arguments untouched.
    AsItCame,
    /// Do not send it: the layer answered it (a refusal in required mode, or a fault).
    Answer(ToolResult),
}

/// The layer, over a relay.
pub struct ProxyLayer {
    layer: WasmLayer,
    relay: Arc<Mutex<Relay>>,
    strip_set: StripSet,
    param: String,
    /// Whether a call without the parameter is refused (and so must go through the layer).
    required: bool,
}

/// What the layer's provider import answers from, and what it was asked to forward.
#[derive(Default)]
struct Relay {
    catalogue: Vec<Json>,
    forwarded: Vec<ToolCall>,
}

/// The provider below the layer: the server, as far as this one message goes.
struct RelayBelow(Arc<Mutex<Relay>>);

impl Provider for RelayBelow {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        Ok(lock(&self.0).catalogue.clone())
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        // The real answer comes from the server later; the layer passes it on unchanged.
        let results = calls
            .iter()
            .map(|call| ToolResult::ok(&call.id, "null"))
            .collect();
        lock(&self.0).forwarded.extend(calls);
        Ok(results)
    }
}

fn lock(relay: &Mutex<Relay>) -> std::sync::MutexGuard<'_, Relay> {
    relay.lock().unwrap_or_else(PoisonError::into_inner)
}

impl ProxyLayer {
    /// The plugin, configured with `options`, over a relay.
    pub fn new(plugin: &Plugin, options: Options) -> anyhow::Result<ProxyLayer> {
        anyhow::ensure!(
            plugin.is_reasons(),
            "`{}` does not export agent:tools/reasons@0.1.0: the proxy needs it to know \
             which calls carry the model's reason",
            plugin.name()
        );
        let relay = Arc::new(Mutex::new(Relay::default()));
        let mut layer = plugin.layer(Box::new(RelayBelow(relay.clone())));
        let required = options.required;
        layer.configure(options)?;
        Ok(ProxyLayer {
            param: layer.reason_param()?,
            strip_set: layer.strip_set(),
            layer,
            relay,
            required,
        })
    }

    /// The server's whole catalogue, as it was last listed, through the layer: the
    /// declarations as the model is to see them, one for one, and the strip set becomes
    /// this catalogue's (R8). A listing that fails leaves the set as it was.
    pub fn catalogue(&mut self, tools: Vec<Json>) -> Result<Vec<Json>, ProviderError> {
        let count = tools.len();
        lock(&self.relay).catalogue = tools;
        let listed = self.layer.tools_for_llm();
        // The relay keeps nothing between listings: the proxy holds the one catalogue.
        lock(&self.relay).catalogue = Vec::new();
        let listed = listed?;
        if listed.len() != count {
            return Err(ProviderError::Failed(format!(
                "the layer listed {} declarations for {count}",
                listed.len()
            )));
        }
        Ok(listed)
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
        let mut results = self
            .layer
            .execute_tool_calls(vec![call])
            .unwrap_or_default();
        let forwarded = std::mem::take(&mut lock(&self.relay).forwarded);
        match (forwarded.into_iter().next(), results.pop()) {
            (Some(call), _) => match (arguments, call.arguments) {
                (Some(before), Arguments::Object(after)) if after != before => Forward::Send(after),
                _ => Forward::AsItCame,
            },
            (None, Some(answer)) => Forward::Answer(answer),
            (None, None) => Forward::Answer(ToolResult::error(id, reasons_transform::NO_RESULT)),
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
