//! `reasons doctor`: every server an MCP client's config names, started behind
//! `reasons mcp` as a wrapped config would start it, and listed: a table of its tools,
//! which gained the `reason` parameter, which were left alone and why, and any error.
//! What it finds is `reasons-doctor`'s (a project's server runs only when its user names
//! it or says the folder is theirs, in its project's folder); this reads the flags and
//! prints the table, all a server says as inert text (R12's rules), so no server can
//! write to the terminal.

mod report;

use anyhow::Context;
use reasons_doctor::approval::{Lists, Place};
use reasons_doctor::{Check, Say, checks, listing, rows_of};
use std::time::Duration;

/// Start every server an MCP client's config names behind `reasons mcp` and print, per
/// server, its tools: which gained the reason parameter, which were left alone and
/// why, and any error.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: crate::wrap::ConfigArgs,
    /// Start this server too: a project's, or one a client's list blocks; repeat for more.
    #[arg(long, value_name = "SERVER")]
    start: Vec<String>,
    /// The folder doctor runs in is yours: start its project's servers (those of its
    /// config files, and the client's entries for it), not only the ones named.
    #[arg(long)]
    mine: bool,
    /// How long each server has to start and list its tools, in seconds.
    #[arg(long, value_name = "SECS", default_value_t = listing::PATIENCE.as_secs(),
          value_parser = clap::value_parser!(u64).range(1..=3600))]
    patience: u64,
}

/// `reasons doctor`, over every file the client reads: one table, each server's rows as
/// soon as it is done.
impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args {
            config,
            start,
            mine,
            patience,
        } = self;
        let reasons = std::env::current_exe().context("cannot tell where this binary is")?;
        let proxy = reasons_wrap::Wrapper {
            command: reasons.display().to_string(),
            launcher: Vec::new(),
            audit: None,
            reads: crate::mcp::line,
        };
        let here = std::env::current_dir().context("cannot tell which folder this is")?;
        let here = std::fs::canonicalize(&here).unwrap_or(here);
        let lists = Lists::of(config.client())?;
        let named = config.client().is_none();
        let say = Say {
            start: &start,
            mine,
            here: &here,
            lists: &lists,
        };
        let mut told = Vec::new();
        let mut started = Vec::new();
        for (file, project) in config.files_with_scope()? {
            let place = match (named, project) {
                (true, _) => Place::Named,
                (false, true) => Place::Project,
                (false, false) => Place::Client,
            };
            for check in checks(&file, place, &say, &proxy)? {
                match check {
                    Check::Told(row) => told.push(row),
                    Check::Start { server, entry } => started.push((server, entry)),
                }
            }
        }
        report::run(told, started, Duration::from_secs(patience), rows_of);
        Ok(0)
    }
}
