//! MCP clients' JSON configs, and VS Code's JSON with comments: each server's entry
//! wrapped and unwrapped in place, read by the workspace's one JSON reader over the text
//! with its comments blanked (`readable`), so that every edit is made in the original
//! and its comments and layout stay.

use super::{
    Edited, Fate, KEPT, Kind, Proxied, SECRET_VARIABLE, Server, UNWRAP_VARIABLE, URL_VARIABLE, Way,
    Wrapper, passed_headers, pointer_token, runs_proxy, server_at,
};
use reasons_transform::json::{self as reader, Member, Object, member};
use std::borrow::Cow;
use std::path::Path;

/// One span of the original text and what replaces it.
type Edit = (usize, usize, String);

/// [`edit`](crate::edit) of a JSON config, or one in JSON with comments.
pub(super) fn edit(
    original: &str,
    file: &Path,
    way: Way,
    reasons: &Wrapper,
) -> Result<Edited, Kind> {
    // Read as plain JSON, every offset where it is in the original, to which the edits go:
    // its comments and layout stay.
    let text = &readable(original)?;
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
        text: super::line_ends::as_in(original, edited),
        servers,
    })
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
    fn entries(&self) -> Result<Vec<(String, String, &'a str)>, Kind> {
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
fn server_lists<'a>(text: &'a str, file: &Path) -> Result<Vec<List<'a>>, Kind> {
    let top = members_of(text).ok_or_else(|| Kind::Unfit("is not a JSON object".into()))?;
    let top = no_repeats(top, None)?;
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
            label: key.clone(),
            scope: None,
            pointer: format!("/{key}"),
            servers: Servers::Named(servers),
        });
    }
    if found.next().is_some() {
        return Err(Kind::Unfit("has more than one list of servers".into()));
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
            let project = no_repeats(project, Some(&label))?;
            if let Some(Member { value: servers, .. }) = project
                .iter()
                .find(|Member { key, .. }| key.as_ref() == b"mcpServers")
            {
                lists.push(List {
                    label: format!("{label}.mcpServers"),
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
            label: "the server".into(),
            scope: None,
            pointer: String::new(),
            servers: Servers::One { name, entry: text },
        });
    }
    // Claude Code writes `~/.claude.json` before its user adds any server: a config
    // with no servers, not one wrap cannot read.
    let claude_state = file.file_name().is_some_and(|name| name == ".claude.json");
    if lists.is_empty() && !claude_state {
        return Err(Kind::Unfit(
            "has no `mcpServers` (or, as VS Code writes it, `servers`; Zed, \
             `context_servers`) object"
                .into(),
        ));
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

/// The members of the object `text` (`what`, in messages), each key given once.
fn unique<'a>(text: &'a str, what: &str) -> Result<Vec<Member<'a>>, Kind> {
    let members =
        members_of(text).ok_or_else(|| Kind::Part(format!("{what} is not a JSON object")))?;
    no_repeats(members, Some(what))
}

/// `members` (of `what`, in messages; `None`: the file's own), refused when a key
/// repeats: clients keep its last value, and an edit that read the first would change
/// what the client does not read.
fn no_repeats<'a>(members: Vec<Member<'a>>, what: Option<&str>) -> Result<Vec<Member<'a>>, Kind> {
    let Some(key) = reader::repeated_key(&members) else {
        return Ok(members);
    };
    let gives = format!(
        "gives the key {:?} more than once, which readers take differently: keep one, \
         then try again",
        String::from_utf8_lossy(key)
    );
    Err(match what {
        Some(what) => Kind::Part(format!("{what} {gives}")),
        None => Kind::Unfit(gives),
    })
}

/// How deep a config's objects and arrays may nest: serde_json's own limit, which every
/// reading of the file after this one meets.
const DEEPEST: usize = 128;

/// Refuses `text` if its objects and arrays nest deeper than [`DEEPEST`], counted over its
/// tokens without recursion: the parsers after this one recurse, and a file thousands of
/// levels deep would overflow their stack.
fn shallow(text: &str) -> Result<(), Kind> {
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
            return Err(Kind::Unfit(format!(
                "nests objects and arrays more than {DEEPEST} levels deep: not a config \
                 reasons reads, left as it was"
            )));
        }
    }
    Ok(())
}

/// `text`, a config in JSON or in JSON with comments (VS Code's), as plain JSON with
/// every byte where it was: each comment and each trailing comma made spaces, line breaks
/// kept. Offsets in the one are offsets in the other, so an edit found in this text is
/// made in the original, comments and all.
pub(super) fn readable(text: &str) -> Result<String, Kind> {
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
    shallow(text)?;
    let parsed =
        jsonc_parser::parse_to_ast(text, &collect, &options).map_err(|error| Kind::Syntax {
            format: "JSON",
            detail: error.to_string(),
        })?;
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
    String::from_utf8(bytes).map_err(|_| Kind::Unchecked {
        why: "made a comment's characters spaces that are not UTF-8".into(),
        met: None,
    })
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
        let Ok(headers) = no_repeats(headers, None) else {
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
    let readable_kept = readable(kept).unwrap_or_default();
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::wrapper;
    use crate::{as_json, edit, is_reasons};

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
