//! Which servers `doctor` may start. A config inside the folder it runs in, and a client's
//! entry for a project folder, came with that folder or run in it (a cloned repository's
//! `.mcp.json`, its `.cursor/mcp.json`, its committed `.claude/settings.json` approving
//! them all): their commands are anyone's. Mirroring each client's approval and trust
//! rules would be a race that the client's next release wins, and one committed file was
//! enough to win it, so the gate fails closed instead: doctor starts a project's server
//! only when its user names it (`--start NAME`) or says the folder is theirs (`--mine`).
//! A server of the user's own files starts unless a list its client documents blocks it
//! (Claude Code's managed and user settings, Gemini CLI's `mcp` settings); a list doctor
//! cannot read blocks.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// Whose a server is, and so who says whether it starts.
#[derive(Debug, PartialEq)]
pub enum Scope {
    /// The user's own file: started unless the client's lists block it.
    Own,
    /// A project's, run in `folder`: started only when the user names it, or says the
    /// folder `doctor` runs in is theirs and it is that one.
    Project {
        /// The project's folder.
        folder: PathBuf,
    },
}

/// Where a config is: a file of a client's own, one it reads from the folder it runs in
/// (a project's), or one the user named (`--config`).
#[derive(Clone, Copy)]
pub enum Place {
    /// A file of the client's own.
    Client,
    /// A project's file, which the client reads from the folder it runs in.
    Project,
    /// A file the user named.
    Named,
}

/// The scope of a server of `file` at `pointer`, `file` being at `place`; `here` is the
/// folder doctor runs in. A file named with `--config` is a project's when it lies in
/// that folder's tree, whatever its name (a clone's `.cursor/mcp.json`).
pub fn scope(file: &Path, pointer: &str, place: Place, here: &Path) -> Scope {
    // Claude Code's local scope: an entry of `~/.claude.json` for one project folder,
    // which the client starts in that folder, where a relative command finds its files.
    if let Some(folder) = project_of(pointer) {
        return Scope::Project { folder };
    }
    // Through any link: a link out of the folder is still the folder's choice.
    let inside = || {
        std::path::absolute(file).is_ok_and(|file| file.starts_with(here))
            || std::fs::canonicalize(file).is_ok_and(|file| file.starts_with(here))
    };
    let project = match place {
        Place::Client => false,
        Place::Project => true,
        Place::Named => inside(),
    };
    match project {
        true => Scope::Project {
            folder: here.to_path_buf(),
        },
        false => Scope::Own,
    }
}

/// The project folder of an entry at `pointer` under `projects` (a JSON pointer, `~1`
/// for `/` and `~0` for `~`).
fn project_of(pointer: &str) -> Option<PathBuf> {
    let rest = pointer.strip_prefix("/projects/")?;
    let (token, _) = rest.split_once("/mcpServers/")?;
    Some(PathBuf::from(token.replace("~1", "/").replace("~0", "~")))
}

/// What a client's lists say of a server: started, or blocked and why.
#[derive(Debug, PartialEq)]
pub enum Verdict {
    /// It may start.
    Allowed,
    /// It may not, for this reason.
    Blocked(String),
}

/// One entry of an allow or deny list, as Claude Code reads it.
#[derive(Debug)]
enum Entry {
    Name(String),
    /// The program and its arguments, exactly.
    Command(Vec<String>),
    /// A URL, `*` matching any run of characters.
    Url(String),
    /// One doctor cannot read: it blocks every server when it denies, and allows none
    /// when it allows.
    Unreadable,
}

impl Entry {
    fn of(value: &Value) -> Entry {
        let strings = |value: &Value| -> Option<Vec<String>> {
            value
                .as_array()?
                .iter()
                .map(|part| part.as_str().map(String::from))
                .collect()
        };
        let Some(members) = value.as_object().filter(|members| members.len() == 1) else {
            return Entry::Unreadable;
        };
        match members.iter().next() {
            Some((key, Value::String(name))) if key == "serverName" => Entry::Name(name.clone()),
            Some((key, Value::String(url))) if key == "serverUrl" => Entry::Url(url.clone()),
            Some((key, command)) if key == "serverCommand" => {
                strings(command).map_or(Entry::Unreadable, Entry::Command)
            }
            _ => Entry::Unreadable,
        }
    }

