//! The component's adapter: WIT types in, [`Reasons`] in the middle, WIT types out.

use crate::layer::Reasons;
use crate::options::{Options, Position};
use crate::protocol;
use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use spin::{LazyLock, Mutex, MutexGuard};

wit_bindgen::generate!({
    world: "reasons-layer",
    path: "../wit",
});

use agent::tools::provider as below;
use agent::tools::types::{Arguments, ProviderError, ToolCall, ToolResult};
use exports::agent::tools::reasons::{self as surface, Position as WitPosition};

/// The instance's one layer. A component instance is single-threaded; the mutex only
/// gives the static the `Sync` it needs, and it is never held across an import call.
static LAYER: LazyLock<Mutex<Reasons>> = LazyLock::new(|| Mutex::new(Reasons::new()));

/// Set while an export runs. An export that finds it set was entered after an earlier
/// one never returned: a host exception unwound through the instance (jco turns a
/// provider that throws into exactly that). Whatever that left half-done, the instance
/// traps at once rather than run on it, and the host starts a fresh one.
static IN_CALL: AtomicBool = AtomicBool::new(false);

/// Runs one export's `work` on the layer, refusing an instance a host exception unwound.
fn export<T>(work: impl FnOnce() -> T) -> T {
    if IN_CALL.swap(true, Ordering::Relaxed) {
        core::arch::wasm32::unreachable()
    }
    let out = work();
    IN_CALL.store(false, Ordering::Relaxed);
    out
}

/// The layer, for a moment. Never contended (see [`IN_CALL`]); if it were, trapping is
/// the one answer that cannot run on broken state.
fn layer() -> MutexGuard<'static, Reasons> {
    LAYER
        .try_lock()
        .unwrap_or_else(|| core::arch::wasm32::unreachable())
}

struct Component;

impl exports::agent::tools::provider::Guest for Component {
    fn tools_for_llm() -> Result<Vec<String>, ProviderError> {
        export(|| {
            // R14: a provider that cannot list fails the listing, and the set stays (R8).
            let catalogue = below::tools_for_llm()?;
            Ok(layer().list(catalogue))
        })
    }

    fn execute_tool_calls(calls: Vec<ToolCall>) -> Result<Vec<ToolResult>, ProviderError> {
        export(|| {
            // Routed with the layer held, forwarded with it released.
            let routes: Vec<_> = {
                let layer = layer();
                calls
                    .into_iter()
                    .map(|call| layer.route(protocol::ToolCall::from(call)))
                    .collect()
            };
            let results = protocol::answer(routes.into_iter(), |forward| {
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
        })
    }
}

impl surface::Guest for Component {
    fn current_options() -> surface::Options {
        export(|| layer().options().clone().into())
    }

    fn configure(options: surface::Options) -> Result<(), String> {
        export(|| layer().configure(options.into()))
    }

    fn reason_param() -> String {
        export(|| layer().options().name.clone())
    }

    fn augmented_tools() -> Vec<String> {
        export(|| layer().augmented_tools())
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
