//! Building a stack of layers from the bottom up, and using it without ever being
//! thrown at.
//!
//! ```no_run
//! # use reasons_host::*;
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! # let tools = FsTools::new(std::path::Path::new("."))?;
//! // Policy( Reasons( FsTools ) )
//! let stack = Stack::new(tools)
//!     .reasons(&Plugin::reasons()?, reasons_transform::Options::default())?
//!     .policy(vec![], Box::new(|_| true));
//! # Ok(()) }
//! ```

use crate::plugin::{ConfigureError, Plugin};
use crate::policy::{OnAsk, Policy, ReasonSource, Rule};
use crate::provider::{self, Json, Provider};
use reasons_transform::{Options, ProviderError, ToolCall, ToolResult};

/// A provider with layers stacked on it, the last one added on top.
pub struct Stack {
    top: Box<dyn Provider>,
    /// Where the nearest reasons layer below the top puts the reason, for the policy.
    source: ReasonSource,
}

impl Stack {
    /// A stack of one provider: the real tools.
    pub fn new(bottom: impl Provider + 'static) -> Stack {
        Stack {
            top: Box::new(bottom),
            source: ReasonSource::none(),
        }
    }

    /// Puts a host-side layer on top.
    pub fn layer<P: Provider + 'static>(self, wrap: impl FnOnce(Box<dyn Provider>) -> P) -> Stack {
        Stack {
            top: Box::new(wrap(self.top)),
            source: self.source,
        }
    }

    /// Puts a middleware component on top, as it is.
    pub fn plugin(self, plugin: &Plugin) -> Stack {
        self.layer(|below| plugin.layer(below))
    }

    /// Puts a reasons component on top, configured with `options`.
    pub fn reasons(self, plugin: &Plugin, options: Options) -> Result<Stack, ConfigureError> {
        let mut layer = plugin.layer(self.top);
        let source = ReasonSource {
            param: layer.configure(options)?,
            augmented_tools: layer.augmented_tools(),
        };
        Ok(Stack {
            top: Box::new(layer),
            source,
        })
    }

    /// Puts the permission policy on top, reading the reason under the name the reasons
    /// layer below publishes (R11).
    pub fn policy(self, rules: Vec<Rule>, on_ask: OnAsk) -> Stack {
        let source = self.source.clone();
        self.layer(|below| Policy::new(below, rules, source, on_ask))
    }

    /// Where the policy reads the model's reason.
    pub fn reason_source(&self) -> &ReasonSource {
        &self.source
    }

    /// The catalogue as the model is to see it; fails as the provider fails (R14).
    pub fn list(&mut self) -> Result<Vec<Json>, ProviderError> {
        provider::list(&mut *self.top)
    }

    /// One result per call, in order, whatever happens below (R13).
    pub fn execute(&mut self, calls: Vec<ToolCall>) -> Vec<ToolResult> {
        provider::execute(&mut *self.top, calls)
    }
}
