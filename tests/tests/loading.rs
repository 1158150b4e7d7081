//! Loading a plugin: what is refused at load, with the file and the reason named (R15),
//! and the compile cache, which is used only when it checks out.

use reasons_host::plugin::{Cache, LoadRefusal, Origin, Unconfigured};
use reasons_host::{Plugin, Provider};
use reasons_tests::providers::{Scripted, text_call};
use std::path::{Path, PathBuf};

/// The error of loading `bytes` from a file named `name`, with its whole chain.
fn load_error(dir: &Path, name: &str, bytes: &[u8]) -> (PathBuf, String) {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let error = Plugin::load(&path).err().expect("the load is refused");
    (path, format!("{error:#}"))
}

fn assert_refused(name: &str, bytes: &[u8], why: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (path, error) = load_error(dir.path(), name, bytes);
    let named = format!("`{}` {why}", path.display());
    assert!(error.contains(&named), "{error:?} should say {named:?}");
}

#[test]
fn a_file_that_is_not_a_component_is_refused_naming_it() {
    assert_refused("notes.txt", b"hello", "is not a WebAssembly component");
    // A core module is WebAssembly, but not a component.
    assert_refused(
        "core.wasm",
        b"\0asm\x01\0\0\0",
        "is not a WebAssembly component",
    );
}

#[test]
fn a_component_of_another_world_is_refused_naming_it() {
    // The smallest component: it exports nothing, so not the provider a layer must be.
    assert_refused(
        "empty.wasm",
        b"\0asm\x0d\0\x01\0",
        "does not export agent:tools/provider@0.1.1",
    );
}

#[test]
fn a_component_that_imports_wasi_is_refused_naming_the_import() {
    // R15: a plugin gets its provider and nothing else: no files, network or clock.
    let bytes = std::fs::read(env!("NEEDS_WASI_WASM")).unwrap();
    assert_refused(
        "needs-wasi.wasm",
        &bytes,
        "imports more than a plugin is given",
    );
    let dir = tempfile::tempdir().unwrap();
    let (_, error) = load_error(dir.path(), "needs-wasi.wasm", &bytes);
    assert!(
        error.contains("wasi:"),
        "the error names the import: {error}"
    );
}

/// Whether a refusal is of the kind a case expects.
type Is = fn(&LoadRefusal) -> bool;

