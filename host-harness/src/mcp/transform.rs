//! The reasons component as the proxy drives it: messages come in one at a time, so the
//! layer sits over a relay that hands it the catalogue the server just listed and keeps
//! the calls the layer forwards, which the proxy then sends on to the server.

use crate::plugin::{Plugin, StripSet, WasmLayer};
use crate::provider::{Json, Provider};
use reasons::{Arguments, Options, ProviderError, ToolCall, ToolResult};
use std::collections::{HashMap, HashSet};
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
pub struct Transform {
    layer: WasmLayer,
    relay: Arc<Mutex<Relay>>,
    strip_set: StripSet,
    param: String,
    /// The server's catalogue as last known: its last whole listing, plus declarations
    /// seen in the client's pages since. The strip set is always this catalogue's.
    known: Vec<Json>,
    /// The declarations in `known`, to add a page's new ones once.
    seen: HashSet<Json>,
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

impl Transform {
    /// The plugin, configured with `options`, over a relay.
    pub fn new(plugin: &Plugin, options: Options) -> anyhow::Result<Transform> {
        anyhow::ensure!(
            plugin.is_reasons(),
            "`{}` does not export agent:tools/reasons@0.1.0: the proxy needs it to know \
             which calls carry the model's reason",
            plugin.name()
        );
        let relay = Arc::new(Mutex::new(Relay::default()));
        let mut layer = plugin.layer(Box::new(RelayBelow(relay.clone())));
        layer.configure(options)?;
        Ok(Transform {
            param: layer.reason_param()?,
            strip_set: layer.strip_set(),
            layer,
            relay,
            known: Vec::new(),
            seen: HashSet::new(),
        })
    }

    /// The server's whole catalogue, as the proxy listed it: the strip set becomes its.
    pub fn catalogue(&mut self, tools: Vec<Json>) -> Result<(), ProviderError> {
        self.seen = tools.iter().cloned().collect();
        self.known = tools;
        self.list().map(drop)
    }

    /// A page of a listing the client asked for, as the model is to see it. The page's
    /// declarations join the known catalogue, which is listed whole, so that a page never
    /// shrinks the strip set and a name seen twice in different forms is doubtful (R7).
    pub fn page(&mut self, page: &[&str]) -> Result<Vec<Json>, ProviderError> {
        for declaration in page {
            if self.seen.insert(declaration.to_string()) {
                self.known.push(declaration.to_string());
            }
        }
        let listed = self.list()?;
        let augmented: HashMap<&str, &str> = self
            .known
            .iter()
            .map(String::as_str)
            .zip(listed.iter().map(String::as_str))
            .collect();
        Ok(page
            .iter()
            .map(|declaration| {
                augmented
                    .get(declaration)
                    .unwrap_or(declaration)
                    .to_string()
            })
            .collect())
    }

    /// Lists the known catalogue through the layer; the strip set becomes its.
    fn list(&mut self) -> Result<Vec<Json>, ProviderError> {
        lock(&self.relay).catalogue = self.known.clone();
        let listed = self.layer.tools_for_llm()?;
        if listed.len() != self.known.len() {
            return Err(ProviderError::Failed(format!(
                "the layer listed {} declarations for {}",
                listed.len(),
                self.known.len()
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
            (None, None) => Forward::Answer(ToolResult::error(id, reasons::NO_RESULT)),
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
}
