//! What the benchmarks share: their workload and the ratio table they end with.

pub mod report;
pub mod workload;
