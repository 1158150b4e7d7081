//! An MCP client's config rewritten so that each server runs behind `reasons mcp`, and
//! back: what `reasons wrap`, `reasons unwrap` and `reasons doctor` do to a file, as a
//! library, with each format's editor in a room of its own (`json.rs` for JSON and JSON
//! with comments, `toml.rs` for Codex, `yaml.rs` for Goose and Continue), `files.rs` for
//! reading and replacing a file whole, and one error type naming the file (`error.rs`).
//!
//! The file is edited as text, never re-serialised: wrapping a stdio server replaces its
//! `command`'s value with the `reasons` binary and puts `"mcp", "--", <the command as it
//! was written>` at the head of its `args` (adding `"args"` after the command when there
//! were none). Every other byte stays where it was: its environment, its other keys, the
//! file's line endings, its other servers. Every list of servers the file holds is
//! edited: the top-level `mcpServers` (or VS Code's `servers`), and the `mcpServers` of
//! each project in `projects` (Claude Code's local scope, in `~/.claude.json`).
//!
//! A wrapped entry carries everything needed to undo it, so `unwrap` finds what to undo
//! by the entry's structure (`reasons … mcp -- <command> <args…>`), not by the bytes wrap
//! wrote: a file a client re-serialised since (`JSON.stringify`, a formatter) unwraps as
//! well, value for value, keeping every edit made since; a file nobody touched comes back
//! byte for byte. A server that already runs behind `reasons mcp` is left as it is, so
//! wrapping twice changes nothing.
//!
//! A remote server (`url`, Gemini's `httpUrl`, Windsurf's `serverUrl`, and its `headers`)
//! becomes a stdio server running `reasons mcp --url-env … --header-env …`: the URL and
//! the headers go through the proxy's environment, which only its user can read, never
//! through its arguments, which anyone's `ps` shows. Its other keys (`disabled`,
//! `timeout`, `autoApprove`, …) stay; its remote keys as they were written are kept in
//! the proxy's environment, as the text of `REASONS_UNWRAP` (in YAML, each renamed
//! `reasons-unwrap-KEY`), and are what unwrapping puts back: no key of wrap's own is left
//! in a JSON or TOML entry, which strict clients refuse. Codex's headers read from the environment (`bearer_token_env_var`,
//! `env_http_headers`) are read so by the proxy, the variables forwarded to it by name.
//!
//! A server on the legacy HTTP+SSE transport (`type: "sse"`, Gemini's `url`) is wrapped
//! the same way: `reasons mcp --url` falls back to that transport as the specification
//! says.
//!
//! Fails closed: a key given twice anywhere the edit reads (clients keep the last, a
//! reader the first) is refused, as is a server that cannot be wrapped: `run` then says
//! which and why, and changes nothing.

#![deny(missing_docs)]

pub mod error;
pub mod files;
mod json;
mod line_ends;
mod toml;
mod yaml;

pub use error::{ClientError, Error, Kind};
use error::{Doing, Of, io};
use files::{read_text, stage_like, write_like};
use std::path::{Path, PathBuf};

/// What the editing did to one server.
#[derive(Debug, PartialEq, Eq)]
pub enum Fate {
    /// Wrapped or unwrapped, as asked.
    Changed,
    /// Already as asked.
    AsItWas,
    /// Not a server this can change; the reason.
    Skipped(String),
    /// Nothing the client starts as a server (Goose's built-in extensions); what it is.
    Outside(String),
}

/// One server of the config.
#[derive(Debug)]
pub struct Server {
    /// Its name, with its scope when it is not the file's top-level list.
    pub name: String,
    /// Where its entry is, as a JSON pointer (`/mcpServers/files`).
    pub pointer: String,
}

/// The config's text after the edit, and each server's fate, in the file's order.
#[derive(Debug)]
pub struct Edited {
    /// The whole file, edited.
    pub text: String,
    /// Each server and what became of it.
    pub servers: Vec<(Server, Fate)>,
}

