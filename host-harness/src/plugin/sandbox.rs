//! The sandbox every plugin runs in: one engine, and the limits that turn wasmtime's
//! isolation into the contract's promise that the host keeps answering (R15, R17).
//!
//! | limit          | what hits it                                   | what the host sees                  |
//! |----------------|------------------------------------------------|-------------------------------------|
//! | deadline       | a loop that never ends                         | the call's results are `is_error`   |
//! | wall time      | a call that, with the time below it, runs long | the same, naming the wall limit     |
//! | memory         | allocating, in any number of memories/tables   | the same, naming the memory limit   |
//! | hostcall data  | passing a gigantic batch down, or answering up | the same, naming the data limit     |
//! | stack          | recursing without bound                        | the same, naming the stack          |
//! | counts         | many instances, memories or tables             | the same: the instance cannot start |
//!
//! In every case the instance is dropped and the next call gets a fresh one. What a
//! plugin may do *below* it (one listing per listing, one execution per execution, only
//! the calls it was given) is the gate's business (`layer.rs`, R16).

use super::fault::{FaultKind, Limit};
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

/// The range a stack limit may be set in. Below 64 KiB the component's own start-up does
/// not fit; above 64 MiB a runaway recursion holds that much memory before it traps.
pub const STACK_RANGE: std::ops::RangeInclusive<usize> = (64 << 10)..=(64 << 20);

/// Room for the host's own frames on top of a plugin's stack: the provider below runs
/// there too, while the plugin waits for it.
const HOST_STACK: usize = 1 << 20;

/// Most core instances, memories and tables one plugin's store may hold. A component of
/// the middleware world needs a handful of each (the reasons component: 3 instances, 1
/// memory, 1 table); wasmtime's default of 10,000 memories each reserving address space
/// is how a plugin used 2 GB under a 256 MiB limit.
const INSTANCES: usize = 32;
const MEMORIES: usize = 4;
const TABLES: usize = 8;

/// What a table element costs in host memory: a pointer, as wasmtime's docs say.
const TABLE_ELEMENT: usize = std::mem::size_of::<usize>();

static STACK: OnceLock<usize> = OnceLock::new();

/// Sets the stack limit for every plugin of this process. It belongs to the engine, so
/// it can only be set before the first plugin is compiled, and within [`STACK_RANGE`].
pub fn set_stack_limit(bytes: usize) -> Result<(), StackLimitError> {
    if !STACK_RANGE.contains(&bytes) {
        return Err(StackLimitError::OutOfRange(bytes));
    }
    STACK.set(bytes).map_err(|_| StackLimitError::AlreadySet)
}

/// Why the plugin stack limit was not set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StackLimitError {
    /// This many bytes is outside [`STACK_RANGE`].
    OutOfRange(usize),
    /// It was set already, or a plugin was loaded with the default.
    AlreadySet,
}

impl std::fmt::Display for StackLimitError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StackLimitError::OutOfRange(bytes) => write!(
                f,
                "the plugin stack limit must be from {} to {} (it was {})",
                size(*STACK_RANGE.start()),
                size(*STACK_RANGE.end()),
                size(*bytes)
            ),
            StackLimitError::AlreadySet => {
                f.write_str("the plugin stack limit is set once, before any plugin is loaded")
            }
        }
    }
}

impl std::error::Error for StackLimitError {}

/// Runs `work`, a call into a plugin, on a stack with room for the plugin's limit and
/// the host above it: on this thread's if it has that much left, else on a fresh one.
/// Wasmtime counts a plugin's stack from where it is entered, so a limit larger than
/// what the calling thread has left would overflow the host instead of trapping.
pub fn on_enough_stack<T>(work: impl FnOnce() -> T) -> T {
    let needed = stack_limit() + HOST_STACK;
    stacker::maybe_grow(needed, needed + HOST_STACK, work)
}

fn stack_limit() -> usize {
    *STACK.get_or_init(|| DEFAULT_STACK)
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
        // Read here so that a later `set_stack_limit` is refused. The async stack is not
        // used, but wasmtime checks the wasm stack fits in it.
        let stack = stack_limit();
        config.max_wasm_stack(stack);
        config.async_stack_size(stack + HOST_STACK);
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
/// `reasons` command (`--plugin-deadline-ms`, `--plugin-wall-ms`, `--plugin-memory-mib`,
/// `--plugin-hostcall-mib`).
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// The time one call may spend in the plugin's own code. Time spent in the provider
    /// below (a slow tool, a server) is not counted: only the plugin is on the clock.
    pub deadline: Duration,
    /// The time one call may take in all, the provider below included. The plugin calls
    /// below at most once per call (R17), so this bounds a slow provider, not a plugin
    /// that keeps calling it; it is checked when the plugin runs again.
    pub wall: Duration,
    /// The most memory an instance may hold, in bytes: its linear memories and its
    /// tables together. It also bounds what a plugin can return, since an answer is read
    /// out of that memory.
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
            wall: Duration::from_secs(5) * WALL_PER_DEADLINE,
            memory: 256 << 20,
            hostcall_data: 64 << 20,
        }
    }
}

/// The default wall limit, in deadlines: room for a slow tool below, not for a plugin
/// that runs on.
pub const WALL_PER_DEADLINE: u32 = 24;

impl Limits {
    /// Epoch ticks covering `time`, at least one.
    fn ticks(time: Duration) -> u64 {
        (time.as_nanos() / TICK.as_nanos()).max(1) as u64 + 1
    }
}

