//! An MCP client's config rewritten so that each server runs behind `reasons mcp`, and
//! back: what `reasons wrap`, `reasons unwrap` and `reasons doctor` do to a file, as a
//! library, with each format's editor in a room of its own (JSON and JSON with comments
//! here, `toml.rs` for Codex, `yaml.rs` for Goose and Continue) and `files.rs` for
//! reading and replacing a file whole.
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

pub mod files;
mod line_ends;
mod toml;
mod yaml;

use anyhow::{Context, bail};
use files::{read_text, stage_like, write_like};
use reasons_transform::json::{self as reader, Member, Object, member};
use std::borrow::Cow;
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

/// One span of the original text and what replaces it.
type Edit = (usize, usize, String);

/// `text` (a config file's, `file` naming it in messages) wrapped or unwrapped, with
/// `reasons` as the command that runs the proxy.
pub fn edit(original: &str, file: &Path, way: Way, reasons: &Wrapper) -> anyhow::Result<Edited> {
    if is_toml(file) {
        return toml::edit(original, file, way, reasons);
    }
    if is_yaml(file) {
        return yaml::edit(original, file, way, reasons);
    }
    // Read as plain JSON, every offset where it is in the original, to which the edits go:
    // its comments and layout stay.
    let text = &readable(original, file)?;
    let mut edits: Vec<Edit> = Vec::new();
    let mut servers = Vec::new();
    for list in server_lists(text, file)? {
        for (name, pointer, entry) in list.entries()? {
            let server = Server {
                name: match &list.scope {
                    Some(scope) => format!("{name} ({scope})"),
                    None => name.clone(),
                },
                pointer,
            };
            let mut members = unique(entry, &format!("the server {}", server.name))?;
            let mut stdio = Stdio::Flat;
            // Zed's older form: the program (`path`), its arguments and environment in an
            // object of their own, which is then what is edited.
            let mut entry = entry;
            if let Some(command) = member(&members, "command")
                && command.starts_with('{')
            {
                let what = format!("the `command` of the server {}", server.name);
                (entry, members, stdio) = (command, unique(command, &what)?, Stdio::Nested);
            }
            let fate = match way {
                Way::Wrap => {
                    let source = Source { original, text };
                    wrap(&source, entry, &members, stdio, &name, reasons, &mut edits)
                }
                Way::Unwrap => unwrap(text, entry, &members, stdio, &mut edits, reasons),
            };
            servers.push((server, fate));
        }
    }
    // Each edit replaces a span of the original text; applied from the end, none moves
    // another.
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    let mut edited = original.to_string();
    for (start, end, with) in edits {
        edited.replace_range(start..end, &with);
    }
    Ok(Edited {
        text: line_ends::as_in(original, edited),
        servers,
    })
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
pub fn as_json(text: &str, file: &Path) -> anyhow::Result<serde_json::Value> {
    if is_toml(file) {
        return toml::as_json(text, file);
    }
    if is_yaml(file) {
        return yaml::as_json(text);
    }
    Ok(serde_json::from_str(&readable(text, file)?)?)
}

/// A list of servers in the config.
struct List<'a> {
    /// Where it is, for messages: `mcpServers`, `projects["/home/me/app"].mcpServers`.
    label: String,
    /// The scope its servers are in, when it is not the top-level list.
    scope: Option<String>,
    /// Its JSON pointer.
    pointer: String,
    servers: Servers<'a>,
}

/// What a list of servers is in the text.
enum Servers<'a> {
    /// An object of servers by name.
    Named(&'a str),
    /// The whole file is one server, named for the file (a Continue block file in JSON,
    /// as `.continue/mcpServers/NAME.json` may be).
    One { name: String, entry: &'a str },
}

impl<'a> List<'a> {
    /// Its servers: each one's name, JSON pointer and entry; refused when a name repeats.
    fn entries(&self) -> anyhow::Result<Vec<(String, String, &'a str)>> {
        match self.servers {
            Servers::One { ref name, entry } => Ok(vec![(name.clone(), String::new(), entry)]),
            Servers::Named(servers) => Ok(unique(servers, &self.label)?
                .into_iter()
                .map(
                    |Member {
                         key: name,
                         value: entry,
                     }| {
                        let name = String::from_utf8_lossy(&name).into_owned();
                        let pointer = format!("{}/{}", self.pointer, pointer_token(&name));
                        (name, pointer, entry)
                    },
                )
                .collect()),
        }
    }
}

/// Every list of servers in `text`: the top-level one, and each project's.
fn server_lists<'a>(text: &'a str, file: &Path) -> anyhow::Result<Vec<List<'a>>> {
    let top =
        members_of(text).with_context(|| format!("{} is not a JSON object", file.display()))?;
    let top = no_repeats(top, &file.display().to_string())?;
    let mut lists = Vec::new();
    let mut found = top.iter().filter(|Member { key, .. }| {
        matches!(
            key.as_ref(),
            b"mcpServers" | b"servers" | b"context_servers"
        )
    });
    if let Some(Member {
        key,
        value: servers,
    }) = found.next()
    {
        let key = String::from_utf8_lossy(key).into_owned();
        lists.push(List {
            label: format!("{key} of {}", file.display()),
            scope: None,
            pointer: format!("/{key}"),
            servers: Servers::Named(servers),
        });
    }
    if found.next().is_some() {
        bail!("{} has more than one list of servers", file.display());
    }
    let projects = top
        .iter()
        .find(|Member { key, .. }| key.as_ref() == b"projects")
        .filter(|member| member.value.starts_with('{'));
    if let Some(Member {
        value: projects, ..
    }) = projects
    {
        for Member {
            key: path,
            value: project,
        } in unique(projects, "the projects")?
        {
            let path = String::from_utf8_lossy(&path).into_owned();
            let label = format!("projects[{path:?}]");
            let Some(project) = members_of(project) else {
                continue;
            };
            let project = no_repeats(project, &label)?;
            if let Some(Member { value: servers, .. }) = project
                .iter()
                .find(|Member { key, .. }| key.as_ref() == b"mcpServers")
            {
                lists.push(List {
                    label: format!("{label}.mcpServers of {}", file.display()),
                    scope: Some(format!("project {path}")),
                    pointer: format!("/projects/{}/mcpServers", pointer_token(&path)),
                    servers: Servers::Named(servers),
                });
            }
        }
    }
    let one_server = top
        .iter()
        .any(|Member { key, .. }| matches!(key.as_ref(), b"command" | b"url" | b"type"));
    if lists.is_empty()
        && one_server
        && let Some(name) = continue_block(file)
    {
        lists.push(List {
            label: file.display().to_string(),
            scope: None,
            pointer: String::new(),
            servers: Servers::One { name, entry: text },
        });
    }
    // Claude Code writes `~/.claude.json` before its user adds any server: a config
    // with no servers, not one wrap cannot read.
    let claude_state = file.file_name().is_some_and(|name| name == ".claude.json");
    if lists.is_empty() && !claude_state {
        bail!(
            "{} has no `mcpServers` (or, as VS Code writes it, `servers`; Zed, \
             `context_servers`) object",
            file.display()
        );
    }
    Ok(lists)
}

