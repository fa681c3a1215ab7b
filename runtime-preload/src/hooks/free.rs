//! `cudaFree` (and, through [`release`], the driver's frees): cusafe pointers (and
//! poisoned ones) go to the tagged allocator, which refuses double and invalid frees
//! with a report; everything else goes to the real free, and a pointer it refuses as
//! invalid is reported as an invalid free. Like the real one, it waits for the device
//! when a kernel was launched since the last device-wide sync, so a kernel still using
//! the buffer finishes before its header is zeroed; unmapping (retired granules of
//! packed slabs, slotted blocks) always waits (in the VMM backend). While a stream capture is in progress a
//! device-wide wait would break it: the free is checked, then deferred
//! (`runtime/capture.rs`).

use std::ffi::c_void;

use super::polled;
use crate::alloc::FreeError;
use crate::cuda::real::{real, CudaError, INVALID_VALUE};
use crate::report::host::free_report;
use crate::runtime;

/// Hook of `cudaFree`.
#[no_mangle]
pub unsafe extern "C" fn cudaFree(dev_ptr: *mut c_void) -> CudaError {
    // Started here so that even a first call freeing a foreign pointer is checked.
    runtime::get();
    release("cudaFree", dev_ptr as u64, || unsafe {
        real().cudaFree(dev_ptr)
    })
}

/// Frees `p` for `api`: a cusafe (or poisoned) pointer in the tagged allocator, anything
/// else with `real`, whose refusal of a pointer no allocator knows becomes a report.
pub(super) fn release(api: &'static str, p: u64, real: impl FnOnce() -> CudaError) -> CudaError {
    let mine = runtime::initialized()
        .filter(|rt| rt.owns(p))
        .and_then(|rt| Some((rt, rt.heap()?)));
    let Some((rt, heap)) = mine else {
        let e = real();
        // A pointer no allocator knows (host or stack memory, cudaMallocHost memory):
        // the real free refuses it; say so instead of leaving a bare error code.
        if e == INVALID_VALUE && p != 0 {
            if let Some(rt) = runtime::initialized() {
                if let Some(r) = free_report(api, &FreeError::NotAllocated { ptr: p }) {
                    rt.report(r);
                }
            }
        }
        return polled(api, e);
    };
    let _open = match rt.free_or_defer(api, p, heap) {
        Ok(open) => open,
        Err(e) => return e,
    };
    rt.free_block(api, p, heap, rt.site())
}
