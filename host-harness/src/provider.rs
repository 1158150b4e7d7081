//! The host's side of the provider contract: the trait every layer and tool source
//! implements, and the guards that keep its never-throw promise (R13, R14).

use reasons_transform::{ProviderError, ToolCall, ToolResult};
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind};

pub use reasons_transform::Json;

/// A source of tools, or a layer over one: the WIT `provider` interface, host-side.
pub trait Provider: Send {
    /// The tools, one JSON declaration each. Fails rather than answer a shorter list (R14).
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError>;

    /// Executes a batch; one result per call, in order, when it can answer at all.
    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError>;
}

impl<P: Provider + ?Sized> Provider for Box<P> {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        (**self).tools_for_llm()
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        (**self).execute_tool_calls(calls)
    }
}

/// Runs `work`, turning a panic into a provider error that says who panicked.
pub fn guard<T>(
    who: &str,
    work: impl FnOnce() -> Result<T, ProviderError>,
) -> Result<T, ProviderError> {
    catch_unwind(AssertUnwindSafe(work)).unwrap_or_else(|payload| {
        Err(ProviderError::Failed(format!(
            "{who} panicked: {}",
            panic_message(&*payload)
        )))
    })
}

/// Lists `provider`'s tools; a panic becomes the listing's error (R14).
pub fn list(provider: &mut dyn Provider) -> Result<Vec<Json>, ProviderError> {
    guard("the tool provider", || provider.tools_for_llm())
}

/// Executes `calls` on `provider` and answers every call exactly once, in order,
/// whatever the provider does: fail, panic, or answer the wrong calls (R13).
pub fn execute(provider: &mut dyn Provider, calls: Vec<ToolCall>) -> Vec<ToolResult> {
    if calls.is_empty() {
        return Vec::new();
    }
    let ids = reasons_transform::CallIds::of(&calls);
    let answer = guard("the tool provider", || provider.execute_tool_calls(calls));
    reasons_transform::complete(ids.iter(), answer)
}

/// A provider with a fixed catalogue that runs nothing: it answers every call with the
/// same content. The bottom of a dry run, and of a benchmark.
pub struct FixedTools {
    declarations: Vec<Json>,
    answer: Json,
}

impl FixedTools {
    /// A provider listing `declarations` and answering every call with `answer`.
    pub fn new(declarations: Vec<Json>, answer: &str) -> FixedTools {
        FixedTools {
            declarations,
            answer: answer.to_string(),
        }
    }
}

impl Provider for FixedTools {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        Ok(self.declarations.clone())
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        Ok(calls
            .iter()
            .map(|call| ToolResult::ok(&call.id, &self.answer))
            .collect())
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}
