//! The driver's stream capture (`cuStreamBeginCapture_v2`, `cuStreamEndCapture`, each
//! also `_ptsz`): counted as the runtime API's are (`hooks/capture.rs`,
//! `runtime/capture.rs`), so that a free during a capture begun through the driver
//! (a driver-API program, or static cudart's `cudaStreamBeginCapture`) is deferred
//! instead of waiting for the device, which would invalidate the capture. Calls made
//! from inside a runtime API hook pass through (that hook counted the capture).

use std::ffi::{c_int, c_void};

use super::{Call, CuResult, Stream};
use crate::hooks::polled;
use crate::runtime::capture;

/// `cuStreamBeginCapture_v2` (and `_ptsz`).
pub(super) unsafe fn begin(
    real: unsafe extern "C" fn(Stream, c_int) -> CuResult,
    call: Call,
    stream: Stream,
    mode: c_int,
) -> CuResult {
    // SAFETY: the caller's arguments.
    let e = capture::begin(call.stream(stream), || unsafe { real(stream, mode) });
    polled(call.api, e)
}

/// `cuStreamEndCapture` (and `_ptsz`).
pub(super) unsafe fn end(
    real: unsafe extern "C" fn(Stream, *mut *mut c_void) -> CuResult,
    call: Call,
    stream: Stream,
    graph: *mut *mut c_void,
) -> CuResult {
    // SAFETY: the caller's arguments.
    let e = capture::end(call.stream(stream), || unsafe { real(stream, graph) });
    polled(call.api, e)
}
