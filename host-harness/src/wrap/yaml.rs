//! Goose's `config.yaml` (`extensions`, a map of servers with `cmd` and `args`) and
//! Continue's (`mcpServers`, a list of servers with `name`, `command` and `args`): each
//! stdio server wrapped and unwrapped as a JSON config's entries are, by edits of the
//! text at the places yaml-rust2's parser reports, so that every comment and every line
//! wrap does not touch stays. What the edit gives is read again and compared, value for
//! value, with the document as it is meant to be; anything else refuses the edit.
//!
//! Fails closed: a server written in a way this does not edit (a multi-line or tagged
//! scalar, an alias) is refused with why, as is a remote one (`uri`, `url`), which the
//! proxy reaches but this does not yet rewrite.

use super::{Edited, Fate, Server, Way, Wrapper, is_reasons, own_flags, pointer_token};
use anyhow::{Context, bail};
use std::path::Path;
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
        entries: Vec<(Node, Node)>,
    },
    /// An alias, or what this does not read.
    Other,
}

impl Node {
    fn get(&self, key: &str) -> Option<&Node> {
        let Node::Map { entries } = self else {
            return None;
        };
        entries
            .iter()
            .find(|(name, _)| name.text() == Some(key))
            .map(|(_, value)| value)
    }

    /// Where the key `key` of this map starts.
    fn key_at(&self, key: &str) -> Option<usize> {
        let Node::Map { entries } = self else {
            return None;
        };
        entries.iter().find_map(|(name, _)| match name {
            Node::Scalar { value, at, .. } if value == key => Some(*at),
            _ => None,
        })
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
            Some((Node::Map { entries }, pending)) => match pending.take() {
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

fn tree(text: &str, file: &Path) -> anyhow::Result<Node> {
    let mut bytes: Vec<usize> = text.char_indices().map(|(at, _)| at).collect();
    bytes.push(text.len());
    let mut tree = Tree {
        bytes,
        open: Vec::new(),
        root: None,
    };
    Parser::new_from_str(text)
        .load(&mut tree, false)
        .map_err(|error| anyhow::anyhow!("{} is not YAML: {error}", file.display()))?;
    tree.root
        .with_context(|| format!("{} holds no YAML document", file.display()))
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

/// Which client's shape a document is, and its servers: each name with its entry.
fn servers<'a>(root: &'a Node, file: &Path) -> anyhow::Result<(Shape, Vec<(String, &'a Node)>)> {
    if let Some(Node::Map { entries }) = root.get("extensions") {
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
    bail!(
        "{} has no `extensions` (Goose) or `mcpServers` list (Continue)",
        file.display()
    )
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
}

/// One span of the text and what replaces it.
type Edit = (usize, usize, String);

/// A server's command and arguments, as an edited entry is to read.
type Run = (String, Vec<String>);

pub(super) fn edit(text: &str, file: &Path, way: Way, reasons: &Wrapper) -> anyhow::Result<Edited> {
    let root = tree(text, file)?;
    let (shape, servers) = servers(&root, file)?;
    let mut edits = Vec::new();
    let mut fates = Vec::new();
    let mut meant: Vec<(String, Option<Run>)> = Vec::new();
    for (name, entry) in servers {
        let (fate, now) = match way {
            Way::Wrap => wrap(text, entry, shape, &name, reasons, &mut edits),
            Way::Unwrap => unwrap(text, entry, shape, &name, &mut edits),
        };
        meant.push((name.clone(), now));
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
    check(text, &edited, shape, &meant, file)?;
    Ok(Edited {
        text: edited,
        servers: fates,
    })
}

/// Whether `edited` reads as `text` does with each server's command and arguments as
/// `meant` (those it holds), and nothing else changed.
fn check(
    text: &str,
    edited: &str,
    shape: Shape,
    meant: &[(String, Option<Run>)],
    file: &Path,
) -> anyhow::Result<()> {
    let read = |text: &str| {
        YamlLoader::load_from_str(text)
            .ok()
            .and_then(|mut docs| docs.pop())
    };
    let (Some(mut expected), Some(mut got)) = (read(text), read(edited)) else {
        bail!(
            "{}: the edit does not read back as YAML; nothing was written",
            file.display()
        );
    };
    let args_key = Yaml::String("args".into());
    for (at, (name, now)) in meant.iter().enumerate() {
        let Some((command, args)) = now else { continue };
        let Some(entry) = entry_mut(&mut expected, shape, name, at) else {
            bail!(
                "{}: the server {name} was not found again; nothing was written",
                file.display()
            );
        };
        entry.insert(
            Yaml::String(shape.command().into()),
            Yaml::String(command.clone()),
        );
        if args.is_empty() {
            // No arguments and an empty list start the same server.
            entry.remove(&args_key);
            if let Some(entry) = entry_mut(&mut got, shape, name, at)
                && entry.get(&args_key) == Some(&Yaml::Array(Vec::new()))
            {
                entry.remove(&args_key);
            }
        } else {
            let list = args.iter().cloned().map(Yaml::String).collect();
            entry.insert(args_key.clone(), Yaml::Array(list));
        }
    }
    // Compared as JSON values, whose maps have no order: where a key sits is layout.
    if json_of(&expected) != json_of(&got) {
        bail!(
            "{}: the edit would not read as it must (its layout is one wrap does not edit); \
             nothing was written",
            file.display()
        );
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
    if entry.get("uri").is_some() || entry.get("url").is_some() {
        return Some(Fate::Skipped(
            "a remote server in YAML, which wrap does not rewrite yet: wrap it by hand with \
             `reasons mcp --url-env`"
                .into(),
        ));
    }
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
) -> (Fate, Option<Run>) {
    if let Some(fate) = not_editable(entry, shape) {
        return (fate, None);
    }
    let key = shape.command();
    let command_node = entry.get(key).expect("checked above");
    let command = command_node.text().unwrap_or_default().to_string();
    let args = strings(entry.get("args"));
    if is_reasons(&command)
        && args
            .as_ref()
            .and_then(|args| args.first())
            .is_some_and(|first| first == "mcp")
    {
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
                let separator = if items.is_empty() { "" } else { ", " };
                edits.push((
                    list + 1,
                    list + 1,
                    format!("{}{separator}", written.join(", ")),
                ));
            } else {
                // A block list: the new items go before the first, on lines of their own
                // at its indentation.
                let line = text[..*list].rfind('\n').map_or(0, |at| at + 1);
                let indent = &text[line..*list];
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
    (Fate::Changed, Some((reasons.command.clone(), after)))
}

/// Unwraps one entry; its fate, and its command and arguments as they are to read after.
fn unwrap(
    text: &str,
    entry: &Node,
    shape: Shape,
    name: &str,
    edits: &mut Vec<Edit>,
) -> (Fate, Option<Run>) {
    let key = shape.command();
    let Some(command_node) = entry.get(key) else {
        return (Fate::AsItWas, None);
    };
    let args = strings(entry.get("args")).unwrap_or_default();
    let wrapped = command_node.text().is_some_and(is_reasons)
        && args.first().is_some_and(|first| first == "mcp");
    if !wrapped {
        return (Fate::AsItWas, None);
    }
    let dashes = own_flags(&args, name).filter(|at| args.get(*at).is_some_and(|arg| arg == "--"));
    let (Some(dashes), Some(original)) = (dashes, dashes.and_then(|at| args.get(at + 1))) else {
        return (
            Fate::Skipped(
                "it runs behind `reasons mcp` with flags of its own: unwrap it by hand".into(),
            ),
            None,
        );
    };
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
    let own = &args[dashes + 2..];
    let item_at = |item: &Node| match item {
        Node::Scalar { at, .. } => *at,
        _ => usize::MAX,
    };
    if text[*list..].starts_with('[') {
        let from = item_at(&items[0]);
        let to = match items.get(dashes + 2) {
            Some(first) => item_at(first),
            None => end_of(text, &items[dashes + 1]).unwrap_or(from),
        };
        // A list wrap added on a line of its own goes with its line.
        let line = text[..*list].rfind('\n').map_or(0, |at| at + 1);
        let mut written: Vec<String> = args[..=dashes].iter().map(|arg| quoted(arg)).collect();
        written.push(spelled(text, &items[dashes + 1]).unwrap_or_else(|| quoted(original)));
        let added = format!("args: [{}]", written.join(", "));
        let is_added = own.is_empty() && text[line..].trim_start_matches(' ').starts_with(&added);
        if is_added {
            // The line and the line break before it, as wrap added them.
            let end_of_line = text[line..].find('\n').map_or(text.len(), |at| line + at);
            edits.push((line.saturating_sub(1), end_of_line, String::new()));
        } else {
            edits.push((from, to, String::new()));
        }
    } else {
        // A block list: the lines of wrap's items go, and the `args:` line with them
        // when nothing of the server's own is left in it.
        let line_of = |at: usize| text[..at].rfind('\n').map_or(0, |at| at + 1);
        let (from, to) = match items.get(dashes + 2) {
            Some(first) => (line_of(item_at(&items[0])), line_of(item_at(first))),
            None => {
                let key = entry.key_at("args").unwrap_or_else(|| item_at(&items[0]));
                let last = item_at(&items[dashes + 1]);
                let end = text[last..]
                    .find('\n')
                    .map_or(text.len(), |at| last + at + 1);
                (line_of(key), end)
            }
        };
        edits.push((from, to, String::new()));
    }
    let command = spelled(text, &items[dashes + 1]).unwrap_or_else(|| quoted(original));
    edits.push((*at, end, command));
    (Fate::Changed, Some((original.clone(), own.to_vec())))
}

/// `text` as the JSON value it holds, for a reader of JSON (doctor).
pub(super) fn as_json(text: &str) -> anyhow::Result<serde_json::Value> {
    let docs = YamlLoader::load_from_str(text)?;
    let doc = docs.into_iter().next().context("no YAML document")?;
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