    fn matches(&self, server: &Launch) -> bool {
        match self {
            Entry::Name(name) => *name == server.name,
            Entry::Command(command) => server.command.as_ref() == Some(command),
            Entry::Url(pattern) => server.url.as_deref().is_some_and(|url| glob(pattern, url)),
            Entry::Unreadable => false,
        }
    }
}

/// Whether `text` is `pattern`, each `*` in it any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    let (first, rest) = parts.split_first().expect("split yields one part at least");
    let Some(mut left) = text.strip_prefix(first) else {
        return false;
    };
    let Some((last, middle)) = rest.split_last() else {
        return left.is_empty();
    };
    for part in middle {
        match left.find(part) {
            Some(at) => left = &left[at + part.len()..],
            None => return false,
        }
    }
    left.ends_with(last)
}

/// What a client's lists match a server by: its name, and the program and arguments or
/// the URL its entry (as the user wrote it, before wrap) runs.
pub struct Launch {
    /// Its name in the config.
    pub name: String,
    /// The program and its arguments, for a server it starts.
    pub command: Option<Vec<String>>,
    /// The URL, for a remote server.
    pub url: Option<String>,
}

impl Launch {
    /// The server `name` of the entry `entry`.
    pub fn of(name: &str, entry: &Value) -> Launch {
        let program = entry["command"].as_str().map(String::from);
        let args = entry["args"].as_array().into_iter().flatten();
        let command = program.map(|program| {
            std::iter::once(program)
                .chain(args.filter_map(|arg| arg.as_str().map(String::from)))
                .collect()
        });
        Launch {
            name: name.to_string(),
            command,
            url: ["url", "serverUrl", "httpUrl"]
                .iter()
                .find_map(|key| entry[*key].as_str().map(String::from)),
        }
    }
}

/// A client's lists of which of the user's servers may start.
#[derive(Debug, Default)]
pub struct Lists {
    denied: Vec<(Entry, String)>,
    /// `None`: no list of allowed servers, so every server not denied is.
    allowed: Option<Vec<Entry>>,
    /// A file that makes the client load no server of the user's at all, when there is.
    exclusive: Option<String>,
}

impl Lists {
    /// The lists `client` documents, from the files it reads them from; one that cannot
    /// be read is an error: a block list half read could start what it blocks.
    pub fn of(client: Option<&str>) -> anyhow::Result<Lists> {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        match client {
            Some("claude-code") => {
                let managed = Path::new(MANAGED);
                let mut lists = Lists::default();
                let settings = read(&managed.join("managed-settings.json"))?;
                let only_managed = settings["allowManagedMcpServersOnly"] == true;
                lists.add_claude(&settings, &managed.join("managed-settings.json"));
                if let Some(home) = &home {
                    let user = home.join(".claude/settings.json");
                    let mut settings = read(&user)?;
                    if only_managed && let Some(settings) = settings.as_object_mut() {
                        settings.remove("allowedMcpServers");
                    }
                    lists.add_claude(&settings, &user);
                }
                let fixed = managed.join("managed-mcp.json");
                if fixed.exists() {
                    lists.exclusive = Some(fixed.display().to_string());
                }
                Ok(lists)
            }
            Some("gemini") => {
                let mut lists = Lists::default();
                let files = std::iter::once(PathBuf::from("/etc/gemini-cli/settings.json"))
                    .chain(home.map(|home| home.join(".gemini/settings.json")));
                for file in files {
                    let settings = read(&file)?;
                    lists.add_names(&settings["mcp"], ("allowed", "excluded"), &file);
                }
                Ok(lists)
            }
            _ => Ok(Lists::default()),
        }
    }

