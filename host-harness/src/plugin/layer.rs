//! A plugin instantiated over a provider: the [`WasmLayer`], its store, and the host side
//! of the plugin's `provider` import.

use super::answers;
use super::bindings::agent::tools::types as wit;
use super::bindings::exports::agent::tools::provider::Guest as ProviderExport;
use super::bindings::exports::agent::tools::reasons::{
    self as wit_reasons, Guest as ReasonsExport,
};
use super::integrity::{Added, Call, Given};
use super::sandbox::{self, Meter};
use super::{ConfigureError, Entry, Fault, FaultKind, Plugin, Unconfigured};
use crate::provider::{self, Json, Provider};
use reasons_transform::{Options, ProviderError, ToolCall, ToolResult};
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, PoisonError, RwLock};
use std::time::Instant;
use wasmtime::Store;

/// The names a reasons layer strips, as the host last learnt them: shared with the
/// layers above (the policy) that must tell the model's reason from a tool's own.
#[derive(Clone, Debug, Default)]
pub struct AugmentedTools(Arc<RwLock<BTreeSet<String>>>);

impl AugmentedTools {
    /// Whether calls to `tool` have their reason stripped.
    pub fn contains(&self, tool: &str) -> bool {
        self.0
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(tool)
    }

    /// The names, in order.
    pub fn names(&self) -> Vec<String> {
        let names = self.0.read().unwrap_or_else(PoisonError::into_inner);
        names.iter().cloned().collect()
    }

    pub(super) fn replace(&self, names: impl IntoIterator<Item = String>) {
        *self.0.write().unwrap_or_else(PoisonError::into_inner) = names.into_iter().collect();
    }
}

/// A plugin instantiated over a provider: a [`Provider`] that never throws on execute.
/// Each layer has its own instance, options and augmented tools.
pub struct WasmLayer {
    plugin: Plugin,
    below: Arc<Mutex<Box<dyn Provider>>>,
    /// The options the instance was configured with, given again to a fresh instance.
    options: Option<Options>,
    /// The parameter the reasons plugin adds, as it published it when configured: the
    /// one thing it may take off a call on its way down (R16).
    param: Option<String>,
    /// The last catalogue a listing went through with, replayed to a fresh instance.
    catalogue: Option<Vec<Json>>,
    /// The reasons plugin's augmented tools after the last listing.
    augmented_tools: AugmentedTools,
    /// The plugin's session: its instance, made when a call needs one.
    session: Option<Session>,
}

/// A session of the plugin: an instance in its store, kept from call to call until a
/// fault or new options end it.
struct Session {
    store: Store<Below>,
    provider: ProviderExport,
    reasons: Option<ReasonsExport>,
}

/// The store's data: the provider below, as the plugin's `provider` import sees it.
pub(super) struct Below {
    inner: Arc<Mutex<Box<dyn Provider>>>,
    meter: Meter,
    gate: Gate,
    /// The first thing the plugin tried below that the gate refused.
    violation: Option<String>,
    /// The catalogue the provider below last listed through this store.
    listed: Option<Vec<Json>>,
}

/// What the plugin may do below during the call under way (R16, R17): one listing while
/// it lists, one execution of calls from its batch while it executes, nothing otherwise.
enum Gate {
    /// Configuring, or the reasons surface: nothing below.
    Shut,
    /// A listing; answered from `replay`, when set, without asking the provider below.
    List {
        replay: Option<Vec<Json>>,
        done: bool,
    },
    /// An execution of calls from `given`.
    Execute {
        given: Given<wit::ToolCall>,
        done: bool,
    },
}

impl WasmLayer {
    pub(super) fn new(plugin: Plugin, below: Box<dyn Provider>) -> WasmLayer {
        WasmLayer {
            plugin,
            below: Arc::new(Mutex::new(below)),
            options: None,
            param: None,
            catalogue: None,
            augmented_tools: AugmentedTools::default(),
            session: None,
        }
    }

