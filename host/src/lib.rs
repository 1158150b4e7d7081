//! The plugin host: a wasmtime host that stacks WebAssembly middleware layers (the
//! reasons component first among them) between a permission policy and real tools.
//!
//! ```no_run
//! use reasons_host::{FsTools, Plugin, Policy, Rule, Decision, Stack};
//!
//! # fn main() -> anyhow::Result<()> {
//! let tools = FsTools::new(std::path::Path::new("."))?;
//! let mut stack = Stack::new(tools)
//!     .reasons(&Plugin::reasons()?, reasons_transform::Options::default())?
//!     .policy(vec![Rule::new("fs_read", Decision::Allow)?], Box::new(|_request| false));
//! let tools = stack.list()?; // the model sees every tool with an optional `reason`
//! # Ok(()) }
//! ```
#![deny(missing_docs)]

pub mod dry_run;
pub mod fs_tools;
pub mod inert;
pub mod native;
pub mod plugin;
pub mod policy;
pub mod provider;
pub mod recorder;
pub mod stack;

pub use fs_tools::FsTools;
pub use native::NativeReasons;
pub use plugin::StripSet;
pub use plugin::{Limits, Plugin, WasmLayer};
pub use policy::{AskRequest, Decision, OnAsk, Policy, ReasonSource, Rule, prompt};
pub use provider::{Json, Provider};
pub use recorder::Recorder;
pub use stack::Stack;
