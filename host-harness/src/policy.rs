//! The permission layer at the top of the stack: each call is allowed, denied, or put to
//! the human, by rules on the tool name and the arguments, never on the reason (R12).
//! It sits above the reasons layer, so the call it shows the human still carries the
//! model's reason, which the prompt puts beside the arguments as inert text.

use crate::plugin::AugmentedTools;
use crate::provider::{self, Json, Provider};
use globset::{Glob, GlobMatcher};
use reasons_inert::{self as inert, REASON_CAP};
use reasons_transform::{ProviderError, ToolCall, ToolResult};
use serde_json::{Map, Value};

/// What the policy does with a call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Forward it.
    Allow,
    /// Answer it with an error result; it is never forwarded.
    Deny,
    /// Put it to the human through `on_ask`.
    Ask,
}

/// One rule: a tool-name pattern, optionally an argument pattern, and a decision.
#[derive(Clone, Debug)]
pub struct Rule {
    tool: GlobMatcher,
    argument: Option<(String, GlobMatcher)>,
    decision: Decision,
}

impl Rule {
    /// A rule for the tools whose names match the glob `tool` (`fs_*`, `*`).
    pub fn new(tool: &str, decision: Decision) -> Result<Rule, RuleError> {
        Ok(Rule {
            tool: glob(tool)?,
            argument: None,
            decision,
        })
    }

    /// Narrows the rule to calls whose argument at the JSON pointer `pointer` (`/path`)
    /// is a string matching the glob `pattern` (`*.env`, `secrets/**`).
    pub fn when(mut self, pointer: &str, pattern: &str) -> Result<Rule, RuleError> {
        if !pointer.starts_with('/') {
            return Err(RuleError::NotAPointer(pointer.to_string()));
        }
        self.argument = Some((pointer.to_string(), glob(pattern)?));
        Ok(self)
    }

    /// Whether the rule covers a call to `tool` with these arguments.
    fn matches(&self, tool: &str, arguments: &Value) -> bool {
        self.tool.is_match(tool)
            && self.argument.as_ref().is_none_or(|(pointer, pattern)| {
                arguments
                    .pointer(pointer)
                    .and_then(Value::as_str)
                    .is_some_and(|value| pattern.is_match(value))
            })
    }
}

fn glob(pattern: &str) -> Result<GlobMatcher, RuleError> {
    Glob::new(pattern)
        .map(|glob| glob.compile_matcher())
        .map_err(|error| RuleError::NotAGlob(pattern.to_string(), error.to_string()))
}

/// Why a rule could not be made.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum RuleError {
    /// This pattern is not a valid glob, for the glob parser's reason.
    NotAGlob(String, String),
    /// This argument pointer is not a JSON pointer.
    NotAPointer(String),
}

impl std::fmt::Display for RuleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuleError::NotAGlob(pattern, why) => {
                write!(f, "{pattern:?} is not a valid glob: {why}")
            }
            RuleError::NotAPointer(pointer) => write!(
                f,
                "argument pointer {pointer:?} must be a JSON pointer such as \"/path\""
            ),
        }
    }
}

impl std::error::Error for RuleError {}

/// What the human is asked about one call.
#[derive(Debug)]
pub struct AskRequest<'a> {
    /// The call as the model made it, reason included.
    pub call: &'a ToolCall,
    /// The model's reason as inert text, when it gave one.
    pub reason: Option<String>,
    /// The prompt to show: the tool and its arguments first, the reason beside them.
    pub prompt: String,
}

