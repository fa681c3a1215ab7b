//! cusafe's host runtime, `libcusafe_rt.so`.
//!
//! One shared library serves two uses: instrumented binaries link it *before*
//! libcudart, and any other binary gets it through `LD_PRELOAD`. Either way its
//! exported `cudaMalloc`, `cudaFree`, `cudaMemcpy`, ... win symbol lookup; each hook
//! does its cusafe work and calls the real function found with `dlsym(RTLD_NEXT, ..)`.
//!
//! The pure parts are public so that tests (and tools) can use them without a GPU:
//! * [`options`]: `CUSAFE_OPTIONS` parsing.
//! * [`alloc`]: the tagged allocator frontend over a [`alloc::Backend`], plus the
//!   host backend that simulates the driver's VMM API.
//! * [`check`]: the range checks of the copy/set APIs.
//! * [`report`]: device records and host findings turned into text and JSON reports.
//!
//! The CUDA side (driver VMM backend, hooks, global state) is private; `docs/runtime.md`
//! describes how it fits together.

#![warn(missing_docs)]

pub mod alloc;
pub mod check;
pub mod options;
pub mod report;
pub mod rng;

mod cuda;
mod hooks;
mod runtime;

use std::ffi::c_char;

/// A symbol that instrumented binaries reference so that linking without the runtime
/// fails. Its value is the runtime's interface version (1).
#[no_mangle]
#[used]
pub static __cusafe_rt_present: u32 = 1;

/// The runtime's version as a NUL-terminated string (the crate version), e.g. `"0.1.0"`.
#[no_mangle]
pub extern "C" fn cusafe_rt_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr().cast()
}