#[test]
fn each_refusal_is_told_apart_by_its_kind_not_its_words() {
    // R15: a caller that acts on why a plugin was refused reads the kind, and the
    // plugin it names; the words are for the human.
    let needs_wasi = std::fs::read(env!("NEEDS_WASI_WASM")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let cases: [(&str, &[u8], Is); 5] = [
        ("notes.txt", b"hello", |r| matches!(r, LoadRefusal::NotWasm)),
        ("core.wasm", b"\0asm\x01\0\0\0", |r| {
            matches!(r, LoadRefusal::CoreModule)
        }),
        ("broken.wasm", b"\0asm\x0d\0\x01\0\xff", |r| {
            matches!(r, LoadRefusal::NotComponent(_))
        }),
        ("empty.wasm", b"\0asm\x0d\0\x01\0", |r| {
            matches!(r, LoadRefusal::NoProvider(_))
        }),
        (
            "needs-wasi.wasm",
            &needs_wasi,
            |r| matches!(r, LoadRefusal::ImportsTooMuch(why) if why.contains("wasi:")),
        ),
    ];
    for (name, bytes, is) in cases {
        let path = dir.path().join(name);
        std::fs::write(&path, bytes).unwrap();
        let error = Plugin::load(&path).err().expect("the load is refused");
        assert_eq!(error.plugin(), path.display().to_string());
        assert!(is(error.refusal()), "{name}: {:?}", error.refusal());
    }
    let missing = Plugin::load(Path::new("/nonexistent/plugin.wasm"))
        .err()
        .unwrap();
    assert!(
        matches!(missing.refusal(), LoadRefusal::Unreadable(error) if error.kind() == std::io::ErrorKind::NotFound)
    );
}

#[test]
fn a_missing_file_is_named() {
    let error = Plugin::load(Path::new("/nonexistent/plugin.wasm"))
        .err()
        .unwrap();
    assert!(format!("{error:#}").contains("cannot read the plugin /nonexistent/plugin.wasm"));
}

/// The reasons component compiled through a cache in `dir`, and how it got there.
fn through(dir: &Path) -> (Plugin, Origin) {
    // A new `Cache` each time: a new process, as far as the cache can tell.
    let plugin = Plugin::compile(
        "reasons",
        reasons_host::plugin::REASONS_WASM,
        &Cache::at(dir),
    )
    .unwrap();
    let origin = plugin.origin().clone();
    (plugin, origin)
}

/// The plugin works: it augments and strips.
fn assert_works(plugin: &Plugin) {
    let provider = Scripted::new(&[r#"{"name":"t","inputSchema":{}}"#]);
    let mut layer = plugin.layer(Box::new(provider.clone()));
    layer.tools_for_llm().unwrap();
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", r#"{"reason":"x"}"#)])
        .unwrap();
    assert!(!results[0].is_error);
    assert_eq!(provider.take_received()[0].arguments.text(), "{}");
}

/// The one file in the cache directory.
fn cached_file(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .collect();
    assert_eq!(files.len(), 1, "{files:?}");
    files.into_iter().next().unwrap()
}

#[test]
fn a_component_is_compiled_once_and_then_loaded_from_the_cache() {
    let dir = tempfile::tempdir().unwrap();
    let cache = Cache::at(dir.path());
    let bytes = reasons_host::plugin::REASONS_WASM;
    let first = Plugin::compile("reasons", bytes, &cache).unwrap();
    assert_eq!(first.origin(), &Origin::Compiled);
    let again = Plugin::compile("reasons", bytes, &cache).unwrap();
    assert_eq!(again.origin(), &Origin::InProcess, "once per process");
    let (plugin, origin) = through(dir.path());
    assert_eq!(origin, Origin::FromDisk, "once per machine");
    assert_works(&plugin);
}

#[test]
fn a_corrupt_or_foreign_cache_file_is_detected_and_replaced() {
    let dir = tempfile::tempdir().unwrap();
    through(dir.path());
    let file = cached_file(dir.path());
    let good = std::fs::read(&file).unwrap();

    // One flipped bit in the compiled code.
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    // Whole and correctly digested, but not something wasmtime made for this engine.
    let foreign = {
        use sha2::{Digest, Sha256};
        let payload = b"compiled by someone else";
        [&good[..8], Sha256::digest(payload).as_slice(), payload].concat()
    };
    for (damage, contents, why) in [
        ("flipped", flipped, "its digest does not match its contents"),
        ("truncated", good[..20].to_vec(), "truncated"),
        ("not ours", b"garbage".to_vec(), "not a reasons cache file"),
        ("foreign", foreign, "made by another engine"),
    ] {
        std::fs::write(&file, contents).unwrap();
        let (plugin, origin) = through(dir.path());
        match origin {
            Origin::Rebuilt(message) => assert!(message.contains(why), "{damage}: {message}"),
            other => panic!("{damage}: {other:?}"),
        }
        assert_works(&plugin);
        assert_eq!(
            std::fs::read(&file).unwrap(),
            good,
            "{damage}: the file was rebuilt"
        );
        assert_eq!(through(dir.path()).1, Origin::FromDisk, "{damage}");
    }
}

#[test]
fn the_mcp_proxy_refuses_a_plugin_without_the_reasons_surface() {
    // It could not know which calls carry the model's reason.
    let settings = reasons_mcp_transports::Settings {
        server: reasons_mcp_transports::Server::Command(vec!["true".into()]),
        audit: None,
        stats: false,
        name: None,
        listen: None,
        max_message: usize::from(reasons_mcp_transports::DEFAULT_MAX_MESSAGE_MIB) << 20,
        write_timeout: std::time::Duration::from_secs(
            reasons_mcp_transports::DEFAULT_WRITE_TIMEOUT_SECS.into(),
        ),
        telemetry: None,
    };
    let error = reasons_mcp_transports::run(
        &reasons_tests::unruly(),
        reasons_transform::Options::default(),
        settings,
    )
    .unwrap_err();
    assert!(
        format!("{error:#}").contains("`unruly` does not export agent:tools/reasons@0.1.1"),
        "{error:#}"
    );
}

#[test]
fn a_cache_others_can_write_to_is_not_trusted() {
    // A file anyone else could write, digest and all, would be native code run as this
    // user: the digest proves a file whole, not who wrote it.
    use std::fs::Permissions;
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    through(dir.path());
    let file = cached_file(dir.path());
    std::fs::set_permissions(&file, Permissions::from_mode(0o666)).unwrap();
    match through(dir.path()).1 {
        Origin::Rebuilt(message) => assert!(
            message.contains("can be written by others (mode 666)"),
            "{message}"
        ),
        other => panic!("a file others can write was used: {other:?}"),
    }
    assert_eq!(through(dir.path()).1, Origin::FromDisk, "rebuilt private");

    std::fs::set_permissions(dir.path(), Permissions::from_mode(0o777)).unwrap();
    let (plugin, origin) = through(dir.path());
    match origin {
        Origin::Untrusted(message) => {
            assert!(
                message.contains("can be written by others (mode 777)"),
                "{message}"
            );
            assert!(message.contains("it is not used"), "{message}");
        }
        other => panic!("a directory others can write was used: {other:?}"),
    }
    assert_works(&plugin);
}

#[test]
fn a_plugin_that_cannot_be_configured_says_why_by_kind() {
    // Options the layer refuses, and a plugin without the reasons surface where a caller
    // needs it: each a typed error naming the plugin, worded for the human.
    let refused = reasons_host::Stack::new(Box::new(Scripted::new(&[])))
        .reasons(
            &Plugin::reasons().unwrap(),
            reasons_transform::Options {
                description: String::new(),
                ..Default::default()
            },
        )
        .err()
        .expect("an empty description is refused");
    assert_eq!(refused.plugin(), "reasons");
    assert!(
        matches!(refused.why(), Unconfigured::Refused(why) if why.contains("description")),
        "{refused:?}"
    );
    assert!(
        refused
            .to_string()
            .contains("the plugin `reasons` refused the options")
    );
    let unruly = reasons_tests::unruly();
    let not_reasons = reasons_mcp::ComponentLayer::new(&unruly, Default::default())
        .err()
        .expect("a plugin without the reasons surface is refused");
    assert!(matches!(not_reasons.why(), Unconfigured::NotReasons));
    assert!(
        not_reasons
            .to_string()
            .contains("does not export agent:tools/reasons@0.1.1")
    );
    // Asked of the plugin itself, the same lack is a fault of that call, by kind.
    let fault = unruly
        .layer(Box::new(Scripted::new(&[])))
        .reason_param()
        .expect_err("a plugin without the reasons surface publishes no parameter");
    assert_eq!(fault.kind(), reasons_host::plugin::FaultKind::NoSurface);
    assert_eq!(fault.call(), reasons_host::plugin::Entry::ReasonParam);
    assert_eq!(fault.plugin(), "unruly");
    assert!(
        fault
            .message()
            .contains("does not export agent:tools/reasons@0.1.1")
    );
}
