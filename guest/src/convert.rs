//! The WIT types and the transform's own, converted at the boundary field by field: one
//! conversion per type and direction. `host-harness/src/plugin/convert.rs` is the same
//! table on the host's side; a field added to `wit/tools.wit` is added to both.

use crate::agent::tools::types::{Arguments, ProviderError, ToolCall, ToolResult};
use crate::exports::agent::tools::reasons::{self as surface, Position as WitPosition};
use reasons_transform::{self as transform, Options, Position};

impl From<ToolCall> for transform::ToolCall {
    fn from(call: ToolCall) -> Self {
        transform::ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                Arguments::Object(text) => transform::Arguments::Object(text),
                Arguments::Text(text) => transform::Arguments::Text(text),
            },
        }
    }
}

impl From<transform::ToolCall> for ToolCall {
    fn from(call: transform::ToolCall) -> Self {
        ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                transform::Arguments::Object(text) => Arguments::Object(text),
                transform::Arguments::Text(text) => Arguments::Text(text),
            },
        }
    }
}

impl From<ToolResult> for transform::ToolResult {
    fn from(result: ToolResult) -> Self {
        transform::ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<transform::ToolResult> for ToolResult {
    fn from(result: transform::ToolResult) -> Self {
        ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<ProviderError> for transform::ProviderError {
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::Failed(message) => transform::ProviderError::Failed(message),
            ProviderError::Other(message) => transform::ProviderError::Other(message),
        }
    }
}

impl From<surface::Options> for Options {
    fn from(options: surface::Options) -> Self {
        Options {
            name: options.name,
            description: options.description,
            required: options.required,
            position: match options.position {
                WitPosition::Last => Position::Last,
                WitPosition::First => Position::First,
            },
            leave_alone: options.leave_alone,
        }
    }
}

impl From<Options> for surface::Options {
    fn from(options: Options) -> Self {
        surface::Options {
            name: options.name,
            description: options.description,
            required: options.required,
            position: match options.position {
                Position::Last => WitPosition::Last,
                Position::First => WitPosition::First,
            },
            leave_alone: options.leave_alone,
        }
    }
}
