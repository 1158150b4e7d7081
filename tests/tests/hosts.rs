//! One `.wasm`, any component host: the component checked against its world, run by hosts
//! this project did not write (Node through jco, Python through the `wasmtime` package),
//! and composed with a provider component into one component that the plugin host and Node
//! both run.

use reasons_host::plugin::REASONS_WASM;
use reasons_host::provider::FixedTools;
use reasons_host::{Plugin, Stack};
use reasons_test_support::peers::installed;
use reasons_tests::checks::error_flags;
use reasons_tests::compose;
use reasons_tests::providers::text_call;
use reasons_transform::Options;
use serde_json::{Value, json};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

fn registry_wasm() -> Vec<u8> {
    std::fs::read(env!("REGISTRY_WASM")).expect("the registry fixture was built")
}

/// `program args...`, which must succeed within two minutes (far more than any of these
/// takes: a peer that hangs fails the test instead of holding CI); its stdout.
fn output(command: &mut Command) -> Vec<u8> {
    let output = reasons_test_support::peers::output_within(command, Duration::from_secs(120));
    assert!(
        output.status.success(),
        "{command:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output.stdout
}

/// `wasm` transpiled by jco into `out` as an ES module named `name`.
fn transpile(wasm: &[u8], name: &str, out: &Path) {
    let hosts = installed("hosts");
    let file = out.join(format!("{name}.wasm"));
    std::fs::write(&file, wasm).unwrap();
    output(
        Command::new(hosts.join("node_modules/.bin/jco"))
            .args([
                "transpile",
                "--instantiation",
                "async",
                "--quiet",
                "--name",
                name,
            ])
            .arg(&file)
            .arg("-o")
            .arg(out),
    );
}

/// The JSON report of `tests/hosts/<script>`, run by Node on the module in `out`.
fn node(script: &str, out: &Path) -> Value {
    let report = output(
        Command::new("node")
            .arg(installed("hosts").join(script))
            .arg(out),
    );
    serde_json::from_slice(&report).expect("the host prints JSON")
}

#[test]
fn the_artifact_targets_the_world_it_claims() {
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit"))
        .unwrap();
    let world = |name| resolve.select_world(&[package], Some(name)).unwrap();
    wit_component::targets(&resolve, world("reasons-layer"), REASONS_WASM, false)
        .expect("reasons.wasm targets agent:tools/reasons-layer");
    wit_component::targets(&resolve, world("middleware"), REASONS_WASM, false)
        .expect("and so it is a middleware");
    wit_component::targets(&resolve, world("tool-source"), &registry_wasm(), false)
        .expect("the registry fixture targets agent:tools/tool-source");
    assert!(
        wit_component::targets(&resolve, world("tool-source"), REASONS_WASM, false).is_err(),
        "the check can fail: reasons.wasm imports a provider, which a tool source may not"
    );
}

/// What both example hosts must report: their scripted turn through the component.
fn expected_report() -> Value {
    let reason = r#""reason":{"type":"string","description":"One short sentence: why this call. Shown to the human reviewing the session."}"#;
    json!({
        "param": "reason",
        "augmented_tools": ["boom", "read"],
        "tools": [
            format!(r#"{{"name":"read","inputSchema":{{"type":"object","properties":{{{reason},"path":{{"type":"string"}}}}}}}}"#),
            r#"{"name":"own","inputSchema":{"type":"object","properties":{"reason":{"type":"string"}}}}"#,
            format!(r#"{{"name":"boom","inputSchema":{{"type":"object","properties":{{{reason}}}}}}}"#),
        ],
        // R9: stripped, untouched byte for byte, a tool's own reason kept (R5), unknown;
        // the registry stopped at the call that threw.
        "received": [
            ["1", "read", r#"{"path":"a.txt"}"#],
            ["2", "read", r#"{ "path" : "b.txt" }"#],
            ["3", "own", r#"{"reason":"mine"}"#],
            ["4", "ghost", r#"{"reason":"x"}"#],
            ["5", "boom", "{}"],
        ],
        // R13: a provider that throws becomes one error per call of its batch.
        "results": [
            ["1", r#""contents of a.txt""#, false],
            ["2", r#""contents of b.txt""#, false],
            ["3", r#""{\"reason\":\"mine\"}""#, false],
            ["4", r#""no tool ghost""#, true],
            ["5", r#""The tool provider failed: boom exploded""#, true],
            ["6", r#""The tool provider failed: boom exploded""#, true],
        ],
        // R11 R12: the host reads the reason under the published name, beside the arguments.
        "prompts": [
            r#"read {"path":"a.txt"} | reason: to see a"#,
            r#"read {"path":"b.txt"} | reason: (none given)"#,
            r#"own {"reason":"mine"} | reason: (none given)"#,
            r#"ghost {"reason":"x"} | reason: (none given)"#,
            "boom {} | reason: to try",
            r#"read {"path":"c.txt"} | reason: (none given)"#,
        ],
    })
}

#[test]
fn a_node_host_runs_the_component_through_jco() {
    // R1 R5 R9 R11 R13
    let out = tempfile::tempdir().unwrap();
    transpile(REASONS_WASM, "reasons", out.path());
    let mut report = node("node-host.mjs", out.path());
    let after_unwind = report.as_object_mut().unwrap().remove("afterUnwind");
    assert_eq!(report, expected_report());
    // A plain Error thrown by the provider escapes to the host; the instance it unwound
    // through traps at once on its next call rather than run on (or spin); a fresh one
    // serves the call after.
    assert_eq!(
        after_unwind,
        Some(json!({
            "unwound": [
                "raw: Error: raw failure",
                "after: RuntimeError: wasm trap: wasm `unreachable` instruction executed",
            ],
            "served": [["9", r#""contents of d.txt""#, false]],
            "received": [["9", "read", r#"{"path":"d.txt"}"#]],
        }))
    );
}

#[test]
fn a_python_host_runs_the_component_through_wasmtime_py() {
    // R1 R5 R9 R11 R13
    let dir = tempfile::tempdir().unwrap();
    let wasm = dir.path().join("reasons.wasm");
    std::fs::write(&wasm, REASONS_WASM).unwrap();
    let hosts = installed("hosts");
    let report = output(
        Command::new(hosts.join(".venv/bin/python"))
            .arg(hosts.join("python_host.py"))
            .arg(&wasm),
    );
    let report: Value = serde_json::from_slice(&report).unwrap();
    assert_eq!(report, expected_report());
}

#[test]
fn composed_with_a_registry_it_is_one_component_the_harness_runs() {
    // R1 R9: reasons' provider import is the registry's export; nothing is left to import
    // but the types.
    let composed = compose::plug(REASONS_WASM, &registry_wasm()).unwrap();
    let plugin = Plugin::new("reasons+registry", &composed).unwrap();
    assert_eq!(plugin.imports(), ["agent:tools/types@0.1.1"]);
    // The provider under the composition is never asked: the registry is inside.
    let mut stack = Stack::new(FixedTools::new(Vec::new(), "\"not the registry\""))
        .reasons(&plugin, Options::default())
        .unwrap();
    let tools = stack.list().unwrap();
    assert_eq!(tools.len(), 2, "the registry's echo and fail: {tools:?}");
    assert!(
        tools
            .iter()
            .all(|tool| tool.contains(r#""reason":{"type":"string""#))
    );
    let results = stack.execute(vec![
        text_call("1", "echo", r#"{"text":"hi","reason":"to show"}"#),
        text_call("2", "fail", "{}"),
    ]);
    assert_eq!(error_flags(&results), [("1", false), ("2", true)]);
    assert_eq!(results[0].content, r#""{\"text\":\"hi\"}""#);
}

#[test]
fn composed_with_a_registry_it_runs_in_node() {
    // R1 R9
    let composed = compose::plug(REASONS_WASM, &registry_wasm()).unwrap();
    let out = tempfile::tempdir().unwrap();
    transpile(&composed, "composed", out.path());
    let report = node("node-composed.mjs", out.path());
    assert_eq!(report["augmented_tools"], json!(["echo", "fail"]));
    assert_eq!(
        report["results"],
        json!([{"callId": "1", "content": r#""{\"text\":\"hi\"}""#, "isError": false}])
    );
}
