//! Memory is bounded over everything a plugin holds (R17): its linear memories summed,
//! its tables, and how many of each it may have. The hostile components here are written
//! in the text format, because what they do (many memories, huge tables) is not what a
//! compiler emits. Each touches every byte it gets, so what it is given shows in the
//! process's resident memory, and the test reads the process's peak, reset before each
//! attack: this file's other test holds little memory, so it cannot be counted.

use reasons_host::{Limits, Plugin, Provider};
use reasons_tests::checks::{assert_error_mentions, error_flags};
use reasons_tests::providers::{Scripted, text_call};
use std::path::Path;
use std::time::Duration;
use wit_component::{ComponentEncoder, StringEncoding};

/// The limit the hostile components are run under.
const LIMIT: usize = 32 << 20;
/// What the host may use beyond the limit while containing one: the store, its compiled
/// code, the copies of arguments. Each attack asks for more than twice the limit, so a
/// host that did not sum would exceed it.
const MARGIN: usize = 24 << 20;
const PAGE: usize = 64 << 10;

/// A core module of the middleware world whose listing runs `attack`, then answers an
/// empty catalogue; `extra` declares what the attack uses.
fn core_module(extra: &str, attack: &str) -> String {
    format!(
        r#"(module
  (memory $main (export "memory") 16)
  {extra}
  (global $heap (mut i32) (i32.const 1024))
  (func (export "cabi_realloc") (param i32 i32 i32 i32) (result i32)
    (local $at i32)
    (local.set $at (i32.and (i32.add (global.get $heap) (i32.const 7)) (i32.const -8)))
    (global.set $heap (i32.add (local.get $at) (local.get 3)))
    (local.get $at))
  (func $empty (result i32)
    (i32.store8 (i32.const 16) (i32.const 0))
    (i32.store (i32.const 20) (i32.const 0))
    (i32.store (i32.const 24) (i32.const 0))
    (i32.const 16))
  (func (export "agent:tools/provider@0.1.1#tools-for-llm") (result i32)
    {attack}
    (call $empty))
  (func (export "agent:tools/provider@0.1.1#execute-tool-calls") (param i32 i32) (result i32)
    (call $empty)))"#
    )
}

/// `core`, made a component of the middleware world, loaded as a plugin under [`LIMIT`].
fn plugin(name: &str, core: &str) -> Plugin {
    let mut module = wat::parse_str(core).expect("the fixture is valid text");
    let mut resolve = wit_parser::Resolve::default();
    let (package, _) = resolve
        .push_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit"))
        .unwrap();
    let world = resolve
        .select_world(&[package], Some("middleware"))
        .unwrap();
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        StringEncoding::UTF8,
        false,
    )
    .unwrap();
    let component = ComponentEncoder::default()
        .module(&module)
        .unwrap()
        .validate(true)
        .encode()
        .expect("the fixture is a component");
    Plugin::new(name, &component).unwrap().with_limits(Limits {
        memory: LIMIT,
        deadline: Duration::from_secs(30),
        wall: Duration::from_secs(60),
        ..Limits::default()
    })
}

/// Three memories, each grown to three quarters of the limit and filled: within a
/// per-memory limit, more than twice the limit summed.
fn memories() -> Plugin {
    let pages = LIMIT * 3 / 4 / PAGE;
    let mut extra = String::new();
    let mut attack = String::new();
    for memory in 1..=3 {
        extra.push_str(&format!("(memory $m{memory} 0)\n"));
        attack.push_str(&format!(
            "(if (i32.eq (memory.grow $m{memory} (i32.const {pages})) (i32.const -1))
               (then unreachable))
             (memory.fill $m{memory} (i32.const 0) (i32.const 1) (i32.const {}))\n",
            pages * PAGE
        ));
    }
    plugin("memories", &core_module(&extra, &attack))
}

/// A table grown to twice the limit's worth of elements, each set.
fn tables() -> Plugin {
    let elements = 2 * LIMIT / std::mem::size_of::<usize>();
    let attack = format!(
        "(if (i32.eq (table.grow $t (ref.func $f) (i32.const {elements})) (i32.const -1))
           (then unreachable))"
    );
    let extra = "(table $t 0 funcref) (func $f) (elem declare func $f)";
    plugin("tables", &core_module(extra, &attack))
}

/// More memories than a plugin may have: each would reserve address space of its own.
fn many_memories() -> Plugin {
    let extra: String = (0..50).map(|i| format!("(memory $x{i} 1)\n")).collect();
    plugin("many-memories", &core_module(&extra, ""))
}

/// A line of the kernel's account of this process, in bytes.
fn status(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|line| line.starts_with(field))
        .unwrap_or_else(|| panic!("Linux reports {field}"));
    let kib: usize = line
        .split_whitespace()
        .nth(1)
        .and_then(|kib| kib.parse().ok())
        .unwrap();
    kib << 10
}

/// Starts a new measure of the peak: the kernel's high-water mark is set back to what the
/// process holds now (`clear_refs` 5), so that an earlier peak (compiling, say) cannot
/// hide this one. What it holds now, in bytes.
fn reset_peak() -> usize {
    std::fs::write("/proc/self/clear_refs", "5").expect("the peak can be reset");
    status("VmRSS:")
}

#[test]
fn memory_is_bounded_over_all_memories_and_tables() {
    // R17
    let cases = [
        (
            memories(),
            "ran out of memory (limit 32 MiB over all its memories and tables)",
        ),
        (
            tables(),
            "ran out of memory (limit 32 MiB over all its memories and tables)",
        ),
        (many_memories(), "could not start"),
    ];
    for (plugin, message) in cases {
        let provider = Scripted::new(&[]);
        let mut layer = plugin.layer(Box::new(provider.clone()));
        let before = reset_peak();
        let answer = layer.tools_for_llm();
        let grown = status("VmHWM:").saturating_sub(before);
        assert!(
            grown <= LIMIT + MARGIN,
            "{}: the process's peak grew by {} MiB under a {} MiB limit",
            plugin.name(),
            grown >> 20,
            LIMIT >> 20
        );
        let error = answer.unwrap_err().to_string();
        assert!(error.contains(message), "{}: {error}", plugin.name());
        // The next call works: the fault was the listing's alone.
        let results = layer
            .execute_tool_calls(vec![text_call("1", "t", "{}")])
            .unwrap();
        assert_eq!(results.len(), 1, "{}", plugin.name());
    }
}

#[test]
fn a_plugin_within_its_limits_is_not_refused() {
    // R17: the limits bound abuse, not use: one memory at three quarters of the limit.
    let pages = LIMIT * 3 / 4 / PAGE;
    let attack = format!(
        "(if (i32.eq (memory.grow $m1 (i32.const {pages})) (i32.const -1)) (then unreachable))"
    );
    let plugin = plugin("modest", &core_module("(memory $m1 0)", &attack));
    let mut layer = plugin.layer(Box::new(Scripted::new(&[])));
    assert_eq!(layer.tools_for_llm().unwrap().len(), 0);
    let results = layer
        .execute_tool_calls(vec![text_call("1", "t", "{}")])
        .unwrap();
    assert_eq!(error_flags(&results), [("1", true)]);
    assert_error_mentions(&results[0], "returned no result");
}