/// Which way the edit goes.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Way {
    /// Each server behind `reasons mcp`.
    Wrap,
    /// Each server behind `reasons mcp` as it was before.
    Unwrap,
}

/// How a wrapped server runs the proxy: the command, and the folder each server's audit
/// log goes to, if any (`wrap --audit DIR`).
pub struct Wrapper {
    /// The command that runs `reasons`: the binary, or a launcher (`npx`, `uvx`).
    pub command: String,
    /// The launcher's arguments before `mcp` (`-y reasons@VERSION` for npx), none for
    /// the binary itself.
    pub launcher: Vec<String>,
    /// Where each server gets an audit log of its own, named for it.
    pub audit: Option<PathBuf>,
    /// How `reasons mcp` reads its arguments (`mcp` first): the command's own parser,
    /// so that unwrap reads every form the proxy takes.
    pub reads: fn(&[String]) -> Line,
}

/// What a `reasons mcp` line in a client's config runs, as `reasons mcp` reads it.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A server started by its command, which is `args[at]`; what follows is its own.
    Command {
        /// Where the server's command is.
        at: usize,
    },
    /// A server at a URL (`--url`, `--url-env`).
    Remote,
    /// Not a line `reasons mcp` would run: why.
    Unread(String),
}

impl Wrapper {
    /// The proxy's arguments before the server's: `mcp`, and with an audit folder the
    /// server's name and its log (`--name=NAME --audit=DIR/NAME.jsonl`), each in one
    /// argument: a name such as `--x` would otherwise be read as a flag of its own.
    fn head(&self, name: &str) -> Vec<String> {
        let mut head = self.launcher.clone();
        head.push("mcp".to_string());
        if let Some(folder) = &self.audit {
            let log = folder.join(audit_file(name));
            head.push(format!("--name={name}"));
            head.push(format!("--audit={}", log.display()));
        }
        head
    }
}

/// The file a server's audit log is named, in `wrap --audit`'s folder: its name, with
/// anything a file name could not hold safely made `_`.
fn audit_file(name: &str) -> String {
    let safe: String = name
        .chars()
        .map(|c| match c.is_ascii_alphanumeric() || "-_.".contains(c) {
            true => c,
            false => '_',
        })
        .collect();
    format!("{}.jsonl", safe.trim_start_matches('.'))
}

/// Why a remote server behind `reasons mcp` that wrap did not put there is left as it is.
const HAND_WRITTEN_REMOTE: &str = "it runs `reasons mcp --url` as written by hand, not by \
                                   wrap, so nothing says what it was before: unwrap it by hand";

/// Where a wrapped stdio server's command is in its `args` (a launcher's, then `mcp`),
/// read as `reasons mcp` reads them: everything before it is the proxy's (wrap's own
/// flags, or a person's, as the README shows them) and goes when it is unwrapped; why it
/// cannot be unwrapped, when it cannot.
fn server_at(args: &[String], reasons: &Wrapper) -> Result<usize, String> {
    let mcp = launched(args);
    match (reasons.reads)(&args[mcp..]) {
        Line::Command { at } => Ok(mcp + at),
        Line::Remote => Err(HAND_WRITTEN_REMOTE.into()),
        Line::Unread(why) => Err(format!("{why}: unwrap it by hand")),
    }
}

/// How `reasons mcp` reads a wrapped entry's `args`, past a launcher's.
fn reads_proxy(args: &[String], reasons: &Wrapper) -> Line {
    (reasons.reads)(&args[launched(args)..])
}

/// Where `mcp` is in `args` of an entry that runs the proxy: past `-y reasons[@VERSION]`
/// of npx, or `reasons[@VERSION]` of uvx; else at the start.
fn launched(args: &[String]) -> usize {
    let package = |arg: &String| arg == "reasons" || arg.starts_with("reasons@");
    match args {
        [yes, package_, mcp, ..]
            if (yes == "-y" || yes == "--yes") && package(package_) && mcp == "mcp" =>
        {
            2
        }
        [package_, mcp, ..] if package(package_) && mcp == "mcp" => 1,
        _ => 0,
    }
}

