//! Goose's `config.yaml` (`extensions`, a map of servers with `cmd` and `args`) and
//! Continue's (`mcpServers`, a list of servers with `name`, `command` and `args`): each
//! server wrapped and unwrapped as a JSON config's entries are, by edits of the text at
//! the places yaml-rust2's parser reports, so that every comment and every line wrap does
//! not touch stays. What the edit gives is read again and compared, value for value, with
//! the document as it is meant to be; anything else refuses the edit.
//!
//! A remote server (Goose's `uri` and `headers`, Continue's `url` and
//! `requestOptions.headers`) becomes a stdio one: its remote keys are renamed in place to
//! `reasons-unwrap-KEY`, which the clients ignore, and the proxy's keys (`type: stdio`,
//! the command, `args`, the environment holding the URL and headers) are written before
//! its first key. Unwrap takes those keys out and the prefix off again.
//!
//! Fails closed: a server written in a way this does not edit (a multi-line or tagged
//! scalar, an alias), or one whose URL or headers the client fills in itself (`${…}`), is
//! refused with why.

use super::{
    Edited, Fate, HAND_WRITTEN_REMOTE, KEPT, Line, Proxied, Server, UNWRAP_VARIABLE, URL_VARIABLE,
    Way, Wrapper, passed_headers, pointer_token, reads_proxy, runs_proxy, server_at,
};
use crate::error::Kind;
use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::{Marker, TScalarStyle};
use yaml_rust2::{Yaml, YamlLoader};

/// A YAML node and where it starts in the text (a byte offset).
#[derive(Debug)]
enum Node {
    Scalar {
        value: String,
        style: TScalarStyle,
        at: usize,
    },
    Seq {
        at: usize,
        items: Vec<Node>,
    },
    Map {
        at: usize,
        entries: Vec<(Node, Node)>,
    },
    /// An alias, or what this does not read.
    Other,
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|(_, value)| value)
    }

    /// The key `key` of this map, and its value.
    fn entry(&self, key: &str) -> Option<&(Node, Node)> {
        let Node::Map { entries, .. } = self else {
            return None;
        };
        entries.iter().find(|(name, _)| name.text() == Some(key))
    }

    /// Where the key `key` of this map starts.
    fn key_at(&self, key: &str) -> Option<usize> {
        match self.entry(key) {
            Some((Node::Scalar { at, .. }, _)) => Some(*at),
            _ => None,
        }
    }

    /// Where this node starts in the text.
    fn at(&self) -> Option<usize> {
        match self {
            Node::Scalar { at, .. } | Node::Seq { at, .. } | Node::Map { at, .. } => Some(*at),
            Node::Other => None,
        }
    }

    fn text(&self) -> Option<&str> {
        match self {
            Node::Scalar { value, .. } => Some(value),
            _ => None,
        }
    }
}

/// Builds the tree from the parser's events.
struct Tree {
    /// The byte offset of each character, since markers count characters.
    bytes: Vec<usize>,
    /// Nodes under way: each open sequence or map, with what it holds so far.
    open: Vec<(Node, Option<Node>)>,
    root: Option<Node>,
}

impl Tree {
    fn byte(&self, mark: Marker) -> usize {
        self.bytes.get(mark.index()).copied().unwrap_or(usize::MAX)
    }

    /// Puts `node` where it belongs: in the innermost open sequence or map, or as the root.
    fn place(&mut self, node: Node) {
        match self.open.last_mut() {
            None => self.root = Some(node),
            Some((Node::Seq { items, .. }, _)) => items.push(node),
            Some((Node::Map { entries, .. }, pending)) => match pending.take() {
                None => *pending = Some(node),
                Some(key) => entries.push((key, node)),
            },
            Some(_) => {}
        }
    }
}

impl MarkedEventReceiver for Tree {
    fn on_event(&mut self, event: Event, mark: Marker) {
        let at = self.byte(mark);
        match event {
            Event::Scalar(value, style, _, None) => self.place(Node::Scalar { value, style, at }),
            Event::Scalar(..) | Event::Alias(_) => self.place(Node::Other),
            Event::SequenceStart(..) => self.open.push((
                Node::Seq {
                    at,
                    items: Vec::new(),
                },
                None,
            )),
            Event::MappingStart(..) => self.open.push((
                Node::Map {
                    at,
                    entries: Vec::new(),
                },
                None,
            )),
            Event::SequenceEnd | Event::MappingEnd => {
                if let Some((node, _)) = self.open.pop() {
                    self.place(node);
                }
            }
            _ => {}
        }
    }
}

fn tree(text: &str) -> Result<Node, Kind> {
    let mut bytes: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    bytes.push(text.len());
    let mut tree = Tree {
        bytes,
        open: Vec::new(),
        root: None,
    };
    Parser::new_from_str(text)
        .load(&mut tree, false)
        .map_err(|error| Kind::Syntax {
            format: "YAML",
            detail: error.to_string(),
        })?;
    tree.root
        .ok_or_else(|| Kind::Unfit("holds no YAML document".into()))
}