/// The server's name when `file` is a Continue block file (`.continue/mcpServers/NAME.json`),
/// which may hold one server alone, named for the file.
fn continue_block(file: &Path) -> Option<String> {
    let folder = file.parent()?;
    let in_blocks =
        folder.file_name()? == "mcpServers" && folder.parent()?.file_name()? == ".continue";
    let name = file.file_stem()?.to_string_lossy().into_owned();
    in_blocks.then_some(name)
}

/// `key` as one step of a JSON pointer (RFC 6901).
fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// The members of the object `text` (`what`, in messages), each key given once.
fn unique<'a>(text: &'a str, what: &str) -> anyhow::Result<Vec<Member<'a>>> {
    let members = members_of(text).with_context(|| format!("{what} is not a JSON object"))?;
    no_repeats(members, what)
}

/// `members`, refused when a key repeats: clients keep its last value, and an edit that
/// read the first would change what the client does not read.
fn no_repeats<'a>(members: Vec<Member<'a>>, what: &str) -> anyhow::Result<Vec<Member<'a>>> {
    if let Some(key) = reader::repeated_key(&members) {
        bail!(
            "{what} gives the key {:?} more than once, which readers take differently: \
             keep one, then try again",
            String::from_utf8_lossy(key)
        );
    }
    Ok(members)
}

/// How deep a config's objects and arrays may nest: serde_json's own limit, which every
/// reading of the file after this one meets.
const DEEPEST: usize = 128;

/// Refuses `text` if its objects and arrays nest deeper than [`DEEPEST`], counted over its
/// tokens without recursion: the parsers after this one recurse, and a file thousands of
/// levels deep would overflow their stack.
fn shallow(text: &str, file: &Path) -> anyhow::Result<()> {
    use jsonc_parser::tokens::Token;
    let mut scanner = jsonc_parser::Scanner::new(text);
    let mut depth = 0usize;
    // A text the scanner cannot read is left to the parser, which says where it is wrong.
    while let Ok(Some(token)) = scanner.scan() {
        match token {
            Token::OpenBrace | Token::OpenBracket => depth += 1,
            Token::CloseBrace | Token::CloseBracket => depth = depth.saturating_sub(1),
            _ => {}
        }
        if depth > DEEPEST {
            anyhow::bail!(
                "{} nests objects and arrays more than {DEEPEST} levels deep: not a config reasons reads, left as it was",
                file.display()
            );
        }
    }
    Ok(())
}

/// `text`, a config in JSON or in JSON with comments (VS Code's), as plain JSON with
/// every byte where it was: each comment and each trailing comma made spaces, line breaks
/// kept. Offsets in the one are offsets in the other, so an edit found in this text is
/// made in the original, comments and all.
fn readable(text: &str, file: &Path) -> anyhow::Result<String> {
    use jsonc_parser::tokens::Token;
    let options = jsonc_parser::ParseOptions {
        allow_comments: true,
        allow_loose_object_property_names: false,
        allow_trailing_commas: true,
    };
    let collect = jsonc_parser::CollectOptions {
        comments: jsonc_parser::CommentCollectionStrategy::AsTokens,
        tokens: true,
    };
    shallow(text, file)?;
    let parsed = jsonc_parser::parse_to_ast(text, &collect, &options)
        .map_err(|error| anyhow::anyhow!("{} is not JSON: {error}", file.display()))?;
    let tokens = parsed.tokens.unwrap_or_default();
    let comment = |token: &Token| matches!(token, Token::CommentLine(_) | Token::CommentBlock(_));
    let mut blanks: Vec<jsonc_parser::common::Range> = tokens
        .iter()
        .filter(|one| comment(&one.token))
        .map(|one| one.range)
        .collect();
    let significant: Vec<_> = tokens.iter().filter(|one| !comment(&one.token)).collect();
    blanks.extend(significant.windows(2).filter_map(|pair| {
        let closes = matches!(pair[1].token, Token::CloseBrace | Token::CloseBracket);
        (matches!(pair[0].token, Token::Comma) && closes).then_some(pair[0].range)
    }));
    let mut bytes = text.as_bytes().to_vec();
    for range in blanks {
        for byte in &mut bytes[range.start..range.end] {
            if !matches!(byte, b'\n' | b'\r') {
                *byte = b' ';
            }
        }
    }
    // Whole characters of a comment became spaces, byte by byte: still UTF-8.
    String::from_utf8(bytes).context("a comment's characters made spaces")
}

/// The members of the JSON object `text` in order, repeats included, as the workspace's
/// one reader reads them; `None` when it is not one JSON object.
fn members_of(text: &str) -> Option<Vec<Member<'_>>> {
    Object::parse(text).map(|object| object.members)
}

/// The value of the JSON string `value`, decoded (WTF-8); `None` for another value.
fn string(value: &str) -> Option<Vec<u8>> {
    reader::wtf8(value).map(Cow::into_owned)
}

/// Where `part` (a slice of `whole`) lies in it.
fn span(whole: &str, part: &str) -> (usize, usize) {
    let at = reader::span(whole, part);
    (at.start, at.end)
}

/// Where a stdio server's program is named.
#[derive(Clone, Copy)]
enum Stdio {
    /// `command`, beside `args` in the server's entry.
    Flat,
    /// `path`, beside `args` in the object that is the entry's `command` (Zed's older form).
    Nested,
}

impl Stdio {
    fn key(self) -> &'static str {
        match self {
            Stdio::Flat => "command",
            Stdio::Nested => "path",
        }
    }
}

