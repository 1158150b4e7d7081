//! `reasons`: the reasons layer's command line, one file per subcommand. `reasons demo`
//! plays a scripted session; `reasons transform` runs the layer over your own catalogue;
//! `reasons mcp` puts it in front of any MCP server (`reasons login` signs in to one that
//! asks, ahead); `reasons wrap` puts every server of
//! an MCP client behind it, and `doctor` shows what each became; `reasons component`
//! writes the components: one for a host of your own, one for a wasi:http engine.

mod component;
mod demo;
mod doctor;
mod flags;
mod login;
mod mcp;
mod transform;
mod wrap;

use clap::{Parser, Subcommand};
use std::process::ExitCode;

/// Every tool call carries why, for the human watching.
#[derive(Parser)]
#[command(name = "reasons", version = version())]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Demo(demo::Args),
    Wrap(wrap::Args),
    Unwrap(wrap::UnwrapArgs),
    Doctor(doctor::Args),
    Component(component::Args),
    Transform(transform::Args),
    Login(login::LoginArgs),
    Logout(login::LogoutArgs),
    // Boxed: its flags outweigh every other command's.
    Mcp(Box<mcp::Args>),
}

/// A subcommand: its flags, run to the exit status, or to an error that is printed.
trait Run {
    fn run(self) -> anyhow::Result<u8>;
}

fn main() -> ExitCode {
    let command = Cli::parse().command;
    if command.is_only_what_it_prints() {
        end_when_the_reader_goes();
    }
    let ran = match command {
        Command::Demo(args) => args.run(),
        Command::Wrap(args) => args.run(),
        Command::Unwrap(args) => args.run(),
        Command::Doctor(args) => args.run(),
        Command::Component(args) => args.run(),
        Command::Transform(args) => args.run(),
        Command::Login(args) => args.run(),
        Command::Logout(args) => args.run(),
        // `reasons mcp` exits as its server did.
        Command::Mcp(args) => args.run(),
    };
    match ran {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            reasons_mcp_transports::say(&format!("{error:#}"));
            ExitCode::FAILURE
        }
    }
}

impl Command {
    /// Whether the subcommand's whole work is what it prints: nothing is left half done
    /// if it ends at any print. `wrap` and `unwrap` edit files (they print what they did
    /// only if someone reads it); `mcp`'s stdout is its client, whose leaving it handles.
    fn is_only_what_it_prints(&self) -> bool {
        matches!(
            self,
            Command::Demo(_) | Command::Doctor(_) | Command::Transform(_)
        )
    }
}

/// Ends the process, quietly, as Unix tools end, when its stdout's reader goes (`| head`):
/// Rust ignores SIGPIPE, so the next print would panic with a backtrace instead.
fn end_when_the_reader_goes() {
    // SAFETY: setting a signal's disposition to its default, before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// The binary's version, and the component and WIT package inside it: what a bug report
/// needs. The component is named by its digest, which tells two builds apart.
fn version() -> &'static str {
    use sha2::{Digest, Sha256};
    let digest = format!("{:x}", Sha256::digest(reasons_host::plugin::REASONS_WASM));
    let text = format!(
        "{} (component reasons.wasm {}, sha256 {}; WIT {})",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION"),
        &digest[..16],
        reasons_host::plugin::WIT_PACKAGE,
    );
    // Asked for once per process, by the argument parser.
    Box::leak(text.into_boxed_str())
}