/// Where the scalar `node`'s text ends, when it is one line this can edit: plain, or
/// quoted.
fn end_of(text: &str, node: &Node) -> Option<usize> {
    let Node::Scalar { value, style, at } = node else {
        return None;
    };
    let rest = text.get(*at..)?;
    match style {
        TScalarStyle::Plain => rest.starts_with(value.as_str()).then(|| at + value.len()),
        TScalarStyle::DoubleQuoted => {
            let mut escaped = false;
            for (offset, c) in rest.char_indices().skip(1) {
                match (escaped, c) {
                    (_, '\n') => return None,
                    (false, '\\') => escaped = true,
                    (false, '"') => return Some(at + offset + 1),
                    _ => escaped = false,
                }
            }
            None
        }
        TScalarStyle::SingleQuoted => {
            let mut chars = rest.char_indices().skip(1).peekable();
            while let Some((offset, c)) = chars.next() {
                match c {
                    '\n' => return None,
                    '\'' if chars.peek().map(|(_, next)| *next) == Some('\'') => {
                        chars.next();
                    }
                    '\'' => return Some(at + offset + 1),
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// The scalar `node` as it is written in `text`.
fn spelled(text: &str, node: &Node) -> Option<String> {
    let Node::Scalar { at, .. } = node else {
        return None;
    };
    Some(text[*at..end_of(text, node)?].to_string())
}

/// `value` as a YAML double-quoted scalar (JSON's string syntax is one).
fn quoted(value: &str) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Servers, each by its name, with its entry.
type Named<'a> = Vec<(String, &'a Node)>;

/// Which client's shape a document is, and its servers: each name with its entry.
fn servers(root: &Node) -> Result<(Shape, Named<'_>), Kind> {
    if let Some(Node::Map { entries, .. }) = root.get("extensions") {
        let servers = entries
            .iter()
            .filter_map(|(name, entry)| Some((name.text()?.to_string(), entry)))
            .collect();
        return Ok((Shape::Goose, servers));
    }
    if let Some(Node::Seq { items, .. }) = root.get("mcpServers") {
        let servers = items
            .iter()
            .enumerate()
            .map(|(at, entry)| {
                let name = entry.get("name").and_then(Node::text);
                (name.map_or_else(|| format!("#{at}"), str::to_string), entry)
            })
            .collect();
        return Ok((Shape::Continue, servers));
    }
    Err(Kind::Unfit(
        "has no `extensions` (Goose) or `mcpServers` list (Continue)".into(),
    ))
}

/// Goose's keys, or Continue's.
#[derive(Clone, Copy)]
enum Shape {
    Goose,
    Continue,
}

impl Shape {
    fn command(self) -> &'static str {
        match self {
            Shape::Goose => "cmd",
            Shape::Continue => "command",
        }
    }

    /// The key of a stdio server's environment.
    fn env(self) -> &'static str {
        match self {
            Shape::Goose => "envs",
            Shape::Continue => "env",
        }
    }

    /// The key of a remote server's URL.
    fn url(self) -> &'static str {
        match self {
            Shape::Goose => "uri",
            Shape::Continue => "url",
        }
    }

    /// The key a remote server's headers are under: Goose's `headers`, Continue's
    /// `requestOptions` (its `headers` within).
    fn headers_key(self) -> &'static str {
        match self {
            Shape::Goose => "headers",
            Shape::Continue => "requestOptions",
        }
    }

    /// The keys a remote server's entry has that a stdio one must not (its environment
    /// among them, as the wrapped entry's is the proxy's), kept aside when it is wrapped.
    fn remote_keys(self) -> [&'static str; 4] {
        match self {
            Shape::Goose => ["type", "uri", "headers", "envs"],
            Shape::Continue => ["type", "url", "requestOptions", "env"],
        }
    }

    /// The headers a remote server's entry gives, in its order; why not when they are not
    /// names with string values, or come with request options the proxy does not apply.
    fn headers(self, entry: &Node) -> Result<Vec<(String, String)>, String> {
        let headers = match self {
            Shape::Goose => entry.get("headers"),
            Shape::Continue => match entry.get("requestOptions") {
                None => None,
                Some(Node::Map { entries, .. }) => {
                    if let Some((other, _)) = entries
                        .iter()
                        .find(|(key, _)| key.text() != Some("headers"))
                    {
                        return Err(format!(
                            "its `requestOptions` give `{}`, which reasons mcp does not apply",
                            other.text().unwrap_or("?")
                        ));
                    }
                    entry
                        .get("requestOptions")
                        .and_then(|options| options.get("headers"))
                }
                Some(_) => return Err("its `requestOptions` are not a map".into()),
            },
        };
        let Some(headers) = headers else {
            return Ok(Vec::new());
        };
        let Node::Map { entries, .. } = headers else {
            return Err("its headers are not a map".into());
        };
        let headers: Vec<(String, String)> = entries
            .iter()
            .map(|(name, value)| match (name.text(), value.text()) {
                (Some(name), Some(value)) => Ok((name.to_string(), value.to_string())),
                _ => Err("a header of it is not a name with a string value".to_string()),
            })
            .collect::<Result<_, _>>()?;
        for (at, (name, _)) in headers.iter().enumerate() {
            if headers[..at].iter().any(|(before, _)| before == name) {
                return Err(format!("its headers give `{name}` more than once"));
            }
        }
        Ok(headers)
    }
}

/// One span of the text and what replaces it.
type Edit = (usize, usize, String);

