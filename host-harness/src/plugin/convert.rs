//! The WIT types and the transform's own, converted at the boundary field by field.

use super::bindings::agent::tools::types as wit;
use super::bindings::exports::agent::tools::reasons as wit_reasons;
use reasons_transform::{Options, Position, ProviderError, ToolCall, ToolResult};

impl From<ToolCall> for wit::ToolCall {
    fn from(call: ToolCall) -> Self {
        wit::ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                reasons_transform::Arguments::Object(text) => wit::Arguments::Object(text),
                reasons_transform::Arguments::Text(text) => wit::Arguments::Text(text),
            },
        }
    }
}

impl From<wit::ToolCall> for ToolCall {
    fn from(call: wit::ToolCall) -> Self {
        ToolCall {
            id: call.id,
            name: call.name,
            arguments: match call.arguments {
                wit::Arguments::Object(text) => reasons_transform::Arguments::Object(text),
                wit::Arguments::Text(text) => reasons_transform::Arguments::Text(text),
            },
        }
    }
}

impl From<wit::ToolResult> for ToolResult {
    fn from(result: wit::ToolResult) -> Self {
        ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<ToolResult> for wit::ToolResult {
    fn from(result: ToolResult) -> Self {
        wit::ToolResult {
            call_id: result.call_id,
            content: result.content,
            is_error: result.is_error,
        }
    }
}

impl From<wit::ProviderError> for ProviderError {
    fn from(error: wit::ProviderError) -> Self {
        match error {
            wit::ProviderError::Failed(message) => ProviderError::Failed(message),
            wit::ProviderError::Other(message) => ProviderError::Other(message),
        }
    }
}

impl From<ProviderError> for wit::ProviderError {
    fn from(error: ProviderError) -> Self {
        match error {
            ProviderError::Failed(message) => wit::ProviderError::Failed(message),
            ProviderError::Other(message) => wit::ProviderError::Other(message),
        }
    }
}

impl From<&Options> for wit_reasons::Options {
    fn from(options: &Options) -> Self {
        wit_reasons::Options {
            name: options.name.clone(),
            description: options.description.clone(),
            required: options.required,
            position: match options.position {
                Position::Last => wit_reasons::Position::Last,
                Position::First => wit_reasons::Position::First,
            },
            leave_alone: options.leave_alone.clone(),
        }
    }
}