    fn add_claude(&mut self, settings: &Value, file: &Path) {
        let entries = |key: &str| {
            settings[key]
                .as_array()
                .map(|list| list.iter().map(Entry::of))
        };
        for entry in entries("deniedMcpServers").into_iter().flatten() {
            self.denied
                .push((entry, format!("deniedMcpServers in {}", file.display())));
        }
        if let Some(allowed) = entries("allowedMcpServers") {
            self.allowed.get_or_insert_default().extend(allowed);
        }
    }

    /// Gemini CLI's lists of server names under `mcp`.
    fn add_names(&mut self, mcp: &Value, (allowed, excluded): (&str, &str), file: &Path) {
        let names = |key: &str| {
            mcp[key].as_array().map(|list| {
                list.iter()
                    .map(|name| {
                        name.as_str()
                            .map_or(Entry::Unreadable, |n| Entry::Name(n.into()))
                    })
                    .collect::<Vec<_>>()
            })
        };
        for entry in names(excluded).into_iter().flatten() {
            self.denied
                .push((entry, format!("mcp.{excluded} in {}", file.display())));
        }
        if let Some(names) = names(allowed) {
            self.allowed.get_or_insert_default().extend(names);
        }
    }

    /// Whether the client would start `server`, by its lists.
    pub fn verdict(&self, server: &Launch) -> Verdict {
        if let Some(file) = &self.exclusive {
            return Verdict::Blocked(format!("the client loads only the servers of {file}"));
        }
        for (entry, file) in &self.denied {
            match entry {
                Entry::Unreadable => {
                    return Verdict::Blocked(format!("an entry doctor cannot read in {file}"));
                }
                entry if entry.matches(server) => {
                    return Verdict::Blocked(format!("blocked by {file}"));
                }
                _ => {}
            }
        }
        let Some(allowed) = &self.allowed else {
            return Verdict::Allowed;
        };
        // A stdio server must match by its command once any entry names commands.
        let by_command = allowed
            .iter()
            .any(|entry| matches!(entry, Entry::Command(_)));
        let allows = |entry: &Entry| match entry {
            Entry::Name(_) if by_command && server.command.is_some() => false,
            entry => entry.matches(server),
        };
        match allowed.iter().any(allows) {
            true => Verdict::Allowed,
            false => Verdict::Blocked("not in the client's list of allowed servers".into()),
        }
    }
}

/// Where Claude Code's managed settings are.
const MANAGED: &str = if cfg!(target_os = "macos") {
    "/Library/Application Support/ClaudeCode"
} else {
    "/etc/claude-code"
};

