//! Why a plugin is refused at load (R15), or not configured: typed, so that a caller (and a test) can tell
//! one refusal from another without reading words, and worded, naming the plugin, for
//! the human the caller shows it to.

use std::fmt;
use std::sync::Arc;

/// A plugin refused at load: which one, and why.
#[derive(Clone, Debug)]
pub struct LoadError {
    plugin: String,
    refusal: LoadRefusal,
}

/// Why a plugin was refused.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum LoadRefusal {
    /// Its file could not be read.
    Unreadable(Arc<std::io::Error>),
    /// It is not WebAssembly at all (no `\0asm` header).
    NotWasm,
    /// It is a core module, not a component.
    CoreModule,
    /// The engine cannot compile it as a component; the engine's words.
    NotComponent(String),
    /// It imports more than a plugin is given (only `agent:tools/provider`); the
    /// engine's words, which name the import.
    ImportsTooMuch(String),
    /// It does not export `agent:tools/provider@0.1.1`; the engine's words.
    NoProvider(String),
}

impl LoadError {
    /// The plugin `plugin` (a file's path, or a name), refused for `refusal`.
    pub fn new(plugin: &str, refusal: LoadRefusal) -> LoadError {
        LoadError {
            plugin: plugin.to_string(),
            refusal,
        }
    }

    /// The plugin refused, as it was named.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Why it was refused.
    pub fn refusal(&self) -> &LoadRefusal {
        &self.refusal
    }
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.plugin;
        match &self.refusal {
            LoadRefusal::Unreadable(error) => write!(f, "cannot read the plugin {name}: {error}"),
            LoadRefusal::NotWasm => write!(
                f,
                "`{name}` is not a WebAssembly component (no `\\0asm` header)"
            ),
            LoadRefusal::CoreModule => write!(
                f,
                "`{name}` is not a WebAssembly component but a core module \
                 (`wasm-tools component new` makes one from it)"
            ),
            LoadRefusal::NotComponent(why) => {
                write!(f, "`{name}` is not a WebAssembly component: {why}")
            }
            LoadRefusal::ImportsTooMuch(why) => write!(
                f,
                "`{name}` imports more than a plugin is given (only \
                 agent:tools/provider@0.1.1): {why}"
            ),
            LoadRefusal::NoProvider(why) => write!(
                f,
                "`{name}` does not export agent:tools/provider@0.1.1: {why}"
            ),
        }
    }
}

impl std::error::Error for LoadError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.refusal {
            LoadRefusal::Unreadable(error) => Some(error.as_ref()),
            _ => None,
        }
    }
}

/// A reasons plugin that could not be configured: which one, and why.
#[derive(Clone, Debug)]
pub struct ConfigureError {
    plugin: String,
    why: Unconfigured,
}

/// Why a reasons plugin could not be configured.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Unconfigured {
    /// It does not export the reasons surface (`agent:tools/reasons@0.1.1`), which a
    /// caller of its direct surface (`augment`, `route`) needs.
    NotReasons,
    /// It refused the options, in its own words.
    Refused(String),
    /// It faulted while being configured (a trap, a limit, a violation).
    Fault(super::Fault),
}

impl ConfigureError {
    /// The plugin `plugin` not configured, for `why`.
    pub fn new(plugin: &str, why: Unconfigured) -> ConfigureError {
        ConfigureError {
            plugin: plugin.to_string(),
            why,
        }
    }

    /// The plugin, as it was named.
    pub fn plugin(&self) -> &str {
        &self.plugin
    }

    /// Why it was not configured.
    pub fn why(&self) -> &Unconfigured {
        &self.why
    }
}

impl fmt::Display for ConfigureError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = &self.plugin;
        match &self.why {
            Unconfigured::NotReasons => write!(
                f,
                "`{name}` does not export agent:tools/reasons@0.1.1 (with `augment` and \
                 `route`): the proxy needs it to know which calls carry the model's reason"
            ),
            Unconfigured::Refused(message) => {
                write!(f, "the plugin `{name}` refused the options: {message}")
            }
            Unconfigured::Fault(fault) => fault.fmt(f),
        }
    }
}

impl std::error::Error for ConfigureError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.why {
            Unconfigured::Fault(fault) => Some(fault),
            _ => None,
        }
    }
}