/// Decides an asked call: `true` approves it.
pub type OnAsk = Box<dyn FnMut(&AskRequest<'_>) -> bool + Send>;

/// The permission layer.
pub struct Policy {
    inner: Box<dyn Provider>,
    judge: Judge,
    on_ask: OnAsk,
}

/// Where a call carries the model's reason: the reasons layer's parameter, on the tools
/// that layer augmented. On any other tool a parameter of that name is the tool's own
/// argument, shown and judged like any other.
#[derive(Clone, Debug)]
pub struct ReasonSource {
    /// The parameter's name, as the reasons layer publishes it (R11).
    pub param: String,
    /// The tools the reasons layer augmented.
    pub augmented_tools: AugmentedTools,
}

impl ReasonSource {
    /// No reasons layer below: no call carries a model's reason.
    pub fn none() -> ReasonSource {
        ReasonSource {
            param: reasons_transform::DEFAULT_NAME.to_string(),
            augmented_tools: AugmentedTools::default(),
        }
    }
}

/// The policy's rules, and where the reason they never read is.
struct Judge {
    rules: Vec<Rule>,
    source: ReasonSource,
}

impl Policy {
    /// A policy over `inner`. The first matching rule decides; a call no rule covers is
    /// asked about, and so is one whose arguments cannot be read (unless a rule denies
    /// its tool). `source` says where the model's reason is.
    pub fn new(
        inner: Box<dyn Provider>,
        rules: Vec<Rule>,
        source: ReasonSource,
        on_ask: OnAsk,
    ) -> Policy {
        Policy {
            inner,
            judge: Judge { rules, source },
            on_ask,
        }
    }

    /// The decision for a call, made on its name and its arguments without the reason,
    /// so that two calls differing only in their reason get the same one (R12).
    pub fn decide(&self, call: &ToolCall) -> Decision {
        self.judge.decide(call)
    }
}

impl Judge {
    fn decide(&self, call: &ToolCall) -> Decision {
        let (arguments, _reason) = split_reason(call, &self.source);
        if arguments.is_null() {
            // Arguments the policy cannot read (not JSON, not an object, or nested past
            // the parser's depth) cannot be checked against argument rules, and must not
            // slip past one: a tool any rule denies is denied, and nothing is allowed
            // without a human.
            let denied = self
                .rules
                .iter()
                .any(|rule| rule.tool.is_match(&call.name) && rule.decision == Decision::Deny);
            return if denied {
                Decision::Deny
            } else {
                Decision::Ask
            };
        }
        self.rules
            .iter()
            .find(|rule| rule.matches(&call.name, &arguments))
            .map_or(Decision::Ask, |rule| rule.decision)
    }

    /// The call, to be forwarded, or the error result that answers it here.
    fn route(&self, on_ask: &mut OnAsk, call: ToolCall) -> Result<ToolCall, ToolResult> {
        let decision = self.decide(&call);
        let approved = match decision {
            Decision::Allow => true,
            Decision::Deny => false,
            Decision::Ask => {
                let (prompt, reason) = prompt(&call, &self.source);
                on_ask(&AskRequest {
                    call: &call,
                    reason,
                    prompt,
                })
            }
        };
        if approved {
            return Ok(call);
        }
        let why = match decision {
            Decision::Deny => "The permission policy denies this call.",
            _ => "The human declined this call.",
        };
        Err(ToolResult::error(&call.id, why))
    }
}

impl Provider for Policy {
    fn tools_for_llm(&mut self) -> Result<Vec<Json>, ProviderError> {
        provider::list(&mut *self.inner)
    }

    fn execute_tool_calls(
        &mut self,
        calls: Vec<ToolCall>,
    ) -> Result<Vec<ToolResult>, ProviderError> {
        let Policy {
            inner,
            judge,
            on_ask,
        } = self;
        Ok(reasons_transform::answer(
            calls.into_iter().map(|call| judge.route(on_ask, call)),
            |allowed| Ok(provider::execute(&mut **inner, allowed)),
        ))
    }
}

/// The prompt a human is shown for a call, and the call's reason as inert text: the tool,
/// the reason marked as the model's own claim (R12), then the arguments without it. The
/// reason comes before the arguments, as it does in the call (R1), so that a long argument
/// cannot push it out of a short window.
pub fn prompt(call: &ToolCall, source: &ReasonSource) -> (String, Option<String>) {
    let (arguments, reason) = split_reason(call, source);
    let shown = match &arguments {
        Value::Object(map) if map.is_empty() => "(no arguments)".to_string(),
        Value::Null => format!(
            "(arguments that are not a JSON object: {:?})",
            call.arguments.text()
        ),
        arguments => serde_json::to_string_pretty(arguments).unwrap_or_default(),
    };
    let reason = reason.map(|reason| match reason {
        Value::String(text) => inert::inert(&text, REASON_CAP),
        other => inert::inert(&other.to_string(), REASON_CAP),
    });
    let mut prompt = format!("{} wants to run\n", inert::inert(&call.name, 64));
    prompt.push_str(&match &reason {
        Some(reason) => format!("  {}: {reason}  (the model's own claim)", source.param),
        None if source.augmented_tools.contains(&call.name) => {
            format!("  {}: (none given)", source.param)
        }
        None => format!(
            "  ({} does not take a reason from the model)",
            inert::inert(&call.name, 64)
        ),
    });
    prompt.push_str("\n  with:\n");
    prompt.push_str(&indent(&inert::visible(&shown)));
    (prompt, reason)
}

/// A call's arguments (an object, or `null` when they are not one) without the
/// top-level reason, and the reason, when the call carries a model's reason.
fn split_reason(call: &ToolCall, source: &ReasonSource) -> (Value, Option<Value>) {
    let text = call.arguments.text();
    if text.trim().is_empty() {
        return (Value::Object(Map::new()), None);
    }
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(mut arguments)) => {
            let reason = if source.augmented_tools.contains(&call.name) {
                arguments.shift_remove(&source.param)
            } else {
                None
            };
            (Value::Object(arguments), reason)
        }
        _ => (Value::Null, None),
    }
}

fn indent(text: &str) -> String {
    text.lines()
        .map(|line| format!("    {line}\n"))
        .collect::<String>()
        .trim_end()
        .to_string()
}
