//! `reasons transform`: a layer run over your own catalogue and calls, printing what the
//! model would see and what the provider below would receive.

use crate::native::NativeReasons;
use crate::plugin::{ConfigureError, Plugin};
use crate::provider::{FixedTools, Json, Provider};
use crate::recorder::Recorder;
use reasons_transform::{Arguments, Options, ProviderError, ToolCall};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::PoisonError;

/// What the dry run found.
#[derive(Debug, Serialize)]
pub struct Report {
    /// The catalogue as the model would see it.
    pub tools: Vec<Box<RawValue>>,
    /// The names that listing augmented: the names whose calls are stripped.
    pub augmented_tools: Vec<String>,
    /// The calls as the provider below received them.
    pub calls: Vec<ReceivedCall>,
    /// What the caller got back for each call: the provider's answer, or the layer's own
    /// (a call refused in required mode).
    pub results: Vec<CallResult>,
    /// The tools that ask the model why themselves, each with its own fields that do
    /// ([`crate::asks_why`]): a hint, never what decides what is stripped.
    #[serde(skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub asks_why: std::collections::BTreeMap<String, Vec<String>>,
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

/// Why a dry run could not be made: its input, or the layer.
#[derive(Debug)]
#[non_exhaustive]
pub enum DryRunError {
    /// A file could not be read.
    Unreadable {
        /// The file.
        path: PathBuf,
        /// Why.
        error: std::io::Error,
    },
    /// A file or text does not hold what it must, in words naming it and the fault.
    Malformed(String),
    /// The component layer could not be configured.
    Unconfigured(ConfigureError),
    /// The native layer refused the options, in the transform's words.
    Refused(String),
    /// The layer's listing failed.
    Listing(ProviderError),
    /// The layer could not execute the calls at all.
    Execution(ProviderError),
}

impl fmt::Display for DryRunError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DryRunError::Unreadable { path, error } => {
                write!(f, "cannot read {}: {error}", path.display())
            }
            DryRunError::Malformed(words) | DryRunError::Refused(words) => f.write_str(words),
            DryRunError::Unconfigured(error) => error.fmt(f),
            DryRunError::Listing(error) => write!(f, "listing the catalogue failed: {error}"),
            DryRunError::Execution(error) => error.fmt(f),
        }
    }
}

impl std::error::Error for DryRunError {}

/// `text` read as `T`, or the error saying what `what` must be.
fn parse<'a, T: Deserialize<'a>>(text: &'a str, what: String) -> Result<T, DryRunError> {
    serde_json::from_str(text).map_err(|error| DryRunError::Malformed(format!("{what}: {error}")))
}

/// Reads `TOOLS.json`: a JSON array of declarations, each kept as its exact text.
pub fn read_tools(path: &Path) -> Result<Vec<Json>, DryRunError> {
    let text = read(path)?;
    let what = format!(
        "{} must be a JSON array of tool declarations",
        path.display()
    );
    let tools: Vec<Box<RawValue>> = parse(&text, what)?;
    Ok(tools
        .into_iter()
        .map(|tool| tool.get().to_string())
        .collect())
}

/// Reads `CALLS.json`: a JSON array of `{"id","name","arguments"}`, where `arguments`
/// is a JSON object (object form) or a JSON string (text form).
pub fn read_calls(path: &Path) -> Result<Vec<ToolCall>, DryRunError> {
    parse_calls(&read(path)?, &path.display().to_string())
}

/// Parses calls in `CALLS.json`'s format; `origin` names the text in errors.
pub fn parse_calls(text: &str, origin: &str) -> Result<Vec<ToolCall>, DryRunError> {
    let what =
        format!("{origin} must be a JSON array of {{\"id\", \"name\", \"arguments\"}} objects");
    let calls: Vec<CallFile> = parse(text, what)?;
    calls
        .into_iter()
        .enumerate()
        .map(|(at, call)| {
            let raw = call.arguments.get();
            let arguments = match raw.as_bytes().first() {
                Some(b'{') => Arguments::Object(raw.to_string()),
                Some(b'"') => Arguments::Text(parse(raw, format!("{origin}: call {at}")).map_err(
                    |_| DryRunError::Malformed(format!(
                        "{origin}: call {at} ({:?}): `arguments` is not a readable JSON string",
                        call.id
                    )),
                )?),
                _ => {
                    return Err(DryRunError::Malformed(format!(
                        "{origin}: call {at} ({:?}): `arguments` must be a JSON object or a JSON string, not {raw}",
                        call.id
                    )));
                }
            };
            Ok(ToolCall {
                id: call.id,
                name: call.name,
                arguments,
            })
        })
        .collect()
}

fn read(path: &Path) -> Result<String, DryRunError> {
    std::fs::read_to_string(path).map_err(|error| DryRunError::Unreadable {
        path: path.to_path_buf(),
        error,
    })
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
) -> Result<Report, DryRunError> {
    let asks_why = crate::asks_why::by_tool(&tools, &options.name);
    let (recorder, received) = Recorder::new(Box::new(FixedTools::new(
        tools,
        "\"dry run: not executed\"",
    )));
    let below = Box::new(recorder);
    let (listed, augmented_tools, results) = match layer {
        Layer::Component(plugin) => {
            let mut layer = plugin.layer(below);
            if plugin.is_reasons() {
                layer
                    .configure(options)
                    .map_err(DryRunError::Unconfigured)?;
            }
            let listed = layer.tools_for_llm().map_err(DryRunError::Listing)?;
            // What the host strips: the plugin's claim as far as the host's own reading
            // confirms it (empty for a plugin that is not a reasons layer).
            let augmented_tools = layer.augmented_tools().names();
            (
                listed,
                augmented_tools,
                layer
                    .execute_tool_calls(calls)
                    .map_err(DryRunError::Execution)?,
            )
        }
        Layer::Native => {
            let mut layer = NativeReasons::new(below, options).map_err(DryRunError::Refused)?;
            let listed = layer.tools_for_llm().map_err(DryRunError::Listing)?;
            (
                listed,
                layer.augmented_tools(),
                layer
                    .execute_tool_calls(calls)
                    .map_err(DryRunError::Execution)?,
            )
        }
    };
    // The recorder's lock is only ever held to push one call: poisoned or not, what it
    // holds is whole.
    let received = received.lock().unwrap_or_else(PoisonError::into_inner);
    Ok(Report {
        tools: listed.into_iter().map(raw_or_string).collect(),
        augmented_tools,
        calls: received
            .iter()
            .map(|call| ReceivedCall {
                id: call.id.clone(),
                name: call.name.clone(),
                arguments: match &call.arguments {
                    Arguments::Object(text) => raw_or_string(text.clone()),
                    Arguments::Text(text) => string(text),
                },
            })
            .collect(),
        results: results
            .into_iter()
            .map(|result| CallResult {
                call_id: result.call_id,
                content: raw_or_string(result.content),
                is_error: result.is_error,
            })
            .collect(),
        asks_why,
    })
}

/// `text` as it is when it is JSON, else as a JSON string: a plugin may answer anything.
fn raw_or_string(text: String) -> Box<RawValue> {
    RawValue::from_string(text.clone()).unwrap_or_else(|_| string(&text))
}

/// `text` as a JSON string.
fn string(text: &str) -> Box<RawValue> {
    serde_json::value::to_raw_value(text).expect("a string is always JSON")
}