/// Whether an entry whose program is `command` and whose arguments begin with `args`
/// runs `reasons mcp`: a `reasons` binary (see [`is_reasons`]) with `mcp` first, npx
/// with `-y reasons[@VERSION] mcp`, or uvx with `reasons[@VERSION] mcp`, as wrap writes
/// each.
pub fn runs_proxy(command: &str, args: &[String]) -> bool {
    let program = Path::new(command)
        .file_stem()
        .and_then(|name| name.to_str())
        .unwrap_or_default();
    let mcp = launched(args);
    let launcher = match mcp {
        0 => is_reasons(command),
        2 => program == "npx",
        _ => program == "uvx",
    };
    launcher && args.get(mcp).is_some_and(|first| first == "mcp")
}

/// `text` (a config file's, `file` naming it in messages) wrapped or unwrapped, with
/// `reasons` as the command that runs the proxy.
pub fn edit(original: &str, file: &Path, way: Way, reasons: &Wrapper) -> Result<Edited, Error> {
    if is_toml(file) {
        return toml::edit(original, way, reasons).of(file);
    }
    if is_yaml(file) {
        return yaml::edit(original, way, reasons).of(file);
    }
    json::edit(original, file, way, reasons).of(file)
}

/// Whether `file` is TOML (Codex's `config.toml`) rather than JSON.
fn is_toml(file: &Path) -> bool {
    file.extension()
        .is_some_and(|extension| extension == "toml")
}

/// Whether `file` is YAML (Goose's and Continue's `config.yaml`).
fn is_yaml(file: &Path) -> bool {
    file.extension()
        .is_some_and(|extension| extension == "yaml" || extension == "yml")
}

/// The config `text` of `file` as the JSON value it holds, whatever its format.
pub fn as_json(text: &str, file: &Path) -> Result<serde_json::Value, Error> {
    if is_toml(file) {
        return toml::as_json(text).of(file);
    }
    if is_yaml(file) {
        return yaml::as_json(text).of(file);
    }
    let syntax = |error: serde_json::Error| Kind::Syntax {
        format: "JSON",
        detail: error.to_string(),
    };
    json::readable(text)
        .and_then(|text| serde_json::from_str(&text).map_err(syntax))
        .of(file)
}

