//! Why a call into a plugin gave no answer the host uses: typed, so that a caller (and a
//! test) can tell a runaway loop from a violation without reading words, and worded,
//! naming the plugin, for the human the caller shows it to. Where the WIT carries a fault
//! on (a layer above is a plugin too), it carries the words: `provider-error.failed`.

use reasons_transform::ProviderError;
use std::fmt;

/// A call into a plugin that gave no answer the host uses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fault {
    plugin: String,
    call: Entry,
    kind: FaultKind,
    words: String,
}

/// The plugin's function a call went to, as the WIT names it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Entry {
    /// `provider.tools-for-llm`.
    ToolsForLlm,
    /// `provider.execute-tool-calls`.
    ExecuteToolCalls,
    /// `reasons.configure`.
    Configure,
    /// `reasons.reason-param`.
    ReasonParam,
    /// `reasons.augmented-tools`.
    AugmentedTools,
    /// `reasons.augment`.
    Augment,
    /// `reasons.route`.
    Route,
}

impl Entry {
    /// The function's name in the WIT.
    pub fn wit_name(self) -> &'static str {
        match self {
            Entry::ToolsForLlm => "tools-for-llm",
            Entry::ExecuteToolCalls => "execute-tool-calls",
            Entry::Configure => "configure",
            Entry::ReasonParam => "reason-param",
            Entry::AugmentedTools => "augmented-tools",
            Entry::Augment => "augment",
            Entry::Route => "route",
        }
    }
}

/// What went wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum FaultKind {
    /// A fresh instance could not be made ready: instantiated, configured with the
    /// layer's options, given its last catalogue again.
    NotStarted,
    /// It stepped out of line (R16, R17): below it, or in what it routed.
    SteppedOutOfLine,
    /// It ran into one of its limits.
    OverLimit(Limit),
    /// It trapped.
    Trapped,
    /// Its answer does not fit the question (R13, R14): a declaration that is not JSON,
    /// another count of them.
    Misanswered,
    /// It does not export the surface the call needs (`agent:tools/reasons`).
    NoSurface,
    /// Any other failure the engine reported.
    Failed,
}

/// One of a plugin's limits (see [`Limits`](super::Limits)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Limit {
    /// Its own time on the CPU.
    Deadline,
    /// The wall-clock time of its call, time below it included.
    Wall,
    /// Its stack.
    Stack,
    /// Its memories and tables.
    Memory,
    /// The data passed between it and the host.
    HostcallData,
}

impl Fault {
    /// The plugin `plugin`'s call to `call` failed for `kind`, as `words` tell it.
    pub fn new(plugin: &str, call: Entry, kind: FaultKind, words: String) -> Fault {
        Fault {
            plugin: plugin.to_string(),
            call,
            kind,
            words,
        }
    }

    /// The plugin, as it was named.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// The function the call went to.
    pub fn call(&self) -> Entry {
        self.call
    }

    /// What went wrong.
    pub fn kind(&self) -> FaultKind {
        self.kind
    }

    /// What went wrong, in the host's words, which name the plugin.
    pub fn message(&self) -> &str {
        &self.words
    }
}

impl fmt::Display for Fault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.message())
    }
}

impl std::error::Error for Fault {}

impl From<Fault> for ProviderError {
    /// The fault as the WIT carries it to the layer above: its words.
    fn from(fault: Fault) -> ProviderError {
        ProviderError::Failed(fault.words)
    }
}
