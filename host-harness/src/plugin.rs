//! Layers that are WebAssembly components: any component of the `middleware` world, the
//! reasons component among them, sandboxed and stacked over a host provider.
//!
//! A [`Plugin`] is compiled once (engine, component, `InstancePre`); each [`WasmLayer`]
//! instantiates it in a store of its own. A trap, a runaway loop (fuel) or a memory bomb
//! (a store limit) drops the store; the next call gets a fresh instance that is given the
//! options and the last catalogue again, so it still knows the strip set (R15).

use crate::provider::{self, Json, Provider};
use anyhow::{Context, anyhow};
use once_cell::sync::Lazy;
use reasons::{Options, Position, ProviderError, ToolCall, ToolResult};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use wasmtime::component::{Component, HasSelf, InstancePre, Linker};
use wasmtime::{Config, Engine, Store, StoreLimits, StoreLimitsBuilder, Trap};

mod bindings {
    wasmtime::component::bindgen!({ world: "reasons-layer", path: "../wit" });
}

use bindings::agent::tools::types as wit;
use bindings::exports::agent::tools::provider::{
    Guest as ProviderExport, GuestIndices as ProviderIndices,
};
use bindings::exports::agent::tools::reasons::{
    self as wit_reasons, Guest as ReasonsExport, GuestIndices as ReasonsIndices,
};

/// The reasons component, built from `guest/` by this crate's build script.
pub static REASONS_WASM: &[u8] = include_bytes!(env!("REASONS_WASM"));

/// One engine for every plugin: compiled code is only shared within an engine.
static ENGINE: Lazy<Engine> = Lazy::new(|| {
    let mut config = Config::new();
    // Fuel bounds a runaway loop by the instructions the plugin runs, not by wall time,
    // so the time a slow tool takes below the plugin never counts against it.
    config.consume_fuel(true);
    Engine::new(&config).expect("a default engine with fuel is a valid configuration")
});

/// The built-in reasons plugin, compiled on first use and shared.
static BUILT_IN: Lazy<Result<Plugin, String>> =
    Lazy::new(|| Plugin::new("reasons", REASONS_WASM).map_err(|error| format!("{error:#}")));

/// What a plugin may use per call before it is stopped.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Fuel per call: roughly the WebAssembly instructions it may execute.
    pub fuel: u64,
    /// The most linear memory an instance may grow to, in bytes.
    pub memory: usize,
}

impl Default for Limits {
    /// Enough for catalogues and batches of tens of megabytes; a runaway loop is
    /// stopped within a few seconds.
    fn default() -> Self {
        Limits {
            fuel: 4_000_000_000,
            memory: 256 << 20,
        }
    }
}

/// A compiled middleware component, ready to instantiate.
#[derive(Clone)]
pub struct Plugin {
    name: Arc<str>,
    pre: InstancePre<Below>,
    provider: Arc<ProviderIndices>,
    reasons: Option<Arc<ReasonsIndices>>,
    limits: Limits,
}

impl Plugin {
    /// The reasons component this crate embeds.
    pub fn reasons() -> anyhow::Result<Plugin> {
        BUILT_IN.clone().map_err(|error| anyhow!(error))
    }

    /// Compiles `bytes` as a component of the `agent:tools` middleware world. It may
    /// import nothing but `agent:tools/provider` (and `types`), or it is refused.
    pub fn new(name: &str, bytes: &[u8]) -> anyhow::Result<Plugin> {
        let component = Component::new(&ENGINE, bytes)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("`{name}` is not a WebAssembly component"))?;
        let mut linker = Linker::new(&ENGINE);
        bindings::ReasonsLayer::add_to_linker::<Below, HasSelf<Below>>(&mut linker, |below| below)?;
        let pre = linker
            .instantiate_pre(&component)
            .map_err(anyhow::Error::from)
            .with_context(|| {
                format!(
                    "`{name}` imports more than a plugin is given (only agent:tools/provider@0.1.0)"
                )
            })?;
        let provider = ProviderIndices::new(&pre)
            .map_err(anyhow::Error::from)
            .with_context(|| format!("`{name}` does not export agent:tools/provider@0.1.0"))?;
        Ok(Plugin {
            name: name.into(),
            reasons: ReasonsIndices::new(&pre).ok().map(Arc::new),
            provider: Arc::new(provider),
            pre,
            limits: Limits::default(),
        })
    }

    /// The same plugin under other limits.
    pub fn with_limits(mut self, limits: Limits) -> Plugin {
        self.limits = limits;
        self
    }

    /// The names of everything the component imports: what it could ever reach.
    pub fn imports(&self) -> Vec<String> {
        let component = self.pre.component();
        component
            .component_type()
            .imports(&ENGINE)
            .map(|(name, _)| name.to_string())
            .collect()
    }

    /// Whether the component exports the reasons surface (`agent:tools/reasons`).
    pub fn is_reasons(&self) -> bool {
        self.reasons.is_some()
    }

    /// A layer of this plugin over `below`.
    pub fn layer(&self, below: Box<dyn Provider>) -> WasmLayer {
        WasmLayer {
            plugin: self.clone(),
            below: Arc::new(Mutex::new(below)),
            options: None,
            catalogue: None,
            strip_set: StripSet::default(),
            session: None,
        }
    }
}

