//! `cuMemAlloc_v2`, `cuMemAllocPitch_v2`, `cuMemFree_v2`, and the stream-ordered
//! `cuMemAllocAsync`/`cuMemFreeAsync` (what `cudaMallocAsync` and the frameworks'
//! asynchronous allocators call): tagged like `cudaMalloc` when the calling thread's
//! context is the runtime's, otherwise passed through.
//!
//! A stream-ordered allocation is tagged at once (the block exists before the stream
//! reaches the call, which is allowed); its free waits for the stream, then frees, so
//! no kernel queued before the free can still use the block. Allocations inside stream
//! capture belong to the graph and pass through; pools the program made itself
//! (`cuMemAllocFromPoolAsync`) are not hooked.

use std::ffi::c_uint;

use cudarc::driver::sys as cu;

use super::{Call, CuResult, DevPtr, Stream};
use crate::cuda::driver::{code, Context};
use crate::cuda::real::{CudaError, INVALID_VALUE, SUCCESS};
use crate::hooks::free::release;
use crate::hooks::malloc::tagged;
use crate::hooks::polled;
use crate::runtime::{self, Heap, Runtime};

/// `cuMemAllocPitch`'s valid element sizes.
const PITCH_ELEMENT_SIZES: [c_uint; 3] = [4, 8, 16];

/// The runtime and its heap when tagged allocation serves the calling thread: it has a
/// current context, and that is the heap's (the first allocation call `api` in another
/// context says that it is not checked). Starts the runtime (in that context) on first
/// use.
fn here(api: &str) -> Option<(&'static Runtime, (&'static Heap, i32))> {
    let ctx = Context::current_or_none()?;
    let rt = runtime::get()?;
    Some((rt, rt.heap_to_allocate_in(api, ctx)?))
}

/// Whether work on `stream` is being captured into a graph (or the query failed: then
/// the call passes through too).
fn capturing(stream: usize) -> bool {
    let mut status = cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: writes one status.
    let r = unsafe { cu::cuStreamIsCapturing(stream as cu::CUstream, &mut status) };
    r != cu::CUresult::CUDA_SUCCESS
        || status != cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// `cuMemAlloc_v2`.
pub(super) unsafe fn mem_alloc(
    real: unsafe extern "C" fn(*mut DevPtr, usize) -> CuResult,
    call: Call,
    dptr: *mut DevPtr,
    size: usize,
) -> CuResult {
    let done = here(call.api)
        .filter(|_| !dptr.is_null() && size > 0)
        .and_then(|(rt, h)| {
            // SAFETY: dptr is non-null and writable (the caller's contract).
            tagged(rt, h, call.api, size as u64, |p| unsafe { *dptr = p })
        });
    // SAFETY: the caller's arguments.
    done.unwrap_or_else(|| polled(call.api, unsafe { real(dptr, size) }))
}

/// `cuMemAllocPitch_v2`: the pitch is the runtime's pitch alignment, as for
/// `cudaMallocPitch`; an element size the driver refuses reaches the driver.
pub(super) unsafe fn mem_alloc_pitch(
    real: unsafe extern "C" fn(*mut DevPtr, *mut usize, usize, usize, c_uint) -> CuResult,
    call: Call,
    dptr: *mut DevPtr,
    pitch: *mut usize,
    width: usize,
    height: usize,
    elem: c_uint,
) -> CuResult {
    let ok = !dptr.is_null()
        && !pitch.is_null()
        && width > 0
        && height > 0
        && PITCH_ELEMENT_SIZES.contains(&elem);
    let done = here(call.api).filter(|_| ok).and_then(|(rt, h)| {
        let p = (width as u64).next_multiple_of(h.0.pitch_align);
        let size = p.checked_mul(height as u64)?;
        tagged(rt, h, call.api, size, |ptr| {
            // SAFETY: both out-pointers are non-null and writable.
            unsafe {
                *dptr = ptr;
                *pitch = p as usize;
            }
        })
    });
    // SAFETY: the caller's arguments.
    done.unwrap_or_else(|| polled(call.api, unsafe { real(dptr, pitch, width, height, elem) }))
}

/// `cuMemFree_v2`.
pub(super) unsafe fn mem_free(
    real: unsafe extern "C" fn(DevPtr) -> CuResult,
    call: Call,
    dptr: DevPtr,
) -> CuResult {
    if Context::current_or_none().is_some() {
        runtime::get();
    }
    // SAFETY: the caller's argument.
    release(call.api, dptr, || unsafe { real(dptr) })
}

/// `cuMemAllocAsync` (and `_ptsz`).
pub(super) unsafe fn mem_alloc_async(
    real: unsafe extern "C" fn(*mut DevPtr, usize, Stream) -> CuResult,
    call: Call,
    dptr: *mut DevPtr,
    size: usize,
    stream: Stream,
) -> CuResult {
    let done = here(call.api)
        .filter(|_| !dptr.is_null() && size > 0 && !capturing(call.stream(stream)))
        .and_then(|(rt, h)| {
            // SAFETY: dptr is non-null and writable (the caller's contract).
            tagged(rt, h, call.api, size as u64, |p| unsafe { *dptr = p })
        });
    // SAFETY: the caller's arguments.
    done.unwrap_or_else(|| polled(call.api, unsafe { real(dptr, size, stream) }))
}

/// `cuMemFreeAsync` (and `_ptsz`): a tagged block is freed once `stream` has reached
/// the call. Inside stream capture the free belongs to a graph that runs later: the
/// block then stays allocated until exit (with a warning; not a leak).
pub(super) unsafe fn mem_free_async(
    real: unsafe extern "C" fn(DevPtr, Stream) -> CuResult,
    call: Call,
    dptr: DevPtr,
    stream: Stream,
) -> CuResult {
    let Some(rt) = runtime::started().filter(|rt| rt.owns(dptr)) else {
        // SAFETY: the caller's arguments.
        return release(call.api, dptr, || unsafe { real(dptr, stream) });
    };
    let s = call.stream(stream);
    if capturing(s) {
        rt.warn(&format!(
            "{}({dptr:#x}) inside stream capture: the block stays allocated until exit (the \
             free belongs to a graph that runs later); it is not reported as a leak",
            call.api
        ));
        rt.keep_until_exit(dptr);
        return SUCCESS;
    }
    // SAFETY: waits for the caller's stream.
    let e: CudaError = code(unsafe { cu::cuStreamSynchronize(s as cu::CUstream) });
    if e != SUCCESS {
        return rt.after_api(call.api, e);
    }
    release(call.api, dptr, || INVALID_VALUE)
}
