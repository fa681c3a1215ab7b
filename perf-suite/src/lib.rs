//! Tables of perf-suite runs: a GPU run made by scripts/gpu/run-perf.sh (runs.tsv, logs,
//! env.txt) read against the bundle scripts/build-perf.sh built (per-kernel ptxas
//! figures, the pass's check counts), giving per workload the plain, cusafe and noopt
//! builds' kernel time, compute-sanitizer's, registers, peak memory and checks, and the
//! geometric-mean overheads over the workloads that ran cleanly.

#![warn(missing_docs)]

pub mod build;
pub mod checks;
pub mod logs;
pub mod markdown;
pub mod mean;
pub mod ptxas;
pub mod runs;
pub mod table;
