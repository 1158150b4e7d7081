//! The layer's state and its two entry points, independent of how it is hosted.

use crate::call::{self, Found};
use crate::listing;
use crate::options::Options;
use crate::protocol::{self, ProviderError, ToolCall, ToolResult};
use alloc::collections::BTreeSet;
use alloc::format;
use alloc::string::String;
use alloc::vec::Vec;

/// The reasons layer: its options and the strip set the last listing left behind.
#[derive(Clone, Debug, Default)]
pub struct Reasons {
    options: Options,
    augmented: BTreeSet<String>,
}

impl Reasons {
    /// A layer with the contract's options. Nothing is stripped before the first listing (R8).
    pub fn new() -> Self {
        Self::default()
    }

    /// The options in force.
    pub fn options(&self) -> &Options {
        &self.options
    }

    /// Replaces the options, or refuses them whole with a message naming the bad one.
    /// Accepted options empty the strip set: it was read under the old ones.
    pub fn configure(&mut self, options: Options) -> Result<(), String> {
        options.validate()?;
        self.options = options;
        self.augmented.clear();
        Ok(())
    }

    /// The names the last listing augmented, in order: the only ones stripped (R8).
    pub fn augmented_tools(&self) -> Vec<String> {
        self.augmented.iter().cloned().collect()
    }

    /// Augments a catalogue the provider below listed and makes its names the strip set,
    /// replacing the old one whole (R1–R8). A listing that failed never gets here, so it
    /// leaves the set as it was.
    pub fn list(&mut self, catalogue: Vec<String>) -> Vec<String> {
        let listing = listing::augment(catalogue, &self.options);
        self.augmented = listing.augmented;
        listing.declarations
    }

    /// Strips the batch, hands what is to be forwarded to `below`, and answers every call
    /// exactly once, in order (R9, R13). `below` is not called for an empty batch.
    pub fn execute(
        &self,
        calls: Vec<ToolCall>,
        below: impl FnOnce(Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError>,
    ) -> Vec<ToolResult> {
        protocol::answer(calls, |call| self.route(call), below)
    }

    /// One call as the provider below is to receive it (R9), or its refusal in
    /// required mode.
    fn route(&self, call: ToolCall) -> Result<ToolCall, ToolResult> {
        if !self.augmented.contains(&call.name) {
            return Ok(call);
        }
        match call::find(call.arguments.text(), &self.options.name) {
            Found::Present { without, is_null } if !(is_null && self.options.required) => {
                Ok(ToolCall {
                    arguments: call.arguments.with_text(without),
                    ..call
                })
            }
            // Absent, or null where it is required.
            _ if self.options.required => Err(ToolResult::error(&call.id, &self.missing())),
            _ => Ok(call),
        }
    }

    /// What a call refused in required mode tells the model.
    fn missing(&self) -> String {
        format!(
            "This call was not run: it needs a `{}` argument ({}). Add it and call again.",
            self.options.name, self.options.description
        )
    }
}
