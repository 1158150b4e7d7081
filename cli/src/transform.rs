//! `reasons transform`: the layer run over your own catalogue and calls, printing what
//! the model would see and what the provider below would receive.

use crate::flags::{OptionArgs, PluginArgs};
use reasons_host::dry_run;
use reasons_inert::visible;
use std::path::PathBuf;

/// Run the layer over your own catalogue and calls, and print what comes out.
#[derive(clap::Args)]
pub struct Args {
    /// A JSON array of tool declarations, in any of the four wire shapes.
    #[arg(long, value_name = "TOOLS.json")]
    tools: PathBuf,
    /// A JSON array of {"id", "name", "arguments"}; arguments an object or a string.
    #[arg(long, value_name = "CALLS.json")]
    calls: Option<PathBuf>,
    #[command(flatten)]
    options: OptionArgs,
    #[command(flatten)]
    plugin: PluginArgs,
}

impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args {
            tools,
            calls,
            options,
            plugin,
        } = self;
        let plugin = plugin.load()?;
        let tools = dry_run::read_tools(&tools)?;
        let calls = match calls {
            Some(path) => dry_run::read_calls(&path)?,
            None => Vec::new(),
        };
        let report = dry_run::run(
            dry_run::Layer::Component(&plugin),
            options.into(),
            tools,
            calls,
        )?;
        // The catalogue's text may hold characters that hide or reorder what a terminal shows
        // (R12); they are printed as the `\u` escapes JSON spells them with, the same value.
        println!("{}", visible(&serde_json::to_string_pretty(&report)?));
        for (tool, fields) in &report.asks_why {
            reasons_mcp_transports::say(&reasons_host::asks_why::note(tool, fields));
        }
        Ok(0)
    }
}
