//! `reasons transform`: a layer run over your own catalogue and calls, printing what the
//! model would see and what the provider below would receive.

use crate::native::NativeReasons;
use crate::plugin::Plugin;
use crate::provider::{Catalogue, Json, Provider};
use crate::recorder::Recorder;
use anyhow::Context;
use reasons_transform::{Arguments, Options, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::path::Path;

/// What the dry run found.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The catalogue as the model would see it.
    pub tools: Vec<Box<RawValue>>,
    /// The names that listing augmented: the names whose calls are stripped.
    pub strip_set: Vec<String>,
    /// The calls as the provider below received them.
    pub calls: Vec<ReceivedCall>,
    /// What the caller got back for each call: the provider's answer, or the layer's own
    /// (a call refused in required mode).
    pub results: Vec<CallResult>,
}

/// A result as the caller received it.
#[derive(Debug, Serialize)]
pub struct CallResult {
    /// The call it answers.
    pub call_id: String,
    /// Its content, as JSON.
    pub content: Box<RawValue>,
    /// Whether it reports an error.
    pub is_error: bool,
}

/// A call as the provider below received it.
#[derive(Debug, Serialize)]
pub struct ReceivedCall {
    /// The call's id.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// An object for object-form arguments; a JSON string holding the text, exactly as
    /// forwarded, for text-form arguments.
    pub arguments: Box<RawValue>,
}

/// A call as `CALLS.json` spells it.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CallFile {
    id: String,
    name: String,
    arguments: Box<RawValue>,
}

/// Reads `TOOLS.json`: a JSON array of declarations, each kept as its exact text.
pub fn read_tools(path: &Path) -> anyhow::Result<Vec<Json>> {
    let text = read(path)?;
    let tools: Vec<Box<RawValue>> = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} must be a JSON array of tool declarations",
            path.display()
        )
    })?;
    Ok(tools
        .into_iter()
        .map(|tool| tool.get().to_string())
        .collect())
}

/// Reads `CALLS.json`: a JSON array of `{"id","name","arguments"}`, where `arguments`
/// is a JSON object (object form) or a JSON string (text form).
pub fn read_calls(path: &Path) -> anyhow::Result<Vec<ToolCall>> {
    parse_calls(&read(path)?, &path.display().to_string())
}

/// Parses calls in `CALLS.json`'s format; `origin` names the text in errors.
pub fn parse_calls(text: &str, origin: &str) -> anyhow::Result<Vec<ToolCall>> {
    let calls: Vec<CallFile> = serde_json::from_str(text).with_context(|| {
        format!("{origin} must be a JSON array of {{\"id\", \"name\", \"arguments\"}} objects")
    })?;
    calls
        .into_iter()
        .enumerate()
        .map(|(at, call)| {
            let raw = call.arguments.get();
            let arguments = match raw.as_bytes().first() {
                Some(b'{') => Arguments::Object(raw.to_string()),
                Some(b'"') => Arguments::Text(serde_json::from_str(raw)?),
                _ => anyhow::bail!(
                    "{origin}: call {at} ({:?}): `arguments` must be a JSON object or a JSON string, not {raw}",
                    call.id
                ),
            };
            Ok(ToolCall {
                id: call.id,
                name: call.name,
                arguments,
            })
        })
        .collect()
}

fn read(path: &Path) -> anyhow::Result<String> {
    std::fs::read_to_string(path).with_context(|| format!("cannot read {}", path.display()))
}

/// Which build of a layer a dry run goes through.
pub enum Layer<'a> {
    /// A component: the built-in reasons plugin or any other middleware.
    Component(&'a Plugin),
    /// The reasons transform compiled into this host.
    Native,
}

/// Lists `tools` through `layer` configured with `options`, executes `calls` through it,
/// and reports what came out on both sides.
pub fn run(
    layer: Layer<'_>,
    options: Options,
    tools: Vec<Json>,
    calls: Vec<ToolCall>,
) -> anyhow::Result<Report> {
    let (recorder, received) =
        Recorder::new(Box::new(Catalogue::new(tools, "\"dry run: not executed\"")));
    let below = Box::new(recorder);
    let (listed, strip_set, results) = match layer {
        Layer::Component(plugin) => {
            let mut layer = plugin.layer(below);
            if plugin.is_reasons() {
                layer.configure(options)?;
            }
            let listed = layer
                .tools_for_llm()
                .context("listing the catalogue failed")?;
            // What the host strips: the plugin's claim as far as the host's own reading
            // confirms it (empty for a plugin that is not a reasons layer).
            let strip_set = layer.strip_set().names();
            (listed, strip_set, layer.execute_tool_calls(calls)?)
        }
        Layer::Native => {
            let mut layer = NativeReasons::new(below, options).map_err(anyhow::Error::msg)?;
            let listed = layer
                .tools_for_llm()
                .context("listing the catalogue failed")?;
            (listed, layer.strip_set(), layer.execute_tool_calls(calls)?)
        }
    };
    let received = received
        .lock()
        .map_err(|_| anyhow::anyhow!("the recorder was poisoned"))?;
    Ok(Report {
        tools: listed
            .into_iter()
            .map(raw_or_string)
            .collect::<anyhow::Result<_>>()?,
        strip_set,
        calls: received
            .iter()
            .map(|call| {
                let arguments = match &call.arguments {
                    Arguments::Object(text) => raw_or_string(text.clone())?,
                    Arguments::Text(text) => RawValue::from_string(serde_json::to_string(text)?)?,
                };
                Ok(ReceivedCall {
                    id: call.id.clone(),
                    name: call.name.clone(),
                    arguments,
                })
            })
            .collect::<anyhow::Result<_>>()?,
        results: results
            .into_iter()
            .map(|result| {
                Ok(CallResult {
                    call_id: result.call_id,
                    content: raw_or_string(result.content)?,
                    is_error: result.is_error,
                })
            })
            .collect::<anyhow::Result<_>>()?,
    })
}

/// `text` as it is when it is JSON, else as a JSON string: a plugin may answer anything.
fn raw_or_string(text: String) -> anyhow::Result<Box<RawValue>> {
    let text = match serde_json::from_str::<&RawValue>(&text) {
        Ok(_) => text,
        Err(_) => serde_json::to_string(&text)?,
    };
    Ok(RawValue::from_string(text)?)
}
