//! The component as it is released: what it says of itself, its WIT package beside it,
//! and builds that give the same bytes from the same sources.

use reasons_build_wasm::{About, REASONS_DESCRIPTION, build_in, with_metadata};
use reasons_host::plugin::{REASONS_WASM, WIT_PACKAGE_WASM};
use std::process::Command;

/// What `reasons component` writes, read back.
fn written() -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("release");
    let status = Command::new(env!("CARGO_BIN_EXE_reasons"))
        .args(["component", "--out"])
        .arg(&out)
        .status()
        .unwrap();
    assert!(status.success());
    let read = |name: &str| std::fs::read(out.join(name)).unwrap();
    (read("reasons.wasm"), read("agent-tools.wasm"))
}

/// A metadata field as `wasm-tools metadata show` prints it.
fn shown(field: &Option<impl std::fmt::Display>) -> Option<String> {
    field.as_ref().map(ToString::to_string)
}

/// Asserts that `component`'s metadata gives `name`, `description` and the release's
/// version, licence and source.
fn says(component: &[u8], name: &str, description: &str) {
    let payload = wasm_metadata::Payload::from_binary(component).unwrap();
    let metadata = payload.metadata();
    assert_eq!(metadata.name.as_deref(), Some(name));
    assert_eq!(
        shown(&metadata.version).as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(shown(&metadata.description).as_deref(), Some(description));
    assert_eq!(
        shown(&metadata.licenses).as_deref(),
        Some("Apache-2.0 WITH LLVM-exception")
    );
    assert_eq!(
        shown(&metadata.source).as_deref(),
        Some(env!("CARGO_PKG_REPOSITORY"))
    );
}

fn about() -> About<'static> {
    About {
        name: "reasons",
        version: env!("CARGO_PKG_VERSION"),
        description: REASONS_DESCRIPTION,
        licenses: env!("CARGO_PKG_LICENSE"),
        source: env!("CARGO_PKG_REPOSITORY"),
    }
}

#[test]
fn the_released_component_says_what_it_is() {
    let (component, wit) = written();
    assert_eq!(
        component, REASONS_WASM,
        "it is the component the binary runs"
    );
    says(&component, "reasons", REASONS_DESCRIPTION);

    assert_eq!(wit, WIT_PACKAGE_WASM);
    let wit_component::DecodedWasm::WitPackage(resolve, package) =
        wit_component::decode(&wit).unwrap()
    else {
        panic!("agent-tools.wasm is a WIT package");
    };
    let package = &resolve.packages[package];
    assert_eq!(package.name.to_string(), "agent:tools@0.1.1");
    let mut interfaces: Vec<&String> = package.interfaces.keys().collect();
    interfaces.sort();
    assert_eq!(interfaces, ["provider", "reasons", "types"]);
    let reasons = &resolve.interfaces[package.interfaces["reasons"]];
    for function in ["augment", "route", "configure", "augmented-tools"] {
        assert!(reasons.functions.contains_key(function), "{function}");
    }
}

#[test]
fn two_clean_builds_give_the_released_bytes() {
    // The same sources give the same bytes in two fresh target folders, and those bytes
    // with the release's metadata are the component this binary ships; nothing in them
    // names this machine (cargo's home, this checkout).
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let [one, two] = dirs
        .each_ref()
        .map(|dir| std::fs::read(build_in("reasons-guest", "reasons.wasm", dir.path())).unwrap());
    assert!(one.len() > 1000);
    assert!(one == two, "two clean builds differ");
    let released = tempfile::NamedTempFile::new().unwrap();
    let built = dirs[0].path().join("wasm32-wasip2/release/reasons.wasm");
    with_metadata(&built, &about(), released.path());
    assert!(
        std::fs::read(released.path()).unwrap() == REASONS_WASM,
        "the shipped component is not this build"
    );
    let home = std::env::var("HOME").unwrap();
    let checkout = env!("CARGO_MANIFEST_DIR").trim_end_matches("/cli");
    for machine in [home.as_str(), checkout] {
        let found = one
            .windows(machine.len())
            .any(|window| window == machine.as_bytes());
        assert!(!found, "the component names {machine}");
    }
}

/// Fails when a released component grows past `budget` bytes.
fn within_budget(name: &str, component: &[u8], budget: usize) {
    assert!(
        component.len() <= budget,
        "{name} is {} bytes, over its budget of {budget}",
        component.len()
    );
}

// A host downloads and compiles these bytes. Each budget is where the component stands
// (95,288 and 542,090 bytes at issue 57) with a little room, on the way to the issue's
// 64 KB and 256 KB: a change that makes one bigger moves its budget here, and says why
// in BENCHMARKS.md, where what each change gave is kept.

#[test]
fn the_released_component_stays_within_its_size_budget() {
    within_budget("reasons.wasm", REASONS_WASM, 96 << 10);
}

#[test]
fn the_released_gateway_stays_within_its_size_budget() {
    within_budget("reasons-gateway.wasm", &written_gateway(), 544 << 10);
}

/// The gateway as `reasons component` writes it.
fn written_gateway() -> Vec<u8> {
    let dir = tempfile::tempdir().unwrap();
    let status = Command::new(env!("CARGO_BIN_EXE_reasons"))
        .args(["component", "--out"])
        .arg(dir.path())
        .status()
        .unwrap();
    assert!(status.success());
    std::fs::read(dir.path().join("reasons-gateway.wasm")).unwrap()
}

#[test]
fn the_released_gateway_says_what_it_is_and_imports_no_files_or_sockets() {
    let gateway = written_gateway();
    says(
        &gateway,
        "reasons-gateway",
        reasons_build_wasm::GATEWAY_DESCRIPTION,
    );
    let wit_component::DecodedWasm::Component(resolve, world) =
        wit_component::decode(&gateway).unwrap()
    else {
        panic!("reasons-gateway.wasm is a component");
    };
    let world = &resolve.worlds[world];
    let names = |items: &indexmap::IndexMap<wit_parser::WorldKey, wit_parser::WorldItem>| {
        items
            .keys()
            .map(|key| resolve.name_world_key(key))
            .collect::<Vec<_>>()
    };
    let (imports, exports) = (names(&world.imports), names(&world.exports));
    assert_eq!(exports.len(), 1, "{exports:?}");
    assert!(
        exports[0].starts_with("wasi:http/incoming-handler@0.2"),
        "{exports:?}"
    );
    assert!(!imports.is_empty());
    assert!(
        imports
            .iter()
            .any(|name| name.starts_with("wasi:http/outgoing-handler@0.2")),
        "{imports:?}"
    );
    for import in &imports {
        assert!(
            !import.starts_with("wasi:filesystem") && !import.starts_with("wasi:sockets"),
            "the gateway imports {import}"
        );
    }
}

#[test]
fn a_clean_build_of_the_gateway_gives_the_released_bytes() {
    let dir = tempfile::tempdir().unwrap();
    let built = build_in("reasons-gateway", "reasons_gateway.wasm", dir.path());
    let released = tempfile::NamedTempFile::new().unwrap();
    let about = About {
        name: "reasons-gateway",
        description: reasons_build_wasm::GATEWAY_DESCRIPTION,
        ..about()
    };
    with_metadata(&built, &about, released.path());
    assert!(
        std::fs::read(released.path()).unwrap() == written_gateway(),
        "the shipped gateway is not this build"
    );
}