/// The names a reasons layer strips, as the host last learnt them: shared with the
/// layers above (the policy) that must tell the model's reason from a tool's own.
#[derive(Clone, Debug, Default)]
pub struct StripSet(Arc<RwLock<BTreeSet<String>>>);

impl StripSet {
    /// Whether calls to `tool` have their reason stripped.
    pub fn contains(&self, tool: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    fn replace(&self, names: impl IntoIterator<Item = String>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = names.into_iter().collect();
    }
}

/// A plugin instantiated over a provider: a [`Provider`] that never throws on execute.
pub struct WasmLayer {
    plugin: Plugin,
    below: Arc<Mutex<Box<dyn Provider>>>,
    /// The options the instance was configured with, given again to a fresh instance.
    options: Option<Options>,
    /// The last catalogue a listing went through with, replayed to a fresh instance.
    catalogue: Option<Vec<Json>>,
    /// The reasons plugin's strip set after the last listing.
    strip_set: StripSet,
    session: Option<Session>,
}

/// A live instance in its store.
struct Session {
    store: Store<Below>,
    provider: ProviderExport,
    reasons: Option<ReasonsExport>,
}

/// The store's data: the provider below, as the plugin's `provider` import sees it.
struct Below {
    inner: Arc<Mutex<Box<dyn Provider>>>,
    limits: StoreLimits,
    /// While set, listings are answered from it instead of the provider below.
    replay: Option<Vec<Json>>,
    /// The catalogue the provider below last listed through this store.
    listed: Option<Vec<Json>>,
}

impl WasmLayer {
    /// Configures the reasons plugin, or refuses with the plugin's message; refused
    /// options change nothing. The strip set is empty until the next listing.
    pub fn configure(&mut self, options: Options) -> anyhow::Result<()> {
        let wit_options = wit_reasons::Options::from(&options);
        let verdict = self
            .call_reasons(|reasons, store| reasons.call_configure(store, &wit_options))
            .map_err(|error| anyhow!("{error}"))?;
        verdict.map_err(|message| {
            anyhow!(
                "the plugin `{}` refused the options: {message}",
                self.plugin.name
            )
        })?;
        self.options = Some(options);
        self.catalogue = None;
        self.strip_set.replace([]);
        Ok(())
    }

    /// The strip set as it stands after each listing, for the layers above.
    pub fn strip_set(&self) -> StripSet {
        self.strip_set.clone()
    }

    /// The parameter's name as the plugin publishes it (R11).
    pub fn reason_param(&mut self) -> Result<String, ProviderError> {
        self.call_reasons(|reasons, store| reasons.call_reason_param(store))
    }

    /// The names the plugin's last listing augmented (R8).
    pub fn augmented_tools(&mut self) -> Result<Vec<String>, ProviderError> {
        self.call_reasons(|reasons, store| reasons.call_augmented_tools(store))
    }

    /// Calls into the reasons surface, if the plugin has one.
    fn call_reasons<T>(
        &mut self,
        work: impl FnOnce(&ReasonsExport, &mut Store<Below>) -> wasmtime::Result<T>,
    ) -> Result<T, ProviderError> {
        let name = self.plugin.name.clone();
        self.call(|session| match &session.reasons {
            Some(reasons) => work(reasons, &mut session.store),
            None => Err(wasmtime::format_err!(
                "`{name}` does not export agent:tools/reasons@0.1.0"
            )),
        })
    }

    /// Runs `work` on a live instance with a full tank; a trap ends the instance.
    fn call<T>(
        &mut self,
        work: impl FnOnce(&mut Session) -> wasmtime::Result<T>,
    ) -> Result<T, ProviderError> {
        let name = self.plugin.name.clone();
        let fuel = self.plugin.limits.fuel;
        let session = self.session().map_err(|error| {
            ProviderError::Failed(format!("the plugin `{name}` could not start: {error:#}"))
        })?;
        let outcome = session.store.set_fuel(fuel).and_then(|()| work(session));
        outcome.map_err(|error| {
            // A trap poisons the store: drop it, and the next call starts afresh.
            self.session = None;
            ProviderError::Failed(describe(&name, &error))
        })
    }

    /// The live instance, made (and configured, and given the last catalogue) if need be.
    fn session(&mut self) -> anyhow::Result<&mut Session> {
        let session = match self.session.take() {
            Some(session) => session,
            None => self.start()?,
        };
        Ok(self.session.insert(session))
    }