/// `key` as one step of a JSON pointer (RFC 6901).
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Whether `command` is one wrap writes: a binary named `reasons`, by any path (this
/// one's, another install's, or the bare name older releases wrote), or a release's
/// versioned name (`reasons-0.1.0`, which an archive unpacks and a link may point at),
/// wherever it is now. A program whose name only begins so (`reasons-lint mcp …`) is some
/// other program, and is wrapped as any is.
pub fn is_reasons(command: &str) -> bool {
    let Some(name) = Path::new(command)
        .file_name()
        .and_then(|name| name.to_str())
    else {
        return false;
    };
    let name = name.strip_suffix(".exe").unwrap_or(name);
    let versioned = name
        .strip_prefix("reasons-")
        .is_some_and(|version| version.starts_with(|c: char| c.is_ascii_digit()));
    name == "reasons" || versioned
}

/// The variable of a wrapped remote server's environment that keeps its remote keys as
/// they were, for unwrap: every client's schema allows a variable there, where a key of
/// wrap's own in the entry is refused by the strict ones (Gemini CLI, Codex's
/// `--strict-config`).
const UNWRAP_VARIABLE: &str = "REASONS_UNWRAP";

/// The key under which older releases kept a wrapped remote server's remote keys; unwrap
/// still reads it. YAML's renamed keys (`reasons-unwrap-url`) are still written so.
const KEPT: &str = "reasons-unwrap";

/// The variable a wrapped remote server's OAuth client secret is passed in.
const SECRET_VARIABLE: &str = "REASONS_CLIENT_SECRET";

/// The variable a wrapped remote server's URL is passed in.
const URL_VARIABLE: &str = "REASONS_URL";

/// What runs a remote server behind the proxy: the proxy's arguments (`head`, then the
/// URL's and each header's variable) and the environment that gives them their values,
/// so that neither the URL nor a header is ever an argument.
struct Proxied {
    args: Vec<String>,
    env: Vec<(String, String)>,
    /// The variables of the client's own environment that headers are read from, which
    /// the client must pass on to the proxy.
    from_env: Vec<String>,
}

impl Proxied {
    fn new(mut head: Vec<String>, url: &str) -> Proxied {
        head.extend(["--url-env".into(), URL_VARIABLE.into()]);
        Proxied {
            args: head,
            env: vec![(URL_VARIABLE.into(), url.into())],
            from_env: Vec::new(),
        }
    }

    /// A header the server is sent, with its value, which the proxy's environment holds.
    fn header(&mut self, name: &str, value: &str) {
        let variable = format!("REASONS_HEADER_{}", self.env.len() - 1);
        self.args.push("--header-env".into());
        self.args.push(format!("{name}={variable}"));
        self.env.push((variable, value.into()));
    }

    /// A header the server is sent, its value read from the client's variable `variable`.
    fn header_from(&mut self, name: &str, variable: &str) {
        self.args.push("--header-env".into());
        self.args.push(format!("{name}={variable}"));
        self.from_env.push(variable.into());
    }

    /// `Authorization: Bearer` with the token in the client's variable `variable`.
    fn bearer_from(&mut self, variable: &str) {
        self.args.extend(["--bearer-env".into(), variable.into()]);
        self.from_env.push(variable.into());
    }

    /// What unwrap puts back (the remote keys as they were, in the file's own
    /// format), kept in [`UNWRAP_VARIABLE`]; after every header.
    fn keep(&mut self, kept: String) {
        self.env.push((UNWRAP_VARIABLE.into(), kept));
    }

    /// The environment as a JSON object.
    fn env_json(&self) -> serde_json::Value {
        let env = self
            .env
            .iter()
            .map(|(name, value)| (name.clone(), value.as_str().into()));
        serde_json::Value::Object(env.collect())
    }
}

/// Each header wrap passed on in `args` (`--header-env NAME=REASONS_HEADER_n`) with the
/// value `seen` gives its variable now, in the entry's environment; one whose variable
/// holds none is left out.
fn passed_headers(args: &[String], seen: impl Fn(&str) -> Option<String>) -> Vec<(String, String)> {
    let passed = args.windows(2).filter(|pair| pair[0] == "--header-env");
    passed
        .filter_map(|pair| {
            let (name, variable) = pair[1].split_once('=')?;
            let value = seen(variable).filter(|_| variable.starts_with("REASONS_HEADER_"))?;
            Some((name.to_string(), value))
        })
        .collect()
}

/// The values in `config` that are credentials, or may be: every header's (remote
/// entries' `headers`, Codex's `http_headers`), every variable's whose name says it is a
/// secret (`…TOKEN`, `…SECRET`, `…KEY`, `…PASSWORD`, `…AUTH…`, and wrap's own
/// `REASONS_HEADER_n`, `REASONS_CLIENT_SECRET`), and an OAuth client's secret.
fn secrets_of(config: &serde_json::Value, all: bool, secrets: &mut Vec<String>) {
    use serde_json::Value;
    let secret_name = |name: &str| {
        let name = name.to_ascii_uppercase();
        [
            "TOKEN",
            "SECRET",
            "KEY",
            "PASSWORD",
            "AUTH",
            "REASONS_HEADER_",
            "COOKIE",
        ]
        .iter()
        .any(|word| name.contains(word))
    };
    match config {
        Value::String(value) if all && value.chars().count() >= 4 => secrets.push(value.clone()),
        Value::Object(members) => {
            for (key, value) in members {
                let headers = matches!(key.as_str(), "headers" | "http_headers");
                secrets_of(value, all || headers || secret_name(key), secrets);
            }
        }
        Value::Array(values) => values
            .iter()
            .for_each(|value| secrets_of(value, all, secrets)),
        _ => {}
    }
}

/// `text` with each of `secrets` shown as `…`, the longest first.
fn masked(text: &str, mut secrets: Vec<String>) -> String {
    secrets.sort_by_key(|secret| std::cmp::Reverse(secret.len()));
    secrets.dedup();
    secrets.iter().fold(text.to_string(), |text, secret| {
        let escaped = serde_json::to_string(secret).unwrap_or_default();
        let escaped = escaped.trim_matches('"');
        text.replace(secret.as_str(), "…").replace(escaped, "…")
    })
}

/// The clients `--client` knows.
const KNOWN: &str = "claude-desktop, claude-code, cursor, vscode, windsurf, gemini, lmstudio, \
                     cline, roo, zed, codex, goose or continue";

/// The config files a known client reads its servers from, at their documented places
/// for this system (for Claude Code, `~/.claude.json`: its user scope, and each
/// project's local scope), and those of the project in this folder that it reads too
/// (its project scope: `.mcp.json`, `.cursor/mcp.json`, `.vscode/mcp.json`, …).
pub fn client_configs(client: &str) -> Result<Vec<PathBuf>, ClientError> {
    if cfg!(windows) {
        return Err(ClientError::Unsupported);
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .ok_or(ClientError::NoHome)?;
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mac = cfg!(target_os = "macos");
    let support = home.join("Library/Application Support");
    // Where VS Code keeps an extension's own files (Cline's, Roo Code's).
    let code = match mac {
        true => support.join("Code/User/globalStorage"),
        false => config.join("Code/User/globalStorage"),
    };
    // The Cline CLI keeps a file of its own beside the VS Code extension's.
    if client == "cline" {
        let cli = std::env::var_os("CLINE_MCP_SETTINGS_PATH")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".cline/data/settings/cline_mcp_settings.json"));
        let extension = code.join("saoudrizwan.claude-dev/settings/cline_mcp_settings.json");
        return found(client, vec![extension, cli]);
    }
    let file = match client {
        "claude-desktop" if mac => support.join("Claude/claude_desktop_config.json"),
        "claude-desktop" => config.join("Claude/claude_desktop_config.json"),
        "windsurf" => home.join(".codeium/windsurf/mcp_config.json"),
        "gemini" => home.join(".gemini/settings.json"),
        "lmstudio" => home.join(".lmstudio/mcp.json"),
        "roo" => code.join("rooveterinaryinc.roo-cline/settings/mcp_settings.json"),
        "zed" => config.join("zed/settings.json"),
        "goose" => config.join("goose/config.yaml"),
        "continue" => home.join(".continue/config.yaml"),
        "claude-code" => home.join(".claude.json"),
        "cursor" => home.join(".cursor/mcp.json"),
        "codex" => std::env::var_os("CODEX_HOME")
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".codex"))
            .join("config.toml"),
        "vscode" if mac => support.join("Code/User/mcp.json"),
        "vscode" => config.join("Code/User/mcp.json"),
        other => return Err(ClientError::Unknown(other.to_string())),
    };
    found(client, vec![file])
}

