//! The `reasons` command line, run as a user runs it.

use std::process::{Command, Output};

fn reasons(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_reasons"))
        .args(args)
        .output()
        .expect("the binary runs")
}

fn stdout(output: &Output) -> String {
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout.clone()).unwrap()
}

#[test]
fn the_demo_shows_prompt_decision_and_what_the_tool_received() {
    // R11 R12
    let out = stdout(&reasons(&["demo"]));
    // The prompt: the reason first (R1), the arguments beside it.
    let prompt_at = out.find(r#"│       "path": "notes.md","#).expect(&out);
    let reason_at = out
        .find("│   reason: Add the \"ship the parser\" item you asked for.")
        .expect(&out);
    assert!(reason_at < prompt_at);
    assert!(out.contains("decision: asked the human: approved"));
    // What the file tools received: no reason.
    assert!(out.contains(r##"the tool received: {"path":"notes.md","content":"# Notes\n\n- write the tokenizer\n- ship the parser\n"}"##), "{out}");
    // A call without a reason, the policy's denial, the tool that owns `reason`.
    assert!(out.contains("reason: (none given)"));
    assert!(out.contains("decision: denied by the policy"));
    assert!(out.contains(
        r#"the tool received: {"reason":"Stale build output; nothing reads it.","path":"old.log"}"#
    ));
    // The escape sequences of a hostile reason are gone.
    assert!(!out.contains('\u{1b}'));
    // R10: arguments with a raw line break, approved by the human, are refused by the
    // layer and never reach the tool.
    let refused = out.find("── call_6 ──").expect(&out);
    let block = &out[refused
        ..out[refused..]
            .find("── call_7")
            .map_or(out.len(), |end| refused + end)];
    assert!(
        block.contains("the tool received: nothing (the call was not forwarded)"),
        "{block}"
    );
    assert!(
        block.contains("not valid JSON (at byte 30, a raw control character (U+000A)"),
        "{block}"
    );
    // The transcript keeps the reasons.
    assert!(out.contains("call_4 fs_write: Add the \"ship the parser\" item you asked for."));
}

#[test]
fn the_demo_plays_another_script() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("s.json");
    std::fs::write(
        &script,
        r#"{"task":"t","files":{"a.txt":"A"},"turns":[{"say":"s","calls":[{"tool":"fs_read","arguments":{"path":"a.txt","reason":"r1"}}]}]}"#,
    )
    .unwrap();
    let out = stdout(&reasons(&["demo", "--script", script.to_str().unwrap()]));
    assert!(
        out.contains(r#"the tool received: {"path":"a.txt"}"#),
        "{out}"
    );
    assert!(out.contains(r#"result: "A""#), "{out}");
}

#[test]
fn a_bad_script_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("bad.json");
    std::fs::write(&script, r#"{"task":"t","turns":[{"calls":[]}]}"#).unwrap();
    let output = reasons(&["demo", "--script", script.to_str().unwrap()]);
    assert!(!output.status.success());
    let error = String::from_utf8_lossy(&output.stderr);
    assert!(
        error.contains("bad.json is not a valid demo script")
            && error.contains("missing field `say`"),
        "{error}"
    );
}

#[test]
fn transform_prints_the_catalogue_the_set_and_the_forwarded_calls() {
    // R1 R9 R10
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let calls = dir.path().join("calls.json");
    std::fs::write(
        &tools,
        r#"[{"name":"a","input_schema":{"type":"object"}}, {"name":"b"}]"#,
    )
    .unwrap();
    std::fs::write(
        &calls,
        r#"[{"id":"1","name":"a","arguments":"{\"x\":1e400,\"reason\":\"r\"}"},{"id":"2","name":"a","arguments":{"reason":"r","y":[1]}},{"id":"3","name":"a","arguments":"{\"x\":NaN,\"reason\":\"r\"}"}]"#,
    )
    .unwrap();
    let out = stdout(&reasons(&[
        "transform",
        "--tools",
        tools.to_str().unwrap(),
        "--calls",
        calls.to_str().unwrap(),
    ]));
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["augmented_tools"], serde_json::json!(["a"]));
    assert_eq!(report["tools"][1], serde_json::json!({"name": "b"}));
    assert_eq!(report["calls"][0]["arguments"], "{\"x\":1e400}");
    assert_eq!(
        report["calls"][1]["arguments"],
        serde_json::json!({"y": [1]})
    );
    // R10: text a lenient reader would find the reason in is refused, not forwarded.
    assert_eq!(report["calls"].as_array().unwrap().len(), 2, "{out}");
    assert_eq!(report["results"].as_array().unwrap().len(), 3, "{out}");
    assert_eq!(report["results"][2]["call_id"], "3");
    assert_eq!(report["results"][2]["is_error"], true);
    let said = report["results"][2]["content"].as_str().unwrap();
    assert!(said.contains("not valid JSON (at byte 5, `NaN`"), "{said}");
    assert!(
        out.contains(r#""reason": {"#) || out.contains(r#""reason":{"#),
        "{out}"
    );
}

#[test]
fn transform_names_a_tool_that_asks_why_itself_and_changes_nothing_for_it() {
    // R5: a PostHog-style tool asks the model why in a `context` of its own. The dry run
    // names it and the way to leave it alone; the rule that decides is R5's alone, so the
    // tool is augmented as any other (the reason first, R1) and its `context` reaches it.
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let calls = dir.path().join("calls.json");
    std::fs::write(
        &tools,
        r#"[{"name":"query","inputSchema":{"type":"object","properties":{"query":{"type":"string"},"context":{"type":"string","description":"Why are you calling this tool? Briefly describe the user's goal."}},"required":["query","context"]}},{"name":"plain","inputSchema":{"type":"object"}}]"#,
    )
    .unwrap();
    std::fs::write(
        &calls,
        r#"[{"id":"1","name":"query","arguments":{"reason":"r","query":"q","context":"the goal"}}]"#,
    )
    .unwrap();
    let output = reasons(&[
        "transform",
        "--tools",
        tools.to_str().unwrap(),
        "--calls",
        calls.to_str().unwrap(),
    ]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&output)).unwrap();
    assert_eq!(
        report["asks_why"],
        serde_json::json!({"query": ["context"]})
    );
    assert_eq!(
        report["augmented_tools"],
        serde_json::json!(["plain", "query"])
    );
    assert_eq!(
        report["calls"][0]["arguments"],
        serde_json::json!({"query": "q", "context": "the goal"})
    );
    let said = String::from_utf8_lossy(&output.stderr);
    assert!(
        said.contains("`query` asks the model why itself (`context`)")
            && said.contains("--leave-alone query"),
        "{said}"
    );
}

#[test]
fn transform_prints_a_catalogue_s_hiding_characters_as_escapes_of_the_same_value() {
    // R12 for what transform prints: a description with an escape, a C1 control and a
    // reordering character reaches the terminal as JSON's `\u` escapes, and the report
    // still reads back as the same text.
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let description = "a\u{1b}[2J\u{9b}2J\u{202e}b";
    let catalogue = serde_json::json!([{"name": "a", "description": description}]);
    std::fs::write(&tools, catalogue.to_string()).unwrap();
    let out = stdout(&reasons(&["transform", "--tools", tools.to_str().unwrap()]));
    let raw: Vec<char> = out
        .chars()
        .filter(|&c| (c.is_control() && c != '\n') || c == '\u{202e}')
        .collect();
    assert_eq!(raw, Vec::<char>::new(), "{out:?}");
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["tools"][0]["description"], description, "{out}");
}

#[test]
fn transform_takes_the_layer_options() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(
        &tools,
        r#"[{"name":"a","inputSchema":{"properties":{"p":{}}}},{"name":"b","inputSchema":{}}]"#,
    )
    .unwrap();
    let path = tools.to_str().unwrap();
    let out = stdout(&reasons(&[
        "transform",
        "--tools",
        path,
        "--param-name",
        "why",
        "--position",
        "first",
        "--required",
        "--leave-alone",
        "b",
    ]));
    assert!(
        out.contains(r#"{"name":"a","inputSchema":{"properties":{"why":{"type":"string""#),
        "{out}"
    );
    assert!(out.contains(r#""required":["why"]"#), "{out}");
    assert!(out.contains(r#"{"name":"b","inputSchema":{}}"#), "{out}");
    let refused = reasons(&["transform", "--tools", path, "--param-name", "two words"]);
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("option `name`"));
}

#[test]
fn bad_files_get_a_clear_error_and_a_failing_exit() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let calls = dir.path().join("calls.json");
    let not_wasm = dir.path().join("plugin.wasm");
    std::fs::write(&tools, r#"{"name":"a"}"#).unwrap();
    std::fs::write(&calls, r#"[{"id":"1","name":"a","arguments":[1]}]"#).unwrap();
    std::fs::write(&not_wasm, "not wasm").unwrap();
    let cases: [(Vec<&str>, &str); 4] = [
        (
            vec!["--tools", "/nonexistent/tools.json"],
            "cannot read /nonexistent/tools.json",
        ),
        (
            vec!["--tools", tools.to_str().unwrap()],
            "must be a JSON array of tool declarations",
        ),
        (
            vec!["--tools", "-", "--calls", calls.to_str().unwrap()],
            "cannot read -",
        ),
        (
            vec![
                "--tools",
                calls.to_str().unwrap(),
                "--calls",
                calls.to_str().unwrap(),
            ],
            "`arguments` must be a JSON object or a JSON string",
        ),
    ];
    for (args, expected) in cases {
        let output = reasons(&[&["transform"], args.as_slice()].concat());
        assert!(!output.status.success(), "{args:?}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains(expected), "{args:?}: {error}");
    }
    let output = reasons(&[
        "transform",
        "--tools",
        calls.to_str().unwrap(),
        "--plugin",
        not_wasm.to_str().unwrap(),
    ]);
    assert_eq!(output.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not a WebAssembly component"));
}

#[test]
fn an_error_is_printed_as_a_few_short_lines_of_inert_text() {
    // An error quotes what it was given (a path, a file's line, a server's answer): none
    // of it may move the cursor, retitle the terminal or flood it.
    let hostile = "/nonexistent/\u{1b}]0;owned\u{7}\u{1b}[2J\u{202e}tools.json";
    let long = format!("/nonexistent/{}", "a/".repeat(2000));
    for path in [hostile, long.as_str()] {
        let output = reasons(&["transform", "--tools", path]);
        assert_eq!(output.status.code(), Some(1), "{path}");
        let error = String::from_utf8(output.stderr).unwrap();
        assert!(
            error.starts_with("reasons: cannot read /nonexistent/"),
            "{error}"
        );
        assert!(
            !error
                .trim_end()
                .chars()
                .any(|c| c.is_control() || c == '\u{202e}'),
            "{error:?}"
        );
        assert!(error.len() < 1100, "{} bytes", error.len());
    }
}

#[test]
fn mcp_names_what_it_cannot_start() {
    let cases: [(&[&str], &str); 4] = [
        (
            &["mcp", "--", "/nonexistent/server"],
            "cannot start the MCP server \"/nonexistent/server\"",
        ),
        (
            &[
                "mcp",
                "--audit",
                "/nonexistent/dir/audit.jsonl",
                "--",
                "true",
            ],
            "cannot open the audit log /nonexistent/dir/audit.jsonl",
        ),
        (
            &["mcp", "--plugin", "Cargo.toml", "--", "true"],
            "`Cargo.toml` is not a WebAssembly component",
        ),
        (
            &["mcp", "--plugin-memory-mib", "lots", "--", "true"],
            "invalid value 'lots' for '--plugin-memory-mib <MIB>'",
        ),
    ];
    for (args, message) in cases {
        let output = reasons(args);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
    }
}

#[test]
fn stack_limits_are_checked_and_a_large_one_works() {
    // R15 R17: a limit out of range is refused with a message, never a panic; one far
    // above the default runs a transform.
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, r#"[{"name":"t","inputSchema":{"type":"object"}}]"#).unwrap();
    let tools = tools.to_str().unwrap();
    for (kib, message) in [
        (
            "0",
            "the plugin stack limit must be from 64 KiB to 64 MiB (it was 0 bytes)",
        ),
        (
            "1048576",
            "the plugin stack limit must be from 64 KiB to 64 MiB (it was 1024 MiB)",
        ),
    ] {
        let output = reasons(&["transform", "--tools", tools, "--plugin-stack-kib", kib]);
        assert_eq!(output.status.code(), Some(1), "{kib}");
        let error = String::from_utf8_lossy(&output.stderr);
        assert!(error.contains(message), "{error}");
    }
    let out = stdout(&reasons(&[
        "transform",
        "--tools",
        tools,
        "--plugin-stack-kib",
        "8192",
    ]));
    assert!(out.contains(r#""augmented_tools": ["#), "{out}");
}

#[test]
fn the_version_names_the_binary_the_component_and_the_wit_package() {
    let out = stdout(&reasons(&["--version"]));
    let wit =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../wit/tools.wit")).unwrap();
    let package = wit
        .lines()
        .find_map(|line| line.strip_prefix("package "))
        .unwrap()
        .trim_end_matches(';');
    let component = reasons_host::plugin::REASONS_WASM;
    use sha2::{Digest, Sha256};
    let digest = format!("{:x}", Sha256::digest(component));
    assert_eq!(
        out.trim(),
        format!(
            "reasons {0} (component reasons.wasm {0}, sha256 {1}; WIT {package})",
            env!("CARGO_PKG_VERSION"),
            &digest[..16]
        )
    );
}

/// `reasons <args...>` in `home` with its stdout a pipe whose reader has gone, as under
/// `| head` once head has what it wants: every write to it fails.
fn with_reader_gone(home: &std::path::Path, args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    Command::new(env!("CARGO_BIN_EXE_reasons"))
        .args(args)
        .env("HOME", home)
        .current_dir(home)
        .stdout(writer)
        .output()
        .unwrap()
}

#[test]
fn a_subcommand_whose_reader_goes_ends_quietly_and_wrap_still_does_its_work() {
    use std::os::unix::process::ExitStatusExt;
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    std::fs::write(&tools, r#"[{"name":"a"}]"#).unwrap();
    let config = dir.path().join("mcp.json");
    std::fs::write(
        &config,
        r#"{"mcpServers":{"one":{"command":"srv-one"},"two":{"command":"srv-two"}}}"#,
    )
    .unwrap();
    // What only prints ends as Unix tools do: by SIGPIPE, saying nothing.
    for args in [
        vec!["transform", "--tools", tools.to_str().unwrap()],
        vec!["demo"],
    ] {
        let output = with_reader_gone(dir.path(), &args);
        assert_eq!(output.status.signal(), Some(libc::SIGPIPE), "{args:?}");
        assert_eq!(String::from_utf8_lossy(&output.stderr), "", "{args:?}");
    }
    // What edits finishes its edit, every file of it, and says nothing of the reader.
    let output = with_reader_gone(dir.path(), &["wrap", "--config", config.to_str().unwrap()]);
    assert!(output.status.success(), "{output:?}");
    assert_eq!(String::from_utf8_lossy(&output.stderr), "");
    let wrapped: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&config).unwrap()).unwrap();
    let servers = wrapped["mcpServers"].as_object().unwrap();
    assert_eq!(servers.len(), 2);
    for (name, entry) in servers {
        let args = entry["args"].as_array().unwrap();
        assert_eq!(args[0], "mcp", "{name}: {entry}");
        assert_eq!(args.last().unwrap(), &format!("srv-{name}"), "{entry}");
    }
}
