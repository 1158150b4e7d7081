//! Codex's `config.toml`: each `[mcp_servers.NAME]` table wrapped and unwrapped as a JSON
//! config's entries are, edited with toml_edit (cargo's editor), which keeps every
//! comment, blank line and key order of the file. TOML allows no key twice; the parser
//! refuses a file that gives one.

use super::{
    Edited, Fate, KEPT, Proxied, Server, UNWRAP_VARIABLE, URL_VARIABLE, Way, Wrapper,
    passed_headers, pointer_token, runs_proxy, server_at,
};
use crate::error::Kind;
use toml_edit::{Array, DocumentMut, InlineTable, Item, Table, TableLike, Value};

/// `text` wrapped or unwrapped, with `reasons` as the command that runs the proxy.
pub(super) fn edit(text: &str, way: Way, reasons: &Wrapper) -> Result<Edited, Kind> {
    let mut document = parsed(text)?;
    let Some(servers) = document
        .get_mut("mcp_servers")
        .and_then(Item::as_table_like_mut)
    else {
        return Err(Kind::Unfit("has no [mcp_servers] table".into()));
    };
    let mut fates = Vec::new();
    for (name, entry) in servers.iter_mut() {
        let name = name.get().to_string();
        let fate = match (entry.as_table_like_mut(), way) {
            (None, Way::Wrap) => Fate::Skipped("not a table".into()),
            // Nothing runs a server that is not a table, behind the proxy or not.
            (None, Way::Unwrap) => Fate::AsItWas,
            (Some(entry), Way::Wrap) => wrap(entry, reasons.head(&name), &reasons.command),
            (Some(entry), Way::Unwrap) => unwrap(entry, reasons),
        };
        let pointer = format!("/mcp_servers/{}", pointer_token(&name));
        fates.push((Server { name, pointer }, fate));
    }
    Ok(Edited {
        text: super::line_ends::as_in(text, document.to_string()),
        servers: fates,
    })
}

/// `text` as the JSON value it holds, for a reader of JSON (doctor).
pub(super) fn as_json(text: &str) -> Result<serde_json::Value, Kind> {
    toml_edit::de::from_document(parsed(text)?)
        .map_err(|error| Kind::Unfit(format!("is not a config reasons reads: {error}")))
}

/// `text` as a TOML document. The parser's error names where it is and what is wrong, and
/// not the line it is on, as the parser's own message would: a line may be megabytes long.
fn parsed(text: &str) -> Result<DocumentMut, Kind> {
    text.parse().map_err(|error: toml_edit::TomlError| {
        let before = error
            .span()
            .and_then(|span| text.get(..span.start))
            .unwrap_or_default();
        let line = before.matches('\n').count() + 1;
        let column = before
            .rsplit('\n')
            .next()
            .unwrap_or_default()
            .chars()
            .count()
            + 1;
        Kind::Syntax {
            format: "TOML",
            detail: format!(
                "{} (line {line}, column {column})",
                error.message().trim_end()
            ),
        }
    })
}

fn text<'a>(entry: &'a dyn TableLike, key: &str) -> Option<&'a str> {
    entry.get(key).and_then(Item::as_str)
}

fn strings(entry: &dyn TableLike, key: &str) -> Option<Vec<String>> {
    let array = entry.get(key)?.as_array()?;
    array
        .iter()
        .map(|value| value.as_str().map(str::to_string))
        .collect()
}

/// Whether `entry` runs behind `reasons mcp` ([`runs_proxy`]).
fn wrapped(entry: &dyn TableLike) -> bool {
    let args = strings(entry, "args").unwrap_or_default();
    text(entry, "command").is_some_and(|command| runs_proxy(command, &args))
}

/// Replaces the value of `key` with `value`, keeping the old one's spacing and comments.
/// The key, and the comments above it, stay too.
fn replace(entry: &mut dyn TableLike, key: &str, value: impl Into<Value>) {
    let mut value = value.into();
    match entry.get_mut(key) {
        Some(Item::Value(old)) => {
            *value.decor_mut() = old.decor().clone();
            *old = value;
        }
        _ => {
            entry.insert(key, Item::Value(value));
        }
    }
}