/// A settings file as JSON: none when it is not there. One that cannot be read is an
/// error.
fn read(file: &Path) -> anyhow::Result<Value> {
    match std::fs::metadata(file) {
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Value::Null),
        _ => {}
    }
    let text = reasons_wrap::files::read_text(file)?;
    serde_json::from_str(&text)
        .map_err(|error| anyhow::anyhow!("cannot read {}: {error}", file.display()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn launch(name: &str, entry: Value) -> Launch {
        Launch::of(name, &entry)
    }

    #[test]
    fn a_config_in_the_folder_or_for_a_project_folder_is_the_project_s() {
        let here = Path::new("/work/clone");
        let project = |folder: &str| Scope::Project {
            folder: folder.into(),
        };
        // Whatever its name: a clone's `.cursor/mcp.json` named with --config too.
        let inside = Path::new("/work/clone/.cursor/mcp.json");
        let named = scope(inside, "/mcpServers/a", Place::Named, here);
        assert_eq!(named, project("/work/clone"));
        let elsewhere = Path::new("/home/me/mcp.json");
        let named = scope(elsewhere, "/mcpServers/a", Place::Named, here);
        assert_eq!(named, Scope::Own);
        let client_reads_it_here = Path::new(".mcp.json");
        assert_eq!(
            scope(client_reads_it_here, "/mcpServers/a", Place::Project, here),
            project("/work/clone")
        );
        // The client's own file, even when doctor runs in the home folder.
        let own = Path::new("/home/me/.claude.json");
        let home = Path::new("/home/me");
        assert_eq!(scope(own, "/mcpServers/a", Place::Client, home), Scope::Own);
        assert_eq!(
            scope(
                own,
                "/projects/~1srv~1a~0b/mcpServers/a",
                Place::Client,
                home
            ),
            project("/srv/a~b")
        );
    }

    #[test]
    fn a_deny_wins_an_allow_list_allows_only_what_it_names_and_what_cannot_be_read_blocks() {
        let mut lists = Lists::default();
        let settings = json!({
            "deniedMcpServers": [{"serverName": "bad"}, {"serverCommand": ["npx", "-y", "evil"]},
                                 {"serverUrl": "https://*.evil.example/*"}],
            "allowedMcpServers": [{"serverName": "good"}, {"serverUrl": "https://ok.example/*"}],
        });
        lists.add_claude(&settings, Path::new("settings.json"));
        let allowed = |lists: &Lists, server: Launch| lists.verdict(&server) == Verdict::Allowed;
        assert!(allowed(&lists, launch("good", json!({"command": "node"}))));
        assert!(!allowed(&lists, launch("bad", json!({"command": "node"}))));
        assert!(!allowed(
            &lists,
            launch("other", json!({"command": "node"}))
        ));
        assert!(allowed(
            &lists,
            launch("r", json!({"url": "https://ok.example/mcp"}))
        ));
        let evil = json!({"url": "https://a.evil.example/mcp"});
        assert!(!allowed(&lists, launch("good", evil)));
        let evil = json!({"command": "npx", "args": ["-y", "evil"]});
        assert!(!allowed(&lists, launch("good", evil)));
        // Exactly: other arguments are another command.
        lists.allowed = None;
        let other = json!({"command": "npx", "args": ["-y", "evil", "--flag"]});
        assert!(allowed(&lists, launch("x", other)));

        let mut unreadable = Lists::default();
        unreadable.add_claude(
            &json!({"deniedMcpServers": [{"serverName": "a", "serverCommand": ["b"]}]}),
            Path::new("managed-settings.json"),
        );
        assert!(matches!(
            unreadable.verdict(&launch("any", json!({"command": "node"}))),
            Verdict::Blocked(why) if why.contains("cannot read")
        ));
    }

    #[test]
    fn once_an_allow_list_names_commands_a_stdio_server_must_match_by_its_command() {
        let mut lists = Lists::default();
        lists.add_claude(
            &json!({"allowedMcpServers": [{"serverName": "named"}, {"serverCommand": ["node", "s.js"]}]}),
            Path::new("settings.json"),
        );
        let verdict = |name: &str, entry: Value| lists.verdict(&launch(name, entry));
        assert_eq!(
            verdict("other", json!({"command": "node", "args": ["s.js"]})),
            Verdict::Allowed
        );
        assert_ne!(
            verdict("named", json!({"command": "node"})),
            Verdict::Allowed
        );
        assert_eq!(
            verdict("named", json!({"url": "https://a.example"})),
            Verdict::Allowed
        );
    }

    #[test]
    fn gemini_s_excluded_and_allowed_name_servers() {
        let mut lists = Lists::default();
        let settings = json!({"mcp": {"allowed": ["a", "b"], "excluded": ["b"]}});
        lists.add_names(
            &settings["mcp"],
            ("allowed", "excluded"),
            Path::new("s.json"),
        );
        let verdict = |name: &str| lists.verdict(&launch(name, json!({"command": "x"})));
        assert_eq!(verdict("a"), Verdict::Allowed);
        assert!(matches!(verdict("b"), Verdict::Blocked(_)));
        assert!(matches!(verdict("c"), Verdict::Blocked(_)));
    }

    #[test]
    fn a_glob_star_is_any_run_of_characters() {
        assert!(glob("https://*.example/*", "https://a.b.example/mcp"));
        assert!(!glob("https://*.example/*", "https://example/mcp"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exactly"));
        assert!(glob("*", ""));
    }
}
