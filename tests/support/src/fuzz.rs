//! The fuzz target's body (`transform/fuzz/fuzz_targets/layer.rs`), here so that a plain
//! test runs it too (`tests/tests/fuzz.rs`), over the seeds and generated inputs: both
//! entry points of the transform on arbitrary text, each output judged by the model in
//! both directions. A call the model says is stripped comes out changed, as the model's
//! value; one it says is untouched comes out byte for byte; one it says is refused is
//! answered and never forwarded.

use crate::model::{self, Called, Declared};
use reasons_transform::{Arguments, Options, ToolCall, ToolResult, Transform};

/// Runs one input; panics on anything the contract forbids. The input is declarations
/// (separated by U+0001) and then calls' arguments, all separated by NUL; each call goes
/// to a tool of the listing in turn, text and object form alternating.
pub fn layer(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\0');
    let declarations: Vec<String> = parts
        .next()
        .unwrap_or("")
        .split('\u{1}')
        .map(String::from)
        .collect();
    let options = Options::default();
    let expected = model::list(&options, &declarations);
    let mut layer = Transform::new();
    let listed = layer.list(declarations.clone());
    assert_eq!(
        listed.len(),
        declarations.len(),
        "one declaration out per declaration in"
    );
    assert_eq!(expected.declarations.len(), declarations.len());
    for ((before, after), declared) in declarations.iter().zip(&listed).zip(&expected.declarations)
    {
        match declared {
            Declared::Same => assert_eq!(after, before, "R4 R5 R7: passed through"),
            Declared::Augmented(value) => {
                let got = model::written(after).unwrap_or_else(|| panic!("R1: not JSON: {after}"));
                assert_eq!(got, model::print(value), "R1 R2: {before}");
            }
        }
    }
    let augmented_tools = layer.augmented_tools();
    assert_eq!(
        augmented_tools
            .iter()
            .cloned()
            .collect::<std::collections::BTreeSet<_>>(),
        expected.augmented,
        "R7 R8: the augmented tools"
    );
    // Listing the output again changes nothing: an augmented declaration owns the
    // parameter (R5).
    assert_eq!(
        Transform::new().list(listed.clone()),
        listed,
        "listed twice"
    );

    let calls: Vec<ToolCall> = parts
        .enumerate()
        .map(|(at, arguments)| ToolCall {
            id: at.to_string(),
            name: augmented_tools
                .get(at % augmented_tools.len().max(1))
                .cloned()
                .unwrap_or_default(),
            arguments: if at % 2 == 0 {
                Arguments::Text(arguments.into())
            } else {
                Arguments::Object(arguments.into())
            },
        })
        .collect();
    let mut forwarded = Vec::new();
    let results = layer.execute(calls.clone(), |calls| {
        forwarded = calls.clone();
        Ok(calls
            .iter()
            .map(|call| ToolResult::ok(&call.id, "null"))
            .collect())
    });
    assert_eq!(results.len(), calls.len(), "R13: one result per call");
    let mut forwarded = forwarded.iter();
    for (sent, result) in calls.iter().zip(&results) {
        assert_eq!(result.call_id, sent.id, "R13: in order");
        let called = model::call(&options, &expected, &sent.name, sent.arguments.text());
        if called == Called::Refused {
            assert!(result.is_error, "R10: {sent:?} is refused");
            continue;
        }
        let got = forwarded
            .next()
            .unwrap_or_else(|| panic!("{sent:?} was not forwarded"));
        assert_eq!((&got.id, &got.name), (&sent.id, &sent.name));
        match called {
            Called::Same => assert_eq!(got, sent, "R9: untouched means byte for byte"),
            Called::Stripped(value) => {
                let text = got.arguments.text();
                assert_ne!(text, sent.arguments.text(), "R9: a stripped call changes");
                assert!(
                    !model::has_insignificant_whitespace(text),
                    "R10 compact: {text}"
                );
                let got = model::written(text).unwrap_or_else(|| panic!("R10: not JSON: {text}"));
                // A repeated key would collapse in the value: count the keys in the text.
                let members = value.as_object().map_or(0, |members| members.len());
                assert_eq!(
                    model::top_level_keys(text).len(),
                    members,
                    "R10: a repeated key: {text}"
                );
                assert_eq!(got, model::print(&value), "R9 R10: {sent:?}");
            }
            Called::Refused => unreachable!("handled above"),
        }
    }
    assert!(
        forwarded.next().is_none(),
        "nothing forwarded that was not called"
    );
}
