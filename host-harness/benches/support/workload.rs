//! Realistic work for the benchmarks: catalogues of the size real MCP servers publish,
//! in every wire shape, and batches mixing every kind of call the layer sees.

use reasons_host::Json;
use reasons_transform::{Arguments, ToolCall};

/// The `i`th declaration of a catalogue: shapes rotate (MCP, OpenAI chat, Responses,
/// Anthropic), with schemas like a file server's (five described properties, an enum, an
/// array, `required`), about 900 bytes each.
pub fn declaration(i: usize) -> Json {
    const SCHEMA: &str = r#"{"type":"object","properties":{"path":{"type":"string","description":"The file or directory to work on, relative to the allowed root. Absolute paths are refused."},"mode":{"type":"string","enum":["read","write","append","list"],"description":"What to do with it."},"depth":{"type":"integer","minimum":0,"maximum":10,"default":1,"description":"How many directory levels to descend when listing."},"exclude":{"type":"array","items":{"type":"string"},"description":"Glob patterns of names to leave out of the result."},"encoding":{"type":"string","default":"utf-8","description":"How to decode the file's bytes."}},"required":["path","mode"],"additionalProperties":false}"#;
    let name = format!("tool_{i}");
    let description = format!(
        "Tool {i}: reads, writes or lists files under the allowed directories. Use it when the user asks about the contents of the project."
    );
    match i % 4 {
        0 => format!(
            r#"{{"name":"{name}","title":"Tool {i}","description":"{description}","inputSchema":{SCHEMA},"annotations":{{"readOnlyHint":false}}}}"#
        ),
        1 => format!(
            r#"{{"type":"function","function":{{"name":"{name}","description":"{description}","parameters":{SCHEMA}}}}}"#
        ),
        2 => format!(
            r#"{{"type":"function","name":"{name}","description":"{description}","parameters":{SCHEMA},"strict":false}}"#
        ),
        _ => {
            format!(r#"{{"name":"{name}","description":"{description}","input_schema":{SCHEMA}}}"#)
        }
    }
}

/// A catalogue of `size` declarations.
pub fn catalogue(size: usize) -> Vec<Json> {
    (0..size).map(declaration).collect()
}

/// The kinds of call a batch mixes, in rotation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Text arguments with a reason, to a tool in the augmented tools.
    StrippedText,
    /// Object arguments with a reason, to a tool in the augmented tools.
    StrippedObject,
    /// A tool the layer does not know: never parsed.
    UnknownTool,
    /// A tool in the set, without a reason: scanned, not parsed.
    NoReason,
    /// Arguments that are not an object.
    NotAnObject,
}

const KINDS: [Kind; 5] = [
    Kind::StrippedText,
    Kind::StrippedObject,
    Kind::UnknownTool,
    Kind::NoReason,
    Kind::NotAnObject,
];

/// Arguments like a model writes for a file tool: about 300 bytes.
fn arguments(i: usize, reason: bool) -> String {
    let reason = match reason {
        true => r#","reason":"The user asked for the project's layout before changing the build.""#,
        false => "",
    };
    format!(
        r#"{{"path":"src/module_{i}/lib.rs","mode":"read","depth":2,"exclude":["target","*.lock",".git"],"encoding":"utf-8","offset":{i},"limit":4096,"note":"call number {i} of the session"{reason}}}"#
    )
}

/// The `i`th call of a mixed batch, and its kind.
pub fn call(i: usize) -> (ToolCall, Kind) {
    let kind = KINDS[i % KINDS.len()];
    let (name, arguments) = match kind {
        Kind::StrippedText => (format!("tool_{i}"), Arguments::Text(arguments(i, true))),
        Kind::StrippedObject => (format!("tool_{i}"), Arguments::Object(arguments(i, true))),
        Kind::UnknownTool => ("elsewhere".into(), Arguments::Text(arguments(i, true))),
        Kind::NoReason => (format!("tool_{i}"), Arguments::Text(arguments(i, false))),
        Kind::NotAnObject => (format!("tool_{i}"), Arguments::Text(format!("[{i}, 2, 3]"))),
    };
    let call = ToolCall {
        id: format!("call_{i}"),
        name,
        arguments,
    };
    (call, kind)
}

/// A batch of `size` calls, every kind in rotation, to tools of a catalogue of `size`.
pub fn batch(size: usize) -> Vec<(ToolCall, Kind)> {
    (0..size).map(call).collect()
}
