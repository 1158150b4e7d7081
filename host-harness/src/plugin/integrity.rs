//! Forwarding integrity (R16): what a plugin passes down is what it was given. Each call
//! of its batch at most once, under the same id and name, with the same arguments, less
//! at most the one top-level parameter the layer itself added. Anything else (a call it
//! invented, repeated or rewrote) is a violation, and then nothing it forwarded runs.

use super::StripSet;
use crate::json;
use indexmap::IndexMap;
use reasons::{Arguments, ToolCall};

/// The batch a plugin was given, and what it may take out of a call's arguments.
pub struct Given {
    calls: Vec<ToolCall>,
    /// Each given call's fate so far: passed down already, or not.
    used: Vec<bool>,
    added: Option<Added>,
}

/// The top-level parameter a layer adds, and the tools it added it to.
pub struct Added {
    /// The parameter's name (R11).
    pub param: String,
    /// The tools whose calls may lose it: the strip set.
    pub to: StripSet,
}

impl Given {
    /// The batch `calls`, from which a layer may take `added` off the tools it added it
    /// to; with `None` (a plugin that publishes no parameter) arguments pass unchanged.
    pub fn new(calls: Vec<ToolCall>, added: Option<Added>) -> Given {
        Given {
            used: vec![false; calls.len()],
            calls,
            added,
        }
    }

    /// Admits `forwarded` as a faithful subset of the batch, or says what is wrong with
    /// the first call that is not.
    pub fn admit(&mut self, forwarded: &[ToolCall]) -> Result<(), String> {
        for call in forwarded {
            let at = self
                .calls
                .iter()
                .zip(&self.used)
                .position(|(given, used)| !used && given.id == call.id)
                .ok_or_else(
                    || match self.calls.iter().any(|given| given.id == call.id) {
                        true => format!("passed call `{}` down more than once", call.id),
                        false => format!(
                            "passed down a call it was not given (id `{}`, tool `{}`)",
                            call.id, call.name
                        ),
                    },
                )?;
            let given = &self.calls[at];
            if given.name != call.name {
                return Err(format!(
                    "passed call `{}` down as tool `{}`; it was given as `{}`",
                    call.id, call.name, given.name
                ));
            }
            if !self.faithful(given, &call.arguments) {
                return Err(format!(
                    "changed the arguments of call `{}` (tool `{}`) beyond taking off its own \
                     parameter",
                    call.id, call.name
                ));
            }
            self.used[at] = true;
        }
        Ok(())
    }

    /// Whether `forwarded` are `given`'s arguments, or them less the added parameter.
    fn faithful(&self, given: &ToolCall, forwarded: &Arguments) -> bool {
        let same_shape = matches!(
            (&given.arguments, forwarded),
            (Arguments::Object(_), Arguments::Object(_)) | (Arguments::Text(_), Arguments::Text(_))
        );
        let (before, after) = (given.arguments.text(), forwarded.text());
        if !same_shape {
            return false;
        }
        if before == after {
            return true;
        }
        let Some(added) = &self.added else {
            return false;
        };
        if !added.to.contains(&given.name) {
            return false;
        }
        match (members(before), members(after)) {
            (Some(mut before), Some(after)) => {
                before.shift_remove(added.param.as_bytes());
                before == after
            }
            _ => false,
        }
    }
}

/// An object's members as parsers read them, to compare two objects by value: a repeated
/// key keeps its first position and its last value; keys are decoded (to WTF-8, so that a
/// lone surrogate escape is a character like any other); each value is its text less
/// insignificant whitespace. A layer keeps every value's text (R10: numbers keep their
/// digits, escapes inside values are copied), so this is equality for the calls a
/// faithful layer forwards, and reading no deeper than the top keeps it linear however
/// deeply the arguments nest. `None` when `text` is not one JSON object.
fn members(text: &str) -> Option<IndexMap<Vec<u8>, String>> {
    let entries = json::members(text)?;
    let mut members = IndexMap::with_capacity(entries.len());
    for (key, value) in entries {
        members.insert(key, compact(value.get()));
    }
    Some(members)
}

