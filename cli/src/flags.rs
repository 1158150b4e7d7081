//! The flags `transform` and `mcp` share: the layer's options, and the plugin that runs
//! it with the limits it runs under.

use clap::{Args, ValueEnum};
use reasons_host::plugin::{Origin, sandbox};
use reasons_host::{Limits, Plugin};
use reasons_transform::{Options, Position};
use std::path::PathBuf;
use std::time::Duration;

/// The reasons layer's options.
#[derive(Args)]
pub struct OptionArgs {
    /// The parameter's name.
    #[arg(long, default_value = reasons_transform::DEFAULT_NAME)]
    param_name: String,
    /// The parameter's description, as the model reads it.
    #[arg(long, default_value = reasons_transform::DEFAULT_DESCRIPTION)]
    description: String,
    /// List the parameter in `required` and refuse calls that lack it.
    #[arg(long)]
    required: bool,
    /// Where the parameter goes among the properties: first, so that a host that shows
    /// only a call's first arguments still shows it.
    #[arg(long, value_enum, default_value_t = PositionArg::First)]
    position: PositionArg,
    /// A tool to leave alone: never augmented, never stripped. Repeatable.
    #[arg(long, value_name = "TOOL")]
    leave_alone: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum PositionArg {
    First,
    Last,
}

impl From<OptionArgs> for Options {
    fn from(args: OptionArgs) -> Options {
        Options {
            name: args.param_name,
            description: args.description,
            required: args.required,
            position: match args.position {
                PositionArg::Last => Position::Last,
                PositionArg::First => Position::First,
            },
            leave_alone: args.leave_alone,
        }
    }
}

/// Which component runs the layer, and what it may use before it is stopped (its calls
/// then end as errors).
#[derive(Args)]
pub struct PluginArgs {
    /// A component to load instead of the built-in reasons component (`transform` takes
    /// any middleware; `mcp` needs the reasons surface).
    #[arg(long, value_name = "PATH")]
    plugin: Option<PathBuf>,
    /// The time one call may spend in the plugin's own code, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = Limits::default().deadline.as_millis() as u64)]
    plugin_deadline_ms: u64,
    /// The time one call may take in all, the provider below included, in milliseconds
    /// [default: 24 times the deadline].
    #[arg(long, value_name = "MS")]
    plugin_wall_ms: Option<u64>,
    /// The most memory a plugin instance may hold, over all its memories and tables, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().memory >> 20)]
    plugin_memory_mib: usize,
    /// The most data a plugin may pass down in one call of its import, in MiB.
    #[arg(long, value_name = "MIB", default_value_t = Limits::default().hostcall_data >> 20)]
    plugin_hostcall_mib: usize,
    /// The native stack a plugin may use, in KiB.
    #[arg(long, value_name = "KIB", default_value_t = sandbox::DEFAULT_STACK >> 10)]
    plugin_stack_kib: usize,
}

impl PluginArgs {
    /// The plugin asked for (the built-in one if none) under these limits.
    pub fn load(&self) -> anyhow::Result<Plugin> {
        if self.plugin_stack_kib != sandbox::DEFAULT_STACK >> 10 {
            sandbox::set_stack_limit(self.plugin_stack_kib << 10)?;
        }
        let plugin = match &self.plugin {
            None => Plugin::reasons()?,
            Some(path) => Plugin::load(path)?,
        };
        if let Origin::Untrusted(why) = plugin.origin() {
            reasons_mcp_transports::say(&format!("the compile cache {why}"));
        }
        let deadline = Duration::from_millis(self.plugin_deadline_ms);
        let wall = match self.plugin_wall_ms {
            Some(ms) => Duration::from_millis(ms),
            None => deadline * sandbox::WALL_PER_DEADLINE,
        };
        Ok(plugin.with_limits(Limits {
            deadline,
            wall,
            memory: self.plugin_memory_mib << 20,
            hostcall_data: self.plugin_hostcall_mib << 20,
        }))
    }
}
