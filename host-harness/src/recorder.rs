//! A layer that changes nothing and remembers every call that passed through it: put
//! under the reasons layer, it shows what the tool provider really received.

use crate::provider::{Json, Provider};
use reasons_transform::{ProviderError, ToolCall, ToolResult};
use std::sync::{Arc, Mutex, PoisonError};

/// The calls a [`Recorder`] saw, shared with whoever reads them.
pub type Received = Arc<Mutex<Vec<ToolCall>>>;

/// A pass-through provider that records the calls it forwards.
pub struct Recorder {
    inner: Box<dyn Provider>,
    received: Received,
}

impl Recorder {
    /// A recorder over `inner`, and the handle its calls are recorded in.
    pub fn new(inner: Box<dyn Provider>) -> (Recorder, Received) {
        let received = Received::default();
        let recorder = Recorder {
            inner,
            received: received.clone(),
        };
        (recorder, received)
    }
}

impl Provider for Recorder {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        self.inner.tools_for_llm()
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        self.received
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .extend(calls.iter().cloned());
        self.inner.execute_tool_calls(calls)
    }
}
