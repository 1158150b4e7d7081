//! `reasons`: the reasons layer's command line. `reasons demo` plays a scripted session;
//! `reasons transform` runs the layer over your own catalogue; `reasons mcp` puts it in
//! front of any MCP server.

use anyhow::Context;
use clap::{Args, Parser, Subcommand, ValueEnum};
use reasons_harness::demo::{self, Human, Script};
use reasons_harness::plugin::{Origin, sandbox};
use reasons_harness::wrap::Way;
use reasons_harness::{Limits, Plugin, mcp, transform};
use reasons_transform::{Options, Position};
use std::ffi::OsString;
use std::os::unix::fs::DirBuilderExt;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Every tool call carries why, for the human watching.
#[derive(Parser)]
#[command(name = "reasons", version = version())]
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
    /// Rewrite an MCP client's config so that each server runs behind `reasons mcp`,
    /// keeping everything else as it was (a backup is written beside it).
    Wrap {
        #[command(flatten)]
        config: ConfigArgs,
        /// Print the change as a diff, and change nothing.
        #[arg(long)]
        dry_run: bool,
        /// The command the config is to run the proxy with [default: `reasons` when that
        /// is this binary on PATH, else this binary's path].
        #[arg(long, value_name = "PATH")]
        reasons: Option<PathBuf>,
        /// Give each server an audit log of its own in this folder, named for the server
        /// (`DIR/NAME.jsonl`); every record names the server. Unwrap undoes it.
        #[arg(long, value_name = "DIR")]
        audit: Option<PathBuf>,
    },
    /// Undo `reasons wrap`: each server runs as it did before.
    Unwrap {
        #[command(flatten)]
        config: ConfigArgs,
        /// Print the change as a diff, and change nothing.
        #[arg(long)]
        dry_run: bool,
    },
    /// Start every server an MCP client's config names behind `reasons mcp` and print, per
    /// server, its tools: which gained the reason parameter, which were left alone and
    /// why, and any error.
    Doctor {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Write the component as it is released (reasons.wasm, its metadata included) and
    /// its WIT package (agent-tools.wasm) into a folder, for a host of your own.
    Component {
        /// The folder to write them into (created if need be).
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
    /// Run the layer over your own catalogue and calls, and print what comes out.
    Transform {
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
    },
    /// Be a stdio MCP server in front of another (a command, or a URL): every tool gains
    /// an optional reason, which the server never receives.
    Mcp {
        /// Append one JSON line per `tools/call` (time, id, tool, reason, a digest of the
        /// arguments the server received, outcome) to this file.
        #[arg(long, value_name = "FILE")]
        audit: Option<PathBuf>,
        /// On exit, print calls per tool and how many carried a reason to stderr.
        #[arg(long)]
        stats: bool,
        /// The server's name, as the client's config calls it: every audit record names it.
        #[arg(long, value_name = "NAME")]
        name: Option<String>,
        #[command(flatten)]
        options: OptionArgs,
        #[command(flatten)]
        plugin: PluginArgs,
        /// The server's command and its arguments: after `--`, or from the first argument
        /// that is not an option (launchers such as `claude mcp add` drop the `--`).
        #[arg(
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "SERVER COMMAND",
            required_unless_present_any = ["url", "url_env"]
        )]
        command: Vec<OsString>,
        /// Serve clients over Streamable HTTP at this loopback address (127.0.0.1:8931;
        /// port 0 picks one, named on stderr) instead of over stdio.
        #[arg(long, value_name = "ADDRESS:PORT")]
        listen: Option<String>,
        /// With --listen: the most sessions open at once (each starts the server anew);
        /// a new one past it ends the session used least recently.
        #[arg(long, value_name = "N", default_value_t = 16, requires = "listen",
              value_parser = clap::value_parser!(u16).range(1..))]
        max_sessions: u16,
        /// The most MiB one message may have, from the client or the server, on every
        /// transport: a longer one ends its stream, what waits answered with why.
        #[arg(long, value_name = "MIB", default_value_t = mcp::DEFAULT_MAX_MESSAGE_MIB,
              value_parser = clap::value_parser!(u16).range(1..))]
        max_message_mib: u16,
        /// With --listen: a web page's origin (http://localhost:5173) that may call the
        /// proxy besides the listener's own; its CORS preflights are answered. Repeatable.
        #[arg(long, value_name = "ORIGIN", requires = "listen")]
        allow_origin: Vec<String>,
        /// The server's MCP endpoint, spoken to over Streamable HTTP, instead of a command.
        #[arg(long, value_name = "URL", conflicts_with_all = ["command", "url_env"])]
        url: Option<String>,
        /// --url, read from this environment variable, so that a URL holding a secret
        /// (`?api_key=`, `user:token@`) stays out of the arguments every local user sees.
        #[arg(long, value_name = "VARIABLE", conflicts_with = "command")]
        url_env: Option<String>,
        /// A header every request to --url carries (`Name: value`). Repeatable.
        #[arg(long, value_name = "NAME: VALUE")]
        header: Vec<String>,
        /// A header whose value is read from the environment (`Name=VARIABLE`), so that a
        /// secret stays out of the client's config. Repeatable.
        #[arg(long, value_name = "NAME=VARIABLE")]
        header_env: Vec<String>,
        /// `Authorization: Bearer` with the token read from this environment variable
        /// (what Codex's `bearer_token_env_var` means).
        #[arg(long, value_name = "VARIABLE")]
        bearer_env: Option<String>,
        /// With --url: the most seconds the server may send nothing while it owes a
        /// request an answer; the request is then answered with an error saying so.
        #[arg(long, value_name = "SECONDS",
              default_value_t = mcp::DEFAULT_READ_TIMEOUT_SECS,
              value_parser = clap::value_parser!(u16).range(1..))]
        read_timeout: u16,
    },
}

