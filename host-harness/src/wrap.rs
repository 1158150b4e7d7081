//! `reasons wrap` and `reasons unwrap`: an MCP client's config rewritten so that each
//! stdio server runs behind `reasons mcp`, and back.
//!
//! The file is edited as text, never re-serialised: wrapping a server replaces its
//! `command`'s value with the `reasons` binary and puts `"mcp", "--", <the command as it
//! was written>` at the head of its `args` (adding `"args"` after the command when there
//! were none). Every other byte stays where it was: its environment, its other keys, the
//! file's line endings, its other servers. Unwrapping removes exactly what wrapping put
//! there, so `unwrap` after `wrap` gives the file back byte for byte. A server that
//! already runs behind `reasons mcp` is left as it is, so wrapping twice changes nothing.
//!
//! A remote server (`url`, and its `headers`) becomes a stdio server running
//! `reasons mcp --url URL --header 'Name: value'…`; its entry as it was written is kept
//! whole in the new one, under `reasons-unwrap`, and is what unwrapping puts back.

use crate::files::write_whole;
use crate::json;
use anyhow::{Context, bail};
use serde_json::value::RawValue;
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
}

/// The config's text after the edit, and each server's fate, by name.
pub struct Edited {
    /// The whole file, edited.
    pub text: String,
    /// Each server's name and what became of it, in the file's order.
    pub servers: Vec<(String, Fate)>,
}

/// Which way the edit goes.
#[derive(Clone, Copy)]
pub enum Way {
    /// Each stdio server behind `reasons mcp`.
    Wrap,
    /// Each server behind `reasons mcp` as it was before.
    Unwrap,
}

/// `text` (a config file's, `file` naming it in messages) wrapped or unwrapped, with
/// `reasons` as the command that runs the proxy.
pub fn edit(text: &str, file: &Path, way: Way, reasons: &str) -> anyhow::Result<Edited> {
    let top = json::members(text).with_context(|| not_plain_json(text, file))?;
    let mut found = top
        .iter()
        .filter(|(key, _)| matches!(key.as_ref(), b"mcpServers" | b"servers"));
    let Some((_, servers)) = found.next() else {
        bail!(
            "{} has no `mcpServers` (or, as VS Code writes it, `servers`) object",
            file.display()
        );
    };
    if found.next().is_some() {
        bail!("{} has more than one list of servers", file.display());
    }
    let entries = json::members(servers.get())
        .with_context(|| format!("the servers of {} are not a JSON object", file.display()))?;
    let mut edits: Vec<(usize, usize, String)> = Vec::new();
    let mut fates = Vec::new();
    for (name, entry) in &entries {
        let name = String::from_utf8_lossy(name).into_owned();
        let fate = match way {
            Way::Wrap => wrap(text, entry, reasons, &mut edits),
            Way::Unwrap => unwrap(text, entry, &mut edits),
        };
        fates.push((name, fate));
    }
    // Each edit replaces a span of the original text; applied from the end, none moves
    // another.
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    let mut edited = text.to_string();
    for (start, end, with) in edits {
        edited.replace_range(start..end, &with);
    }
    Ok(Edited {
        text: edited,
        servers: fates,
    })
}

/// Why `text` could not be read, for a message: JSON with comments (VS Code allows
/// them) is named as such, since removing them would lose what they say.
fn not_plain_json(text: &str, file: &Path) -> String {
    let error = serde_json::from_str::<&RawValue>(text).err();
    let comments = text.contains("//") || text.contains("/*");
    match (error, comments) {
        (Some(error), true) => format!(
            "{} is not plain JSON ({error}); it seems to hold comments, which reasons will \
             not remove: take them out, or wrap its servers by hand",
            file.display()
        ),
        (Some(error), false) => format!("{} is not JSON: {error}", file.display()),
        (None, _) => format!("{} is not a JSON object", file.display()),
    }
}

/// Where `part` (a slice of `whole`) lies in it.
fn span(whole: &str, part: &str) -> (usize, usize) {
    let start = json::offset(whole, part);
    (start, start + part.len())
}

/// The value of `key` in an entry's members, if it is there once.
fn member<'a>(members: &[json::Member<'a>], key: &str) -> Option<&'a RawValue> {
    let mut values = members
        .iter()
        .filter(|(name, _)| name.as_ref() == key.as_bytes());
    let (_, value) = values.next()?;
    values.next().is_none().then_some(*value)
}