/// Whether `entry` runs behind `reasons mcp` ([`runs_proxy`]).
fn wrapped(members: &[Member<'_>], stdio: Stdio) -> bool {
    let text = |value: &str| string(value).map(|text| String::from_utf8_lossy(&text).into_owned());
    let command = member(members, stdio.key()).and_then(text);
    // The first three arguments say whether a launcher runs it.
    let args: Vec<String> = (member(members, "args").and_then(reader::elements))
        .map(|args| args.iter().take(3).map_while(|arg| text(arg)).collect())
        .unwrap_or_default();
    command.is_some_and(|command| runs_proxy(&command, &args))
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

/// The keys of a remote server's entry that a wrapped one keeps aside: where it is, and how
/// its client signed in to it (Gemini's `oauth`, which the proxy now does).
const REMOTE_KEYS: [&str; 8] = [
    "url",
    "httpUrl",
    "serverUrl",
    "headers",
    "type",
    "oauth",
    "authProviderType",
    "auth",
];

/// The keys wrap writes in a remote server's entry to run the proxy: one the entry had
/// already (an `env` or `args` a client ignores for a remote server) is kept aside with
/// the remote keys, so it is neither given twice nor lost.
const WRITTEN: [&str; 3] = ["command", "args", "env"];

/// A config's text as the editors read it: as written, and with its comments blanked
/// (`readable`), every offset the same in both.
struct Source<'a> {
    original: &'a str,
    text: &'a str,
}

impl<'a> Source<'a> {
    /// What `part`, a slice of the readable text, is in the text as written.
    fn written(&self, part: &str) -> &'a str {
        let (start, end) = span(self.text, part);
        &self.original[start..end]
    }
}

