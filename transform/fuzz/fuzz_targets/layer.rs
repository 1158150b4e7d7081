//! Both entry points of the transform, on arbitrary text: a catalogue is listed, then a
//! batch of calls to its tools goes through. Nothing may panic, every call gets one
//! result, and a call that comes out changed lost exactly its top-level `reason`.
#![no_main]

use libfuzzer_sys::fuzz_target;

// The tests' independent model of the contract: its readers and text checks serve here.
use reasons_test_support::model;
use reasons_transform::{Arguments, Transform, ToolCall, ToolResult};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    // The input is declarations and arguments separated by NUL; the first part says
    // which tool each call goes to.
    let mut parts = text.split('\0');
    let declarations: Vec<String> = parts
        .next()
        .unwrap_or("")
        .split('\u{1}')
        .map(String::from)
        .collect();
    let count = declarations.len();
    let mut layer = Transform::new();
    let listed = layer.list(declarations);
    assert_eq!(listed.len(), count);
    // Idempotent: an augmented declaration owns the parameter, so listing the output
    // again changes nothing (R5).
    let mut again = Transform::new();
    assert_eq!(
        again.list(listed.clone()),
        listed,
        "listing the output changes nothing"
    );

    let strip_set = layer.strip_set();
    let calls: Vec<ToolCall> = parts
        .enumerate()
        .map(|(at, arguments)| ToolCall {
            id: at.to_string(),
            name: strip_set
                .get(at % strip_set.len().max(1))
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
    assert_eq!(results.len(), calls.len());
    assert_eq!(forwarded.len(), calls.len(), "one forwarded call per call");
    for (sent, got) in calls.iter().zip(&forwarded) {
        assert_eq!((&sent.id, &sent.name), (&got.id, &got.name));
        if sent != got {
            let Some(Value::Object(mut expected)) = model::read(sent.arguments.text()) else {
                panic!("changed arguments that are not an object: {sent:?}");
            };
            assert!(
                expected.shift_remove("reason").is_some(),
                "changed a call without a reason"
            );
            let text = got.arguments.text();
            assert!(
                !model::has_insignificant_whitespace(text),
                "not compact: {text}"
            );
            let got = model::read(text).expect("stripped text is JSON");
            // A repeated key would collapse in the value: count the keys in the text.
            assert_eq!(
                model::top_level_keys(text).len(),
                expected.len(),
                "a repeated key: {text}"
            );
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&expected).unwrap()
            );
        }
    }
});