/// A store's accounts: the memory it holds and was refused, and the time its call has used.
pub struct Meter {
    limits: Limits,
    counts: StoreLimits,
    /// Bytes held in linear memories and tables, all of them together.
    held: usize,
    /// Set when a growth was refused: a trap that follows is that limit's doing.
    refused_memory: bool,
    /// Set when the wall limit stopped the call.
    past_wall: bool,
    started: Instant,
    in_host: Duration,
}

impl Meter {
    /// A meter enforcing `limits`.
    pub fn new(limits: Limits) -> Meter {
        Meter {
            limits,
            counts: StoreLimitsBuilder::new()
                .instances(INSTANCES)
                .memories(MEMORIES)
                .tables(TABLES)
                .build(),
            held: 0,
            refused_memory: false,
            past_wall: false,
            started: Instant::now(),
            in_host: Duration::ZERO,
        }
    }

    /// Starts the clock for one call that began at `began`; the store's deadline is set
    /// to match. A call that must first start an instance (and replay a listing into it)
    /// starts the clock once: the replay is part of the call's time, not extra.
    pub fn start(&mut self, began: Instant) -> u64 {
        self.started = began;
        self.in_host = Duration::ZERO;
        self.past_wall = false;
        let used = began.elapsed();
        // The nearer of the two limits: the wall limit must be checked when the plugin
        // comes back from a slow provider, even with most of its own time left.
        let left = self.limits.deadline.min(self.limits.wall);
        Limits::ticks(left.saturating_sub(used))
    }

    /// Runs `work` off the plugin's clock: the provider below is not the plugin's time.
    pub fn off_the_clock<T>(&mut self, work: impl FnOnce() -> T) -> T {
        let entered = Instant::now();
        let out = work();
        self.in_host += entered.elapsed();
        out
    }

    /// At a deadline: stop the plugin if its own time or the call's wall time is up, or
    /// give it the rest.
    pub fn at_deadline(&mut self) -> wasmtime::UpdateDeadline {
        let elapsed = self.started.elapsed();
        if elapsed >= self.limits.wall {
            self.past_wall = true;
            return wasmtime::UpdateDeadline::Interrupt;
        }
        let used = elapsed.saturating_sub(self.in_host);
        match self.limits.deadline.checked_sub(used) {
            Some(left) if !left.is_zero() => {
                let left = left.min(self.limits.wall - elapsed);
                wasmtime::UpdateDeadline::Continue(Limits::ticks(left))
            }
            _ => wasmtime::UpdateDeadline::Interrupt,
        }
    }

    /// What stopped the plugin, in words for the model and the human.
    pub fn describe(&self, plugin: &str, error: &wasmtime::Error) -> (FaultKind, String) {
        let limits = &self.limits;
        let over = |limit, words| (FaultKind::OverLimit(limit), words);
        if error
            .root_cause()
            .to_string()
            .starts_with("too much data is being copied")
        {
            // Wasmtime's hostcall-fuel error is private; its message is what it offers.
            return over(
                Limit::HostcallData,
                format!(
                    "the plugin `{plugin}` passed more than its hostcall data limit of {} \
                     between itself and the host",
                    size(limits.hostcall_data)
                ),
            );
        }
        match error.downcast_ref::<Trap>() {
            Some(Trap::Interrupt) if self.past_wall => over(
                Limit::Wall,
                format!(
                    "the plugin `{plugin}`'s call ran past its wall limit of {} ms, time \
                     below it included",
                    limits.wall.as_millis()
                ),
            ),
            Some(Trap::Interrupt) => over(
                Limit::Deadline,
                format!(
                    "the plugin `{plugin}` ran past its deadline of {} ms (a runaway loop?)",
                    limits.deadline.as_millis()
                ),
            ),
            Some(Trap::StackOverflow) => over(
                Limit::Stack,
                format!(
                    "the plugin `{plugin}` overflowed its stack of {} (runaway recursion?)",
                    size(stack_limit())
                ),
            ),
            Some(trap) if self.refused_memory => over(
                Limit::Memory,
                format!(
                    "the plugin `{plugin}` ran out of memory (limit {} over all its \
                     memories and tables) and trapped: {trap}",
                    size(limits.memory)
                ),
            ),
            Some(trap) => (
                FaultKind::Trapped,
                format!("the plugin `{plugin}` trapped: {trap}"),
            ),
            None if self.refused_memory => over(
                Limit::Memory,
                format!(
                    "the plugin `{plugin}` needs more memory than its limit of {} over all \
                     its memories and tables: {error:#}",
                    size(limits.memory)
                ),
            ),
            None => (
                FaultKind::Failed,
                format!("the plugin `{plugin}` failed: {error:#}"),
            ),
        }
    }

    /// Takes `grown` more bytes, if the limit leaves room for them.
    fn take(&mut self, grown: usize) -> bool {
        match self.held.checked_add(grown) {
            Some(held) if held <= self.limits.memory => {
                self.held = held;
                true
            }
            _ => {
                self.refused_memory = true;
                false
            }
        }
    }
}

impl ResourceLimiter for Meter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.take(desired.saturating_sub(current)))
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let grown = desired
            .saturating_sub(current)
            .saturating_mul(TABLE_ELEMENT);
        Ok(self.take(grown))
    }

    fn instances(&self) -> usize {
        self.counts.instances()
    }

    fn memories(&self) -> usize {
        self.counts.memories()
    }

    fn tables(&self) -> usize {
        self.counts.tables()
    }
}

/// A limit in the largest unit that states it exactly.
fn size(bytes: usize) -> String {
    match bytes {
        0 => "0 bytes".into(),
        _ if bytes.is_multiple_of(1 << 20) => format!("{} MiB", bytes >> 20),
        _ if bytes.is_multiple_of(1 << 10) => format!("{} KiB", bytes >> 10),
        _ => format!("{bytes} bytes"),
    }
}