/// What an edit does to one entry's keys, as the check reads it, in order.
enum Change {
    /// The key holds this value.
    Set(&'static str, Yaml),
    /// No arguments: `args` is absent, or an empty list, which starts the same server.
    NoArgs,
    /// The key is gone.
    Remove(&'static str),
    /// The key's value is under another name.
    Rename(String, String),
}

/// A stdio server's command and arguments, as the check reads them.
fn run(shape: Shape, command: &str, args: &[String]) -> Vec<Change> {
    let args = match args.is_empty() {
        true => Change::NoArgs,
        false => Change::Set(
            "args",
            Yaml::Array(args.iter().cloned().map(Yaml::String).collect()),
        ),
    };
    vec![
        Change::Set(shape.command(), Yaml::String(command.into())),
        args,
    ]
}

pub(super) fn edit(text: &str, way: Way, reasons: &Wrapper) -> Result<Edited, Kind> {
    let root = tree(text)?;
    let (shape, servers) = servers(&root)?;
    let mut edits = Vec::new();
    let mut fates = Vec::new();
    let mut meant: Vec<(String, Vec<Change>)> = Vec::new();
    for (name, entry) in servers {
        let (fate, changes) = match way {
            Way::Wrap => wrap(text, entry, shape, &name, reasons, &mut edits),
            Way::Unwrap => unwrap(text, entry, shape, &mut edits, reasons),
        };
        meant.push((name.clone(), changes.unwrap_or_default()));
        let pointer = match shape {
            Shape::Goose => format!("/extensions/{}", pointer_token(&name)),
            Shape::Continue => format!("/mcpServers/{}", fates.len()),
        };
        fates.push((Server { name, pointer }, fate));
    }
    edits.sort_by_key(|(start, _, _)| std::cmp::Reverse(*start));
    let mut edited = text.to_string();
    for (start, end, with) in edits {
        edited.replace_range(start..end, &with);
    }
    check(text, &edited, shape, &meant)?;
    Ok(Edited {
        text: super::line_ends::as_in(text, edited),
        servers: fates,
    })
}

/// Whether `edited` reads as `text` does with each server's entry changed as `meant`
/// says, and nothing else changed.
fn check(
    text: &str,
    edited: &str,
    shape: Shape,
    meant: &[(String, Vec<Change>)],
) -> Result<(), Kind> {
    let read = |text: &str| YamlLoader::load_from_str(text).map(|mut docs| docs.pop());
    // The parser that found the places reads what a YAML loader refuses (a key given
    // twice, which Goose's loader refuses too).
    let mut expected = match read(text) {
        Ok(Some(doc)) => doc,
        Ok(None) => return Err(Kind::Unfit("holds no YAML document".into())),
        Err(error) => {
            return Err(Kind::Syntax {
                format: "YAML as a loader reads it",
                detail: error.to_string(),
            });
        }
    };
    let unchecked = |why: String| Kind::Unchecked { why, met: None };
    let Ok(Some(mut got)) = read(edited) else {
        return Err(unchecked("would not read back as YAML".into()));
    };
    let key = |key: &str| Yaml::String(key.into());
    for (at, (name, changes)) in meant.iter().enumerate() {
        if changes.is_empty() {
            continue;
        }
        let Some(entry) = entry_mut(&mut expected, shape, name, at) else {
            return Err(unchecked(format!("would not find the server {name} again")));
        };
        for change in changes {
            match change {
                Change::Set(name, value) => {
                    entry.insert(key(name), value.clone());
                }
                Change::NoArgs => {
                    entry.remove(&key("args"));
                    if let Some(entry) = entry_mut(&mut got, shape, name, at)
                        && entry.get(&key("args")) == Some(&Yaml::Array(Vec::new()))
                    {
                        entry.remove(&key("args"));
                    }
                }
                Change::Remove(name) => {
                    entry.remove(&key(name));
                }
                Change::Rename(from, to) => {
                    if let Some(value) = entry.remove(&key(from)) {
                        entry.insert(key(to), value);
                    }
                }
            }
        }
    }
    // Compared as JSON values, whose maps have no order: where a key sits is layout.
    if json_of(&expected) != json_of(&got) {
        return Err(unchecked(
            "would not read as it must (its layout is one wrap does not edit)".into(),
        ));
    }
    Ok(())
}

/// The entry of the server `name` (the `at`-th) in the document `doc`.
fn entry_mut<'a>(
    doc: &'a mut Yaml,
    shape: Shape,
    name: &str,
    at: usize,
) -> Option<&'a mut yaml_rust2::yaml::Hash> {
    let Yaml::Hash(root) = doc else {
        return None;
    };
    let entry = match shape {
        Shape::Goose => match root.get_mut(&Yaml::String("extensions".into()))? {
            Yaml::Hash(servers) => servers.get_mut(&Yaml::String(name.into())),
            _ => None,
        },
        Shape::Continue => match root.get_mut(&Yaml::String("mcpServers".into()))? {
            Yaml::Array(servers) => servers.get_mut(at),
            _ => None,
        },
    };
    match entry? {
        Yaml::Hash(entry) => Some(entry),
        _ => None,
    }
}

/// The strings of the sequence `node`, when every item is one.
fn strings(node: Option<&Node>) -> Option<Vec<String>> {
    let Some(Node::Seq { items, .. }) = node else {
        return None;
    };
    items
        .iter()
        .map(|item| item.text().map(str::to_string))
        .collect()
}

/// Why `entry` is not a stdio server this edits, if it is not.
fn not_editable(entry: &Node, shape: Shape) -> Option<Fate> {
    if let Some(kind) = entry.get("type").and_then(Node::text)
        && matches!(kind, "builtin" | "platform" | "frontend" | "inline_python")
    {
        return Some(Fate::Outside(format!(
            "a `{kind}` extension, run inside Goose"
        )));
    }
    entry
        .get(shape.command())
        .and_then(Node::text)
        .is_none()
        .then(|| Fate::Skipped(format!("no `{}` string", shape.command())))
}

