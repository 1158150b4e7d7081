//! Both entry points of the transform, on arbitrary text: a catalogue is listed, then a
//! batch of calls to its tools goes through. Nothing may panic, every call gets one
//! result, and a call that comes out changed lost exactly its top-level `reason`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use reasons::{Arguments, Reasons, ToolCall, ToolResult};
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
    let mut layer = Reasons::new();
    let listed = layer.list(declarations.clone());
    assert_eq!(listed.len(), declarations.len());
    assert_eq!(layer.list(declarations), listed, "listing is idempotent");

    let augmented = layer.augmented_tools();
    let calls: Vec<ToolCall> = parts
        .enumerate()
        .map(|(at, arguments)| ToolCall {
            id: at.to_string(),
            name: augmented
                .get(at % augmented.len().max(1))
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
    for (sent, got) in calls.iter().zip(&forwarded) {
        if sent != got {
            let Ok(Value::Object(mut expected)) =
                serde_json::from_str::<Value>(sent.arguments.text())
            else {
                panic!("changed arguments that are not an object: {sent:?}");
            };
            assert!(
                expected.shift_remove("reason").is_some(),
                "changed a call without a reason"
            );
            let got: Value =
                serde_json::from_str(got.arguments.text()).expect("stripped text is JSON");
            assert_eq!(
                serde_json::to_string(&got).unwrap(),
                serde_json::to_string(&expected).unwrap()
            );
        }
    }
});