    fn start(&self) -> anyhow::Result<Session> {
        let plugin = &self.plugin;
        let below = Below {
            inner: self.below.clone(),
            limits: StoreLimitsBuilder::new()
                .memory_size(plugin.limits.memory)
                .build(),
            replay: None,
            listed: None,
        };
        let mut store = Store::new(&ENGINE, below);
        store.limiter(|below| &mut below.limits);
        store.set_fuel(plugin.limits.fuel)?;
        let instance = plugin.pre.instantiate(&mut store)?;
        let provider = plugin.provider.load(&mut store, &instance)?;
        let reasons = match &plugin.reasons {
            Some(indices) => Some(indices.load(&mut store, &instance)?),
            None => None,
        };
        if let (Some(options), Some(reasons)) = (&self.options, &reasons) {
            reasons
                .call_configure(&mut store, &options.into())?
                .map_err(|message| anyhow!("the options were refused: {message}"))?;
        }
        if let Some(catalogue) = &self.catalogue {
            // The strip set is a function of the options and the last catalogue (R8):
            // listing that catalogue again rebuilds it without asking the provider below.
            store.data_mut().replay = Some(catalogue.clone());
            provider
                .call_tools_for_llm(&mut store)?
                .map_err(|error| anyhow!("replaying the last listing failed: {error}"))?;
            store.data_mut().replay = None;
        }
        Ok(Session {
            store,
            provider,
            reasons,
        })
    }
}

impl Provider for WasmLayer {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        let answer = self.call(|session| session.provider.call_tools_for_llm(&mut session.store));
        let listed = self
            .session
            .as_mut()
            .and_then(|session| session.store.data_mut().listed.take());
        let declarations = answer?.map_err(ProviderError::from)?;
        // Only a listing that went all the way through replaces the catalogue (R8).
        if listed.is_some() {
            self.catalogue = listed;
        }
        if self.plugin.is_reasons() {
            let augmented = self.augmented_tools()?;
            self.strip_set.replace(augmented);
        }
        Ok(declarations)
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<String> = calls.iter().map(|call| call.id.clone()).collect();
        let calls: Vec<wit::ToolCall> = calls.into_iter().map(wit::ToolCall::from).collect();
        let answer = self
            .call(|session| {
                session
                    .provider
                    .call_execute_tool_calls(&mut session.store, &calls)
            })
            .and_then(|answer| answer.map_err(ProviderError::from))
            .map(|results| results.into_iter().map(ToolResult::from).collect());
        // Whatever the plugin answered, each call gets exactly one result (R13).
        Ok(reasons::complete(ids.iter().map(String::as_str), answer))
    }
}

/// What went wrong in a plugin, for the model and the human.
fn describe(name: &str, error: &wasmtime::Error) -> String {
    match error.downcast_ref::<Trap>() {
        Some(Trap::OutOfFuel) => format!("the plugin `{name}` ran out of fuel (a runaway loop?)"),
        Some(trap) => format!("the plugin `{name}` trapped: {trap}"),
        None => format!("the plugin `{name}` failed: {error:#}"),
    }
}

impl bindings::agent::tools::types::Host for Below {}

impl bindings::agent::tools::provider::Host for Below {
    fn tools_for_llm(&mut self) -> Result<Vec<String>, wit::ProviderError> {
        if let Some(catalogue) = &self.replay {
            return Ok(catalogue.clone());
        }
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let listed = provider::list(&mut **inner)?;
        self.listed = Some(listed.clone());
        Ok(listed)
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<wit::ToolCall>,
    ) -> Result<Vec<wit::ToolResult>, wit::ProviderError> {
        let mut inner = self.inner.lock().unwrap_or_else(PoisonError::into_inner);
        let calls = calls.into_iter().map(ToolCall::from).collect();
        let results = provider::guard("the tool provider", || inner.execute_tool_calls(calls))?;
        Ok(results.into_iter().map(wit::ToolResult::from).collect())
    }
}

impl From<ToolCall> for wit::ToolCall {
    fn from(call: ToolCall) -> Self {
        wit::ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                reasons::Arguments::Object(text) => wit::Arguments::Object(text),
                reasons::Arguments::Text(text) => wit::Arguments::Text(text),
            },
        }
    }
}

impl From<wit::ToolCall> for ToolCall {
    fn from(call: wit::ToolCall) -> Self {
        ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                wit::Arguments::Object(text) => reasons::Arguments::Object(text),
                wit::Arguments::Text(text) => reasons::Arguments::Text(text),
            },
        }
    }
}

impl From<wit::ToolResult> for ToolResult {
    fn from(result: wit::ToolResult) -> Self {
        ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<ToolResult> for wit::ToolResult {
    fn from(result: ToolResult) -> Self {
        wit::ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<wit::ProviderError> for ProviderError {
    fn from(error: wit::ProviderError) -> Self {
        match error {
            wit::ProviderError::Failed(message) => ProviderError::Failed(message),
            wit::ProviderError::Other(message) => ProviderError::Other(message),
        }
    }
}

impl From<ProviderError> for wit::ProviderError {
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::Failed(message) => wit::ProviderError::Failed(message),
            ProviderError::Other(message) => wit::ProviderError::Other(message),
        }
    }
}

impl From<&Options> for wit_reasons::Options {
    fn from(options: &Options) -> Self {
        wit_reasons::Options {
            name: options.name.clone(),
            description: options.description.clone(),
            required: options.required,
            position: match options.position {
                Position::Last => wit_reasons::Position::Last,
                Position::First => wit_reasons::Position::First,
            },
            leave_alone: options.leave_alone.clone(),
        }
    }
}