/// Whether `entry` already runs behind `reasons mcp`: its command is a `reasons` binary
/// and its first argument `mcp`.
fn wrapped(members: &[json::Member<'_>]) -> bool {
    let command = member(members, "command").and_then(json::string);
    let is_reasons = command.is_some_and(|command| {
        Path::new(&*String::from_utf8_lossy(&command)).file_name() == Some("reasons".as_ref())
    });
    let first = member(members, "args")
        .and_then(|args| serde_json::from_str::<Vec<&RawValue>>(args.get()).ok())
        .and_then(|args| args.first().and_then(|first| json::string(first)));
    is_reasons && first.as_deref() == Some(b"mcp")
}

fn wrap(
    text: &str,
    entry: &RawValue,
    reasons: &str,
    edits: &mut Vec<(usize, usize, String)>,
) -> Fate {
    let Some(members) = json::members(entry.get()) else {
        return Fate::Skipped("not a JSON object".into());
    };
    if wrapped(&members) {
        return Fate::AsItWas;
    }
    let Some(command) =
        member(&members, "command").filter(|command| json::string(command).is_some())
    else {
        return match member(&members, "url").and_then(json::string) {
            Some(url) => wrap_remote(text, entry, &members, &url, reasons, edits),
            None => Fate::Skipped("no `command` string and no `url`".into()),
        };
    };
    let reasons = serde_json::to_string(reasons).unwrap_or_default();
    let (start, end) = span(text, command.get());
    edits.push((start, end, reasons));
    let head = format!(r#""mcp", "--", {}"#, command.get());
    match member(&members, "args") {
        Some(args) => {
            let Ok(list) = serde_json::from_str::<Vec<&RawValue>>(args.get()) else {
                edits.pop();
                return Fate::Skipped("`args` is not a list".into());
            };
            let (open, _) = span(text, args.get());
            let separator = if list.is_empty() { "" } else { ", " };
            edits.push((open + 1, open + 1, format!("{head}{separator}")));
        }
        None => edits.push((end, end, format!(r#", "args": [{head}]"#))),
    }
    Fate::Changed
}

/// The key under which a wrapped remote server keeps its entry as it was written.
const KEPT: &str = "reasons-unwrap";

/// A remote server's entry replaced by one that runs `reasons mcp --url` in front of it,
/// keeping the entry as it was under [`KEPT`].
fn wrap_remote(
    text: &str,
    entry: &RawValue,
    members: &[json::Member<'_>],
    url: &[u8],
    reasons: &str,
    edits: &mut Vec<(usize, usize, String)>,
) -> Fate {
    let mut args = vec![
        "mcp".to_string(),
        "--url".to_string(),
        String::from_utf8_lossy(url).into_owned(),
    ];
    // Headers (a token, say) go to the proxy through its environment, which only its
    // user can read, never through its arguments, which anyone's `ps` shows.
    let mut env = serde_json::Map::new();
    if let Some(headers) = member(members, "headers") {
        let Some(headers) = json::members(headers.get()) else {
            return Fate::Skipped("its `headers` are not an object".into());
        };
        for (at, (name, value)) in headers.iter().enumerate() {
            let Some(value) = json::string(value) else {
                return Fate::Skipped("a header's value is not a string".into());
            };
            let variable = format!("REASONS_HEADER_{at}");
            args.push("--header-env".into());
            args.push(format!("{}={variable}", String::from_utf8_lossy(name)));
            env.insert(
                variable,
                String::from_utf8_lossy(&value).into_owned().into(),
            );
        }
    }
    let wrapped = format!(
        r#"{{"command": {}, "args": {}, "env": {}, "{KEPT}": {}}}"#,
        serde_json::to_string(reasons).unwrap_or_default(),
        serde_json::to_string(&args).unwrap_or_default(),
        serde_json::Value::Object(env),
        entry.get()
    );
    let (start, end) = span(text, entry.get());
    edits.push((start, end, wrapped));
    Fate::Changed
}

fn unwrap(text: &str, entry: &RawValue, edits: &mut Vec<(usize, usize, String)>) -> Fate {
    let Some(members) = json::members(entry.get()) else {
        return Fate::Skipped("not a JSON object".into());
    };
    if !wrapped(&members) {
        return Fate::AsItWas;
    }
    if let Some(kept) = member(&members, KEPT) {
        let (start, end) = span(text, entry.get());
        edits.push((start, end, kept.get().to_string()));
        return Fate::Changed;
    }
    let (Some(command), Some(args)) = (member(&members, "command"), member(&members, "args"))
    else {
        return Fate::AsItWas;
    };
    let list = serde_json::from_str::<Vec<&RawValue>>(args.get()).unwrap_or_default();
    // Only what `wrap` writes is undone: `mcp`, `--`, the command. A server put behind
    // `reasons mcp` with flags of its own was put there by someone, on purpose.
    let dashes = 1;
    if list
        .get(dashes)
        .and_then(|arg| json::string(arg))
        .as_deref()
        != Some(b"--")
    {
        return Fate::Skipped(
            "it runs behind `reasons mcp` with flags of its own: unwrap it by hand".into(),
        );
    }
    let Some(original) = list
        .get(dashes + 1)
        .filter(|arg| json::string(arg).is_some())
    else {
        return Fate::Skipped("nothing follows the `--` of its `reasons mcp` arguments".into());
    };
    let (command_start, command_end) = span(text, command.get());
    let (args_start, args_end) = span(text, args.get());
    edits.push((command_start, command_end, original.get().to_string()));
    // Wrap added `, "args": [...]` right after the command when there were no arguments,
    // in exactly this spelling.
    let added = format!(r#", "args": ["mcp", "--", {}]"#, original.get());
    let added_by_wrap = list.len() == dashes + 2
        && text[command_end..].starts_with(&added)
        && command_end + added.len() == args_end;
    if added_by_wrap {
        edits.push((command_end, args_end, String::new()));
    } else {
        // Wrap put its arguments at the head of the list, and `, ` after them when the
        // server had arguments of its own.
        let (_, original_end) = span(text, original.get());
        let more = list.len() > dashes + 2 && text[original_end..].starts_with(", ");
        let cut_to = original_end + if more { 2 } else { 0 };
        edits.push((args_start + 1, cut_to, String::new()));
    }
    Fate::Changed
}

/// The config file of a known client, at its documented place for this system.
pub fn client_config(client: &str) -> anyhow::Result<PathBuf> {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set")?;
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| home.join(".config"));
    let mac = cfg!(target_os = "macos");
    let support = home.join("Library/Application Support");
    Ok(match client {
        "claude-desktop" if mac => support.join("Claude/claude_desktop_config.json"),
        "claude-desktop" => config.join("Claude/claude_desktop_config.json"),
        "claude-code" => home.join(".claude.json"),
        "cursor" => home.join(".cursor/mcp.json"),
        "vscode" if mac => support.join("Code/User/mcp.json"),
        "vscode" => config.join("Code/User/mcp.json"),
        other => bail!(
            "no known client `{other}`: claude-desktop, claude-code, cursor or vscode \
             (or name any file with --config)"
        ),
    })
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
/// The file's bytes from before are kept beside it (`backup_of`), then it is replaced
/// whole, by a rename, keeping its permissions. Unwrapping a file that is still exactly
/// what wrapping its backup gave restores the backup's bytes.
pub fn run(file: &Path, way: Way, dry_run: bool, reasons: &str) -> anyhow::Result<String> {
    // A config kept elsewhere and linked into place (dotfiles) is edited where it is, so
    // the link stays a link.
    let file =
        &std::fs::canonicalize(file).with_context(|| format!("cannot read {}", file.display()))?;
    let text = std::fs::read_to_string(file)
        .with_context(|| format!("cannot read {} as UTF-8 text", file.display()))?;
    let edited = edit(&text, file, way, reasons)?;
    let restored = match way {
        Way::Unwrap => std::fs::read_to_string(backup_of(file))
            .ok()
            .filter(|before| {
                edit(before, file, Way::Wrap, reasons).is_ok_and(|wrapped| wrapped.text == text)
            }),
        Way::Wrap => None,
    };
    let after = restored.as_deref().unwrap_or(&edited.text);
    let mut report = String::new();
    for (name, fate) in &edited.servers {
        let said = match (fate, way) {
            (Fate::Changed, Way::Wrap) => "now runs behind reasons mcp".to_string(),
            (Fate::Changed, Way::Unwrap) => "runs as it did before".to_string(),
            (Fate::AsItWas, Way::Wrap) => "already runs behind reasons mcp".to_string(),
            (Fate::AsItWas, Way::Unwrap) => "does not run behind reasons mcp".to_string(),
            (Fate::Skipped(why), _) => format!("left as it is: {why}"),
        };
        report.push_str(&format!("{name}: {said}\n"));
    }
    if after == text {
        report.push_str(&format!("{}: nothing to change\n", file.display()));
        return Ok(report);
    }
    let diff = similar::TextDiff::from_lines(text.as_str(), after)
        .unified_diff()
        .header(&file.display().to_string(), &file.display().to_string())
        .to_string();
    if dry_run {
        return Ok(format!("{diff}{report}"));
    }
    let permissions = std::fs::metadata(file)?.permissions();
    write_whole(&backup_of(file), text.as_bytes(), permissions.clone())?;
    write_whole(file, after.as_bytes(), permissions)?;
    report.push_str(&format!(
        "{} changed; what it was is in {}\n",
        file.display(),
        backup_of(file).display()
    ));
    Ok(report)
}