/// Of `client`'s user files `user` and its project's files in this folder, those there
/// are; refused, saying where the client keeps its servers, when there is none.
fn found(client: &str, user: Vec<PathBuf>) -> Result<Vec<PathBuf>, ClientError> {
    let project = project_configs(client);
    // A user file not made yet is no error while another is here; with none, there is
    // nothing to do, and where the client keeps its servers is the next step.
    let mut files: Vec<PathBuf> = user
        .iter()
        .filter(|file| std::fs::symlink_metadata(file).is_ok())
        .cloned()
        .collect();
    if files.is_empty() && project.is_empty() {
        return Err(ClientError::NoneYet {
            client: client.to_string(),
            places: user,
            project: match client {
                "continue" => Some("a project's in .continue/mcpServers/ of its folder"),
                _ if project_file(client).is_some() => Some("a project's in its folder"),
                _ => None,
            },
        });
    }
    files.extend(project);
    // Run in the home folder, a project's file is the user's own.
    let mut seen = Vec::new();
    files.retain(|file| {
        let canonical = std::fs::canonicalize(file).unwrap_or_else(|_| file.clone());
        let new = !seen.contains(&canonical);
        seen.push(canonical);
        new
    });
    Ok(files)
}

/// The config files of the project in this folder that `client` reads its servers from
/// besides its own (its project scope), those there are.
pub fn project_configs(client: &str) -> Vec<PathBuf> {
    if client != "continue" {
        return project_file(client)
            .filter(|file| file.is_file())
            .into_iter()
            .collect();
    }
    // Continue reads each block file of the workspace's `.continue/mcpServers`: YAML
    // blocks, and JSON in Claude Desktop's form or one server to a file.
    let Ok(blocks) = std::fs::read_dir(".continue/mcpServers") else {
        return Vec::new();
    };
    // A block file that is a link (to another client's config, say) is not Continue's
    // own: it is not edited through the link.
    let mut files: Vec<PathBuf> = blocks
        .filter_map(|entry| entry.ok())
        .filter(|entry| entry.file_type().is_ok_and(|kind| !kind.is_symlink()))
        .map(|entry| entry.path())
        .filter(|path| {
            let json = path
                .extension()
                .is_some_and(|extension| extension == "json");
            (is_yaml(path) || json) && path.is_file()
        })
        .collect();
    files.sort();
    files
}

