//! The sandbox every plugin runs in: one engine, and the limits that turn wasmtime's
//! isolation into the contract's promise that the host keeps answering (R15).
//!
//! | limit          | what hits it                         | what the host sees                     |
//! |----------------|--------------------------------------|----------------------------------------|
//! | deadline       | a loop that never ends               | the call's results are `is_error`      |
//! | memory         | allocating without bound             | the same, naming the memory limit      |
//! | hostcall data  | passing a gigantic batch down        | the same, naming the data limit        |
//! | stack          | recursing without bound              | the same, naming the stack             |
//!
//! In every case the instance is dropped and the next call gets a fresh one.

use std::sync::OnceLock;
use std::time::{Duration, Instant};
use wasmtime::{Config, Engine, ResourceLimiter, StoreLimits, StoreLimitsBuilder, Trap};

/// How often the epoch ticks: the granularity of a deadline. Checking the epoch costs a
/// load and a compare at loop heads and function entries; the tick itself is a thread
/// that wakes this often, which costs nothing measurable.
const TICK: Duration = Duration::from_millis(5);

/// The native stack a plugin may use, unless [`set_stack_limit`] said otherwise.
/// Wasmtime's default: recursion past it traps instead of overflowing the host's stack.
pub const DEFAULT_STACK: usize = 512 << 10;

static STACK: OnceLock<usize> = OnceLock::new();

/// Sets the stack limit for every plugin of this process. It belongs to the engine, so
/// it can only be set before the first plugin is compiled.
pub fn set_stack_limit(bytes: usize) -> anyhow::Result<()> {
    anyhow::ensure!(
        bytes > 0,
        "the plugin stack limit must be more than 0 bytes"
    );
    STACK.set(bytes).map_err(|_| {
        anyhow::anyhow!("the plugin stack limit is set once, before any plugin is loaded")
    })
}

/// The one engine: compiled code is only shared within an engine. Its epoch is ticked by
/// a thread of its own for as long as the process lives.
pub fn engine() -> &'static Engine {
    static ENGINE: OnceLock<Engine> = OnceLock::new();
    ENGINE.get_or_init(|| {
        let mut config = Config::new();
        // Epochs bound a runaway loop by wall time at the cost of a check per loop and
        // call; fuel would count every instruction and slow every plugin down.
        config.epoch_interruption(true);
        // Set before `STACK` is read so that a later `set_stack_limit` is refused.
        let stack = *STACK.get_or_init(|| DEFAULT_STACK);
        config.max_wasm_stack(stack);
        // A fault's message goes to the model and the human; a backtrace of unnamed wasm
        // functions helps neither, and capturing one makes every trap slower.
        config.wasm_backtrace_max_frames(None);
        let engine = Engine::new(&config)
            .unwrap_or_else(|error| panic!("the sandbox's engine configuration: {error:#}"));
        let ticking = engine.clone();
        std::thread::Builder::new()
            .name("reasons-epoch".into())
            .spawn(move || {
                loop {
                    std::thread::sleep(TICK);
                    ticking.increment_epoch();
                }
            })
            .unwrap_or_else(|error| panic!("cannot start the epoch thread: {error}"));
        engine
    })
}

/// What a plugin instance may use before it is stopped. Every field is a flag of the
/// `reasons` command (`--plugin-deadline-ms`, `--plugin-memory-mib`, `--plugin-hostcall-mib`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The time one call may spend in the plugin's own code. Time spent in the provider
    /// below (a slow tool, a server) is not counted: only the plugin is on the clock.
    pub deadline: Duration,
    /// The most linear memory an instance may grow to, in bytes. It also bounds what a
    /// plugin can return, since an answer is read out of that memory.
    pub memory: usize,
    /// The most data a plugin may pass to the host in one call of its import (a batch
    /// sent down), in bytes.
    pub hostcall_data: usize,
}

impl Default for Limits {
    /// Enough for catalogues and batches of tens of megabytes, with room to spare; a
    /// runaway loop holds an agent up for a few seconds at most.
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(5),
            memory: 256 << 20,
            hostcall_data: 64 << 20,
        }
    }
}

impl Limits {
    /// Epoch ticks covering `time`, at least one.
    fn ticks(time: Duration) -> u64 {
        (time.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1
    }
}

/// A store's accounts: the memory it was refused and the time its plugin has used.
pub struct Meter {
    limits: Limits,
    store_limits: StoreLimits,
    /// Set when a memory growth was refused: a trap that follows is that limit's doing.
    refused_memory: bool,
    started: Instant,
    in_host: Duration,
}

impl Meter {
    /// A meter enforcing `limits`.
    pub fn new(limits: Limits) -> Meter {
        Meter {
            limits,
            store_limits: StoreLimitsBuilder::new().memory_size(limits.memory).build(),
            refused_memory: false,
            started: Instant::now(),
            in_host: Duration::ZERO,
        }
    }

    /// Starts the clock for one call; the store's deadline is set to match.
    pub fn start(&mut self) -> u64 {
        self.started = Instant::now();
        self.in_host = Duration::ZERO;
        Limits::ticks(self.limits.deadline)
    }

    /// Runs `work` off the plugin's clock: the provider below is not the plugin's time.
    pub fn off_the_clock<T>(&mut self, work: impl FnOnce() -> T) -> T {
        let entered = Instant::now();
        let out = work();
        self.in_host += entered.elapsed();
        out
    }

    /// At a deadline: stop the plugin if its own time is up, or give it the rest.
    pub fn at_deadline(&self) -> wasmtime::UpdateDeadline {
        let used = self.started.elapsed().saturating_sub(self.in_host);
        match self.limits.deadline.checked_sub(used) {
            Some(left) if !left.is_zero() => {
                wasmtime::UpdateDeadline::Continue(Limits::ticks(left))
            }
            _ => wasmtime::UpdateDeadline::Interrupt,
        }
    }

    /// What stopped the plugin, in words for the model and the human.
    pub fn describe(&self, plugin: &str, error: &wasmtime::Error) -> String {
        let limits = &self.limits;
        if error
            .root_cause()
            .to_string()
            .starts_with("too much data is being copied")
        {
            // Wasmtime's hostcall-fuel error is private; its message is what it offers.
            return format!(
                "the plugin `{plugin}` passed more than its hostcall data limit of {} to the host",
                size(limits.hostcall_data)
            );
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) => format!(
                "the plugin `{plugin}` ran past its deadline of {} ms (a runaway loop?)",
                limits.deadline.as_millis()
            ),
            Some(Trap::StackOverflow) => format!(
                "the plugin `{plugin}` overflowed its stack of {} (runaway recursion?)",
                size(*STACK.get().unwrap_or(&DEFAULT_STACK))
            ),
            Some(trap) if self.refused_memory => format!(
                "the plugin `{plugin}` ran out of memory (limit {}) and trapped: {trap}",
                size(limits.memory)
            ),
            Some(trap) => format!("the plugin `{plugin}` trapped: {trap}"),
            None => format!("the plugin `{plugin}` failed: {error:#}"),
        }
    }
}

impl ResourceLimiter for Meter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self
            .store_limits
            .memory_growing(current, desired, maximum)?;
        self.refused_memory |= !allowed;
        Ok(allowed)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.store_limits.table_growing(current, desired, maximum)
    }
}

/// A limit in the largest unit that states it exactly.
fn size(bytes: usize) -> String {
    match bytes {
        _ if bytes.is_multiple_of(1 << 20) => format!("{} MiB", bytes >> 20),
        _ if bytes.is_multiple_of(1 << 10) => format!("{} KiB", bytes >> 10),
        _ => format!("{bytes} bytes"),
    }
}