/// Which MCP client config to change.
#[derive(Args)]
#[group(required = true, multiple = false)]
struct ConfigArgs {
    /// A known client's config, at its documented place, and its project's in this
    /// folder: claude-desktop, claude-code, cursor, vscode, windsurf, gemini, lmstudio,
    /// cline, roo, zed, codex, goose or continue.
    #[arg(long, value_name = "NAME")]
    client: Option<String>,
    /// Any config file (`.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, …).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
}

impl ConfigArgs {
    /// The files to edit: the one named, or every one the client reads servers from.
    fn files(self) -> anyhow::Result<Vec<PathBuf>> {
        match (self.config, self.client) {
            (Some(file), _) => Ok(vec![file]),
            (None, Some(client)) => reasons_harness::wrap::client_configs(&client),
            (None, None) => anyhow::bail!("name a config: --client NAME or --config FILE"),
        }
    }
}

/// Which component runs the layer, and what it may use before it is stopped (its calls
/// then end as errors).
#[derive(Args)]
struct PluginArgs {
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
    fn load(&self) -> anyhow::Result<Plugin> {
        if self.plugin_stack_kib != sandbox::DEFAULT_STACK >> 10 {
            sandbox::set_stack_limit(self.plugin_stack_kib << 10)?;
        }
        let plugin = match &self.plugin {
            None => Plugin::reasons()?,
            Some(path) => Plugin::load(path)?,
        };
        if let Origin::Untrusted(why) = plugin.origin() {
            eprintln!("reasons: the compile cache {why}");
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

/// `reasons wrap` and `reasons unwrap`, over every file the client reads: each is edited
/// only once every one of them can be, so that a refusal changes nothing.
fn edit_config(
    config: ConfigArgs,
    way: Way,
    dry_run: bool,
    reasons: Option<PathBuf>,
    audit: Option<PathBuf>,
) -> anyhow::Result<u8> {
    let files = config.files()?;
    let command = match reasons {
        Some(reasons) => reasons,
        None => proxy_command()?,
    };
    let audit = match audit {
        // The logs hold the model's reasons: the folder is its owner's alone.
        Some(folder) => {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
            Some(std::fs::canonicalize(&folder)?)
        }
        None => None,
    };
    let reasons = reasons_harness::wrap::Wrapper {
        command: command.to_string_lossy().into_owned(),
        audit,
    };
    for file in &files {
        reasons_harness::wrap::run(file, way, true, &reasons)?;
    }
    for file in &files {
        print!(
            "{}",
            reasons_harness::wrap::run(file, way, dry_run, &reasons)?
        );
    }
    Ok(0)
}

/// The command a config runs the proxy with: `reasons` when that name on PATH is this
/// binary, so that the config names no versioned path an upgrade would leave behind;
/// else this binary's path.
fn proxy_command() -> anyhow::Result<PathBuf> {
    let this = std::env::current_exe().context("cannot tell where this binary is")?;
    let this = std::fs::canonicalize(&this).unwrap_or(this);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|folder| folder.join("reasons"))
        .find(|candidate| candidate.is_file());
    let is_this = on_path
        .and_then(|found| std::fs::canonicalize(found).ok())
        .is_some_and(|found| found == this);
    Ok(if is_this {
        PathBuf::from("reasons")
    } else {
        this
    })
}

/// The binary's version, and the component and WIT package inside it: what a bug report
/// needs. The component is named by its digest, which tells two builds apart.
fn version() -> &'static str {
    use sha2::{Digest, Sha256};
    let digest = format!(
        "{:x}",
        Sha256::digest(reasons_harness::plugin::REASONS_WASM)
    );
    let text = format!(
        "{} (component reasons.wasm {}, sha256 {}; WIT {})",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION"),
        &digest[..16],
        env!("REASONS_WIT_PACKAGE"),
    );
    // Asked for once per process, by the argument parser.
    Box::leak(text.into_boxed_str())
}

/// The reasons layer's options.
#[derive(Args)]
struct OptionArgs {
    /// The parameter's name.
    #[arg(long, default_value = reasons_transform::DEFAULT_NAME)]
    param_name: String,
    /// The parameter's description, as the model reads it.
    #[arg(long, default_value = reasons_transform::DEFAULT_DESCRIPTION)]
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
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("reasons: {error:#}");
            ExitCode::FAILURE
        }
    }
}