    /// Configures the reasons plugin, or refuses with the plugin's message; refused
    /// options change nothing. The augmented tools are empty until the next listing. The
    /// parameter's name the plugin publishes for these options (R11).
    pub fn configure(&mut self, options: Options) -> Result<String, ConfigureError> {
        let name = self.plugin.name.clone();
        let fault = |fault: Fault| ConfigureError::new(&name, Unconfigured::Fault(fault));
        let wit_options = wit_reasons::Options::from(&options);
        let verdict = self
            .call_reasons(Entry::Configure, |reasons, store| {
                reasons.call_configure(store, &wit_options)
            })
            .map_err(fault)?;
        verdict.map_err(|message| ConfigureError::new(&name, Unconfigured::Refused(message)))?;
        self.options = Some(options);
        self.catalogue = None;
        self.augmented_tools.replace([]);
        let param = self.reason_param().map_err(fault)?;
        self.param = Some(param.clone());
        Ok(param)
    }

    /// The augmented tools as they stand after each listing, for the layers above.
    pub fn augmented_tools(&self) -> AugmentedTools {
        self.augmented_tools.clone()
    }

    /// The parameter's name as the plugin publishes it (R11).
    pub fn reason_param(&mut self) -> Result<String, Fault> {
        self.call_reasons(Entry::ReasonParam, |reasons, store| {
            reasons.call_reason_param(store)
        })
    }

    /// The augmented tools the plugin claims for its last listing (the WIT's `augmented-tools`,
    /// R8). The host strips only the part of it that its own reading confirms: see
    /// [`WasmLayer::augmented_tools`].
    pub fn claimed_augmented_tools(&mut self) -> Result<Vec<String>, Fault> {
        self.call_reasons(Entry::AugmentedTools, |reasons, store| {
            reasons.call_augmented_tools(store)
        })
    }

    /// The direct surface (WIT 0.1.1): `catalogue`, as the provider below lists it,
    /// augmented by the plugin without it asking below, one declaration for one. The
    /// catalogue becomes the one a fresh instance is given again, and the augmented tools
    /// becomes this catalogue's, as after a listing.
    pub fn augment(&mut self, catalogue: Vec<Json>) -> Result<Vec<Json>, Fault> {
        let declarations = self.call_reasons(Entry::Augment, |reasons, store| {
            reasons.call_augment(store, &catalogue)
        })?;
        let name = &self.plugin.name;
        let fault = match declarations.len() == catalogue.len() {
            true => answers::check_declarations(name, &catalogue, &declarations)
                .err()
                .map(|words| Fault::new(name, Entry::Augment, FaultKind::Misanswered, words)),
            false => Some(Fault::new(
                name,
                Entry::Augment,
                FaultKind::Misanswered,
                format!(
                    "the plugin `{name}` augmented {} declarations into {}",
                    catalogue.len(),
                    declarations.len()
                ),
            )),
        };
        if let Some(fault) = fault {
            // As a listing that failed: the instance holds a set of augmented tools nobody will see.
            self.session = None;
            return Err(fault);
        }
        self.catalogue = Some(catalogue);
        self.read_augmented_tools()?;
        Ok(declarations)
    }

    /// The direct surface (WIT 0.1.1): one call as the plugin would pass it down, or the
    /// result it answers it with; nothing runs below. What it routes is held to the gate's
    /// rule (R16): the same id and name, the same arguments less at most its parameter on
    /// a tool of the augmented tools. A call routed otherwise, or answered under another id, is
    /// refused and the instance dropped, as for a violation below.
    pub fn route(&mut self, call: ToolCall) -> Result<Result<ToolCall, ToolResult>, Fault> {
        // One copy of the call, shared with the gate's check, as for a batch.
        let given = Arc::new(vec![wit::ToolCall::from(call)]);
        let routed = self.call_reasons(Entry::Route, |reasons, store| {
            reasons.call_route(store, &given[0])
        })?;
        let added = self.param().map(|param| Added {
            param,
            to: self.augmented_tools.clone(),
        });
        let id = &given[0].id;
        let verdict = match &routed {
            Ok(out) => Given::new(given.clone(), added).admit(std::slice::from_ref(out)),
            Err(answer) if answer.call_id != *id => Err(format!(
                "answered call `{id}` under the id `{}`",
                answer.call_id
            )),
            Err(_) => Ok(()),
        };
        if let Err(violation) = verdict {
            self.session = None;
            let words = refused(&self.plugin.name, &violation);
            let kind = FaultKind::SteppedOutOfLine;
            return Err(Fault::new(&self.plugin.name, Entry::Route, kind, words));
        }
        Ok(routed.map(ToolCall::from).map_err(ToolResult::from))
    }

