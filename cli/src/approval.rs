//! Whether the client would start a project's server. A project's config comes with the
//! folder it is in (a cloned repository's `.mcp.json`), so its commands are anyone's:
//! a client starts them only once its user approved them, and so does `doctor`.

use serde_json::Value;
use std::path::{Path, PathBuf};

/// What the user said of one project server.
#[derive(Debug, PartialEq)]
pub enum Approval {
    Approved,
    Refused,
    /// Not asked yet, or asked of a client whose answer `doctor` cannot read.
    Pending,
}

/// Who says which of a config's servers may start.
pub enum Gate {
    /// A config of the user's own (user scope, or a project's local scope kept in the
    /// user's files): every server may.
    Own,
    /// Claude Code's project scope (`.mcp.json`): its approvals, kept in the user's,
    /// the project's and the project's local settings and in `~/.claude.json`.
    ClaudeCode(Approvals),
    /// Another client's project scope: that client's trust is its own, so only the
    /// servers the user names may.
    Unknown,
}

impl Gate {
    /// The gate of `file`; `project` tells whether it is a project's config (one the
    /// client reads from the folder it runs in).
    pub fn of(file: &Path, project: bool) -> anyhow::Result<Gate> {
        if file.file_name().is_some_and(|name| name == ".mcp.json") {
            let folder = std::path::absolute(file)?
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default();
            return Ok(Gate::ClaudeCode(Approvals::of_project(&folder)?));
        }
        Ok(if project { Gate::Unknown } else { Gate::Own })
    }

    pub fn approval(&self, server: &str) -> Approval {
        match self {
            Gate::Own => Approval::Approved,
            Gate::ClaudeCode(approvals) => approvals.of(server),
            Gate::Unknown => Approval::Pending,
        }
    }
}

/// Claude Code's answers for one project's `.mcp.json`, merged from every place it keeps
/// them: a refusal anywhere refuses; an approval, or approving them all, approves.
#[derive(Default)]
pub struct Approvals {
    all: bool,
    enabled: Vec<String>,
    disabled: Vec<String>,
}

impl Approvals {
    fn of_project(folder: &Path) -> anyhow::Result<Approvals> {
        let mut approvals = Approvals::default();
        let home = std::env::var_os("HOME").map(PathBuf::from);
        if let Some(home) = &home {
            approvals.add(&read(&home.join(".claude/settings.json"))?);
            let state = read(&home.join(".claude.json"))?;
            // Its keys are the project folders, as Claude Code spells them.
            let key = std::fs::canonicalize(folder).unwrap_or_else(|_| folder.to_path_buf());
            if let Some(project) = state["projects"].get(key.to_string_lossy().as_ref()) {
                approvals.add(project);
            }
        }
        for settings in ["settings.json", "settings.local.json"] {
            approvals.add(&read(&folder.join(".claude").join(settings))?);
        }
        Ok(approvals)
    }

    fn add(&mut self, settings: &Value) {
        let names = |key: &str| {
            settings[key]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|name| name.as_str().map(String::from))
                .collect::<Vec<_>>()
        };
        self.all |= settings["enableAllProjectMcpServers"] == true;
        self.enabled.extend(names("enabledMcpjsonServers"));
        self.disabled.extend(names("disabledMcpjsonServers"));
    }

    fn of(&self, server: &str) -> Approval {
        let named = |list: &[String]| list.iter().any(|name| name == server);
        if named(&self.disabled) {
            Approval::Refused
        } else if self.all || named(&self.enabled) {
            Approval::Approved
        } else {
            Approval::Pending
        }
    }
}

/// A settings file as JSON: none when it is not there. One that cannot be read is an
/// error: an approval state half read could approve what the user refused.
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

    #[test]
    fn a_refusal_anywhere_refuses_and_an_approval_approves() {
        let mut approvals = Approvals::default();
        approvals.add(&json!({"enableAllProjectMcpServers": true}));
        approvals.add(&json!({"enabledMcpjsonServers": ["b"], "disabledMcpjsonServers": ["a"]}));
        assert_eq!(approvals.of("a"), Approval::Refused);
        assert_eq!(approvals.of("b"), Approval::Approved);
        assert_eq!(approvals.of("c"), Approval::Approved);
        let mut asked = Approvals::default();
        asked.add(&json!({"enabledMcpjsonServers": ["b"]}));
        assert_eq!(asked.of("c"), Approval::Pending);
    }
}