fn wrap(
    source: &Source<'_>,
    entry: &str,
    members: &[Member<'_>],
    stdio: Stdio,
    name: &str,
    reasons: &Wrapper,
    edits: &mut Vec<Edit>,
) -> Fate {
    if wrapped(members, stdio) {
        return Fate::AsItWas;
    }
    let text = source.text;
    let Some(command) = member(members, stdio.key()).filter(|command| string(command).is_some())
    else {
        if let Stdio::Nested = stdio {
            return Fate::Skipped("its `command` object has no `path` string".into());
        }
        let url = ["httpUrl", "serverUrl", "url"]
            .iter()
            .find_map(|key| member(members, key).and_then(string));
        return match url {
            Some(url) => {
                let remote = Remote {
                    url: &url,
                    head: reasons.head(name),
                    written: source.written(entry),
                };
                wrap_remote(text, entry, members, remote, &reasons.command, edits)
            }
            // Zed starts an extension's server itself, from the extension: there is
            // nothing here to run behind the proxy, and the rest of the file is wrapped.
            None if member(members, "source")
                .and_then(string)
                .is_some_and(|source| source == b"extension") =>
            {
                Fate::Outside("a Zed extension's server, which Zed starts itself".into())
            }
            None => Fate::Skipped("no `command` string and no `url`".into()),
        };
    };
    let (start, end) = span(text, command);
    let head = json_head(&reasons.head(name), command);
    let reasons = serde_json::to_string(&reasons.command).unwrap_or_default();
    match member(members, "args") {
        Some(args) => {
            let Some(list) = reader::elements(args) else {
                return Fate::Skipped("`args` is not a list".into());
            };
            let (open, close) = span(text, args);
            // An empty list the user wrote as `[]` is filled as `[ …]`: the space tells
            // unwrap the list was there, where one wrap adds has none.
            let (lead, separator) = match (list.is_empty(), &text[open..close]) {
                (true, "[]") => (" ", ""),
                (true, _) => ("", ""),
                (false, _) => ("", ", "),
            };
            edits.push((start, end, reasons));
            edits.push((open + 1, open + 1, format!("{lead}{head}{separator}")));
        }
        None => {
            edits.push((start, end, reasons));
            edits.push((end, end, format!(r#", "args": [{head}]"#)));
        }
    }
    Fate::Changed
}

/// The head wrap puts in a stdio server's `args`, as JSON text: the proxy's arguments,
/// `--`, and the server's command (its exact text).
fn json_head(proxy: &[String], command: &str) -> String {
    let mut head: Vec<String> = proxy
        .iter()
        .map(|arg| serde_json::to_string(arg).unwrap_or_default())
        .collect();
    head.extend([r#""--""#.to_string(), command.to_string()]);
    head.join(", ")
}

/// A remote server to wrap: its URL, and the proxy's arguments before `--url-env`.
struct Remote<'a> {
    url: &'a [u8],
    head: Vec<String>,
    /// The entry as the file writes it, comments and all.
    written: &'a str,
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

/// The keys by which a client gets a remote server's credentials in ways the proxy
/// cannot take over: Gemini CLI's `authProviderType` (Google's credentials, a service
/// account) and Claude Code's `headersHelper` (a command of the user's). Such a server
/// is not wrapped: behind the proxy it would get no credentials, and wrap would have
/// said it runs. A plain OAuth sign-in (Gemini's `oauth`, or none said: Claude Code
/// signs in on a 401) the proxy does itself, as the spec has a client do.
const OWN_CREDENTIALS: [&str; 2] = ["authProviderType", "headersHelper"];

/// The members of Gemini CLI's `oauth` that name a client of the user's own, which
/// wrap does not carry over.
const OWN_CLIENT: [&str; 4] = ["clientId", "clientSecret", "authorizationUrl", "tokenUrl"];

/// Why the remote server of `members` cannot run behind the proxy: its client gets its
/// credentials in a way the proxy cannot take over.
fn signs_in(members: &[Member<'_>]) -> Option<String> {
    // Gemini CLI's `dynamic_discovery` is the spec's own OAuth discovery, which the
    // proxy does itself.
    let discovery = |key: &&str| {
        *key == "authProviderType"
            && member(members, key)
                .and_then(string)
                .is_some_and(|kind| kind == b"dynamic_discovery")
    };
    if let Some(key) = OWN_CREDENTIALS
        .iter()
        .find(|key| member(members, key).is_some() && !discovery(key))
    {
        return Some(format!(
            "its client gets its credentials itself (`{key}`), which reasons mcp cannot do \
             for it: behind the proxy it would get none (give them with `--bearer-env` in \
             a hand-written `reasons mcp --url` entry instead)"
        ));
    }
    let oauth = members_of(member(members, "oauth")?)?;
    let own = OWN_CLIENT
        .iter()
        .find(|key| member(&oauth, key).is_some())?;
    Some(format!(
        "its `oauth` names a client of its own (`{own}`), which wrap does not carry over: \
         give it as `reasons mcp --url URL --client-id ID` in a hand-written entry"
    ))
}

/// The remote transports `reasons mcp --url` speaks, as clients' `type` names them.
const SPOKEN: [&str; 5] = ["http", "streamable-http", "streamableHttp", "sse", "remote"];

/// Why the remote server of `members` at `url` cannot run behind the proxy: a transport
/// it does not speak (Claude Code's `"type": "ws"`, a `ws://` URL), which wrap would
/// otherwise report as running behind it.
fn unspoken(members: &[Member<'_>], url: &[u8]) -> Option<String> {
    let scheme = url.split(|&b| b == b':').next().unwrap_or_default();
    if !scheme.eq_ignore_ascii_case(b"http") && !scheme.eq_ignore_ascii_case(b"https") {
        return Some(format!(
            "its URL is not http:// or https:// (`{}:`), which reasons mcp does not speak",
            String::from_utf8_lossy(scheme)
        ));
    }
    let kind = member(members, "type").and_then(string)?;
    (!SPOKEN
        .iter()
        .any(|spoken| spoken.as_bytes() == kind.as_slice()))
    .then(|| {
        format!(
            "its transport (`\"type\": {}`) is one reasons mcp does not speak",
            serde_json::to_string(&String::from_utf8_lossy(&kind)).unwrap_or_default()
        )
    })
}

/// A remote server's entry replaced by one that runs `reasons mcp --url-env` in front of
/// it: its other keys stay, its remote keys go into [`UNWRAP_VARIABLE`].
fn wrap_remote(
    text: &str,
    entry: &str,
    members: &[Member<'_>],
    remote: Remote,
    reasons: &str,
    edits: &mut Vec<Edit>,
) -> Fate {
    if let Some(why) = signs_in(members).or_else(|| unspoken(members, remote.url)) {
        return Fate::Skipped(why);
    }
    let written = remote.written;
    let mut proxied = Proxied::new(remote.head, &String::from_utf8_lossy(remote.url));
    if let Some(headers) = member(members, "headers") {
        let Some(headers) = members_of(headers) else {
            return Fate::Skipped("its `headers` are not an object".into());
        };
        let Ok(headers) = no_repeats(headers, "") else {
            return Fate::Skipped("its `headers` give a name more than once".into());
        };
        for Member { key: name, value } in &headers {
            let Some(value) = string(value) else {
                return Fate::Skipped("a header's value is not a string".into());
            };
            proxied.header(
                &String::from_utf8_lossy(name),
                &String::from_utf8_lossy(&value),
            );
        }
    }
    // Cursor's static OAuth client (`auth`): the proxy signs in as it, so the wrapped
    // server signs in as the client would; the secret goes through the environment.
    if let Some(auth) = member(members, "auth") {
        let Some(auth) = members_of(auth) else {
            return Fate::Skipped("its `auth` is not an object".into());
        };
        let text = |key: &str| {
            member(&auth, key)
                .and_then(string)
                .map(|value| String::from_utf8_lossy(&value).into_owned())
        };
        if let Some(id) = text("CLIENT_ID") {
            proxied.args.push(format!("--client-id={id}"));
        }
        if let Some(secret) = text("CLIENT_SECRET") {
            proxied
                .args
                .push(format!("--client-secret-env={SECRET_VARIABLE}"));
            proxied.env.push((SECRET_VARIABLE.into(), secret));
        }
    }
    let remote = |key: &[u8]| {
        REMOTE_KEYS
            .iter()
            .chain(&WRITTEN)
            .any(|remote| remote.as_bytes() == key)
    };
    // The entry as it is written, comments and lines and all, for unwrap to give back.
    proxied.keep(written.to_string());
    let mut rebuilt = vec![
        format!(
            r#""command": {}"#,
            serde_json::to_string(reasons).unwrap_or_default()
        ),
        format!(
            r#""args": {}"#,
            serde_json::to_string(&proxied.args).unwrap_or_default()
        ),
        format!(r#""env": {}"#, proxied.env_json()),
    ];
    rebuilt.extend(
        members
            .iter()
            .filter(|Member { key, .. }| !remote(key))
            .map(|Member { key, value }| format!("{}: {}", key_text(key), value)),
    );
    let (start, end) = span(text, entry);
    edits.push((start, end, format!("{{{}}}", rebuilt.join(", "))));
    Fate::Changed
}

/// A key as JSON text.
fn key_text(key: &[u8]) -> String {
    serde_json::to_string(&String::from_utf8_lossy(key)).unwrap_or_default()
}

fn unwrap(
    text: &str,
    entry: &str,
    members: &[Member<'_>],
    stdio: Stdio,
    edits: &mut Vec<Edit>,
    reasons: &Wrapper,
) -> Fate {
    if !wrapped(members, stdio) {
        return Fate::AsItWas;
    }
    if let Some(kept) = kept_of(members) {
        return unwrap_remote(text, entry, members, &kept, edits);
    }
    let (Some(command), Some(args)) = (member(members, stdio.key()), member(members, "args"))
    else {
        return Fate::AsItWas;
    };
    let list = reader::elements(args).unwrap_or_default();
    let texts: Vec<String> = list
        .iter()
        .map(|arg| string(arg).map(|arg| String::from_utf8_lossy(&arg).into_owned()))
        .collect::<Option<_>>()
        .unwrap_or_default();
    let at = match server_at(&texts, reasons) {
        Ok(at) => at,
        Err(why) => return Fate::Skipped(why),
    };
    let original = list[at];
    let (command_start, command_end) = span(text, command);
    let (_, args_end) = span(text, args);
    edits.push((command_start, command_end, original.to_string()));
    // What wrap put at the head of the list goes, up to the server's own first argument,
    // however the list has been laid out since. Wrap wrote its head and `, ` just after
    // the `[`, before the space that was there: while that `, ` still follows the
    // command, the space after it is the list's own, and stays.
    if let Some(own) = list.get(at + 1) {
        let (head, _) = span(text, list[0]);
        let (_, command_end) = span(text, original);
        let (first, _) = span(text, own);
        let space = text[command_end..first]
            .strip_prefix(", ")
            .unwrap_or_default();
        edits.push((head, first, space.to_string()));
        return Fate::Changed;
    }
    // No arguments of its own, in an empty list of the user's (`[]`, which wrap filled
    // as `[ …]`): it is emptied again.
    let (open, _) = span(text, args);
    let (first, _) = span(text, list[0]);
    if text.get(open..first) == Some("[ ") {
        let (_, last) = span(text, original);
        edits.push((open + 1, last, String::new()));
        return Fate::Changed;
    }
    // No arguments of its own: wrap added `, "args": [...]` right after the command in
    // exactly this spelling; when that is still there it goes, else the list is emptied
    // of what wrap put in it, the space around it kept.
    let added = match texts[..at].split_last() {
        Some((dashes, head)) if dashes == "--" => {
            format!(r#", "args": [{}]"#, json_head(head, original))
        }
        _ => String::new(),
    };
    if !added.is_empty()
        && text[command_end..].starts_with(&added)
        && command_end + added.len() == args_end
    {
        edits.push((command_end, args_end, String::new()));
    } else {
        let (head, _) = span(text, list[0]);
        let (_, last) = span(text, original);
        edits.push((head, last, String::new()));
    }
    Fate::Changed
}

/// What a wrapped remote server's entry keeps for unwrap, as JSON text: in its
/// environment's [`UNWRAP_VARIABLE`], or under [`KEPT`] where an older release kept it.
fn kept_of(members: &[Member<'_>]) -> Option<String> {
    if let Some(kept) = member(members, KEPT) {
        return Some(kept.to_string());
    }
    let env = members_of(member(members, "env")?)?;
    let kept = string(member(&env, UNWRAP_VARIABLE)?)?;
    Some(String::from_utf8_lossy(&kept).into_owned())
}

/// A wrapped remote server's entry as it was: the entry's text as kept (or, as an older
/// release kept it, its remote keys alone), with what the user changed since in the
/// wrapped entry, each in its place: a URL moved or a token rotated in what the user sees
/// (`REASONS_URL`, `REASONS_HEADER_n`), another key's new value, and a key added since
/// (at the end). The user's file is the truth; every other byte is the kept one.
fn unwrap_remote(
    text: &str,
    entry: &str,
    members: &[Member<'_>],
    kept: &str,
    edits: &mut Vec<Edit>,
) -> Fate {
    // Read as the file is, its comments blanked where they are.
    let readable_kept = readable(kept, Path::new(UNWRAP_VARIABLE)).unwrap_or_default();
    let Some(was) = members_of(&readable_kept) else {
        return Fate::Skipped(format!(
            "what it keeps for unwrap (`{UNWRAP_VARIABLE}`) is not a JSON object: unwrap it \
             by hand"
        ));
    };
    let added = |key: &[u8]| {
        WRITTEN.iter().any(|written| written.as_bytes() == key) || key == KEPT.as_bytes()
    };
    let remote = |key: &[u8]| REMOTE_KEYS.iter().any(|remote| remote.as_bytes() == key);
    let visible = Visible::of(members);
    let now = |key: &[u8], value: &str| -> Option<String> {
        match key {
            // Only a URL changed since is written anew: one as it was keeps its spelling.
            b"url" | b"httpUrl" | b"serverUrl" => {
                (visible.url.clone()).filter(|url| string(url) != string(value))
            }
            b"headers" => visible.headers(value),
            // Kept aside, out of the user's sight: as it was.
            key if remote(key) || added(key) => None,
            key => member(members, &String::from_utf8_lossy(key))
                .filter(|since| *since != value)
                .map(str::to_string),
        }
    };
    let mut changes: Vec<Edit> = (was.iter())
        .filter_map(|Member { key, value }| {
            let (start, end) = span(&readable_kept, value);
            now(key, value).map(|since| (start, end, since))
        })
        .collect();
    let fresh: Vec<String> = (members.iter())
        .filter(|Member { key, .. }| !added(key) && !was.iter().any(|kept| &kept.key == key))
        .map(|Member { key, value }| format!("{}: {}", key_text(key), value))
        .collect();
    if !fresh.is_empty() {
        let (at, comma) = match was.last() {
            Some(last) => (span(&readable_kept, last.value).1, ", "),
            None => (kept.find('{').map_or(0, |open| open + 1), ""),
        };
        changes.push((at, at, format!("{comma}{}", fresh.join(", "))));
    }
    let mut restored = kept.to_string();
    changes.sort_by_key(|(start, ..)| std::cmp::Reverse(*start));
    for (start, end, with) in changes {
        restored.replace_range(start..end, &with);
    }
    let (start, end) = span(text, entry);
    edits.push((start, end, restored));
    Fate::Changed
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

/// What a wrapped remote server's entry shows its user now: the URL in `REASONS_URL`,
/// and each header wrap wrote as a `--header-env NAME=REASONS_HEADER_n` whose value is in
/// the entry's environment.
struct Visible {
    /// The URL as JSON text.
    url: Option<String>,
    /// Each header's name and value, as wrap's arguments and the environment say now.
    headers: Vec<(String, String)>,
}

impl Visible {
    fn of(members: &[Member<'_>]) -> Visible {
        let env: Vec<Member<'_>> = member(members, "env")
            .and_then(members_of)
            .unwrap_or_default();
        let text =
            |value: &str| string(value).map(|value| String::from_utf8_lossy(&value).into_owned());
        let args: Vec<String> = member(members, "args")
            .and_then(reader::elements)
            .unwrap_or_default()
            .into_iter()
            .filter_map(text)
            .collect();
        let headers = passed_headers(&args, |variable| member(&env, variable).and_then(text));
        Visible {
            url: member(&env, URL_VARIABLE)
                .filter(|value| string(value).is_some())
                .map(str::to_string),
            headers,
        }
    }

    /// The kept `headers` object `kept`, each header wrap passed on given the value the
    /// entry shows now; `None` when none changed.
    fn headers(&self, kept: &str) -> Option<String> {
        let kept = members_of(kept)?;
        let mut changed = false;
        let headers: Vec<String> = kept
            .iter()
            .map(|Member { key, value }| {
                let name = String::from_utf8_lossy(key);
                let seen = self.headers.iter().find(|(seen, _)| *seen == name);
                match seen {
                    Some((_, now)) if string(value).is_none_or(|was| was != now.as_bytes()) => {
                        changed = true;
                        let now = serde_json::to_string(now).unwrap_or_default();
                        format!("{}: {now}", key_text(key))
                    }
                    _ => format!("{}: {value}", key_text(key)),
                }
            })
            .collect();
        changed.then(|| format!("{{{}}}", headers.join(", ")))
    }
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
pub fn client_configs(client: &str) -> anyhow::Result<Vec<PathBuf>> {
    if cfg!(windows) {
        bail!("--client is not supported on Windows yet: name the file with --config");
    }
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .context("HOME is not set")?;
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
        other => bail!("no known client `{other}`: {KNOWN} (or name any file with --config)"),
    };
    found(client, vec![file])
}

/// Of `client`'s user files `user` and its project's files in this folder, those there
/// are; refused, saying where the client keeps its servers, when there is none.
fn found(client: &str, user: Vec<PathBuf>) -> anyhow::Result<Vec<PathBuf>> {
    let project = project_configs(client);
    // A user file not made yet is no error while another is here; with none, there is
    // nothing to do, and where the client keeps its servers is the next step.
    let mut files: Vec<PathBuf> = user
        .iter()
        .filter(|file| std::fs::symlink_metadata(file).is_ok())
        .cloned()
        .collect();
    if files.is_empty() && project.is_empty() {
        let places: Vec<String> = user.iter().map(|file| file.display().to_string()).collect();
        bail!(
            "{client} has no config here yet: it keeps its servers in {}{}, and there is \
             none, so there is nothing to do. Add a server to {client} first (or name a \
             file with --config), then run this again",
            places.join(" or "),
            match client {
                "continue" => " (a project's in .continue/mcpServers/ of its folder)",
                _ if project_file(client).is_some() => " (a project's in its folder)",
                _ => "",
            }
        );
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
pub fn run(file: &Path, way: Way, dry_run: bool, reasons: &Wrapper) -> anyhow::Result<Report> {
    // A config kept elsewhere and linked into place (dotfiles) is edited where it is, so
    // the link stays a link.
    let file =
        &std::fs::canonicalize(file).with_context(|| format!("cannot read {}", file.display()))?;
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
            bail!(
                "{} was not changed: not every server in it can run behind reasons mcp\n  {}",
                file.display(),
                cannot.join("\n  ")
            );
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
    let check = edit(after, file, Way::Unwrap, reasons).with_context(|| {
        format!(
            "the edit of {} would not read back; nothing was written",
            file.display()
        )
    })?;
    if check.servers.len() != edited.servers.len() {
        bail!(
            "the edit of {} would lose a server; nothing was written",
            file.display()
        );
    }
    let diff = similar::TextDiff::from_lines(text.as_str(), after)
        .unified_diff()
        .header(&file.display().to_string(), &file.display().to_string())
        .to_string();
    // The replacing rename would not see the mode: a file made read-only says "leave me".
    let metadata = std::fs::metadata(file)?;
    if metadata.permissions().readonly() {
        bail!(
            "{} is read-only (mode {:o}): reasons leaves it as it is; make it writable \
             (chmod u+w) to change it",
            file.display(),
            std::os::unix::fs::MetadataExt::mode(&metadata) & 0o7777
        );
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
        bail!(
            "{} changed while reasons was editing it (a client saving it?); nothing was \
             written to it: run this again",
            file.display()
        );
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
    pub name: String,
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
    pub text: String,
    pub left_wrapped: usize,
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

#[cfg(test)]
mod tests {
    use super::testing::wrapper;
    use super::*;

    fn wrapped(text: &str, file: &str) -> Edited {
        edit(text, Path::new(file), Way::Wrap, &wrapper()).unwrap()
    }

    fn unwrapped(text: &str, file: &str) -> Edited {
        edit(text, Path::new(file), Way::Unwrap, &wrapper()).unwrap()
    }

    #[test]
    fn a_stdio_server_runs_behind_the_proxy_and_every_other_byte_stays() {
        let text = "{\r\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"npx\", \"args\": [\"-y\", \"fs\"], \"env\": {\"A\": \"1\"}},\n    \"x\": {\"command\": \"x\"}\n  },\n  \"theme\": \"dark\"\n}\n";
        let edited = wrapped(text, "mcp.json");
        assert_eq!(
            edited.text,
            "{\r\n  \"mcpServers\": {\n    \"fs\": {\"command\": \"/bin/reasons\", \"args\": [\"mcp\", \"--\", \"npx\", \"-y\", \"fs\"], \"env\": {\"A\": \"1\"}},\n    \"x\": {\"command\": \"/bin/reasons\", \"args\": [\"mcp\", \"--\", \"x\"]}\n  },\n  \"theme\": \"dark\"\n}\n"
        );
        let fates: Vec<&Fate> = edited.servers.iter().map(|(_, fate)| fate).collect();
        assert_eq!(fates, [&Fate::Changed, &Fate::Changed]);
        assert_eq!(unwrapped(&edited.text, "mcp.json").text, text);
        assert_eq!(
            wrapped(&edited.text, "mcp.json").text,
            edited.text,
            "twice is once"
        );
    }

    #[test]
    fn an_empty_args_list_comes_back_as_it_was_wherever_it_stood() {
        // Wrap adds `args` where an entry had none; an empty list the user wrote, right
        // where wrap would add one, is the user's, and comes back: a byte for byte
        // promise, whatever it is worth to the client (an empty list starts the same
        // server as none).
        let files = [
            (
                "mcp.json",
                r#"{"mcpServers": {"a": {"command": "x", "args": []}, "b": {"command": "x"}}}"#,
            ),
            (
                "mcp.json",
                r#"{"mcpServers": {"a": {"args": [], "command": "x"}}}"#,
            ),
            (
                "mcp.json",
                r#"{"mcpServers": {"a": {"command": "x", "args": [ ]}}}"#,
            ),
            (
                "config.toml",
                "[mcp_servers.a]\ncommand = \"x\"\nargs = []\n\n[mcp_servers.b]\ncommand = \"x\"\n",
            ),
            (
                "config.toml",
                "[mcp_servers.a]\nargs = []\ncommand = \"x\"\n",
            ),
            (
                "config.yaml",
                "extensions:\n  a:\n    type: stdio\n    cmd: x\n    args: []\n  b:\n    type: stdio\n    cmd: x\n",
            ),
        ];
        assert_eq!(files.len(), 6);
        for (file, text) in files {
            let there = wrapped(text, file);
            assert!(there.text.contains("mcp"), "{file}: {}", there.text);
            assert_eq!(
                unwrapped(&there.text, file).text,
                text,
                "{file}: {}",
                there.text
            );
            assert_eq!(
                wrapped(&there.text, file).text,
                there.text,
                "{file}: twice is once"
            );
        }
    }

    #[test]
    fn a_launcher_runs_the_proxy_where_reasons_was_never_installed_and_is_known_again() {
        // `wrap --launcher npx|uvx`: the entry runs `npx -y reasons@V mcp -- …` (or
        // `uvx reasons@V mcp -- …`); a second wrap knows it as the proxy, unwrap gives
        // back every byte, in JSON, TOML and YAML.
        let files = [
            (
                "mcp.json",
                r#"{"mcpServers": {"fs": {"command": "npx", "args": ["-y", "fs"]}}}"#,
            ),
            (
                "config.toml",
                "[mcp_servers.fs]\ncommand = \"npx\"\nargs = [\"-y\", \"fs\"]\n",
            ),
            (
                "config.yaml",
                "extensions:\n  fs:\n    type: stdio\n    cmd: npx\n    args: [\"-y\", \"fs\"]\n",
            ),
        ];
        for (program, launcher) in [
            ("npx", vec!["-y", "reasons@9.9.9"]),
            ("uvx", vec!["reasons@9.9.9"]),
        ] {
            let reasons = Wrapper {
                command: program.into(),
                launcher: launcher.iter().map(|arg| arg.to_string()).collect(),
                ..wrapper()
            };
            for (file, text) in files {
                let file = Path::new(file);
                let edited = edit(text, file, Way::Wrap, &reasons).unwrap();
                let config = as_json(&edited.text, file).unwrap();
                let entry = config.pointer(&edited.servers[0].0.pointer).unwrap();
                let args: Vec<&str> = (entry["args"].as_array().unwrap().iter())
                    .map(|arg| arg.as_str().unwrap())
                    .collect();
                let mut expected = launcher.clone();
                expected.extend(["mcp", "--", "npx", "-y", "fs"]);
                assert_eq!(args, expected, "{program}, {file:?}: {}", edited.text);
                let again = edit(&edited.text, file, Way::Wrap, &reasons).unwrap();
                assert_eq!(
                    again.text, edited.text,
                    "{program}, {file:?}: twice is once"
                );
                // Unwrap knows it whatever runs the proxy now.
                let back = edit(&edited.text, file, Way::Unwrap, &wrapper()).unwrap();
                assert_eq!(back.text, text, "{program}, {file:?}");
            }
        }
        // Another package run by npx, or `reasons` not run as `mcp`, is a server.
        let other = |args: &[&str]| args.iter().map(|arg| arg.to_string()).collect::<Vec<_>>();
        assert!(!runs_proxy("npx", &other(&["-y", "reasons-lint", "mcp"])));
        assert!(!runs_proxy("npx", &other(&["-y", "reasons@1"])));
        assert!(!runs_proxy("node", &other(&["-y", "reasons@1", "mcp"])));
        assert!(!runs_proxy("uvx", &other(&["reasonsx", "mcp"])));
        assert!(runs_proxy(
            "/usr/bin/npx",
            &other(&["--yes", "reasons", "mcp"])
        ));
    }

    #[test]
    fn a_key_given_twice_is_refused_and_comments_are_kept() {
        let twice = r#"{"mcpServers": {"a": {"command": "a", "command": "b"}}}"#;
        let error = edit(twice, Path::new("mcp.json"), Way::Wrap, &wrapper()).unwrap_err();
        assert!(error.to_string().contains("more than once"), "{error}");
        let commented = "{\n  // mine\n  \"servers\": {\"a\": {\"command\": \"a\",},},\n}\n";
        let edited = wrapped(commented, ".vscode/mcp.json");
        assert!(edited.text.contains("// mine"), "{}", edited.text);
        assert_eq!(unwrapped(&edited.text, ".vscode/mcp.json").text, commented);
    }

    #[test]
    fn a_remote_server_s_url_goes_through_the_environment() {
        let text = r#"{"mcpServers": {"r": {"url": "https://example.com/mcp", "timeout": 5}}}"#;
        let edited = wrapped(text, "mcp.json");
        let config = as_json(&edited.text, Path::new("mcp.json")).unwrap();
        let entry = &config["mcpServers"]["r"];
        assert_eq!(entry["command"], "/bin/reasons");
        assert!(!edited.text.contains("\"url\""), "{}", edited.text);
        assert_eq!(entry["env"]["REASONS_URL"], "https://example.com/mcp");
        assert_eq!(entry["timeout"], 5);
        assert_eq!(
            as_json(
                &unwrapped(&edited.text, "mcp.json").text,
                Path::new("mcp.json")
            )
            .unwrap(),
            as_json(text, Path::new("mcp.json")).unwrap()
        );
    }

    #[test]
    fn a_remote_entry_comes_back_with_its_comments_and_layout_and_the_edits_since() {
        // The entry as it was, comments and lines and all, not rebuilt on one line; with
        // a token rotated and another key changed in the wrapped entry since, each in its
        // place; with an audit folder too.
        let text = "{\n  \"mcpServers\": {\n    \"r\": {\n      // where it is\n      \"url\": \"https://example.com/mcp\", // trailing\n      \"headers\": {\"Authorization\": \"Bearer X\"}, /* block */\n      \"timeout\": 5\n    }\n  }\n}\n";
        let audited = Wrapper {
            audit: Some("/logs".into()),
            ..wrapper()
        };
        for reasons in [wrapper(), audited] {
            let file = Path::new("mcp.json");
            let edited = edit(text, file, Way::Wrap, &reasons).unwrap().text;
            assert!(!edited.contains("\"url\""), "{edited}");
            let back = edit(&edited, file, Way::Unwrap, &reasons).unwrap().text;
            assert_eq!(back, text);
            let since = edited
                .replace(
                    "\"REASONS_HEADER_0\":\"Bearer X\"",
                    "\"REASONS_HEADER_0\":\"Bearer Y\"",
                )
                .replace("\"timeout\": 5", "\"timeout\": 9");
            assert_ne!(since, edited);
            let back = edit(&since, file, Way::Unwrap, &reasons).unwrap().text;
            assert_eq!(
                back,
                text.replace("Bearer X", "Bearer Y")
                    .replace("\"timeout\": 5", "\"timeout\": 9")
            );
        }
    }

    #[test]
    fn a_transport_the_proxy_does_not_speak_is_left_as_it_was_and_said() {
        let text = r#"{"mcpServers": {"ws": {"type": "ws", "url": "wss://example.com/mcp"}, "w2": {"url": "ws://example.com/mcp"}, "odd": {"type": "grpc", "url": "https://example.com"}, "h": {"type": "http", "url": "https://example.com/mcp"}}}"#;
        let edited = wrapped(text, "mcp.json");
        assert_eq!(edited.servers.len(), 4);
        let fate = |at: usize| &edited.servers[at].1;
        for at in 0..3 {
            assert!(
                matches!(fate(at), Fate::Skipped(why) if why.contains("does not speak")),
                "{:?}",
                edited.servers[at]
            );
        }
        assert_eq!(fate(3), &Fate::Changed);
        assert!(
            edited
                .text
                .contains(r#""ws": {"type": "ws", "url": "wss://example.com/mcp"}"#)
        );
    }

    #[test]
    fn unwrap_gives_back_the_url_and_the_tokens_the_user_sees_now() {
        // The user's file is the truth: a token rotated and a URL moved in the wrapped
        // entry come back, not the copy kept at wrap time; what did not change keeps its
        // bytes.
        let text = r#"{"mcpServers": {"r": {"url": "https://old.example.com/mcp", "headers": {"Authorization": "Bearer OLD", "X-Team": "a"}}}}"#;
        let edited = wrapped(text, "mcp.json");
        // What the user sees and edits: the variables, not the copy kept for unwrap.
        let (token, url) = (
            r#""REASONS_HEADER_0":"Bearer OLD""#,
            r#""REASONS_URL":"https://old.example.com/mcp""#,
        );
        assert!(
            edited.text.contains(token) && edited.text.contains(url),
            "{}",
            edited.text
        );
        let rotated = (edited.text)
            .replace(token, r#""REASONS_HEADER_0":"Bearer NEW""#)
            .replace(url, r#""REASONS_URL":"https://new.example.com/mcp""#);
        let back = as_json(&unwrapped(&rotated, "mcp.json").text, Path::new("mcp.json")).unwrap();
        let entry = &back["mcpServers"]["r"];
        assert_eq!(entry["url"], "https://new.example.com/mcp");
        assert_eq!(entry["headers"]["Authorization"], "Bearer NEW");
        assert_eq!(entry["headers"]["X-Team"], "a");
        // Untouched, it is the file as it was.
        assert_eq!(unwrapped(&edited.text, "mcp.json").text, text);
    }

    #[test]
    fn a_claude_json_with_no_servers_yet_is_a_config_with_no_servers() {
        let fresh = r#"{"numStartups": 1, "projects": {"/home/me": {"allowedTools": []}}}"#;
        let edited = wrapped(fresh, "/home/me/.claude.json");
        assert!(edited.servers.is_empty());
        assert_eq!(edited.text, fresh);
        let other = edit(fresh, Path::new("mcp.json"), Way::Wrap, &wrapper()).unwrap_err();
        assert!(other.to_string().contains("has no `mcpServers`"), "{other}");
    }

    #[test]
    fn gemini_s_dynamic_discovery_is_the_sign_in_the_proxy_does_itself() {
        let text = r#"{"mcpServers": {"d": {"httpUrl": "https://example.com/mcp", "authProviderType": "dynamic_discovery"}, "g": {"httpUrl": "https://example.com/mcp", "authProviderType": "google_credentials"}}}"#;
        let edited = wrapped(text, "settings.json");
        assert_eq!(edited.servers.len(), 2);
        assert_eq!(edited.servers[0].1, Fate::Changed);
        assert!(
            matches!(&edited.servers[1].1, Fate::Skipped(why) if why.contains("authProviderType"))
        );
        // The client's sign-in is the proxy's now: the key goes with the URL, and comes
        // back with it.
        let config = as_json(&edited.text, Path::new("settings.json")).unwrap();
        assert!(config["mcpServers"]["d"].get("authProviderType").is_none());
        let back = unwrapped(&edited.text, "settings.json").text;
        assert_eq!(
            as_json(&back, Path::new("settings.json")).unwrap(),
            as_json(text, Path::new("settings.json")).unwrap()
        );
    }

    #[test]
    fn what_wrap_wrote_is_known_again_whatever_the_binary_is_called_now() {
        // A release's versioned binary, moved since: wrapping again changes nothing.
        let text = r#"{"mcpServers": {"s": {"command": "/moved/reasons-0.1.0", "args": ["mcp", "--", "srv"]}, "lint": {"command": "reasons-lint", "args": ["mcp"]}}}"#;
        let edited = wrapped(text, "mcp.json");
        assert_eq!(edited.servers.len(), 2);
        assert_eq!(edited.servers[0].1, Fate::AsItWas);
        assert_eq!(edited.servers[1].1, Fate::Changed, "another program");
        assert!(is_reasons("reasons") && is_reasons("/usr/bin/reasons.exe"));
        assert!(!is_reasons("reasons-lint") && !is_reasons("not-reasons"));
    }

    #[test]
    fn cursor_s_static_oauth_client_is_passed_on_so_the_wrapped_server_signs_in() {
        let text = r#"{"mcpServers": {"c": {"url": "https://example.com/mcp", "headers": {"X": "1"}, "auth": {"CLIENT_ID": "app", "CLIENT_SECRET": "s3cret", "scopes": ["read"]}}}}"#;
        let edited = wrapped(text, "mcp.json");
        assert_eq!(edited.servers[0].1, Fate::Changed);
        let config = as_json(&edited.text, Path::new("mcp.json")).unwrap();
        let entry = &config["mcpServers"]["c"];
        let args: Vec<&str> = (entry["args"].as_array().unwrap().iter())
            .map(|arg| arg.as_str().unwrap())
            .collect();
        assert!(args.contains(&"--client-id=app"), "{args:?}");
        assert!(
            args.contains(&"--client-secret-env=REASONS_CLIENT_SECRET"),
            "{args:?}"
        );
        assert!(
            !args.iter().any(|arg| arg.contains("s3cret")),
            "no secret in argv: {args:?}"
        );
        assert_eq!(entry["env"]["REASONS_CLIENT_SECRET"], "s3cret");
        assert_eq!(entry["env"]["REASONS_HEADER_0"], "1");
        assert!(entry.get("auth").is_none());
        let back = unwrapped(&edited.text, "mcp.json").text;
        assert_eq!(
            as_json(&back, Path::new("mcp.json")).unwrap(),
            as_json(text, Path::new("mcp.json")).unwrap()
        );
    }

    #[test]
    fn a_zed_extension_s_server_is_left_alone_and_named_and_the_rest_wrapped() {
        let text = "{\n  \"context_servers\": {\n    \"ext\": {\"source\": \"extension\", \"settings\": {}},\n    \"own\": {\"command\": \"srv\"}\n  }\n}\n";
        let edited = wrapped(text, "settings.json");
        assert_eq!(edited.servers.len(), 2);
        assert!(
            matches!(&edited.servers[0].1, Fate::Outside(what) if what.contains("Zed extension"))
        );
        assert_eq!(edited.servers[1].1, Fate::Changed);
        assert!(
            edited
                .text
                .contains(r#""ext": {"source": "extension", "settings": {}}"#)
        );
        assert_eq!(unwrapped(&edited.text, "settings.json").text, text);
    }
}
