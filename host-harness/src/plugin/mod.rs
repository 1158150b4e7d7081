//! Layers that are WebAssembly components: any component of the `middleware` world, the
//! reasons component among them, sandboxed and stacked over a host provider.
//!
//! A [`Plugin`] is compiled once (engine, component, `InstancePre`); each [`WasmLayer`]
//! instantiates it in a store of its own, under the [`Limits`] of the [`sandbox`]. A
//! trap, a deadline passed or a limit hit drops the store; the next call gets a fresh
//! instance that is given the options and the last catalogue again, so it still knows
//! the augmented tools (R15). Whatever it passes down goes through the [`integrity`] gate: only
//! calls of its own batch, once, unchanged but for its own parameter, and nothing while
//! it lists (R16); its work is bounded in time, memory and calls below (R17).

mod answers;
pub mod cache;
mod convert;
mod fault;
pub mod integrity;
mod layer;
mod refusal;
pub mod sandbox;

pub use cache::{Cache, Origin};
pub use fault::{Entry, Fault, FaultKind, Limit};
pub use layer::{AugmentedTools, WasmLayer};
pub use refusal::{ConfigureError, LoadError, LoadRefusal, Unconfigured};
pub use sandbox::Limits;

use crate::provider::Provider;
use once_cell::sync::Lazy;
use std::path::Path;
use std::sync::Arc;
use wasmtime::component::{HasSelf, InstancePre, Linker};

mod bindings {
    wasmtime::component::bindgen!({ world: "reasons-layer", path: "../wit" });
}

use bindings::exports::agent::tools::provider::GuestIndices as ProviderIndices;
use bindings::exports::agent::tools::reasons::GuestIndices as ReasonsIndices;

/// The reasons component, built from `guest/` by this crate's build script, as it is
/// released (its metadata included).
pub static REASONS_WASM: &[u8] = include_bytes!(env!("REASONS_WASM"));

/// The WIT package the component implements (`wit/`), encoded as a binary package.
pub static WIT_PACKAGE_WASM: &[u8] = include_bytes!(env!("REASONS_WIT_WASM"));

/// The WIT package the component implements, as `namespace:name@version`.
pub const WIT_PACKAGE: &str = env!("REASONS_WIT_PACKAGE");

/// The cache every plugin of this process is compiled through.
static CACHE: Lazy<Cache> = Lazy::new(Cache::from_env);

/// The built-in reasons plugin, compiled (or loaded from the cache) on first use.
static BUILT_IN: Lazy<Result<Plugin, LoadError>> =
    Lazy::new(|| Plugin::new("reasons", REASONS_WASM));

/// A compiled middleware component, ready to instantiate.
#[derive(Clone)]
pub struct Plugin {
    name: Arc<str>,
    pre: InstancePre<layer::Below>,
    provider: Arc<ProviderIndices>,
    reasons: Option<Arc<ReasonsIndices>>,
    limits: Limits,
    origin: Origin,
}

impl Plugin {
    /// The reasons component this crate embeds.
    pub fn reasons() -> Result<Plugin, LoadError> {
        BUILT_IN.clone()
    }

    /// The component in the file at `path`, named by its path in every message.
    pub fn load(path: &Path) -> Result<Plugin, LoadError> {
        let name = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|error| LoadError::new(&name, LoadRefusal::Unreadable(Arc::new(error))))?;
        Plugin::new(&name, &bytes)
    }

    /// Compiles `bytes` through the process's cache (see [`Cache::from_env`]).
    pub fn new(name: &str, bytes: &[u8]) -> Result<Plugin, LoadError> {
        Plugin::compile(name, bytes, &CACHE)
    }

    /// Compiles `bytes` as a component of the `agent:tools` middleware world, through
    /// `cache`. It must export `agent:tools/provider` and may import nothing but it (and
    /// `types`), or it is refused with a message naming `name` and the reason.
    pub fn compile(name: &str, bytes: &[u8], cache: &Cache) -> Result<Plugin, LoadError> {
        let engine = sandbox::engine();
        let refused = |refusal| LoadError::new(name, refusal);
        let words = |error: wasmtime::Error| format!("{error:#}");
        check_header(bytes).map_err(refused)?;
        let (component, origin) = cache
            .component(engine, bytes)
            .map_err(|error| refused(LoadRefusal::NotComponent(format!("{error:#}"))))?;
        let mut linker = Linker::new(engine);
        bindings::ReasonsLayer::add_to_linker::<_, HasSelf<_>>(&mut linker, |below| below)
            .expect("the host's own imports link");
        let pre = linker
            .instantiate_pre(&component)
            .map_err(|error| refused(LoadRefusal::ImportsTooMuch(words(error))))?;
        let provider = ProviderIndices::new(&pre)
            .map_err(|error| refused(LoadRefusal::NoProvider(words(error))))?;
        Ok(Plugin {
            name: name.into(),
            reasons: ReasonsIndices::new(&pre).ok().map(Arc::new),
            provider: Arc::new(provider),
            pre,
            limits: Limits::default(),
            origin,
        })
    }

    /// The same plugin under other limits.
    pub fn with_limits(mut self, limits: Limits) -> Plugin {
        self.limits = limits;
        self
    }

    /// The name it is known by in messages (its file's path, for a loaded one).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Where the compiled component came from when this plugin was made.
    pub fn origin(&self) -> &Origin {
        &self.origin
    }

    /// The names of everything the component imports: what it could ever reach.
    pub fn imports(&self) -> Vec<String> {
        let component = self.pre.component();
        component
            .component_type()
            .imports(sandbox::engine())
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// Whether the component exports the reasons surface (`agent:tools/reasons`).
    pub fn is_reasons(&self) -> bool {
        self.reasons.is_some()
    }

    /// A layer of this plugin over `below`: a session with an instance of its own.
    pub fn layer(&self, below: Box<dyn Provider>) -> WasmLayer {
        WasmLayer::new(self.clone(), below)
    }
}

/// Refuses what is plainly not a component before the parser says so less kindly.
fn check_header(bytes: &[u8]) -> Result<(), LoadRefusal> {
    const CORE_MODULE: &[u8] = b"\0asm\x01\0\0\0";
    if !bytes.starts_with(b"\0asm") {
        return Err(LoadRefusal::NotWasm);
    }
    if bytes.starts_with(CORE_MODULE) {
        return Err(LoadRefusal::CoreModule);
    }
    Ok(())
}
