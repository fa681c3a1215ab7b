//! The driver's waits (`cuCtxSynchronize`, `cuStreamSynchronize`, `cuEventSynchronize`),
//! where a trapped kernel's error shows up: passed through, then the report page is
//! polled. And the teardown of the runtime's context (`cuDevicePrimaryCtxReset_v2`,
//! which static cudart's `cudaDeviceReset` calls, and `cuCtxDestroy_v2`): handled like
//! `cudaDeviceReset`.
//!
//! `cuCtxSynchronize` takes the context argument of its CUDA 13 form
//! (`cuCtxSynchronize_v2`, which `cuGetProcAddress` may hand out under the same name)
//! and passes it on; the older form takes none and never reads it (arguments travel in
//! registers on every supported ABI).

use std::ffi::{c_int, c_void};

use super::{Call, Ctx, CuResult, Stream};
use crate::hooks::polled;
use crate::runtime;

/// `cuCtxSynchronize`: also tells the runtime that every launch so far has finished
/// when the context waited for is the runtime's (the current one, for a null `ctx`),
/// and completes the frees deferred during a stream capture.
pub(super) unsafe fn context(
    real: unsafe extern "C" fn(Ctx) -> CuResult,
    call: Call,
    ctx: Ctx,
) -> CuResult {
    let Some(rt) = runtime::initialized() else {
        // SAFETY: the caller's argument.
        return unsafe { real(ctx) };
    };
    let seen = rt.launch_count();
    // SAFETY: the caller's argument.
    let e = unsafe { real(ctx) };
    if rt.heap_in_current_context().is_some() {
        rt.note_synced(seen, e);
        if e == 0 {
            rt.complete_deferred();
        }
    }
    rt.after_api(call.api, e)
}

/// `cuStreamSynchronize` (and `_ptsz`).
pub(super) unsafe fn stream(
    real: unsafe extern "C" fn(Stream) -> CuResult,
    call: Call,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's argument.
    polled(call.api, unsafe { real(stream) })
}

/// `cuEventSynchronize`.
pub(super) unsafe fn event(
    real: unsafe extern "C" fn(*mut c_void) -> CuResult,
    call: Call,
    event: *mut c_void,
) -> CuResult {
    // SAFETY: the caller's argument.
    polled(call.api, unsafe { real(event) })
}

/// `cuDevicePrimaryCtxReset_v2`.
pub(super) unsafe fn primary_reset(
    real: unsafe extern "C" fn(c_int) -> CuResult,
    call: Call,
    dev: c_int,
) -> CuResult {
    if let Some(rt) = runtime::initialized() {
        match rt.heap_device() {
            Some(home) if home == dev => rt.note_reset(),
            Some(_) => rt.note_side_reset(dev),
            None => {}
        }
    }
    // SAFETY: the caller's argument.
    polled(call.api, unsafe { real(dev) })
}

/// `cuCtxDestroy_v2`.
pub(super) unsafe fn destroy(
    real: unsafe extern "C" fn(Ctx) -> CuResult,
    call: Call,
    ctx: Ctx,
) -> CuResult {
    if let Some(rt) = runtime::initialized().filter(|rt| rt.is_heap_context(ctx)) {
        rt.note_reset();
    }
    // SAFETY: the caller's argument.
    polled(call.api, unsafe { real(ctx) })
}
