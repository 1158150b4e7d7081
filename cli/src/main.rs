//! `reasons`: the reasons layer's command line, one file per subcommand. `reasons demo`
//! plays a scripted session; `reasons transform` runs the layer over your own catalogue;
//! `reasons mcp` puts it in front of any MCP server; `reasons wrap` puts every server of
//! an MCP client behind it, and `doctor` shows what each became; `reasons component`
//! writes the components: one for a host of your own, one for a wasi:http engine.

mod approval;
mod component;
mod demo;
mod doctor;
mod files;
mod flags;
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
    // Boxed: its flags outweigh every other command's.
    Mcp(Box<mcp::Args>),
}

fn main() -> ExitCode {
    let ran = match Cli::parse().command {
        Command::Demo(args) => demo::command(args),
        Command::Wrap(args) => wrap::wrap_command(args),
        Command::Unwrap(args) => wrap::unwrap_command(args),
        Command::Doctor(args) => doctor::command(args),
        Command::Component(args) => component::run(args),
        Command::Transform(args) => transform::run(args),
        // `reasons mcp` exits as its server did.
        Command::Mcp(args) => mcp::run(*args),
    };
    match ran {
        Ok(code) => ExitCode::from(code),
        Err(error) => {
            eprintln!("reasons: {}", printable(&format!("{error:#}")));
            ExitCode::FAILURE
        }
    }
}

/// The longest line of an error printed, and the most lines.
const ERROR_LINE_CAP: usize = 1000;
const ERROR_LINES: usize = 40;

/// An error's text as inert lines, few and short: an error may quote a file, a server or
/// a URL, and none of them may write to the terminal or flood it.
fn printable(error: &str) -> String {
    let lines: Vec<String> = error
        .lines()
        .take(ERROR_LINES)
        .map(|line| reasons_host::inert::inert(line, ERROR_LINE_CAP))
        .collect();
    let mut text = lines.join("\n");
    if error.lines().nth(ERROR_LINES).is_some() {
        text.push_str("\n…");
    }
    text
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