    /// The augmented tools after a listing: what the plugin claims, as far as the host's own
    /// reading of the catalogue confirms it.
    fn read_augmented_tools(&mut self) -> Result<(), Fault> {
        let claimed = self.claimed_augmented_tools()?;
        let param = self.param();
        let free = self.free_for(param.as_deref());
        self.augmented_tools
            .replace(claimed.into_iter().filter(|tool| free.contains(tool)));
        Ok(())
    }

    /// The parameter the plugin publishes, asked for once (at `configure`, or here when
    /// it was never configured); `None` for a plugin without the reasons surface.
    fn param(&mut self) -> Option<String> {
        if self.param.is_none() && self.plugin.is_reasons() {
            self.param = self.reason_param().ok();
        }
        self.param.clone()
    }

    /// The tools of the last catalogue whose own schemas leave `param` free: the only ones
    /// a plugin may take it off (R5, R16). Read by the host's own copy of the transform, so
    /// that a plugin claiming to have added a parameter the tool really has (`path`, a
    /// `dry_run` flag) cannot take that argument off an approved call.
    fn free_for(&self, param: Option<&str>) -> BTreeSet<String> {
        let (Some(param), Some(catalogue)) = (param, &self.catalogue) else {
            return BTreeSet::new();
        };
        let options = Options {
            name: param.to_string(),
            leave_alone: self
                .options
                .as_ref()
                .map(|options| options.leave_alone.clone())
                .unwrap_or_default(),
            ..Options::default()
        };
        let mut host = reasons_transform::Transform::new();
        if host.configure(options).is_err() {
            // A name the transform would not take is no parameter a layer may add.
            return BTreeSet::new();
        }
        host.list(catalogue.clone());
        host.augmented_tools().into_iter().collect()
    }

    /// Calls into the reasons surface, if the plugin has one.
    fn call_reasons<T>(
        &mut self,
        entry: Entry,
        work: impl FnOnce(&ReasonsExport, &mut Store<Below>) -> wasmtime::Result<T>,
    ) -> Result<T, Fault> {
        if !self.plugin.is_reasons() {
            let name = &self.plugin.name;
            let words = format!("the plugin `{name}` failed: {}", no_surface(name));
            return Err(Fault::new(name, entry, FaultKind::NoSurface, words));
        }
        let name = self.plugin.name.clone();
        self.call(Gate::Shut, entry, |session| match &session.reasons {
            Some(reasons) => work(reasons, &mut session.store),
            None => Err(wasmtime::format_err!("{}", no_surface(&name))),
        })
    }

    /// Runs `work` on the plugin's session, on the clock, with `gate` below it; a trap ends
    /// the instance, and so does a violation of the gate: the plugin's answer is then
    /// not used.
    fn call<T>(
        &mut self,
        gate: Gate,
        entry: Entry,
        work: impl FnOnce(&mut Session) -> wasmtime::Result<T>,
    ) -> Result<T, Fault> {
        let began = Instant::now();
        let name = self.plugin.name.clone();
        sandbox::on_enough_stack(|| {
            let session = self.session(began).map_err(|error| {
                let words = format!("the plugin `{name}` could not start: {error:#}");
                Fault::new(&name, entry, FaultKind::NotStarted, words)
            })?;
            start_clock(&mut session.store, began);
            session.store.data_mut().gate = gate;
            let answer = work(session);
            let below = session.store.data_mut();
            below.gate = Gate::Shut;
            let (kind, words) = match (below.violation.take(), answer) {
                (None, Ok(answer)) => return Ok(answer),
                (Some(violation), _) => (FaultKind::SteppedOutOfLine, refused(&name, &violation)),
                (None, Err(error)) => below.meter.describe(&name, &error),
            };
            // A trap poisons the store, and a plugin that stepped out of line is not
            // trusted with another call: drop it, and the next call starts afresh.
            self.session = None;
            Err(Fault::new(&name, entry, kind, words))
        })
    }