/// Puts `entry` behind the proxy: `reasons` with `proxy` (its arguments before the
/// server's) in front of its command.
fn wrap(entry: &mut dyn TableLike, proxy: Vec<String>, reasons: &str) -> Fate {
    if wrapped(entry) {
        return Fate::AsItWas;
    }
    let Some(command) = text(entry, "command").map(str::to_string) else {
        return match text(entry, "url").map(str::to_string) {
            Some(url) => wrap_remote(entry, &url, proxy, reasons),
            None => Fate::Skipped("no `command` string and no `url`".into()),
        };
    };
    let mut head = proxy;
    head.extend(["--".to_string(), command]);
    match entry.get_mut("args").map(|args| args.as_array_mut()) {
        Some(None) => return Fate::Skipped("`args` is not a list".into()),
        Some(Some(args)) => {
            // An empty list the user wrote as `[]` is filled as `[ …]`: the space tells
            // unwrap the list was there, where one wrap adds has none.
            let users_empty = args.is_empty() && args.trailing().as_str() == Some("");
            // The list keeps its layout: `["mcp", "--", "npx", "-y"]` from `["-y"]`.
            if let Some(first) = args.get_mut(0)
                && first
                    .decor()
                    .prefix()
                    .is_none_or(|prefix| prefix.as_str() == Some(""))
            {
                first.decor_mut().set_prefix(" ");
            }
            for (at, arg) in head.iter().enumerate() {
                let prefix = if at == 0 && !users_empty { "" } else { " " };
                args.insert_formatted(at, Value::from(arg.as_str()).decorated(prefix, ""));
            }
        }
        None => {
            entry.insert("args", Item::Value(Array::from_iter(head).into()));
        }
    }
    replace(entry, "command", reasons);
    Fate::Changed
}

/// The keys that make a Codex entry a remote server's, which a wrapped one keeps aside,
/// with the keys wrap writes that the entry had already (an `args` or `env` Codex ignores
/// for a remote server): none is written over, so none is lost.
const REMOTE_KEYS: [&str; 6] = [
    "url",
    "http_headers",
    "env_http_headers",
    "bearer_token_env_var",
    "args",
    "env",
];

/// A remote entry made a stdio one running the proxy in front of its URL. Codex starts a
/// stdio server with a bare environment, so the variables the remote's headers were read
/// from (`env_http_headers`, `bearer_token_env_var`) are forwarded to it by name
/// (`env_vars`), and read by the proxy as they were by Codex.
fn wrap_remote(entry: &mut dyn TableLike, url: &str, proxy: Vec<String>, reasons: &str) -> Fate {
    if entry.contains_key("env_vars") {
        return Fate::Skipped("a remote server with `env_vars`, which only stdio ones have".into());
    }
    let mut proxied = Proxied::new(proxy, url);
    let http_headers = match string_table(entry, "http_headers") {
        Ok(headers) => headers,
        Err(why) => return Fate::Skipped(why),
    };
    for (name, value) in &http_headers {
        proxied.header(name, value);
    }
    // Read by the proxy from the variables Codex would have read them from.
    let env_http_headers = match string_table(entry, "env_http_headers") {
        Ok(headers) => headers,
        Err(why) => return Fate::Skipped(why),
    };
    for (name, variable) in &env_http_headers {
        proxied.header_from(name, variable);
    }
    match entry.get("bearer_token_env_var").map(Item::as_str) {
        None => {}
        Some(None) => return Fate::Skipped("its `bearer_token_env_var` is not a string".into()),
        Some(Some(variable)) => proxied.bearer_from(variable),
    }
    // Kept as the lines they were, each key with the comments above it and after its
    // value, for unwrap to put back as they were.
    let mut kept = Table::new();
    for name in REMOTE_KEYS {
        if let Some(key) = entry.key(name).cloned()
            && let Some(item) = entry.remove(name)
        {
            kept.insert_formatted(&key, item);
        }
    }
    proxied.keep(kept.to_string());
    let env: InlineTable = proxied
        .env
        .iter()
        .map(|(name, value)| (name.as_str(), Value::from(value.as_str())))
        .collect();
    entry.insert("command", toml_edit::value(reasons));
    entry.insert("args", Item::Value(Array::from_iter(proxied.args).into()));
    entry.insert("env", Item::Value(env.into()));
    if !proxied.from_env.is_empty() {
        let forwarded = Array::from_iter(proxied.from_env);
        entry.insert("env_vars", Item::Value(forwarded.into()));
    }
    Fate::Changed
}

