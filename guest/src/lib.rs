//! The reasons component: the transform ([`reasons_transform`]) behind the WIT
//! interfaces of `wit/tools.wit` (the `reasons-layer` world), built for `wasm32-wasip2`.
//! It imports nothing but the provider below it.
//!
//! This file is the adapter: WIT types in, the transform in the middle, WIT types out
//! (`convert.rs`); the plugin host's `host-harness/src/plugin/convert.rs` is its mirror on the host's side.
#![cfg(target_arch = "wasm32")]
#![no_std]

extern crate alloc;
// The allocator, panic handler and `cabi_realloc`.
extern crate reasons_guest_runtime;

mod convert;

use alloc::string::String;
use alloc::vec::Vec;
use core::sync::atomic::{AtomicBool, Ordering};
use reasons_transform::{self as transform, Transform};
use spin::{LazyLock, Mutex, MutexGuard};

wit_bindgen::generate!({
    world: "reasons-layer",
    path: "../wit",
});

use agent::tools::provider as below;
use agent::tools::types::{ProviderError, ToolCall, ToolResult};
use exports::agent::tools::reasons as surface;

/// The instance's one layer. A component instance is single-threaded; the mutex only
/// gives the static the `Sync` it needs, and it is never held across an import call.
static LAYER: LazyLock<Mutex<Transform>> = LazyLock::new(|| Mutex::new(Transform::new()));

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
fn layer() -> MutexGuard<'static, Transform> {
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
                    .map(|call| layer.route(transform::ToolCall::from(call)))
                    .collect()
            };
            let results = transform::answer(routes.into_iter(), |forward| {
                let forward: Vec<ToolCall> = forward.into_iter().map(ToolCall::from).collect();
                below::execute_tool_calls(&forward)
                    .map(|results| {
                        results
                            .into_iter()
                            .map(transform::ToolResult::from)
                            .collect()
                    })
                    .map_err(transform::ProviderError::from)
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

    fn augment(catalogue: Vec<String>) -> Vec<String> {
        export(|| layer().list(catalogue))
    }

    fn route(call: ToolCall) -> Result<ToolCall, ToolResult> {
        export(|| {
            layer()
                .route(transform::ToolCall::from(call))
                .map(ToolCall::from)
                .map_err(ToolResult::from)
        })
    }
}

export!(Component);
