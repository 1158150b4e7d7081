//! The component's adapter: WIT types in, [`Reasons`] in the middle, WIT types out.

use crate::layer::Reasons;
use crate::options::{Options, Position};
use crate::protocol;
use alloc::string::String;
use alloc::vec::Vec;
use spin::{LazyLock, Mutex};

wit_bindgen::generate!({
    world: "reasons-layer",
    path: "../wit",
});

use agent::tools::provider as below;
use agent::tools::types::{Arguments, ProviderError, ToolCall, ToolResult};
use exports::agent::tools::reasons::{self as surface, Position as WitPosition};

/// The instance's one layer. A component instance is single-threaded; the mutex only
/// gives the static the `Sync` it needs.
static LAYER: LazyLock<Mutex<Reasons>> = LazyLock::new(|| Mutex::new(Reasons::new()));

struct Component;

impl exports::agent::tools::provider::Guest for Component {
    fn tools_for_llm() -> Result<Vec<String>, ProviderError> {
        // R14: a provider that cannot list fails the listing, and the set stays (R8).
        let catalogue = below::tools_for_llm()?;
        Ok(LAYER.lock().list(catalogue))
    }

    fn execute_tool_calls(calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError> {
        let calls = calls.into_iter().map(protocol::ToolCall::from).collect();
        let results = LAYER.lock().execute(calls, |forward| {
            let forward: Vec<ToolCall> = forward.into_iter().map(ToolCall::from).collect();
            below::execute_tool_calls(&forward)
                .map(|results| {
                    results
                        .into_iter()
                        .map(protocol::ToolResult::from)
                        .collect()
                })
                .map_err(protocol::ProviderError::from)
        });
        Ok(results.into_iter().map(ToolResult::from).collect())
    }
}

impl surface::Guest for Component {
    fn current_options() -> surface::Options {
        LAYER.lock().options().clone().into()
    }

    fn configure(options: surface::Options) -> Result<(), String> {
        LAYER.lock().configure(options.into())
    }

    fn reason_param() -> String {
        LAYER.lock().options().name.clone()
    }

    fn augmented_tools() -> Vec<String> {
        LAYER.lock().augmented_tools()
    }
}

export!(Component);

impl From<ToolCall> for protocol::ToolCall {
    fn from(call: ToolCall) -> Self {
        protocol::ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                Arguments::Object(text) => protocol::Arguments::Object(text),
                Arguments::Text(text) => protocol::Arguments::Text(text),
            },
        }
    }
}

impl From<protocol::ToolCall> for ToolCall {
    fn from(call: protocol::ToolCall) -> Self {
        ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                protocol::Arguments::Object(text) => Arguments::Object(text),
                protocol::Arguments::Text(text) => Arguments::Text(text),
            },
        }
    }
}

impl From<ToolResult> for protocol::ToolResult {
    fn from(result: ToolResult) -> Self {
        protocol::ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<protocol::ToolResult> for ToolResult {
    fn from(result: protocol::ToolResult) -> Self {
        ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<ProviderError> for protocol::ProviderError {
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::Failed(message) => protocol::ProviderError::Failed(message),
            ProviderError::Other(message) => protocol::ProviderError::Other(message),
        }
    }
}

impl From<surface::Options> for Options {
    fn from(options: surface::Options) -> Self {
        Options {
            name: options.name,
            description: options.description,
            required: options.required,
            position: match options.position {
                WitPosition::Last => Position::Last,
                WitPosition::First => Position::First,
            },
            leave_alone: options.leave_alone,
        }
    }
}

impl From<Options> for surface::Options {
    fn from(options: Options) -> Self {
        surface::Options {
            name: options.name,
            description: options.description,
            required: options.required,
            position: match options.position {
                Position::Last => WitPosition::Last,
                Position::First => WitPosition::First,
            },
            leave_alone: options.leave_alone,
        }
    }
}