/// The one file of a project's folder that `client` reads its servers from, if it has one.
fn project_file(client: &str) -> Option<PathBuf> {
    let named = match client {
        "claude-code" => ".mcp.json",
        "cursor" => ".cursor/mcp.json",
        "vscode" => ".vscode/mcp.json",
        "gemini" => ".gemini/settings.json",
        "roo" => ".roo/mcp.json",
        "zed" => ".zed/settings.json",
        "codex" => ".codex/config.toml",
        _ => return None,
    };
    Some(PathBuf::from(named))
}

/// Where `file`'s copy from before the last change is kept.
pub fn backup_of(file: &Path) -> PathBuf {
    let mut name = file.as_os_str().to_owned();
    name.push(".reasons-backup");
    PathBuf::from(name)
}

/// Wraps or unwraps the config `file` in place (or, with `dry_run`, only says what would
/// change, as a diff); what became of each server, for the human, and the diff.
///
/// A wrap that cannot put every server behind `reasons mcp` changes nothing and says
/// which and why. The file's bytes from before are kept beside it (`backup_of`), then it
/// is replaced whole, by a rename, keeping its mode and group owner, unless it changed
/// while this ran (a client saving it), which is refused. Unwrapping a file that is still
/// exactly what wrapping its backup gave, when the backup ran nothing behind `reasons`,
/// restores the backup's bytes.
pub fn run(file: &Path, way: Way, dry_run: bool, reasons: &Wrapper) -> Result<Report, Error> {
    // A config kept elsewhere and linked into place (dotfiles) is edited where it is, so
    // the link stays a link.
    let file = &std::fs::canonicalize(file)
        .map_err(io(Doing::Read))
        .of(file)?;
    let text = read_text(file)?;
    let edited = edit(&text, file, way, reasons)?;
    if way == Way::Wrap {
        let cannot: Vec<String> = edited
            .servers
            .iter()
            .filter_map(|(server, fate)| match fate {
                Fate::Skipped(why) => Some(format!("{}: {why}", server.name)),
                _ => None,
            })
            .collect();
        if !cannot.is_empty() {
            return Err(Kind::Unwrappable(cannot).of(file));
        }
    }
    let restored = match way {
        Way::Unwrap => read_text(&backup_of(file))
            .ok()
            .filter(|before| wrapped_from(before, &text, file, reasons)),
        Way::Wrap => None,
    };
    let after = restored.as_deref().unwrap_or(&edited.text);
    let mut rows = String::new();
    // What unwrap could not undo still runs behind the proxy: the command says so by
    // its exit, not only in a row.
    let left_wrapped = match way {
        Way::Unwrap => edited
            .servers
            .iter()
            .filter(|(_, fate)| matches!(fate, Fate::Skipped(_)))
            .count(),
        Way::Wrap => 0,
    };
    let remotes = match way {
        Way::Wrap => remotes(after, file, &edited.servers),
        Way::Unwrap => Vec::new(),
    };
    let report = |text: String| Report {
        text,
        left_wrapped,
        remotes: remotes.clone(),
    };
    for (server, fate) in &edited.servers {
        let said = match (fate, way) {
            (Fate::Changed, Way::Wrap) => "now runs behind reasons mcp".to_string(),
            (Fate::Changed, Way::Unwrap) => "runs as it did before".to_string(),
            (Fate::AsItWas, Way::Wrap) => "already runs behind reasons mcp".to_string(),
            (Fate::AsItWas, Way::Unwrap) => "does not run behind reasons mcp".to_string(),
            (Fate::Skipped(why), _) => format!("left as it is: {why}"),
            (Fate::Outside(what), _) => format!("left as it is: {what}, not a server"),
        };
        // A server's name is the file's to choose (a cloned project's): one inert row.
        let name = reasons_inert::inert(&server.name, SERVER_NAME_CAP);
        rows.push_str(&format!("{name}: {said}\n"));
    }
    if after == text {
        rows.push_str(&format!("{}: nothing to change\n", file.display()));
        return Ok(report(rows));
    }
    // What is written must read as the client reads it, every server where it was.
    let unchecked = |why: &str, met: Option<Error>| Kind::Unchecked {
        why: why.into(),
        met: met.map(Box::new),
    };
    let check = edit(after, file, Way::Unwrap, reasons)
        .map_err(|met| unchecked("would not read back", Some(met)).of(file))?;
    if check.servers.len() != edited.servers.len() {
        return Err(unchecked("would lose a server", None).of(file));
    }
    let diff = similar::TextDiff::from_lines(text.as_str(), after)
        .unified_diff()
        .header(&file.display().to_string(), &file.display().to_string())
        .to_string();
    // The replacing rename would not see the mode: a file made read-only says "leave me".
    let metadata = std::fs::metadata(file).map_err(io(Doing::Read)).of(file)?;
    if metadata.permissions().readonly() {
        let mode = std::os::unix::fs::MetadataExt::mode(&metadata) & 0o7777;
        return Err(Kind::ReadOnly(mode).of(file));
    }
    if dry_run {
        // A diff goes to a terminal and into logs: the values of headers and of secret
        // variables, in the file before and after, are shown as `…`.
        let mut secrets = Vec::new();
        for config in [as_json(&text, file), as_json(after, file)]
            .into_iter()
            .flatten()
        {
            secrets_of(&config, false, &mut secrets);
        }
        return Ok(report(format!("{}{rows}", masked(&diff, secrets))));
    }
    let staged = stage_like(file, after.as_bytes(), &metadata)?;
    write_like(&backup_of(file), text.as_bytes(), &metadata)?;
    // A client that saved the file since it was read would lose its save.
    if !staged.put_unless_changed(text.as_bytes())? {
        return Err(Kind::Changed.of(file));
    }
    rows.push_str(&format!(
        "{} changed; what it was is in {}\n",
        file.display(),
        backup_of(file).display()
    ));
    Ok(report(rows))
}

