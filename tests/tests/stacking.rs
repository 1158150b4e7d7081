//! Whole stacks: the policy over the reasons layer over real tools, with and without a
//! non-mutating middleware between them, and one reasons layer over another.

use reasons_host::{AskRequest, Decision, FsTools, Plugin, Provider, Rule, Stack};
use reasons_tests::providers::{Scripted, text_call};
use reasons_tests::unruly;
use reasons_transform::{Options, ToolCall};
use std::sync::{Arc, Mutex};

const TOOL: &str = r#"{"type":"function","function":{"name":"fs_write","parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}"#;

/// Each call the human was asked about, with the reason the prompt showed.
type Shown = Arc<Mutex<Vec<(ToolCall, Option<String>)>>>;

/// A policy that asks about everything and approves, remembering what it was shown.
fn asking_policy(stack: Stack) -> (Stack, Shown) {
    let shown: Shown = Arc::default();
    let record = shown.clone();
    let stack = stack.policy(
        vec![Rule::new("*", Decision::Ask).unwrap()],
        Box::new(move |request: &AskRequest<'_>| {
            record
                .lock()
                .unwrap()
                .push((request.call.clone(), request.reason.clone()));
            true
        }),
    );
    (stack, shown)
}

fn check_policy_sees_the_reason_and_the_tool_does_not(stack: Stack, provider: &Scripted) {
    // R11: the policy's question still carries the reason; the provider never sees it.
    let (mut stack, shown) = asking_policy(stack);
    let listed = stack.list().unwrap();
    assert!(listed[0].contains(r#""reason":{"type":"string""#));
    let call = text_call(
        "1",
        "fs_write",
        r#"{"path":"a.txt","reason":"The user asked for it."}"#,
    );
    let results = stack.execute(vec![call.clone()]);
    assert!(!results[0].is_error);
    let shown = shown.lock().unwrap();
    assert_eq!(shown[0].0, call);
    assert_eq!(shown[0].1.as_deref(), Some("The user asked for it."));
    assert_eq!(
        provider.take_received()[0].arguments.text(),
        r#"{"path":"a.txt"}"#
    );
}

#[test]
fn policy_over_reasons_over_the_tools() {
    // R11: the policy reads the reason under the name the layer publishes.
    let provider = Scripted::new(&[TOOL]);
    let stack = Stack::new(provider.clone())
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap();
    check_policy_sees_the_reason_and_the_tool_does_not(stack, &provider);
}

#[test]
fn a_non_mutating_component_may_sit_between_policy_and_reasons() {
    // R11
    let provider = Scripted::new(&[TOOL]);
    let stack = Stack::new(provider.clone())
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap()
        .plugin(&unruly());
    check_policy_sees_the_reason_and_the_tool_does_not(stack, &provider);
}

#[test]
fn reasons_over_reasons_sees_the_lower_reason_as_a_collision() {
    // R5 R8
    let provider = Scripted::new(&[TOOL]);
    let plugin = Plugin::reasons().unwrap();
    let lower = plugin.layer(Box::new(provider.clone()));
    let mut upper = plugin.layer(Box::new(lower));
    let from_upper = upper.tools_for_llm().unwrap();
    assert_eq!(
        upper.claimed_augmented_tools().unwrap(),
        Vec::<String>::new()
    );
    assert_eq!(
        from_upper[0].matches(r#""reason""#).count(),
        1,
        "added once"
    );
    upper
        .execute_tool_calls(vec![text_call(
            "1",
            "fs_write",
            r#"{"path":"a","reason":"x"}"#,
        )])
        .unwrap();
    assert_eq!(
        provider.take_received()[0].arguments.text(),
        r#"{"path":"a"}"#
    );
}

#[test]
fn real_file_tools_refuse_a_reason_that_reaches_them() {
    // R9: without the layer the model's reason breaks the call; with it, the file is written.
    let dir = tempfile::tempdir().unwrap();
    let write = text_call(
        "1",
        "fs_write",
        r#"{"path":"a.txt","content":"hi","reason":"Asked for."}"#,
    );

    let mut bare = FsTools::new(dir.path()).unwrap();
    let results = bare.execute_tool_calls(vec![write.clone()]).unwrap();
    assert!(results[0].is_error);
    assert!(
        results[0]
            .content
            .contains("does not take an argument named \\\"reason\\\"")
    );

    let mut stack = Stack::new(FsTools::new(dir.path()).unwrap())
        .reasons(&Plugin::reasons().unwrap(), Options::default())
        .unwrap()
        .policy(
            vec![Rule::new("fs_*", Decision::Allow).unwrap()],
            Box::new(|_| false),
        );
    stack.list().unwrap();
    let results = stack.execute(vec![write]);
    assert!(!results[0].is_error, "{}", results[0].content);
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "hi"
    );
}

#[test]
fn file_tools_stay_in_their_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("inside")).unwrap();
    let mut tools = FsTools::new(&dir.path().join("inside")).unwrap();
    std::fs::write(dir.path().join("secret.txt"), "s").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        dir.path().join("secret.txt"),
        dir.path().join("inside/link"),
    )
    .unwrap();
    let calls = vec![
        text_call("1", "fs_read", r#"{"path":"../secret.txt"}"#),
        text_call(
            "2",
            "fs_read",
            &format!(r#"{{"path":{:?}}}"#, dir.path().join("secret.txt")),
        ),
        text_call("3", "fs_write", r#"{"path":"../x.txt","content":"x"}"#),
        text_call("4", "fs_read", r#"{"path":"link"}"#),
        text_call("5", "fs_list", r#"{"path":".."}"#),
    ];
    let results = tools.execute_tool_calls(calls).unwrap();
    assert_eq!(results.len(), 5, "one result per call");
    for result in &results {
        assert!(
            result.is_error,
            "call {} escaped: {}",
            result.call_id, result.content
        );
    }
    assert!(!dir.path().join("x.txt").exists());
}

#[test]
fn a_write_replaces_the_file_whole_and_leaves_nothing_beside_it() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("a.txt"), "old").unwrap();
    let mut tools = FsTools::new(dir.path()).unwrap();
    let results = tools
        .execute_tool_calls(vec![
            text_call("1", "fs_write", r#"{"path":"a.txt","content":"new"}"#),
            text_call("2", "fs_write", r#"{"path":"missing/b.txt","content":"x"}"#),
        ])
        .unwrap();
    assert!(!results[0].is_error, "{}", results[0].content);
    assert!(results[1].is_error && results[1].content.contains("missing/b.txt"));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("a.txt")).unwrap(),
        "new"
    );
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.txt"]);
}
