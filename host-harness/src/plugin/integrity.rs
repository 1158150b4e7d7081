//! Forwarding integrity (R16): what a plugin passes down is what it was given. Each call
//! of its batch at most once, under the same id and name, with the same arguments, less
//! at most the one top-level parameter the layer itself added. Anything else (a call it
//! invented, repeated or rewrote) is a violation, and then nothing it forwarded runs.

use super::AugmentedTools;
use indexmap::IndexMap;
use reasons_transform::json::{Member, Object};
use reasons_transform::{Arguments, ToolCall};
use std::sync::Arc;

/// A call as the gate reads it: the transform's own type, or the WIT type it crosses as.
pub trait Call {
    /// The call's id.
    fn id(&self) -> &str;
    /// The tool's name.
    fn name(&self) -> &str;
    /// Whether the arguments came as an object (not as text), and their text.
    fn arguments(&self) -> (bool, &str);
}

impl Call for ToolCall {
    fn id(&self) -> &str {
        &self.id
    }
    fn name(&self) -> &str {
        &self.name
    }
    fn arguments(&self) -> (bool, &str) {
        (
            matches!(self.arguments, Arguments::Object(_)),
            self.arguments.text(),
        )
    }
}

/// The batch a plugin was given, and what it may take out of a call's arguments.
pub struct Given<C> {
    /// Shared with the call into the plugin, so the batch is not copied for the gate.
    calls: Arc<Vec<C>>,
    /// Each given call's fate so far: passed down already, or not.
    used: Vec<bool>,
    /// Where the next forwarded call is looked for first: a layer forwards in order.
    next: usize,
    added: Option<Added>,
}

/// The top-level parameter a layer adds, and the tools it added it to.
pub struct Added {
    /// The parameter's name (R11).
    pub param: String,
    /// The tools whose calls may lose it: the augmented tools.
    pub to: AugmentedTools,
}

impl<C: Call> Given<C> {
    /// The batch `calls`, from which a layer may take `added` off the tools it added it
    /// to; with `None` (a plugin that publishes no parameter) arguments pass unchanged.
    pub fn new(calls: Arc<Vec<C>>, added: Option<Added>) -> Given<C> {
        Given {
            used: vec![false; calls.len()],
            calls,
            next: 0,
            added,
        }
    }

    /// Admits `forwarded` as a faithful subset of the batch, or says what is wrong with
    /// the first call that is not.
    pub fn admit(&mut self, forwarded: &[impl Call]) -> Result<(), String> {
        for call in forwarded {
            let at = self.find(call.id()).ok_or_else(|| {
                match self.calls.iter().any(|given| given.id() == call.id()) {
                    true => format!("passed call `{}` down more than once", call.id()),
                    false => format!(
                        "passed down a call it was not given (id `{}`, tool `{}`)",
                        call.id(),
                        call.name()
                    ),
                }
            })?;
            let given = &self.calls[at];
            if given.name() != call.name() {
                return Err(format!(
                    "passed call `{}` down as tool `{}`; it was given as `{}`",
                    call.id(),
                    call.name(),
                    given.name()
                ));
            }
            if !self.faithful(given, call.arguments()) {
                return Err(format!(
                    "changed the arguments of call `{}` (tool `{}`) beyond taking off its own \
                     parameter",
                    call.id(),
                    call.name()
                ));
            }
            self.used[at] = true;
            self.next = at + 1;
        }
        Ok(())
    }

    /// The first given call with `id` not yet passed down: the next in order, usually.
    fn find(&self, id: &str) -> Option<usize> {
        let unused = |at: &usize| !self.used[*at] && self.calls[*at].id() == id;
        (self.next..self.calls.len())
            .find(unused)
            .or_else(|| (0..self.next).find(unused))
    }

    /// Whether `forwarded` are `given`'s arguments, or them less the added parameter.
    fn faithful(&self, given: &C, (is_object, after): (bool, &str)) -> bool {
        let (was_object, before) = given.arguments();
        if was_object != is_object {
            return false;
        }
        if before == after {
            return true;
        }
        let Some(added) = &self.added else {
            return false;
        };
        if !added.to.contains(given.name()) {
            return false;
        }
        less(before, after, added.param.as_bytes())
    }
}

