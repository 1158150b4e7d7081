//! `reasons wrap` and `reasons unwrap`: the commands over the `reasons-wrap` library,
//! which does the editing; here are their flags, the files a client reads, and what
//! they print.

use anyhow::{Context, bail};
use reasons_wrap::{Way, Wrapper, client_configs, is_reasons, project_configs, run};
use std::io::Write;
use std::path::PathBuf;

/// Rewrite an MCP client's config so that each server runs behind `reasons mcp`,
/// keeping everything else as it was (a backup is written beside it).
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    config: ConfigArgs,
    /// Print the change as a diff, and change nothing.
    #[arg(long)]
    dry_run: bool,
    /// The command the config is to run the proxy with [default: `reasons` when that
    /// is this binary on PATH, else this binary's path].
    #[arg(long, value_name = "PATH", conflicts_with = "launcher")]
    reasons: Option<PathBuf>,
    /// Run the proxy through a package launcher instead, at this release
    /// (`npx -y reasons@VERSION`, `uvx reasons@VERSION`): a config shared with others
    /// (a project's `.mcp.json`) then runs on a machine where `reasons` was never
    /// installed. `path` is the default: this binary.
    #[arg(long, value_enum, default_value_t = Launcher::Path)]
    launcher: Launcher,
    /// Give each server an audit log of its own in this folder, named for the server
    /// (`DIR/NAME.jsonl`); every record names the server. Unwrap undoes it.
    #[arg(long, value_name = "DIR")]
    audit: Option<PathBuf>,
}

/// How a wrapped entry starts the proxy.
#[derive(Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum Launcher {
    /// This binary, by its absolute path (or `--reasons`).
    Path,
    /// `npx -y reasons@VERSION`: npm's package of this release.
    Npx,
    /// `uvx reasons@VERSION`: PyPI's package of this release.
    Uvx,
}

impl Launcher {
    /// The program and its arguments before `mcp`, for this release; `None` for the
    /// binary's path.
    fn command(self) -> Option<(&'static str, Vec<String>)> {
        let package = format!("reasons@{}", env!("CARGO_PKG_VERSION"));
        match self {
            Launcher::Path => None,
            Launcher::Npx => Some(("npx", vec!["-y".into(), package])),
            Launcher::Uvx => Some(("uvx", vec![package])),
        }
    }
}

/// Undo `reasons wrap`: each server runs as it did before.
#[derive(clap::Args)]
pub struct UnwrapArgs {
    #[command(flatten)]
    config: ConfigArgs,
    /// Print the change as a diff, and change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// `reasons wrap`.
impl crate::Run for Args {
    fn run(self) -> anyhow::Result<u8> {
        let Args {
            config,
            dry_run,
            reasons,
            launcher,
            audit,
        } = self;
        edit_config(config, Way::Wrap, dry_run, (reasons, launcher), audit)
    }
}

/// `reasons unwrap`.
impl crate::Run for UnwrapArgs {
    fn run(self) -> anyhow::Result<u8> {
        let UnwrapArgs { config, dry_run } = self;
        edit_config(config, Way::Unwrap, dry_run, (None, Launcher::Path), None)
    }
}

/// Which MCP client config to change.
#[derive(clap::Args)]
#[group(required = true, multiple = false)]
pub struct ConfigArgs {
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
    pub fn files(self) -> anyhow::Result<Vec<PathBuf>> {
        match (self.config, self.client) {
            (Some(file), _) => Ok(vec![file]),
            (None, Some(client)) => Ok(client_configs(&client)?),
            (None, None) => anyhow::bail!("name a config: --client NAME or --config FILE"),
        }
    }

    /// The client named, if one was.
    pub fn client(&self) -> Option<&str> {
        self.client.as_deref()
    }