/// Wraps one entry; its fate, and its command and arguments as they are to read after.
fn wrap(
    text: &str,
    entry: &Node,
    shape: Shape,
    name: &str,
    reasons: &Wrapper,
    edits: &mut Vec<Edit>,
) -> (Fate, Option<Vec<Change>>) {
    if entry.get(shape.url()).is_some() && entry.get(shape.command()).is_none() {
        return wrap_remote(
            text,
            entry,
            shape,
            reasons.head(name),
            &reasons.command,
            edits,
        );
    }
    if let Some(fate) = not_editable(entry, shape) {
        return (fate, None);
    }
    let key = shape.command();
    let command_node = entry.get(key).expect("checked above");
    let command = command_node.text().unwrap_or_default().to_string();
    let args = strings(entry.get("args"));
    if runs_proxy(&command, args.as_deref().unwrap_or_default()) {
        return (Fate::AsItWas, None);
    }
    let Some(end) = end_of(text, command_node) else {
        return (
            Fate::Skipped(format!(
                "its `{key}` is written in a way wrap does not edit"
            )),
            None,
        );
    };
    let Node::Scalar { at, .. } = command_node else {
        unreachable!("a scalar has an end")
    };
    let mut head = reasons.head(name);
    head.push("--".to_string());
    let mut after = head.clone();
    after.push(command.clone());
    // The proxy's arguments quoted, the command as it was written: unwrap gives it back.
    let mut written: Vec<String> = head.iter().map(|arg| quoted(arg)).collect();
    written.push(text[*at..end].to_string());
    match (entry.get("args"), &args) {
        (Some(Node::Seq { at: list, items }), Some(own)) => {
            after.extend(own.iter().cloned());
            if text[*list..].starts_with('[') {
                // An empty list the user wrote as `[]` is filled as `[ …]`: the space
                // tells unwrap the list was there, where one wrap adds has none.
                let (lead, separator) = match (items.is_empty(), text[*list..].starts_with("[]")) {
                    (true, true) => (" ", ""),
                    (true, false) => ("", ""),
                    (false, _) => ("", ", "),
                };
                edits.push((
                    list + 1,
                    list + 1,
                    format!("{lead}{}{separator}", written.join(", ")),
                ));
            } else {
                // A block list: the new items go before the first, on lines of their own
                // at its indentation, whether the list is indented under its key or not
                // (as Goose's own writer lays it out, the list's start is then its key's
                // line): the first item's line says where.
                let first = match items.first() {
                    Some(Node::Scalar { at, .. }) => *at,
                    _ => *list,
                };
                let line = text[..first].rfind('\n').map_or(0, |at| at + 1);
                let indent = text[line..first].trim_end_matches(' ');
                let Some(indent) = indent.strip_suffix('-') else {
                    return (
                        Fate::Skipped("its `args` is laid out in a way wrap does not edit".into()),
                        None,
                    );
                };
                if !indent.chars().all(|c| c == ' ') {
                    return (
                        Fate::Skipped("its `args` is laid out in a way wrap does not edit".into()),
                        None,
                    );
                }
                let lines: String = written
                    .iter()
                    .map(|arg| format!("{indent}- {arg}\n"))
                    .collect();
                edits.push((line, line, lines));
            }
        }
        (None, _) => {
            // No arguments: a flow list on a line of its own after the command's, at the
            // command key's column.
            let key_at = entry.key_at(key).unwrap_or(*at);
            let line = text[..key_at].rfind('\n').map_or(0, |at| at + 1);
            let indent = " ".repeat(text[line..key_at].chars().count());
            let end_of_line = text[end..].find('\n').map_or(text.len(), |at| end + at);
            let added = format!("\n{indent}args: [{}]", written.join(", "));
            edits.push((end_of_line, end_of_line, added));
        }
        _ => {
            return (
                Fate::Skipped("its `args` is not a list of strings".into()),
                None,
            );
        }
    }
    edits.push((*at, end, quoted(&reasons.command)));
    (Fate::Changed, Some(run(shape, &reasons.command, &after)))
}

/// Unwraps one entry; its fate, and its command and arguments as they are to read after.
fn unwrap(
    text: &str,
    entry: &Node,
    shape: Shape,
    edits: &mut Vec<Edit>,
    reasons: &Wrapper,
) -> (Fate, Option<Vec<Change>>) {
    let key = shape.command();
    let Some(command_node) = entry.get(key) else {
        return (Fate::AsItWas, None);
    };
    let args = strings(entry.get("args")).unwrap_or_default();
    let wrapped = command_node
        .text()
        .is_some_and(|command| runs_proxy(command, &args));
    if !wrapped {
        return (Fate::AsItWas, None);
    }
    if reads_proxy(&args, reasons) == Line::Remote {
        return unwrap_remote(text, entry, shape, edits);
    }
    let server = match server_at(&args, reasons) {
        Ok(at) => at,
        Err(why) => return (Fate::Skipped(why), None),
    };
    let original = &args[server];
    let (Some(end), Node::Scalar { at, .. }) = (end_of(text, command_node), command_node) else {
        return (
            Fate::Skipped(format!(
                "its `{key}` is written in a way wrap does not edit"
            )),
            None,
        );
    };
    let Some(Node::Seq { at: list, items }) = entry.get("args") else {
        return (Fate::AsItWas, None);
    };
    let own = &args[server + 1..];
    let item_at = |item: &Node| match item {
        Node::Scalar { at, .. } => *at,
        _ => usize::MAX,
    };
    if text[*list..].starts_with('[') {
        let from = item_at(&items[0]);
        let to = match items.get(server + 1) {
            Some(first) => item_at(first),
            None => end_of(text, &items[server]).unwrap_or(from),
        };
        // A list wrap added on a line of its own goes with its line.
        let line = text[..*list].rfind('\n').map_or(0, |at| at + 1);
        let mut written: Vec<String> = args[..server].iter().map(|arg| quoted(arg)).collect();
        written.push(spelled(text, &items[server]).unwrap_or_else(|| quoted(original)));
        let added = format!("args: [{}]", written.join(", "));
        let is_added = own.is_empty() && text[line..].trim_start_matches(' ').starts_with(&added);
        if is_added {
            // The line and the line break before it, as wrap added them.
            let end_of_line = text[line..].find('\n').map_or(text.len(), |at| line + at);
            edits.push((line.saturating_sub(1), end_of_line, String::new()));
        } else {
            // An empty list of the user's, which wrap filled as `[ …]`, is `[]` again.
            let users_empty = own.is_empty() && text.get(*list..from) == Some("[ ");
            edits.push((from - usize::from(users_empty), to, String::new()));
        }
    } else {
        // A block list: the lines of wrap's items go, and the `args:` line with them
        // when nothing of the server's own is left in it.
        let line_of = |at: usize| text[..at].rfind('\n').map_or(0, |at| at + 1);
        let (from, to) = match items.get(server + 1) {
            Some(first) => (line_of(item_at(&items[0])), line_of(item_at(first))),
            None => {
                let key = entry.key_at("args").unwrap_or_else(|| item_at(&items[0]));
                let last = item_at(&items[server]);
                let end = text[last..]
                    .find('\n')
                    .map_or(text.len(), |at| last + at + 1);
                (line_of(key), end)
            }
        };
        edits.push((from, to, String::new()));
    }
    let command = spelled(text, &items[server]).unwrap_or_else(|| quoted(original));
    edits.push((*at, end, command));
    (Fate::Changed, Some(run(shape, original, own)))
}

/// The name a remote server's key `key` is kept under while it runs behind the proxy.
fn kept(key: &str) -> String {
    format!("{KEPT}-{key}")
}

