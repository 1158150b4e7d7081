//! `reasons`: the reasons layer's command line. `reasons demo` plays a scripted session;
//! `reasons transform` runs the layer over your own catalogue.

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use reasons::{Options, Position};
use reasons_harness::demo::{self, Human, Script};
use reasons_harness::{Plugin, dry_run};
use std::path::PathBuf;
use std::process::ExitCode;

/// Every tool call carries why, for the human watching.
#[derive(Parser)]
#[command(name = "reasons", version)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Play a scripted session through Policy(Reasons(file tools)) in a temporary directory.
    Demo {
        /// A script to play instead of the built-in one (the format of `demo/session.json`).
        #[arg(long, value_name = "FILE")]
        script: Option<PathBuf>,
        /// Ask the human at this terminal instead of using the script's answers.
        #[arg(long)]
        interactive: bool,
    },
    /// Run the layer over your own catalogue and calls, and print what comes out.
    Transform {
        /// A JSON array of tool declarations, in any of the four wire shapes.
        #[arg(long, value_name = "TOOLS.json")]
        tools: PathBuf,
        /// A JSON array of {"id", "name", "arguments"}; arguments an object or a string.
        #[arg(long, value_name = "CALLS.json")]
        calls: Option<PathBuf>,
        /// A middleware component to load instead of the built-in reasons component.
        #[arg(long, value_name = "PATH")]
        plugin: Option<PathBuf>,
        #[command(flatten)]
        options: OptionArgs,
    },
}

/// The reasons layer's options.
#[derive(Args)]
struct OptionArgs {
    /// The parameter's name.
    #[arg(long, default_value = reasons::DEFAULT_NAME)]
    param_name: String,
    /// The parameter's description, as the model reads it.
    #[arg(long, default_value = reasons::DEFAULT_DESCRIPTION)]
    description: String,
    /// List the parameter in `required` and refuse calls that lack it.
    #[arg(long)]
    required: bool,
    /// Where the parameter goes among the properties.
    #[arg(long, value_enum, default_value_t = PositionArg::Last)]
    position: PositionArg,
    /// A tool to leave alone: never augmented, never stripped. Repeatable.
    #[arg(long, value_name = "TOOL")]
    leave_alone: Vec<String>,
}

#[derive(Clone, Copy, ValueEnum)]
enum PositionArg {
    Last,
    First,
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

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("reasons: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> anyhow::Result<()> {
    match cli.command {
        Command::Demo {
            script,
            interactive,
        } => {
            let script = match script {
                None => Script::parse(demo::DEFAULT_SCRIPT, "the built-in script")?,
                Some(path) => {
                    let text = std::fs::read_to_string(&path)
                        .with_context(|| format!("cannot read {}", path.display()))?;
                    Script::parse(&text, &path.display().to_string())?
                }
            };
            let human = if interactive {
                Human::Terminal
            } else {
                Human::Scripted
            };
            demo::run(&script, human, &mut std::io::stdout().lock())
        }
        Command::Transform {
            tools,
            calls,
            plugin,
            options,
        } => {
            let plugin = match plugin {
                None => Plugin::reasons()?,
                Some(path) => {
                    let bytes = std::fs::read(&path)
                        .with_context(|| format!("cannot read the plugin {}", path.display()))?;
                    Plugin::new(&path.display().to_string(), &bytes)?
                }
            };
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
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(())
        }
    }
}