    /// The plugin's session, made (and configured, and given the last catalogue) if need be.
    fn session(&mut self, began: Instant) -> wasmtime::Result<&mut Session> {
        let session = match self.session.take() {
            Some(session) => session,
            None => self.start(began)?,
        };
        Ok(self.session.insert(session))
    }

    fn start(&self, began: Instant) -> wasmtime::Result<Session> {
        let plugin = &self.plugin;
        let below = Below {
            inner: self.below.clone(),
            meter: Meter::new(plugin.limits),
            gate: Gate::Shut,
            violation: None,
            listed: None,
        };
        let mut store = Store::new(sandbox::engine(), below);
        store.limiter(|below| &mut below.meter);
        store.set_hostcall_fuel(plugin.limits.hostcall_data);
        store.epoch_deadline_callback(|mut store| Ok(store.data_mut().meter.at_deadline()));
        start_clock(&mut store, began);
        let instance = plugin.pre.instantiate(&mut store)?;
        let provider = plugin.provider.load(&mut store, &instance)?;
        let reasons = match &plugin.reasons {
            Some(indices) => Some(indices.load(&mut store, &instance)?),
            None => None,
        };
        if let (Some(options), Some(reasons)) = (&self.options, &reasons) {
            reasons
                .call_configure(&mut store, &options.into())?
                .map_err(|message| wasmtime::format_err!("the options were refused: {message}"))?;
        }
        if let Some(catalogue) = &self.catalogue {
            // The augmented tools are a function of the options and the last catalogue (R8):
            // listing that catalogue again rebuilds it without asking the provider below.
            store.data_mut().gate = Gate::List {
                replay: Some(catalogue.clone()),
                done: false,
            };
            let replayed = provider.call_tools_for_llm(&mut store)?;
            if let Some(violation) = store.data_mut().violation.take() {
                wasmtime::bail!("while its last listing was replayed, it {violation}");
            }
            replayed.map_err(|error| {
                wasmtime::format_err!("replaying the last listing failed: {error}")
            })?;
            store.data_mut().gate = Gate::Shut;
        }
        Ok(Session {
            store,
            provider,
            reasons,
        })
    }
}

/// Why a call into the reasons surface cannot be made.
fn no_surface(plugin: &str) -> String {
    format!("`{plugin}` does not export agent:tools/reasons@0.1.1")
}

/// What a caller is told of a plugin that stepped out of line (R16).
fn refused(plugin: &str, violation: &str) -> String {
    format!(
        "the plugin `{plugin}` {violation}: the host refused that and does not use the \
         plugin's answer"
    )
}

/// Starts the plugin's clock for a call that began at `began`. The deadline must be set
/// before every call: it is a point in epochs, not a span.
fn start_clock(store: &mut Store<Below>, began: Instant) {
    let ticks = store.data_mut().meter.start(began);
    store.set_epoch_deadline(ticks);
}