/// A remote server behind the proxy: its name in the config, and its URL.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RemoteServer {
    /// Its name in the config.
    pub name: String,
    /// Its URL.
    pub url: String,
}

/// The remote servers among `servers` that `text` (a config after wrap) runs behind the
/// proxy with no credentials of their own (no `Authorization` header, no `--bearer-env`).
fn remotes(text: &str, file: &Path, servers: &[(Server, Fate)]) -> Vec<RemoteServer> {
    let Ok(config) = as_json(text, file) else {
        return Vec::new();
    };
    let strings = |value: &serde_json::Value| -> Vec<String> {
        (value.as_array().into_iter().flatten())
            .filter_map(|item| item.as_str().map(str::to_string))
            .collect()
    };
    let credentials = |args: &[String]| {
        args.windows(2).any(|pair| {
            pair[0] == "--bearer-env"
                || (pair[0] == "--header-env"
                    && pair[1].to_ascii_lowercase().starts_with("authorization="))
        })
    };
    (servers.iter())
        .filter(|(_, fate)| matches!(fate, Fate::Changed | Fate::AsItWas))
        .filter_map(|(server, _)| {
            let entry = config.pointer(&server.pointer)?;
            let args = strings(&entry["args"]);
            if !args.iter().any(|arg| arg == "--url-env") || credentials(&args) {
                return None;
            }
            let env = entry.get("env").or_else(|| entry.get("envs"))?;
            let url = env.get(URL_VARIABLE)?.as_str()?.to_string();
            Some(RemoteServer {
                name: server.name.clone(),
                url,
            })
        })
        .collect()
}

