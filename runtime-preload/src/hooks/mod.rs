//! The exported CUDA functions, one file per family. Each does its cusafe work and calls
//! the real function; everything else in CUDA is left alone.
//!
//! * Runtime API (`cudaMalloc`, ...): `malloc.rs`, `free.rs`, `memcpy.rs`, `memset.rs`,
//!   `launch.rs`, `graph.rs`, `capture.rs`, `sync.rs`, `reset.rs`; the real functions are in
//!   `crate::cuda::real`.
//! * Driver API: `driver/`, one table of every hooked entry point, reached by linking,
//!   by `dlsym` (`dlsym.rs`) and by `cuGetProcAddress` (`procaddr.rs`).
//! * `fuzz.rs`: the fuzzing hooks.

#![allow(non_snake_case)]

mod capture;
mod dlsym;
mod driver;
mod free;
mod fuzz;
mod graph;
mod launch;
mod malloc;
mod memcpy;
mod memset;
mod procaddr;
mod reset;
mod sync;

use crate::check::ApiRange;
use crate::cuda::real::CudaError;
use crate::runtime;

/// Checks `ranges` (once the runtime has started; before that no cusafe pointer
/// exists), then makes the call `api` and polls for device reports.
fn checked(api: &'static str, ranges: &[ApiRange], call: impl FnOnce() -> CudaError) -> CudaError {
    match runtime::started() {
        None => call(),
        Some(rt) => match rt.check_ranges(ranges) {
            Ok(()) => rt.after_api(api, call()),
            Err(e) => e,
        },
    }
}

/// Polls for device reports after the call `api` returned `err` (once the runtime has
/// started), reporting the error with `report_api_errors=1`.
fn polled(api: &'static str, err: CudaError) -> CudaError {
    match runtime::initialized() {
        Some(rt) => rt.after_api(api, err),
        None => err,
    }
}
