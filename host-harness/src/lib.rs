//! The harness of the project's design card: a wasmtime-based host that chains the
//! component between host-supplied inner providers (`Stack`, `provider.rs`, `FsTools`)
//! and a permission policy, and the proof of the stacking and never-throw contract
//! (R13-R17: `tests/tests/stack.rs`, `stacking.rs`, `containment.rs`, `integrity.rs`).
//! It is also the plugin host an embedder links: it stacks WebAssembly middleware layers
//! (the reasons component first among them) between a permission policy and real tools.
//!
//! ```no_run
//! use reasons_host::{FsTools, Plugin, Policy, Rule, Decision, Stack};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let tools = FsTools::new(std::path::Path::new("."))?;
//! let mut stack = Stack::new(tools)
//!     .reasons(&Plugin::reasons()?, reasons_transform::Options::default())?
//!     .policy(vec![Rule::new("fs_read", Decision::Allow)?], Box::new(|_request| false));
//! let tools = stack.list()?; // the model sees every tool with an optional `reason`
//! # Ok(()) }
//! ```
//!
//! # Running third-party layers: the sandbox
//!
//! The host runs third-party components in the middle of an agent's permission path.
//! Whatever a component does, the host keeps answering: one result per call, in order, and
//! the next call works (R13, R15); nothing runs below it that it was not given (R16); and its
//! cost is bounded (R17).
//!
//! **Forwarding integrity (R16).** Every plugin the host loads, the built-in one
//! included, passes its calls down through a gate. While it executes a batch, it may pass
//! down each call of that batch at most once, with the same id and name, and the same
//! arguments (compared by value: whitespace aside, each top-level member's text) less at
//! most the parameter it published (`reason-param`) on the tools it augmented. Which tools
//! those are is not taken on the plugin's word: the host reads the catalogue the plugin
//! listed with its own copy of the transform, and only a tool whose own schema leaves that
//! name free may lose it (so a plugin that claims to have added `path`, or `dry_run`, cannot
//! take it off an approved call; `tests/fixtures/liar` tries). While it
//! lists, it may list below once and run nothing; while it is configured, nothing at all.
//! A call it invents, repeats or rewrites is never executed: nothing of that pass runs, the
//! plugin gets an error, every call of its batch gets an `is_error` result naming the plugin
//! and what it did ("passed down a call it was not given (id `x`, tool `delete_everything`)"),
//! and the instance is dropped. The gate costs a comparison per forwarded call; see
//! BENCHMARKS.md.
//!
//! | limit (flag, default) | what hits it | what the host sees |
//! |---|---|---|
//! | deadline (`--plugin-deadline-ms`, 5000) | a loop that never ends | every call of the batch: `is_error`, "the plugin `P` ran past its deadline of 5000 ms" |
//! | wall time (`--plugin-wall-ms`, 24 × the deadline) | a call that, with the provider below it, runs long | "the plugin `P`'s call ran past its wall limit of … ms, time below it included" |
//! | memory (`--plugin-memory-mib`, 256) | allocating without bound, in any number of memories or tables | "the plugin `P` ran out of memory (limit 256 MiB over all its memories and tables)" |
//! | hostcall data (`--plugin-hostcall-mib`, 64) | passing a gigantic batch down, or an answer that big up | "the plugin `P` passed more than its hostcall data limit of 64 MiB between itself and the host" |
//! | stack (`--plugin-stack-kib`, 512; 64 KiB to 64 MiB) | recursion without bound | "the plugin `P` overflowed its stack of 512 KiB" |
//! | counts (fixed: 32 instances, 4 memories, 8 tables) | a component made of many | "the plugin `P` could not start: …" |
//! | any other trap | `unreachable`, a panic, a bad memory access | "the plugin `P` trapped: …" |
//!
//! - The deadline counts only the plugin's own time: time in the provider below it (a slow
//!   tool, a server) is off its clock. It is enforced with epoch interruption, ticked every
//!   5 ms by a thread of the host, and set once per call: starting a fresh instance and
//!   replaying its catalogue is part of the call's time, not a deadline of its own. The wall
//!   limit counts everything, and is checked when the plugin runs again after the provider
//!   below returns (a provider that never returns is the host's to bound, not the plugin's).
//! - Memory is summed over every linear memory and table (a table element costs a pointer),
//!   and the instance, memory and table counts are capped: each memory reserves address
//!   space of its own.
//! - A plugin call runs on a stack known to hold its limit and the host's frames above it
//!   (`stacker` gives it a fresh segment when the calling thread has less left), so no limit
//!   in range can overflow the host; one out of range is refused with a message.
//! - After any of these, the instance is dropped. The next call gets a fresh one from the
//!   `InstancePre`, configured with the layer's options and given the last catalogue the
//!   layer listed, from the host's copy: the augmented tools are intact, the provider below is
//!   not asked again, and nothing runs below during the replay (the gate refuses it).
//! - Malformed answers are contained the same way. Results that match a call pass on; a call
//!   left without one gets an `is_error` result naming the plugin and the fault ("it answered
//!   1 results for 2 calls (0 for unknown ids, 0 more than once)"); results for no call are
//!   dropped. A listing with a declaration that is not JSON fails, naming the declaration,
//!   and the last good listing's augmented tools stand.
//! - Refused at load, naming the file and the reason: bytes that are not WebAssembly, a core
//!   module, a component that does not export `agent:tools/provider@0.1.1`, and a component
//!   that imports anything beyond `agent:tools/provider` and `types` (WASI included: a plugin
//!   gets no files, network, clock or environment).
//! - Sessions are isolated: each `WasmLayer` has its own instance and augmented tools.
//! - A component is compiled once per process, and cached compiled in `$REASONS_CACHE_DIR`
//!   (default `$XDG_CACHE_HOME/reasons` or `~/.cache/reasons`; empty disables it) under the
//!   SHA-256 of the engine's compatibility hash and the component's bytes. A file is loaded
//!   only if its own SHA-256 checks out and wasmtime accepts its header; otherwise it is
//!   compiled again and the file replaced atomically.
//! - **The cache's trust model.** A cached file is native code the host runs as you: the
//!   digest proves a file whole, not who wrote it, so the cache is trusted exactly as far as
//!   the directory is private. As ssh does with its keys, the host uses the directory
//!   only if it is owned by the current user and writable by no one else (it is created
//!   `0700`), and a file only if it too is the user's and writable by no one else. Otherwise
//!   it compiles in memory, says why on stderr ("… can be written by others (mode 777); it
//!   is not used (`chmod 700` it, or set REASONS_CACHE_DIR)"), and leaves the files alone.
//!
//! `tests/tests/containment.rs` has a test per fault (`tests/fixtures/unruly` misbehaves on
//! demand: trap, spin, hog, recurse, flood, drop-last, extra, wrong-ids, fail, trap-listing,
//! bad-listing), `integrity.rs` one per way past the policy (smuggle, rewrite, rewrite-args,
//! double, amplify, smuggle-listing, relist) under `Policy(Unruly(provider))` with a policy
//! that denies the smuggled tool, `memory.rs` hand-written components with many memories
//! and huge tables against the process's peak memory, `stack.rs` a 4 MiB stack limit from
//! a thread with 256 KiB, `loading.rs` the load-time refusals and the cache, and `soak.rs`
//! runs 8 sessions on 4 threads through 3,200 random batches with every fault injected at
//! random, checking every result against its own call.
#![deny(missing_docs)]

pub mod asks_why;
pub mod dry_run;
pub mod fs_tools;
pub mod native;
pub mod plugin;
pub mod policy;
pub mod provider;
pub mod recorder;
pub mod stack;

pub use fs_tools::FsTools;
pub use native::NativeReasons;
pub use plugin::AugmentedTools;
pub use plugin::{Limits, Plugin, WasmLayer};
pub use policy::{AskRequest, Decision, OnAsk, Policy, ReasonSource, Rule, prompt};
pub use provider::{Json, Provider};
pub use recorder::Recorder;
pub use stack::Stack;