/// The most characters of a server's name a report shows.
const SERVER_NAME_CAP: usize = 64;

/// What `run` did to one file: its rows (and, for a dry run, its diff), how many of its
/// servers unwrap left behind the proxy, and the remote servers wrap left behind it that
/// carry no credentials of their own: those that may ask their user to sign in.
pub struct Report {
    /// A row per server (and, for a dry run, the diff first), for its user to read.
    pub text: String,
    /// How many servers unwrap left behind the proxy.
    pub left_wrapped: usize,
    /// The remote servers behind the proxy with no credentials of their own.
    pub remotes: Vec<RemoteServer>,
}

/// Whether `now` is exactly what wrapping `before` gives, and `before` ran no server
/// behind `reasons mcp` that wrap would have had to put there: then `before` is what
/// unwrapping `now` means, byte for byte.
fn wrapped_from(before: &str, now: &str, file: &Path, reasons: &Wrapper) -> bool {
    let ran_nothing_wrapped = edit(before, file, Way::Unwrap, reasons).is_ok_and(|unwrapped| {
        unwrapped
            .servers
            .iter()
            .all(|(_, fate)| *fate != Fate::Changed)
    });
    ran_nothing_wrapped
        && edit(before, file, Way::Wrap, reasons).is_ok_and(|wrapped| wrapped.text == now)
}

/// What the editors' unit tests share: a wrapper, and a reader of the lines it writes.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Line, Wrapper};

    /// `reasons mcp`'s reading of the lines these tests write: `mcp -- CMD…`, or
    /// `mcp --url-env VAR`. The command's own parser, with every flag, is what the
    /// binary's tests run wrap with.
    fn reads(args: &[String]) -> Line {
        let words: Vec<&str> = args.iter().map(String::as_str).collect();
        match words.as_slice() {
            ["mcp", "--", _, ..] => Line::Command { at: 2 },
            ["mcp", "--url-env", ..] => Line::Remote,
            _ => Line::Unread(format!("not a test line: {words:?}")),
        }
    }

    /// Wraps with `/bin/reasons`, no audit folder.
    pub fn wrapper() -> Wrapper {
        Wrapper {
            command: "/bin/reasons".into(),
            launcher: Vec::new(),
            audit: None,
            reads,
        }
    }
}