/// The key scalar `key` of `entry`, where its name starts (after a quote) in the text.
fn name_at(text: &str, entry: &Node, key: &str) -> Option<usize> {
    let (Node::Scalar { at, style, .. }, _) = entry.entry(key)? else {
        return None;
    };
    end_of(text, &entry.entry(key)?.0)?;
    Some(at + usize::from(!matches!(style, TScalarStyle::Plain)))
}

/// The keys wrap gives a remote server's entry, with their values as it writes them, in
/// the order it writes them.
fn stdio_keys(
    shape: Shape,
    reasons: &str,
    args: &[String],
    env: &[(String, String)],
) -> Vec<(&'static str, String)> {
    let args: Vec<String> = args.iter().map(|arg| quoted(arg)).collect();
    let env: Vec<String> = env
        .iter()
        .map(|(name, value)| format!("{}: {}", quoted(name), quoted(value)))
        .collect();
    vec![
        ("type", "stdio".into()),
        (shape.command(), quoted(reasons)),
        ("args", format!("[{}]", args.join(", "))),
        (shape.env(), format!("{{{}}}", env.join(", "))),
    ]
}

/// `keys` as the text wrap puts before the entry's first key: one per line at the key's
/// column in a block map, or `key: value, ` each in a flow one.
fn written(keys: &[(&str, String)], flow: bool, column: usize) -> String {
    let indent = " ".repeat(column);
    keys.iter()
        .map(|(key, value)| match flow {
            true => format!("{key}: {value}, "),
            false => format!("{key}: {value}\n{indent}"),
        })
        .collect()
}

/// Where the first key of the map `entry` starts, whether the map is a flow one, and the
/// column of its keys; none when its first key does not start a line of a block map (or
/// follow its list item's `- `).
fn first_key(text: &str, entry: &Node) -> Option<(usize, bool, usize)> {
    let Node::Map { at, entries } = entry else {
        return None;
    };
    let first = entries.first()?.0.at()?;
    let flow = text[*at..].starts_with('{');
    let line = text[..first].rfind('\n').map_or(0, |at| at + 1);
    let prefix = &text[line..first];
    let dashed = prefix.trim_matches(' ') == "-";
    let block = prefix.chars().all(|c| c == ' ') || dashed;
    (flow || block).then(|| (first, flow, prefix.chars().count()))
}

/// A remote server (`uri` or `url`, its headers) made a stdio one running the proxy in
/// front of it: its remote keys renamed in place to be kept ([`kept`]), and the proxy's
/// keys written before its first key. Its URL and headers go through the proxy's
/// environment, never its arguments.
fn wrap_remote(
    text: &str,
    entry: &Node,
    shape: Shape,
    head: Vec<String>,
    reasons: &str,
    edits: &mut Vec<Edit>,
) -> (Fate, Option<Vec<Change>>) {
    let skipped = |why: String| (Fate::Skipped(why), None);
    let Some(url) = entry.get(shape.url()).and_then(Node::text) else {
        return skipped(format!("its `{}` is not a string", shape.url()));
    };
    let Node::Map { entries, .. } = entry else {
        return skipped("not a map".into());
    };
    if entries
        .iter()
        .any(|(key, _)| key.text().is_some_and(|key| key.starts_with(KEPT)))
    {
        return skipped(format!(
            "it has keys named `{KEPT}-…` already: unwrap it by hand"
        ));
    }
    if entry.get("args").is_some() {
        return skipped("a remote server with `args`".into());
    }
    let headers = match shape.headers(entry) {
        Ok(headers) => headers,
        Err(why) => return skipped(why),
    };
    // A value the client fills in itself (Goose's `${VAR}`, Continue's `${{ secrets.X }}`)
    // would reach the proxy as written.
    if std::iter::once(url)
        .chain(headers.iter().map(|(_, value)| value.as_str()))
        .any(|value| value.contains("${"))
    {
        return skipped(
            "its URL or a header holds a `${…}` the client fills in, which reasons mcp does not"
                .into(),
        );
    }
    let Some((first, flow, column)) = first_key(text, entry) else {
        return skipped("it is laid out in a way wrap does not edit".into());
    };
    let mut proxied = Proxied::new(head, url);
    for (name, value) in &headers {
        proxied.header(name, value);
    }
    // The remote keys are kept twice: renamed in place, so that unwrap gives every byte
    // back, and as values in the proxy's environment, which survives a client's writer
    // that drops keys it does not know (Goose saves its config from its own types).
    let mut kept_values = serde_json::Map::new();
    for key in shape.remote_keys() {
        let Some(value) = entry.get(key) else {
            continue;
        };
        let Some(value) = value_of(value) else {
            return skipped(format!(
                "its `{key}` is written in a way wrap does not edit"
            ));
        };
        kept_values.insert(key.to_string(), value);
    }
    proxied.keep(serde_json::Value::Object(kept_values).to_string());
    let mut changes = Vec::new();
    for key in shape.remote_keys() {
        if entry.get(key).is_none() {
            continue;
        }
        let Some(at) = name_at(text, entry, key) else {
            return skipped(format!(
                "its `{key}` is written in a way wrap does not edit"
            ));
        };
        edits.push((at, at, format!("{KEPT}-")));
        changes.push(Change::Rename(key.to_string(), kept(key)));
    }
    let keys = stdio_keys(shape, reasons, &proxied.args, &proxied.env);
    edits.push((first, first, written(&keys, flow, column)));
    let yaml = |values: &[String]| Yaml::Array(values.iter().cloned().map(Yaml::String).collect());
    let env = proxied
        .env
        .iter()
        .map(|(name, value)| (Yaml::String(name.clone()), Yaml::String(value.clone())))
        .collect();
    changes.extend([
        Change::Set("type", Yaml::String("stdio".into())),
        Change::Set(shape.command(), Yaml::String(reasons.into())),
        Change::Set("args", yaml(&proxied.args)),
        Change::Set(shape.env(), Yaml::Hash(env)),
    ]);
    (Fate::Changed, Some(changes))
}

