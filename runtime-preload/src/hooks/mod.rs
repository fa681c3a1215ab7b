//! The exported CUDA runtime functions, one file per family. Each does its cusafe work
//! and calls the real function (`crate::cuda::real`); everything else in the CUDA
//! runtime is left alone.

#![allow(non_snake_case)]

mod driver_launch;
mod free;
mod fuzz;
mod graph;
mod launch;
mod malloc;
mod memcpy;
mod memset;
mod reset;
mod sync;

use crate::check::ApiRange;
use crate::cuda::real::CudaError;
use crate::runtime;

/// Checks `ranges` (once the runtime has started; before that no cusafe pointer
/// exists), then makes the call and polls for device reports.
fn checked(ranges: &[ApiRange], call: impl FnOnce() -> CudaError) -> CudaError {
    match runtime::initialized() {
        None => call(),
        Some(rt) => match rt.check_ranges(ranges) {
            Ok(()) => rt.after_call(call()),
            Err(e) => e,
        },
    }
}

/// Polls for device reports after a call (once the runtime has started).
fn polled(err: CudaError) -> CudaError {
    match runtime::initialized() {
        Some(rt) => rt.after_call(err),
        None => err,
    }
}
