//! Stream capture (`cudaStreamBeginCapture`, `cudaStreamBeginCaptureToGraph`,
//! `cudaStreamEndCapture`, each also per-thread-stream `_ptsz`): passed through while
//! the runtime counts the captures in progress (`runtime/capture.rs`). While one is, a
//! device-wide wait would fail and invalidate it, so tagged frees are deferred.
//!
//! `cudaStreamBeginCaptureToGraph` came with CUDA 12.3: with an older libcudart its hook
//! answers `cudaErrorNotSupported` (the program was built against a newer one).

use std::ffi::{c_int, c_void};

use super::polled;
use crate::cuda::real::{
    begin_capture_to_graph, call_inside, real, CudaError, Stream, NOT_SUPPORTED,
};
use crate::runtime::capture;

/// `cudaStreamPerThread`: what a null stream means to a `_ptsz` call.
const PER_THREAD: usize = 2;

/// The stream a `_ptsz` call works on.
fn ptsz(stream: Stream) -> usize {
    if stream.is_null() {
        PER_THREAD
    } else {
        stream as usize
    }
}

/// Hook of `cudaStreamBeginCapture`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCapture(stream: Stream, mode: c_int) -> CudaError {
    let e = capture::begin(stream as usize, || unsafe {
        real().cudaStreamBeginCapture(stream, mode)
    });
    polled("cudaStreamBeginCapture", e)
}

/// Hook of `cudaStreamBeginCapture_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCapture_ptsz(stream: Stream, mode: c_int) -> CudaError {
    let e = capture::begin(ptsz(stream), || unsafe {
        real().cudaStreamBeginCapture_ptsz(stream, mode)
    });
    polled("cudaStreamBeginCapture_ptsz", e)
}

/// `cudaStreamBeginCaptureToGraph` (`_ptsz` when `per_thread`) on `stream`, counted.
#[allow(clippy::too_many_arguments)]
unsafe fn begin_to_graph(
    api: &'static str,
    per_thread: bool,
    stream: Stream,
    graph: *mut c_void,
    deps: *const *mut c_void,
    edges: *const c_void,
    ndeps: usize,
    mode: c_int,
) -> CudaError {
    let Some(f) = begin_capture_to_graph(per_thread) else {
        return polled(api, NOT_SUPPORTED);
    };
    let counted = if per_thread {
        ptsz(stream)
    } else {
        stream as usize
    };
    let e = capture::begin(counted, || {
        // SAFETY: the caller's arguments, to the real function of this signature.
        call_inside(|| unsafe { f(stream, graph, deps, edges, ndeps, mode) })
    });
    polled(api, e)
}

/// Hook of `cudaStreamBeginCaptureToGraph`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCaptureToGraph(
    stream: Stream,
    graph: *mut c_void,
    deps: *const *mut c_void,
    edges: *const c_void,
    ndeps: usize,
    mode: c_int,
) -> CudaError {
    unsafe {
        begin_to_graph(
            "cudaStreamBeginCaptureToGraph",
            false,
            stream,
            graph,
            deps,
            edges,
            ndeps,
            mode,
        )
    }
}

/// Hook of `cudaStreamBeginCaptureToGraph_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamBeginCaptureToGraph_ptsz(
    stream: Stream,
    graph: *mut c_void,
    deps: *const *mut c_void,
    edges: *const c_void,
    ndeps: usize,
    mode: c_int,
) -> CudaError {
    unsafe {
        begin_to_graph(
            "cudaStreamBeginCaptureToGraph_ptsz",
            true,
            stream,
            graph,
            deps,
            edges,
            ndeps,
            mode,
        )
    }
}

/// Hook of `cudaStreamEndCapture`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamEndCapture(
    stream: Stream,
    graph: *mut *mut c_void,
) -> CudaError {
    let e = capture::end(stream as usize, || unsafe {
        real().cudaStreamEndCapture(stream, graph)
    });
    polled("cudaStreamEndCapture", e)
}

/// Hook of `cudaStreamEndCapture_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamEndCapture_ptsz(
    stream: Stream,
    graph: *mut *mut c_void,
) -> CudaError {
    let e = capture::end(ptsz(stream), || unsafe {
        real().cudaStreamEndCapture_ptsz(stream, graph)
    });
    polled("cudaStreamEndCapture_ptsz", e)
}