/// JSON text (already validated) without whitespace outside its strings.
fn compact(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in text.chars() {
        match c {
            _ if escaped => escaped = false,
            '\\' if in_string => escaped = true,
            '"' => in_string = !in_string,
            ' ' | '\t' | '\n' | '\r' if !in_string => continue,
            _ => {}
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(id: &str, name: &str, arguments: &str) -> ToolCall {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: Arguments::Text(arguments.into()),
        }
    }

    fn given(calls: Vec<ToolCall>) -> Given {
        let to = StripSet::default();
        to.replace(["read".to_string()]);
        let added = Added {
            param: "reason".into(),
            to,
        };
        Given::new(calls, Some(added))
    }

    #[test]
    fn the_given_calls_pass_less_only_the_added_parameter() {
        // R16
        let batch = vec![
            call("1", "read", r#"{"path":"a", "reason":"why \ud83d"}"#),
            call(
                "2",
                "read",
                r#"{"a":1.10,"a":-0, "b" : [ "\u00e9 " ],"reason":null}"#,
            ),
        ];
        let mut gate = given(batch.clone());
        let forwarded = [
            call("2", "read", r#"{"a":-0,"b":["\u00e9 "]}"#),
            call("1", "read", r#"{"path":"a"}"#),
        ];
        assert_eq!(gate.admit(&forwarded), Ok(()));
        assert_eq!(given(batch).admit(&[]), Ok(()), "a subset is fine");
    }

    #[test]
    fn invented_repeated_and_rewritten_calls_are_violations() {
        // R16
        let batch = || vec![call("c1", "read", r#"{"path":"notes.txt","reason":"x"}"#)];
        let twice = vec![call("c1", "read", r#"{"path":"notes.txt"}"#); 2];
        let cases: [(&[ToolCall], &str); 7] = [
            (
                &[call("evil", "delete_everything", "{}")],
                "passed down a call it was not given (id `evil`, tool `delete_everything`)",
            ),
            (
                &[call("c1", "delete_everything", r#"{"path":"notes.txt"}"#)],
                "passed call `c1` down as tool `delete_everything`",
            ),
            (
                &[call("c1", "read", r#"{"path":"/etc/passwd"}"#)],
                "changed the arguments of call `c1`",
            ),
            (
                &[call(
                    "c1",
                    "read",
                    r#"{"path":"notes.txt","reason":"x","dry":false}"#,
                )],
                "changed the arguments",
            ),
            (&[call("c1", "read", "{}")], "changed the arguments"),
            (&twice, "passed call `c1` down more than once"),
            (
                &[call("c1", "read", r#"{"path":"notes.txt","reason":"y"}"#)],
                "changed the arguments",
            ),
        ];
        for (forwarded, expected) in cases {
            let error = given(batch()).admit(forwarded).unwrap_err();
            assert!(error.contains(expected), "{error} / {expected}");
        }
    }

    #[test]
    fn only_the_added_parameter_of_a_tool_it_was_added_to_may_go() {
        // R16: a tool's own `reason` (R5) is a real argument; a plugin with no parameter
        // of its own may take nothing off.
        let mut gate = given(vec![call("1", "own", r#"{"reason":"mine"}"#)]);
        assert!(gate.admit(&[call("1", "own", "{}")]).is_err());
        let mut gate = Given::new(vec![call("1", "read", r#"{"reason":"x"}"#)], None);
        assert!(gate.admit(&[call("1", "read", "{}")]).is_err());
        let mut gate = given(vec![call("1", "read", r#"{"reason":"x"}"#)]);
        let as_object = ToolCall {
            arguments: Arguments::Object("{}".into()),
            ..call("1", "read", "")
        };
        assert!(gate.admit(&[as_object]).is_err(), "the shape is kept");
    }
}