/// The table at `key` of `entry` as names and their string values, in its order (none
/// when it is absent); why not when it is not one.
fn string_table(entry: &dyn TableLike, key: &str) -> Result<Vec<(String, String)>, String> {
    let Some(item) = entry.get(key) else {
        return Ok(Vec::new());
    };
    let table = item
        .as_table_like()
        .ok_or_else(|| format!("its `{key}` is not a table"))?;
    table
        .iter()
        .map(|(name, value)| match value.as_str() {
            Some(value) => Ok((name.to_string(), value.to_string())),
            None => Err(format!("a value of its `{key}` is not a string")),
        })
        .collect()
}

/// What a wrapped remote server's entry keeps for unwrap, when it keeps anything: the
/// lines of its remote keys in its environment's [`UNWRAP_VARIABLE`] (an inline table
/// where an earlier release kept one), or under [`KEPT`] where an older release kept it;
/// `None` inside when that is not a table.
fn kept_of(entry: &dyn TableLike) -> Option<Option<Table>> {
    if let Some(kept) = entry.get(KEPT) {
        return Some(match kept {
            Item::Value(Value::InlineTable(table)) => Some(table.clone().into_table()),
            Item::Table(table) => Some(table.clone()),
            _ => None,
        });
    }
    let kept = entry.get("env")?.as_table_like()?.get(UNWRAP_VARIABLE)?;
    let Some(kept) = kept.as_str() else {
        return Some(None);
    };
    if kept.trim_start().starts_with('{') {
        let parsed = format!("kept = {kept}").parse::<DocumentMut>().ok();
        let inline = parsed.and_then(|document| document.get("kept")?.as_inline_table().cloned());
        return Some(inline.map(InlineTable::into_table));
    }
    Some(
        kept.parse::<DocumentMut>()
            .ok()
            .map(|document| document.as_table().clone()),
    )
}

/// `kept` as the user sees the wrapped entry now (the user's file is the truth): the URL
/// in its `REASONS_URL`, and each header wrap passed on as `--header-env
/// NAME=REASONS_HEADER_n` given the value its environment holds, where they changed.
fn as_seen(entry: &dyn TableLike, mut kept: Table) -> Table {
    let env = string_table(entry, "env").unwrap_or_default();
    let seen = |variable: &str| {
        (env.iter())
            .find(|(name, _)| name == variable)
            .map(|(_, value)| value.clone())
    };
    if let Some(url) = seen(URL_VARIABLE)
        && kept.get("url").and_then(Item::as_str) != Some(url.as_str())
    {
        replace(&mut kept, "url", url);
    }
    let args = strings(entry, "args").unwrap_or_default();
    if let Some(headers) = kept
        .get_mut("http_headers")
        .and_then(Item::as_table_like_mut)
    {
        for (name, value) in passed_headers(&args, seen) {
            if headers.get(&name).and_then(Item::as_str) != Some(value.as_str()) {
                replace(headers, &name, value);
            }
        }
    }
    kept
}