/// Whether the object `after` is the object `before` less its member `param`, as parsers
/// read them: a repeated key keeps its first position and its last value; keys are
/// decoded (to WTF-8, so that a lone surrogate escape is a character like any other);
/// values compare by their text less insignificant whitespace. A layer keeps every
/// value's text (R10: numbers keep their digits, escapes inside values are copied), so
/// this is equality for what a faithful layer forwards; reading no deeper than the top
/// keeps it linear however deeply the arguments nest.
fn less(before: &str, after: &str, param: &[u8]) -> bool {
    let Some(Object {
        members: before, ..
    }) = Object::parse(before)
    else {
        return false;
    };
    let mut seen = std::collections::HashSet::with_capacity(before.len());
    let repeats = !before.iter().all(|member| seen.insert(member.key.as_ref()));
    if !repeats && compact_less(&before, param).is_some_and(|expected| expected == after.as_bytes())
    {
        // Exactly what a layer that compacts writes: `after` need not be read at all.
        return true;
    }
    let Some(Object { members: after, .. }) = Object::parse(after) else {
        return false;
    };
    let mut expected = by_value(&before);
    expected.shift_remove(param);
    // Where `before` gives every key once, so must `after`: a repeat there is not
    // what a layer that only took a member off writes.
    (repeats || after.len() == expected.len()) && expected.iter().eq(by_value(&after).iter())
}

/// `before` written compactly without `param`, when every key is written without an
/// escape (a key with one may be spelt otherwise by a faithful layer: the caller then
/// compares by value).
fn compact_less(before: &[Member], param: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(before.iter().map(|member| member.value.len() + 8).sum());
    out.push(b'{');
    for Member { key, value } in before.iter().filter(|member| member.key.as_ref() != param) {
        let std::borrow::Cow::Borrowed(key) = key else {
            return None;
        };
        if out.len() > 1 {
            out.push(b',');
        }
        out.push(b'"');
        out.extend_from_slice(key);
        out.extend_from_slice(b"\":");
        out.extend(Compact::new(value));
    }
    out.push(b'}');
    Some(out)
}

/// An object's members with repeats resolved, each value compact.
fn by_value<'a>(members: &'a [Member<'a>]) -> IndexMap<&'a [u8], Vec<u8>> {
    let mut map = IndexMap::with_capacity(members.len());
    for Member { key, value } in members {
        map.insert(key.as_ref(), compact(value));
    }
    map
}

/// The bytes of JSON text (already validated) without whitespace outside its strings.
struct Compact<'a> {
    bytes: std::slice::Iter<'a, u8>,
    in_string: bool,
    escaped: bool,
}

impl<'a> Compact<'a> {
    fn new(text: &'a str) -> Compact<'a> {
        Compact {
            bytes: text.as_bytes().iter(),
            in_string: false,
            escaped: false,
        }
    }
}

impl Iterator for Compact<'_> {
    type Item = u8;

    fn next(&mut self) -> Option<u8> {
        loop {
            let byte = *self.bytes.next()?;
            match byte {
                _ if self.escaped => self.escaped = false,
                b'\\' if self.in_string => self.escaped = true,
                b'"' => self.in_string = !self.in_string,
                b' ' | b'\t' | b'\n' | b'\r' if !self.in_string => continue,
                _ => {}
            }
            return Some(byte);
        }
    }
}

/// JSON text (already validated) without whitespace outside its strings.
fn compact(text: &str) -> Vec<u8> {
    Compact::new(text).collect()
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

    fn given(calls: Vec<ToolCall>) -> Given<ToolCall> {
        let to = AugmentedTools::default();
        to.replace(["read".to_string()]);
        let added = Added {
            param: "reason".into(),
            to,
        };
        Given::new(Arc::new(calls), Some(added))
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
        assert_eq!(
            given(batch).admit(&[] as &[ToolCall]),
            Ok(()),
            "a subset is fine"
        );
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
        let mut gate = Given::new(Arc::new(vec![call("1", "read", r#"{"reason":"x"}"#)]), None);
        assert!(gate.admit(&[call("1", "read", "{}")]).is_err());
        let mut gate = given(vec![call("1", "read", r#"{"reason":"x"}"#)]);
        let as_object = ToolCall {
            arguments: Arguments::Object("{}".into()),
            ..call("1", "read", "")
        };
        assert!(gate.admit(&[as_object]).is_err(), "the shape is kept");
    }
}