/// A wrapped remote server as it was: the proxy's keys gone, its own kept keys renamed
/// back. When the proxy's keys are still as wrap wrote them they go as one span, so the
/// entry comes back byte for byte; else each goes with its lines (a block map only).
/// When the kept keys are gone (a client's writer dropped keys it does not know), they
/// are written again from the values the proxy's environment keeps: value for value.
fn unwrap_remote(
    text: &str,
    entry: &Node,
    shape: Shape,
    edits: &mut Vec<Edit>,
) -> (Fate, Option<Vec<Change>>) {
    let skipped = |why: &str| (Fate::Skipped(why.into()), None);
    if entry.get(&kept(shape.url())).is_none() {
        return match kept_in_env(entry, shape) {
            Some(values) => unwrap_from_env(text, entry, shape, values, edits),
            None => skipped(HAND_WRITTEN_REMOTE),
        };
    }
    let Some((first, flow, column)) = first_key(text, entry) else {
        return skipped("it is laid out in a way unwrap does not edit: unwrap it by hand");
    };
    let mut changes = Vec::new();
    let added = ["type", shape.command(), "args", shape.env()];
    let as_written = match (
        entry.get(shape.command()).and_then(Node::text),
        strings(entry.get("args")),
        entry.get(shape.env()),
    ) {
        (Some(command), Some(args), Some(Node::Map { entries, .. })) => {
            let env: Option<Vec<(String, String)>> = entries
                .iter()
                .map(|(name, value)| Some((name.text()?.to_string(), value.text()?.to_string())))
                .collect();
            env.map(|env| written(&stdio_keys(shape, command, &args, &env), flow, column))
        }
        _ => None,
    };
    match as_written {
        Some(wrote) if text[first..].starts_with(&wrote) => {
            edits.push((first, first + wrote.len(), String::new()))
        }
        _ if flow => {
            return skipped(
                "its keys are laid out in a way unwrap does not edit: unwrap it by hand",
            );
        }
        _ => {
            for key in added {
                let Some(at) = entry.key_at(key) else {
                    continue;
                };
                let Some((start, end)) = key_span(text, at) else {
                    return skipped(
                        "its keys are laid out in a way unwrap does not edit: unwrap it by hand",
                    );
                };
                edits.push((start, end, String::new()));
            }
        }
    }
    changes.extend(added.map(Change::Remove));
    for key in shape.remote_keys() {
        if entry.get(&kept(key)).is_none() {
            continue;
        }
        let Some(at) = name_at(text, entry, &kept(key)) else {
            return skipped(
                "its kept keys are written in a way unwrap does not edit: unwrap it by hand",
            );
        };
        edits.push((at, at + KEPT.len() + 1, String::new()));
        changes.push(Change::Rename(kept(key), key.to_string()));
    }
    // The user's file is the truth: what changed since in what the user sees is written
    // in place of the kept value, and every other byte stays.
    let seen = Seen::of(entry, shape);
    let layout = "its kept keys are written in a way unwrap does not edit: unwrap it by hand";
    let mut in_place = |node: &Node, now: &str| match (node.at(), end_of(text, node)) {
        (Some(at), Some(end)) => {
            edits.push((at, end, quoted(now)));
            true
        }
        _ => false,
    };
    if let Some(url) = &seen.url
        && let Some(node) = entry.get(&kept(shape.url()))
        && node.text() != Some(url.as_str())
    {
        if !in_place(node, url) {
            return skipped(layout);
        }
        changes.push(Change::Set(shape.url(), Yaml::String(url.clone())));
    }
    let container = shape.headers_key();
    if let Some(kept_node) = entry.get(&kept(container))
        && let Some(mut value) = value_of(kept_node)
    {
        let headers = match shape {
            Shape::Goose => Some(kept_node),
            Shape::Continue => kept_node.get("headers"),
        };
        let Some(Node::Map { entries, .. }) = headers else {
            return (Fate::Changed, Some(changes));
        };
        let mut changed = false;
        for (name, now) in &seen.headers {
            let Some((_, node)) = entries.iter().find(|(key, _)| key.text() == Some(name)) else {
                continue;
            };
            if node.text() == Some(now.as_str()) {
                continue;
            }
            if !in_place(node, now) {
                return skipped(layout);
            }
            changed = true;
        }
        if changed {
            seen.apply_headers(&mut value, shape);
            changes.push(Change::Set(container, yaml_of(&value)));
        }
    }
    (Fate::Changed, Some(changes))
}

/// What a wrapped remote server's entry shows its user now: the URL in its environment's
/// `REASONS_URL`, and each header wrap passed on (`--header-env NAME=REASONS_HEADER_n`)
/// with the value its environment gives it.
struct Seen {
    url: Option<String>,
    headers: Vec<(String, String)>,
}

impl Seen {
    fn of(entry: &Node, shape: Shape) -> Seen {
        let env: Vec<(String, String)> = match entry.get(shape.env()) {
            Some(Node::Map { entries, .. }) => (entries.iter())
                .filter_map(|(name, value)| {
                    Some((name.text()?.to_string(), value.text()?.to_string()))
                })
                .collect(),
            _ => Vec::new(),
        };
        let seen = |variable: &str| {
            (env.iter())
                .find(|(name, _)| name == variable)
                .map(|(_, value)| value.clone())
        };
        let args = strings(entry.get("args")).unwrap_or_default();
        Seen {
            url: seen(URL_VARIABLE),
            headers: passed_headers(&args, seen),
        }
    }

    /// `kept`, the value of the shape's headers key as kept (Goose's `headers`, Continue's
    /// `requestOptions`), with each header seen now in place of its kept value.
    fn apply_headers(&self, kept: &mut serde_json::Value, shape: Shape) {
        let headers = match shape {
            Shape::Goose => Some(kept),
            Shape::Continue => kept.get_mut("headers"),
        };
        let Some(serde_json::Value::Object(headers)) = headers else {
            return;
        };
        for (name, now) in &self.headers {
            if let Some(value) = headers.get_mut(name) {
                *value = serde_json::Value::String(now.clone());
            }
        }
    }