    /// [`ConfigArgs::files`], each with whether it is a project's (one of the client's
    /// files in this folder, which came with the folder).
    pub fn files_with_scope(self) -> anyhow::Result<Vec<(PathBuf, bool)>> {
        let project = self
            .client
            .as_deref()
            .filter(|_| self.config.is_none())
            .map(project_configs)
            .unwrap_or_default();
        let files = self.files()?;
        Ok(files
            .into_iter()
            .map(|file| {
                let ours = project.contains(&file);
                (file, ours)
            })
            .collect())
    }
}

/// `reasons wrap` and `reasons unwrap`, over every file the client reads: each is edited
/// only once every one of them can be, so that a refusal changes nothing.
fn edit_config(
    config: ConfigArgs,
    way: Way,
    dry_run: bool,
    (reasons, launcher): (Option<PathBuf>, Launcher),
    audit: Option<PathBuf>,
) -> anyhow::Result<u8> {
    let files = config.files()?;
    let command = match reasons {
        // What wrap wrote is known again by the program's name: one of another name
        // would be wrapped a second time.
        Some(reasons) if !is_reasons(&reasons.to_string_lossy()) => bail!(
            "--reasons {}: the proxy's command must be a program named `reasons`, which \
             unwrap and a second wrap know as the proxy",
            reasons.display()
        ),
        Some(reasons) => reasons,
        None => proxy_command()?,
    };
    let audit = match audit {
        // The logs hold the model's reasons: the folder is its owner's alone.
        Some(folder) => {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&folder)
                .with_context(|| format!("cannot create {}", folder.display()))?;
            Some(std::fs::canonicalize(&folder)?)
        }
        None => None,
    };
    let (command, launcher) = match launcher.command() {
        Some((program, arguments)) => (program.to_string(), arguments),
        None => (command.to_string_lossy().into_owned(), Vec::new()),
    };
    let reasons = Wrapper {
        command,
        launcher,
        audit,
        reads: crate::mcp::line,
    };
    for file in &files {
        run(file, way, true, &reasons)?;
    }
    let mut left_wrapped = 0;
    let mut remotes = Vec::new();
    for file in &files {
        let report = run(file, way, dry_run, &reasons)?;
        left_wrapped += report.left_wrapped;
        remotes.extend(report.remotes);
        // A diff, a path or a reason quotes the file: its escapes are shown, not obeyed.
        // The edit is the work: a reader that went (`| head`) does not stop the next
        // file's, which would leave the client's configs half wrapped.
        let _ = std::io::stdout().write_all(reasons_inert::visible(&report.text).as_bytes());
    }
    let _ = std::io::stdout().write_all(sign_ins_ahead(&remotes).as_bytes());
    if left_wrapped > 0 {
        reasons_mcp_transports::say(&format!(
            "servers left running behind reasons mcp: {left_wrapped} (each named above, \
             with why)"
        ));
        return Ok(1);
    }
    Ok(0)
}

/// How long wrap waits to learn whether a remote server asks its user to sign in.
const PROBE_AT_MOST: std::time::Duration = std::time::Duration::from_secs(5);

/// A row for each of `remotes` that will ask its user to sign in (no sign-in of the
/// user's is kept for it, and it answers a client's first request with 401): a client's
/// health check has no one to sign in, and would show the server failed, so the person
/// signs in ahead, with the command to do it. A server that cannot be asked is not named.
fn sign_ins_ahead(remotes: &[reasons_wrap::RemoteServer]) -> String {
    let mut rows = String::new();
    for remote in remotes {
        if !reasons_mcp_transports::SignIn::awaits(&remote.url, PROBE_AT_MOST).unwrap_or(false) {
            continue;
        }
        let shown = reasons_mcp::shown::url(&remote.url);
        let command = match shown == remote.url {
            true => format!("`reasons login {shown}`"),
            // Part of the URL may be a secret: the person takes it from the config.
            false => format!("`reasons login URL` with the URL of its REASONS_URL ({shown})"),
        };
        let name = reasons_inert::inert(&remote.name, 64);
        rows.push_str(&format!(
            "{name}: asks its user to sign in: run {command} in a terminal before your \
             client starts it\n"
        ));
    }
    reasons_inert::visible(&rows)
}

/// The command a config runs the proxy with, always an absolute path (a client started
/// from a desktop has a PATH of its own, which may not hold `reasons`): where PATH finds
/// `reasons` when that is this binary, so that the config names the installed command
/// (`~/.cargo/bin/reasons`) and no versioned path an upgrade would leave behind; else this
/// binary's path.
fn proxy_command() -> anyhow::Result<PathBuf> {
    let this = std::env::current_exe().context("cannot tell where this binary is")?;
    let this = std::fs::canonicalize(&this).unwrap_or(this);
    let on_path = std::env::var_os("PATH")
        .into_iter()
        .flat_map(|path| std::env::split_paths(&path).collect::<Vec<_>>())
        .map(|folder| folder.join("reasons"))
        .find(|candidate| candidate.is_file())
        .and_then(|found| std::path::absolute(found).ok());
    Ok(on_path
        .filter(|found| std::fs::canonicalize(found).is_ok_and(|found| found == this))
        .unwrap_or(this))
}
