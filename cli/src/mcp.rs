//! `reasons mcp`: the reasons layer in front of any MCP server (a command, or a URL),
//! served over stdio or, with `--listen`, over Streamable HTTP.

use crate::flags::{OptionArgs, PluginArgs};
use crate::login::SignInArgs;
use anyhow::Context;
use reasons_mcp_transports as mcp;
use reasons_wrap::Line;
use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

/// Be a stdio MCP server in front of another (a command, or a URL): every tool gains
/// an optional reason, which the server never receives.
#[derive(clap::Args)]
pub struct Args {
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
    /// With --listen: the file that keeps the token every client must send (made, for
    /// its owner alone, when it is not there), so that clients' configs outlive a
    /// restart; without it a token is drawn at start and printed with the URL.
    #[arg(long, value_name = "FILE", requires = "listen")]
    token_file: Option<PathBuf>,
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
    #[command(flatten)]
    sign_in: SignInArgs,
    /// With --url: never open a sign-in when the server asks for one; its requests are
    /// answered with the way to sign in ahead (`reasons login URL`). `doctor` sets it
    /// for every server it starts: nobody asked to sign in there.
    #[arg(long, env = "REASONS_NO_SIGN_IN", value_name = "true|false", num_args = 0..=1,
          default_missing_value = "true", value_parser = clap::builder::BoolishValueParser::new())]
    no_sign_in: bool,
    /// With --url: the most seconds the server may send nothing while it owes a
    /// request an answer; the request is then answered with an error saying so.
    #[arg(long, value_name = "SECONDS",
          default_value_t = mcp::DEFAULT_READ_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u16).range(1..))]
    read_timeout: u16,
    /// The most seconds the client or the server may leave a line the proxy writes to
    /// it untaken (it stopped reading): its session is then ended, and what waits for
    /// the server answered with an error saying so. Until then the other side is
    /// read no further than the proxy can hold.
    #[arg(long, value_name = "SECONDS",
          default_value_t = mcp::DEFAULT_WRITE_TIMEOUT_SECS,
          value_parser = clap::value_parser!(u16).range(1..))]
    write_timeout: u16,
}

/// The `reasons mcp` line whose arguments are `args` (`mcp` first, as a config stores
/// them after the `reasons` command), read by the parser `reasons mcp` itself runs, so
/// that unwrap reads every form the proxy takes: wrap's own, the README's
/// (`mcp --audit FILE -- CMD`), and a launcher's that dropped the `--`.
pub fn line(args: &[String]) -> Line {
    #[derive(clap::Parser)]
    #[command(name = "mcp")]
    struct Mcp {
        #[command(flatten)]
        args: Args,
    }
    if args.first().map(String::as_str) != Some("mcp") {
        return Line::Unread("its first argument is not `mcp`".into());
    }
    match <Mcp as clap::Parser>::try_parse_from(args) {
        Ok(Mcp { args: line }) if line.url.is_some() || line.url_env.is_some() => Line::Remote,
        Ok(Mcp { args: line }) => Line::Command {
            at: args.len() - line.command.len(),
        },
        Err(error) => {
            let said = error.to_string();
            let first = said.lines().next().unwrap_or_default();
            Line::Unread(format!(
                "`reasons mcp` would not run its arguments ({})",
                first.trim_start_matches("error: ")
            ))
        }
    }
}

/// Runs the proxy; its exit code is the server's.
impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args {
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
            sign_in,
            no_sign_in,
            read_timeout,
            write_timeout,
            listen,
            max_sessions,
            allow_origin,
            token_file,
            max_message_mib,
        } = self;
        let url = match url_env {
            Some(variable) => Some(std::env::var(&variable).with_context(|| {
                format!(
                    "--url-env {variable}: the environment has no {variable} (or it is not UTF-8)"
                )
            })?),
            None => url,
        };
        let remote_only =
            !header.is_empty() || !header_env.is_empty() || bearer_env.is_some() || sign_in.given();
        if url.is_none() && remote_only {
            anyhow::bail!(
                "--header, --header-env, --bearer-env and the sign-in flags (--client-id, …) are for a server at --url or --url-env"
            );
        }
        let server = match url {
            Some(url) => {
                let mut remote = mcp::Remote::new(&url, &header, &header_env)?;
                if let Some(variable) = bearer_env {
                    remote = remote.bearer_from(&variable)?;
                }
                remote = remote.signing_in(&sign_in.settings(!no_sign_in)?)?;
                mcp::Server::Url(remote.read_timeout(Duration::from_secs(read_timeout.into())))
            }
            None => mcp::Server::Command(command),
        };
        let plugin = plugin.load()?;
        let telemetry = mcp::Telemetry::from_env("reasons").map_err(anyhow::Error::msg)?;
        let settings = mcp::Settings {
            server,
            audit,
            stats,
            name,
            listen: listen.map(|address| mcp::Listen {
                address,
                max_sessions: max_sessions.into(),
                allow_origins: allow_origin,
                token_file,
            }),
            max_message: usize::from(max_message_mib) << 20,
            write_timeout: Duration::from_secs(write_timeout.into()),
            telemetry,
        };
        Ok(mcp::run(&plugin, options.into(), settings)?.code())
    }
}