    /// `values`, what the environment kept of the remote keys, as the user sees them now.
    fn apply(&self, values: &mut serde_json::Map<String, serde_json::Value>, shape: Shape) {
        if let Some(url) = &self.url
            && values.contains_key(shape.url())
        {
            values.insert(shape.url().into(), serde_json::Value::String(url.clone()));
        }
        if let Some(kept) = values.get_mut(shape.headers_key()) {
            self.apply_headers(kept, shape);
        }
    }
}

/// What a wrapped remote server's environment keeps of its remote keys: each key with
/// its value, from [`UNWRAP_VARIABLE`].
fn kept_in_env(entry: &Node, shape: Shape) -> Option<serde_json::Map<String, serde_json::Value>> {
    let Some(Node::Map { entries, .. }) = entry.get(shape.env()) else {
        return None;
    };
    let kept = entries
        .iter()
        .find(|(name, _)| name.text() == Some(UNWRAP_VARIABLE))?
        .1
        .text()?;
    match serde_json::from_str(kept) {
        Ok(serde_json::Value::Object(values)) => Some(values),
        _ => None,
    }
}

/// A wrapped remote server of a block map whose kept keys are gone: the proxy's keys
/// removed, each with its lines, and the remote keys written again from `values`, one
/// line each at the map's column, after its last key.
fn unwrap_from_env(
    text: &str,
    entry: &Node,
    shape: Shape,
    values: serde_json::Map<String, serde_json::Value>,
    edits: &mut Vec<Edit>,
) -> (Fate, Option<Vec<Change>>) {
    let skipped = |why: &str| (Fate::Skipped(why.into()), None);
    let layout = "its keys are laid out in a way unwrap does not edit: unwrap it by hand";
    let (Some((_, false, column)), Node::Map { entries, .. }) = (first_key(text, entry), entry)
    else {
        return skipped(layout);
    };
    let last = entries.last().and_then(|(key, _)| key.at());
    let Some((_, end)) = last.and_then(|at| key_span(text, at)) else {
        return skipped(layout);
    };
    if text[..end].ends_with(|c| c != '\n') {
        return skipped(layout);
    }
    let added = ["type", shape.command(), "args", shape.env()];
    let mut changes: Vec<Change> = added.map(Change::Remove).into();
    for key in added {
        let Some(at) = entry.key_at(key) else {
            continue;
        };
        let Some(span) = key_span(text, at) else {
            return skipped(layout);
        };
        edits.push((span.0, span.1, String::new()));
    }
    let mut values = values;
    Seen::of(entry, shape).apply(&mut values, shape);
    let indent = " ".repeat(column);
    let mut lines = String::new();
    for (key, value) in &values {
        let Some(remote) = shape.remote_keys().into_iter().find(|remote| remote == key) else {
            return skipped(
                "what its environment keeps for unwrap names a key no remote server has",
            );
        };
        // The key is one of the remote keys, a plain word each.
        lines.push_str(&format!("{indent}{remote}: {}\n", flow(value)));
        changes.push(Change::Set(remote, yaml_of(value)));
    }
    edits.push((end, end, lines));
    (Fate::Changed, Some(changes))
}

/// `node`'s value, for a JSON reader: strings, lists and maps of them (what a remote
/// server's keys hold); none for anything else.
fn value_of(node: &Node) -> Option<serde_json::Value> {
    use serde_json::Value;
    Some(match node {
        Node::Scalar { value, .. } => Value::String(value.clone()),
        Node::Seq { items, .. } => Value::Array(items.iter().map(value_of).collect::<Option<_>>()?),
        Node::Map { entries, .. } => Value::Object(
            entries
                .iter()
                .map(|(key, value)| Some((key.text()?.to_string(), value_of(value)?)))
                .collect::<Option<_>>()?,
        ),
        Node::Other => return None,
    })
}

/// `value` (strings, lists and maps of them) as YAML's flow text.
fn flow(value: &serde_json::Value) -> String {
    use serde_json::Value;
    match value {
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(flow).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(entries) => {
            let entries: Vec<String> = entries
                .iter()
                .map(|(key, value)| format!("{}: {}", quoted(key), flow(value)))
                .collect();
            format!("{{{}}}", entries.join(", "))
        }
        Value::String(text) => quoted(text),
        other => other.to_string(),
    }
}

/// `value` (strings, lists and maps of them) as the YAML loader reads it.
fn yaml_of(value: &serde_json::Value) -> Yaml {
    use serde_json::Value;
    match value {
        Value::Array(items) => Yaml::Array(items.iter().map(yaml_of).collect()),
        Value::Object(entries) => Yaml::Hash(
            entries
                .iter()
                .map(|(key, value)| (Yaml::String(key.clone()), yaml_of(value)))
                .collect(),
        ),
        Value::String(text) => Yaml::String(text.clone()),
        _ => Yaml::Null,
    }
}

/// The span the key starting at `at` of a block map takes with its value, for both to
/// go: its lines, up to the next line no more indented than the key (a list's items may
/// be as indented, as YAML writers put them), blank lines and comments after it left.
/// When the key follows its list item's `- `, the span reaches to where the next key
/// starts, which then takes its place; none when there is no next key.
fn key_span(text: &str, at: usize) -> Option<(usize, usize)> {
    let line = text[..at].rfind('\n').map_or(0, |at| at + 1);
    let prefix = &text[line..at];
    let column = prefix.chars().count();
    let dashed = prefix.trim_matches(' ') == "-";
    let mut end = text[at..].find('\n').map_or(text.len(), |to| at + to + 1);
    let mut next = end;
    while next < text.len() {
        let to = text[next..]
            .find('\n')
            .map_or(text.len(), |to| next + to + 1);
        let content = text[next..to].trim_start_matches(' ');
        let indent = text[next..to].len() - content.len();
        let blank = content.trim().is_empty() || content.starts_with('#');
        let within = indent > column || (indent == column && content.starts_with('-'));
        if !blank && !within {
            break;
        }
        if !blank {
            end = to;
        }
        next = to;
    }
    match dashed {
        false => Some((line, end)),
        true => {
            let sibling = text.get(end..end + column)?.chars().all(|c| c == ' ')
                && !text[end + column..].starts_with([' ', '-', '#', '\n']);
            sibling.then_some((at, end + column))
        }
    }
}

