//! The reasons transform linked into the host as plain Rust: the same code as the
//! component, without the sandbox. The tests hold the two to byte-identical output, and
//! the benchmarks measure what the sandbox costs.

use crate::provider::{self, Json, Provider};
use reasons_transform::{Options, ProviderError, ToolCall, ToolResult, Transform};

/// The reasons layer over `inner`, running natively.
pub struct NativeReasons {
    layer: Transform,
    inner: Box<dyn Provider>,
}

impl NativeReasons {
    /// A layer with `options` over `inner`, or the options' error.
    pub fn new(inner: Box<dyn Provider>, options: Options) -> Result<NativeReasons, String> {
        let mut layer = Transform::new();
        layer.configure(options)?;
        Ok(NativeReasons { layer, inner })
    }

    /// The names the last listing augmented (R8).
    pub fn augmented_tools(&self) -> Vec<String> {
        self.layer.augmented_tools()
    }
}

impl Provider for NativeReasons {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        let catalogue = provider::list(&mut *self.inner)?;
        Ok(self.layer.list(catalogue))
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        let inner = &mut self.inner;
        Ok(self.layer.execute(calls, |forward| {
            provider::guard("the tool provider", || inner.execute_tool_calls(forward))
        }))
    }
}