/// Runs the command; its exit code (`reasons mcp` exits as its server did).
fn run(cli: Cli) -> anyhow::Result<u8> {
    match cli.command {
        Command::Wrap {
            config,
            dry_run,
            reasons,
            audit,
        } => edit_config(config, Way::Wrap, dry_run, reasons, audit),
        Command::Unwrap { config, dry_run } => {
            edit_config(config, Way::Unwrap, dry_run, None, None)
        }
        Command::Doctor { config } => {
            let reasons = std::env::current_exe().context("cannot tell where this binary is")?;
            for file in config.files()? {
                let table =
                    reasons_harness::doctor::run(&file, &reasons, reasons_transform::DEFAULT_NAME)?;
                print!("{table}");
            }
            Ok(0)
        }
        Command::Component { out } => {
            std::fs::create_dir_all(&out)
                .with_context(|| format!("cannot create {}", out.display()))?;
            for (name, bytes) in [
                ("reasons.wasm", reasons_harness::plugin::REASONS_WASM),
                (
                    "agent-tools.wasm",
                    reasons_harness::plugin::WIT_PACKAGE_WASM,
                ),
            ] {
                // An artifact, for anyone to read.
                let readable = std::os::unix::fs::PermissionsExt::from_mode(0o644);
                reasons_harness::files::write_whole(&out.join(name), bytes, readable)?;
                println!("{}", out.join(name).display());
            }
            Ok(0)
        }
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
            demo::run(&script, human, &mut std::io::stdout().lock())?;
            Ok(0)
        }
        Command::Transform {
            tools,
            calls,
            options,
            plugin,
        } => {
            let plugin = plugin.load()?;
            let tools = transform::read_tools(&tools)?;
            let calls = match calls {
                Some(path) => transform::read_calls(&path)?,
                None => Vec::new(),
            };
            let report = transform::run(
                transform::Layer::Component(&plugin),
                options.into(),
                tools,
                calls,
            )?;
            println!("{}", serde_json::to_string_pretty(&report)?);
            Ok(0)
        }
        Command::Mcp {
            audit,
            stats,
            name,
            options,
            plugin,
            command,
            url,
            url_env,
            header,
            header_env,
            bearer_env,
            read_timeout,
            listen,
            max_sessions,
            allow_origin,
            max_message_mib,
        } => {
            let url = match url_env {
                Some(variable) => Some(std::env::var(&variable).with_context(|| {
                    format!("--url-env {variable}: the environment has no {variable} (or it is not UTF-8)")
                })?),
                None => url,
            };
            let remote_only = !header.is_empty() || !header_env.is_empty() || bearer_env.is_some();
            if url.is_none() && remote_only {
                anyhow::bail!(
                    "--header, --header-env and --bearer-env are for a server at --url or --url-env"
                );
            }
            let server = match url {
                Some(url) => {
                    let mut remote = mcp::Remote::new(&url, &header, &header_env)?;
                    if let Some(variable) = bearer_env {
                        remote = remote.bearer_from(&variable)?;
                    }
                    mcp::Server::Url(remote.read_timeout(Duration::from_secs(read_timeout.into())))
                }
                None => mcp::Server::Command(command),
            };
            let plugin = plugin.load()?;
            let settings = mcp::Settings {
                server,
                audit,
                stats,
                name,
                listen: listen.map(|address| mcp::Listen {
                    address,
                    max_sessions: max_sessions.into(),
                    allow_origins: allow_origin,
                }),
                max_message: usize::from(max_message_mib) << 20,
            };
            Ok(mcp::run(&plugin, options.into(), settings)?.code())
        }
    }
}
