//! Real file tools confined to one directory: the tools at the bottom of the demo stack.
//!
//! Confinement is cap-std's: every path is resolved inside the directory handle, and one
//! that leads out of it (`..`, an absolute path, a symlink pointing outside) is refused
//! by the operating system's own openat-style lookups, not by string checks.
//!
//! Like a strict server, the tools refuse arguments they do not declare: a `reason` that
//! reached them would fail the call, which is what makes the reasons layer necessary.

use crate::provider::{Json, Provider};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use reasons_transform::{ProviderError, ToolCall, ToolResult};
use serde_json::{Map, Value, json};
use std::io::Write;
use std::path::Path;

/// The file where `fs_delete` records why each file was deleted.
pub const DELETIONS_LOG: &str = "DELETIONS.log";

/// `fs_list`, `fs_read`, `fs_write` and `fs_delete` over one directory.
pub struct FsTools {
    dir: Dir,
    declarations: Vec<Value>,
}

impl FsTools {
    /// Replaces the file at `path` with `content` whole or not at all: the content goes
    /// to a temporary file beside it, which is then renamed over it.
    fn write_whole(&self, path: &Path, content: &str) -> std::io::Result<()> {
        let name = path.file_name().ok_or(std::io::ErrorKind::InvalidInput)?;
        let temporary = path.with_file_name(format!(
            ".{}.reasons-{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        self.dir.write(&temporary, content)?;
        self.dir
            .rename(&temporary, &self.dir, path)
            .inspect_err(|_| {
                let _ = self.dir.remove_file(&temporary);
            })
    }

    /// Tools confined to `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<FsTools, RootError> {
        let dir = Dir::open_ambient_dir(root, ambient_authority()).map_err(|error| RootError {
            root: root.to_path_buf(),
            error,
        })?;
        Ok(FsTools {
            dir,
            declarations: declarations(),
        })
    }

    fn run(&self, name: &str, arguments: &Map<String, Value>) -> Result<Value, String> {
        let declared = self
            .declarations
            .iter()
            .map(|declaration| &declaration["function"])
            .find(|function| function["name"] == name)
            .and_then(|function| function["parameters"]["properties"].as_object())
            .ok_or_else(|| format!("there is no tool named {name:?}"))?;
        if let Some(unknown) = arguments.keys().find(|key| !declared.contains_key(*key)) {
            return Err(format!(
                "{name} does not take an argument named {unknown:?}"
            ));
        }
        let text = |key: &str| -> Result<&str, String> {
            arguments
                .get(key)
                .and_then(Value::as_str)
                .ok_or_else(|| format!("{name} needs {key:?} as a string"))
        };
        let path = |key: &str| -> Result<&Path, String> {
            let path = Path::new(text(key)?);
            if path.is_absolute() {
                return Err(format!(
                    "{name}: {} is absolute; paths are relative to the tools' directory",
                    path.display()
                ));
            }
            Ok(path)
        };
        let failed = |path: &Path| {
            let path = path.display().to_string();
            move |error: std::io::Error| format!("{name}: {path}: {error}")
        };
        match name {
            "fs_list" => {
                let at = if arguments.contains_key("path") {
                    path("path")?
                } else {
                    Path::new(".")
                };
                let mut names = Vec::new();
                for entry in self.dir.read_dir(at).map_err(failed(at))? {
                    let entry = entry.map_err(failed(at))?;
                    let mut file_name = entry.file_name().to_string_lossy().into_owned();
                    if entry.file_type().map_err(failed(at))?.is_dir() {
                        file_name.push('/');
                    }
                    names.push(file_name);
                }
                names.sort();
                Ok(json!(names))
            }
            "fs_read" => {
                let at = path("path")?;
                Ok(json!(self.dir.read_to_string(at).map_err(failed(at))?))
            }
            "fs_write" => {
                let at = path("path")?;
                let content = text("content")?;
                self.write_whole(at, content).map_err(failed(at))?;
                Ok(json!(format!(
                    "wrote {} bytes to {}",
                    content.len(),
                    at.display()
                )))
            }
            "fs_delete" => {
                let at = path("path")?;
                let reason = text("reason")?;
                self.dir.remove_file(at).map_err(failed(at))?;
                let mut log = self
                    .dir
                    .open_with(DELETIONS_LOG, OpenOptions::new().append(true).create(true))
                    .map_err(failed(Path::new(DELETIONS_LOG)))?;
                writeln!(log, "{}: {reason}", at.display())
                    .map_err(failed(Path::new(DELETIONS_LOG)))?;
                Ok(json!(format!(
                    "deleted {}; the reason is in {DELETIONS_LOG}",
                    at.display()
                )))
            }
            // A tool declared without an arm of its own does nothing: no default arm
            // may stand in for one that writes or deletes.
            other => Err(format!("{other} is declared but has no implementation")),
        }
    }
}

/// The declarations, in the OpenAI chat completions shape.
fn declarations() -> Vec<Value> {
    let path =
        json!({"type": "string", "description": "A path relative to the working directory."});
    let tool = |name: &str, description: &str, properties: Value, required: &[&str]| {
        json!({
            "type": "function",
            "function": {
                "name": name,
                "description": description,
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": required,
                    "additionalProperties": false
                }
            }
        })
    };
    vec![
        tool(
            "fs_list",
            "List a directory's entries; directories end in '/'.",
            json!({"path": path}),
            &[],
        ),
        tool(
            "fs_read",
            "Read a UTF-8 text file.",
            json!({"path": path}),
            &["path"],
        ),
        tool(
            "fs_write",
            "Create or replace a text file.",
            json!({"path": path, "content": {"type": "string", "description": "The file's new content."}}),
            &["path", "content"],
        ),
        tool(
            "fs_delete",
            "Delete a file, recording why in the deletions log.",
            json!({"path": path, "reason": {"type": "string", "description": "Why the file is deleted; kept in the deletions log."}}),
            &["path", "reason"],
        ),
    ]
}

impl Provider for FsTools {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        Ok(self.declarations.iter().map(Value::to_string).collect())
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        Ok(calls
            .into_iter()
            .map(|call| {
                let text = call.arguments.text();
                let arguments = if text.trim().is_empty() {
                    Ok(Map::new())
                } else {
                    match serde_json::from_str::<Value>(text) {
                        Ok(Value::Object(map)) => Ok(map),
                        _ => Err(format!(
                            "{}: the arguments are not a JSON object",
                            call.name
                        )),
                    }
                };
                match arguments.and_then(|arguments| self.run(&call.name, &arguments)) {
                    Ok(value) => ToolResult::ok(&call.id, &value.to_string()),
                    Err(message) => ToolResult::error(&call.id, &message),
                }
            })
            .collect())
    }
}

/// The tools' directory could not be opened.
#[derive(Debug)]
pub struct RootError {
    /// The directory.
    pub root: std::path::PathBuf,
    /// Why.
    pub error: std::io::Error,
}

impl std::fmt::Display for RootError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let root = self.root.display();
        write!(f, "cannot open the tools' directory {root}: {}", self.error)
    }
}

impl std::error::Error for RootError {}