fn unwrap(entry: &mut dyn TableLike, reasons: &Wrapper) -> Fate {
    if !wrapped(entry) {
        return Fate::AsItWas;
    }
    if let Some(kept) = kept_of(entry) {
        let Some(kept) = kept else {
            return Fate::Skipped(format!(
                "what it keeps for unwrap (`{UNWRAP_VARIABLE}`) is not a TOML table: unwrap \
                 it by hand"
            ));
        };
        let kept = as_seen(entry, kept);
        entry.remove(KEPT);
        for key in ["command", "args", "env", "env_vars"] {
            entry.remove(key);
        }
        for (key, item) in kept.iter() {
            let key = kept.key(key).expect("a key of the table").clone();
            if let toml_edit::Entry::Vacant(vacant) = entry.entry_format(&key) {
                vacant.insert(item.clone());
            }
        }
        return Fate::Changed;
    }
    let args = strings(entry, "args").unwrap_or_default();
    let at = match server_at(&args, reasons) {
        Ok(at) => at,
        Err(why) => return Fate::Skipped(why),
    };
    replace(entry, "command", args[at].clone());
    let Some(list) = entry.get_mut("args").and_then(Item::as_array_mut) else {
        return Fate::Changed;
    };
    // Wrap's first argument has a space before it in an empty list of the user's alone.
    let users_empty = list.len() == at + 1
        && (list.get(0))
            .is_some_and(|first| first.decor().prefix().and_then(|p| p.as_str()) == Some(" "));
    for _ in 0..=at {
        list.remove(0);
    }
    if let Some(first) = list.get_mut(0) {
        // Wrap gave an argument that had no space before it the one space after a comma;
        // any other layout is the list's own.
        if first.decor().prefix().and_then(|prefix| prefix.as_str()) == Some(" ") {
            first.decor_mut().set_prefix("");
        }
    } else if !users_empty {
        // No arguments of its own: wrap added the list.
        entry.remove("args");
    }
    Fate::Changed
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::wrapper;

    /// `text` wrapped, then unwrapped: both, each checked to read as TOML.
    fn there_and_back(text: &str) -> (String, String) {
        let wrapped = edit(text, Way::Wrap, &wrapper()).unwrap().text;
        let back = edit(&wrapped, Way::Unwrap, &wrapper()).unwrap().text;
        (wrapped, back)
    }

    #[test]
    fn comments_on_every_key_and_crlf_line_ends_come_back_byte_for_byte() {
        // A comment above a key, after a value, on a remote server's keys; the file's
        // CRLF line ends: wrap keeps them where it can, and unwrap gives every byte back.
        let text = "# top\r\n[mcp_servers.r]\r\n# above url\r\nurl = \"https://example.com/mcp\" # trailing\r\nbearer_token_env_var = \"TOK\" # tok\r\n\r\n[mcp_servers.s]\r\n# above command\r\ncommand = \"npx\" # c\r\nargs = [\"x\"] # a\r\n";
        let (wrapped, back) = there_and_back(text);
        assert_eq!(back, text);
        assert!(
            !wrapped.replace("\r\n", "").contains('\n'),
            "every line ends as the file's do: {wrapped:?}"
        );
        assert!(
            wrapped.contains("# above command\r\ncommand = \"/bin/reasons\" # c"),
            "{wrapped}"
        );
    }

    #[test]
    fn codex_s_servers_are_wrapped_with_their_comments_and_come_back_as_they_were() {
        let text = "# mine\nmodel = \"o3\"\n\n[mcp_servers.fs] # files\ncommand = \"npx\"\nargs = [\"-y\", \"fs\"]\n";
        let edited = edit(text, Way::Wrap, &wrapper()).unwrap();
        let document: DocumentMut = edited.text.parse().unwrap();
        let entry = &document["mcp_servers"]["fs"];
        assert_eq!(entry["command"].as_str(), Some("/bin/reasons"));
        let args: Vec<&str> = (entry["args"].as_array().unwrap().iter())
            .filter_map(|arg| arg.as_str())
            .collect();
        assert_eq!(args, ["mcp", "--", "npx", "-y", "fs"]);
        assert!(
            edited.text.starts_with("# mine\nmodel = \"o3\"\n"),
            "{}",
            edited.text
        );
        assert!(
            edited.text.contains("[mcp_servers.fs] # files"),
            "{}",
            edited.text
        );
        let back = edit(&edited.text, Way::Unwrap, &wrapper()).unwrap();
        assert_eq!(back.text, text);
    }

    #[test]
    fn unwrap_gives_back_the_url_and_the_tokens_the_user_sees_now() {
        let text = "[mcp_servers.r]\nurl = \"https://old.example.com/mcp\"\nhttp_headers = { Authorization = \"Bearer OLD\", X-Team = \"a\" }\n";
        let edited = edit(text, Way::Wrap, &wrapper()).unwrap();
        let mut document: DocumentMut = edited.text.parse().unwrap();
        let env = document["mcp_servers"]["r"]["env"]
            .as_inline_table_mut()
            .unwrap();
        assert_eq!(
            env.get("REASONS_HEADER_0").and_then(Value::as_str),
            Some("Bearer OLD")
        );
        env.insert("REASONS_HEADER_0", Value::from("Bearer NEW"));
        env.insert("REASONS_URL", Value::from("https://new.example.com/mcp"));
        let back = edit(&document.to_string(), Way::Unwrap, &wrapper()).unwrap();
        let back: DocumentMut = back.text.parse().unwrap();
        let entry = &back["mcp_servers"]["r"];
        assert_eq!(entry["url"].as_str(), Some("https://new.example.com/mcp"));
        assert_eq!(
            entry["http_headers"]["Authorization"].as_str(),
            Some("Bearer NEW")
        );
        assert_eq!(entry["http_headers"]["X-Team"].as_str(), Some("a"));
        // Untouched, it is the file as it was.
        let untouched = edit(&edited.text, Way::Unwrap, &wrapper()).unwrap();
        assert_eq!(untouched.text, text);
    }
}