impl Provider for WasmLayer {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        let gate = Gate::List {
            replay: None,
            done: false,
        };
        let answer = self.call(gate, Entry::ToolsForLlm, |session| {
            session.provider.call_tools_for_llm(&mut session.store)
        });
        let listed = self
            .session
            .as_mut()
            .and_then(|session| session.store.data_mut().listed.take());
        let declarations = answer?.map_err(ProviderError::from)?;
        let below = listed
            .as_deref()
            .or(self.catalogue.as_deref())
            .unwrap_or_default();
        let name = &self.plugin.name;
        if let Err(words) = answers::check_declarations(name, below, &declarations) {
            // The instance now holds a set of augmented tools nobody above will ever see: start over
            // from the last good listing, as after a trap.
            self.session = None;
            let kind = FaultKind::Misanswered;
            return Err(Fault::new(name, Entry::ToolsForLlm, kind, words).into());
        }
        // Only a listing that went all the way through replaces the catalogue (R8).
        if listed.is_some() {
            self.catalogue = listed;
        }
        if self.plugin.is_reasons() {
            self.read_augmented_tools()?;
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
        let ids = reasons_transform::CallIds::of(&calls);
        let wit_calls: Arc<Vec<wit::ToolCall>> =
            Arc::new(calls.into_iter().map(wit::ToolCall::from).collect());
        let added = self.param().map(|param| Added {
            param,
            to: self.augmented_tools.clone(),
        });
        let gate = Gate::Execute {
            given: Given::new(wit_calls.clone(), added),
            done: false,
        };
        let answer = self
            .call(gate, Entry::ExecuteToolCalls, |session| {
                session
                    .provider
                    .call_execute_tool_calls(&mut session.store, &wit_calls)
            })
            .map_err(ProviderError::from)
            .and_then(|answer| answer.map_err(ProviderError::from))
            .map(|results| results.into_iter().map(ToolResult::from).collect());
        // Whatever the plugin answered, each call gets exactly one result (R13).
        Ok(answers::complete(&self.plugin.name, &ids, answer))
    }
}

impl wit::Host for Below {}

impl Call for wit::ToolCall {
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn arguments(&self) -> (bool, &str) {
        match &self.arguments {
            wit::Arguments::Object(text) => (true, text),
            wit::Arguments::Text(text) => (false, text),
        }
    }
}

impl Below {
    /// Records what the gate refused, and answers the plugin with it.
    fn refuse(&mut self, violation: String) -> wit::ProviderError {
        let message = format!("refused by the host: the plugin {violation}");
        self.violation.get_or_insert(violation);
        wit::ProviderError::Failed(message)
    }
}

impl super::bindings::agent::tools::provider::Host for Below {
    fn tools_for_llm(&mut self) -> Result<Vec<String>, wit::ProviderError> {
        match &mut self.gate {
            Gate::List { done: true, .. } => {
                return Err(
                    self.refuse("listed the tools below more than once in one listing".into())
                );
            }
            Gate::List { replay, done } => {
                *done = true;
                if let Some(catalogue) = replay {
                    return Ok(catalogue.clone());
                }
            }
            Gate::Execute { .. } | Gate::Shut => {
                return Err(self.refuse("listed the tools below outside a listing".into()));
            }
        }
        let inner = &self.inner;
        let listed = self.meter.off_the_clock(|| {
            let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
            provider::list(&mut **inner)
        })?;
        self.listed = Some(listed.clone());
        Ok(listed)
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<wit::ToolCall>,
    ) -> Result<Vec<wit::ToolResult>, wit::ProviderError> {
        let verdict = match &mut self.gate {
            Gate::Execute { done: true, .. } => Err(
                "passed calls down more than once in one execution (its first pass \
                     ran; no later one did)"
                    .to_string(),
            ),
            Gate::Execute { given, done } => {
                *done = true;
                given.admit(&calls)
            }
            Gate::List { .. } => Err("tried to run calls while it listed the tools".into()),
            Gate::Shut => Err("tried to run calls outside an execution".into()),
        };
        if let Err(violation) = verdict {
            return Err(self.refuse(violation));
        }
        let calls: Vec<ToolCall> = calls.into_iter().map(ToolCall::from).collect();
        let inner = &self.inner;
        let results = self.meter.off_the_clock(|| {
            let mut inner = inner.lock().unwrap_or_else(PoisonError::into_inner);
            provider::guard("the tool provider", || inner.execute_tool_calls(calls))
        })?;
        Ok(results.into_iter().map(wit::ToolResult::from).collect())
    }
}