/// `text` as the JSON value it holds, for a reader of JSON (doctor).
pub(super) fn as_json(text: &str) -> Result<serde_json::Value, Kind> {
    let docs = YamlLoader::load_from_str(text).map_err(|error| Kind::Syntax {
        format: "YAML",
        detail: error.to_string(),
    })?;
    let doc = docs.into_iter().next();
    let doc = doc.ok_or_else(|| Kind::Unfit("holds no YAML document".into()))?;
    Ok(json_of(&doc))
}

fn json_of(yaml: &Yaml) -> serde_json::Value {
    use serde_json::Value;
    match yaml {
        Yaml::String(text) | Yaml::Real(text) => Value::String(text.clone()),
        Yaml::Integer(number) => Value::from(*number),
        Yaml::Boolean(flag) => Value::Bool(*flag),
        Yaml::Array(items) => Value::Array(items.iter().map(json_of).collect()),
        Yaml::Hash(map) => Value::Object(
            map.iter()
                .filter_map(|(key, value)| Some((key.as_str()?.to_string(), json_of(value))))
                .collect(),
        ),
        _ => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::wrapper;

    #[test]
    fn unwrap_gives_back_the_url_and_the_token_the_user_sees_now() {
        // A URL moved and a token rotated in the wrapped entry's environment since wrap
        // are what unwrap gives back, in place, whether the kept keys are still there or
        // Goose's writer dropped them; every other byte as it was.
        let text = "extensions:\n  r:\n    type: streamable_http\n    uri: https://old.example.com/mcp\n    headers:\n      Authorization: Bearer OLD\n      X-Team: a\n    enabled: true\n";
        let wrapped = edit(text, Way::Wrap, &wrapper()).unwrap().text;
        let since = wrapped
            .replace(
                "\"REASONS_URL\": \"https://old.example.com/mcp\"",
                "\"REASONS_URL\": \"https://new.example.com/mcp\"",
            )
            .replace(
                "\"REASONS_HEADER_0\": \"Bearer OLD\"",
                "\"REASONS_HEADER_0\": \"Bearer NEW\"",
            );
        assert_eq!(
            since.matches("NEW").count() + since.matches("new.").count(),
            2,
            "{since}"
        );
        let back = edit(&since, Way::Unwrap, &wrapper()).unwrap().text;
        assert_eq!(
            back,
            text.replace(
                "https://old.example.com/mcp",
                "\"https://new.example.com/mcp\""
            )
            .replace("Bearer OLD", "\"Bearer NEW\"")
        );
        // Goose saved the file from its own types: the kept keys are gone.
        let rewritten: String = (since.lines())
            .filter(|line| !line.contains("reasons-unwrap") && !line.starts_with("      "))
            .map(|line| format!("{line}\n"))
            .collect();
        let back = edit(&rewritten, Way::Unwrap, &wrapper()).unwrap().text;
        let read = YamlLoader::load_from_str(&back).unwrap();
        let entry = &read[0]["extensions"]["r"];
        assert_eq!(
            entry["uri"].as_str(),
            Some("https://new.example.com/mcp"),
            "{back}"
        );
        assert_eq!(
            entry["headers"]["Authorization"].as_str(),
            Some("Bearer NEW"),
            "{back}"
        );
        assert_eq!(entry["headers"]["X-Team"].as_str(), Some("a"), "{back}");
    }

    #[test]
    fn a_crlf_file_keeps_its_line_ends_both_ways() {
        // A remote extension becomes lines of wrap's own, and a stdio one's list grows:
        // every line still ends CRLF, and unwrap gives every byte back.
        let text = "extensions:\r\n  fs:\r\n    cmd: npx\r\n    args: [-y, fs]\r\n  r:\r\n    type: streamable_http\r\n    uri: https://example.com/mcp\r\n";
        let wrapped = edit(text, Way::Wrap, &wrapper()).unwrap().text;
        assert!(wrapped.contains("/bin/reasons"), "{wrapped}");
        assert!(!wrapped.replace("\r\n", "").contains('\n'), "{wrapped:?}");
        let back = edit(&wrapped, Way::Unwrap, &wrapper()).unwrap().text;
        assert_eq!(back, text);
    }

    #[test]
    fn goose_s_extensions_are_wrapped_in_place_and_come_back_byte_for_byte() {
        let text =
            "# mine\nextensions:\n  fs:\n    cmd: npx\n    args: [-y, fs]\n    enabled: true\n";
        let edited = edit(text, Way::Wrap, &wrapper()).unwrap();
        let read = YamlLoader::load_from_str(&edited.text).unwrap();
        let entry = &read[0]["extensions"]["fs"];
        assert_eq!(entry["cmd"].as_str(), Some("/bin/reasons"));
        let args: Vec<&str> = (entry["args"].as_vec().unwrap().iter())
            .filter_map(Yaml::as_str)
            .collect();
        assert_eq!(args, ["mcp", "--", "npx", "-y", "fs"]);
        assert_eq!(entry["enabled"].as_bool(), Some(true));
        assert!(edited.text.starts_with("# mine\n"), "{}", edited.text);
        let back = edit(&edited.text, Way::Unwrap, &wrapper()).unwrap();
        assert_eq!(back.text, text);
    }

    #[test]
    fn an_alias_is_refused_with_why() {
        let text = "extensions:\n  fs: &a\n    cmd: npx\n  again: *a\n";
        let edited = edit(text, Way::Wrap, &wrapper());
        let skipped: Vec<String> = match edited {
            Ok(edited) => (edited.servers.into_iter())
                .filter_map(|(server, fate)| match fate {
                    Fate::Skipped(why) => Some(format!("{}: {why}", server.name)),
                    _ => None,
                })
                .collect(),
            Err(error) => vec![format!("{error:?}")],
        };
        assert!(!skipped.is_empty(), "an alias was edited");
    }
}
