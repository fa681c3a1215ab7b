//! `cudaDeviceSynchronize`, `cudaStreamSynchronize`, `cudaEventSynchronize`,
//! `cudaGetLastError`, `cudaPeekAtLastError`: passed through, then the report page is
//! polled (these are where a trapped kernel's error shows up).

use super::polled;
use crate::cuda::real::{real, CudaError, Event, Stream, SUCCESS};
use crate::runtime;

/// Hook of `cudaDeviceSynchronize`: the real one (it waits for the calling thread's
/// device and returns cudart's view of its errors, also when cusafe is off or the
/// thread works on another device); when that is the runtime's device, it also lets
/// `cudaFree` skip its own wait until the next launch, and completes the frees deferred
/// during a stream capture (once none is in progress).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> CudaError {
    let Some(rt) = runtime::initialized() else {
        return unsafe { real().cudaDeviceSynchronize() };
    };
    let seen = rt.launch_count();
    let e = unsafe { real().cudaDeviceSynchronize() };
    if rt.heap_here().is_some() {
        rt.note_synced(seen, e);
        if e == SUCCESS {
            rt.complete_deferred();
        }
    }
    rt.after_api("cudaDeviceSynchronize", e)
}

/// Hook of `cudaStreamSynchronize`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamSynchronize(stream: Stream) -> CudaError {
    polled("cudaStreamSynchronize", unsafe {
        real().cudaStreamSynchronize(stream)
    })
}

/// Hook of `cudaEventSynchronize`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventSynchronize(event: Event) -> CudaError {
    polled("cudaEventSynchronize", unsafe {
        real().cudaEventSynchronize(event)
    })
}

/// Hook of `cudaGetLastError` (the error it returns is the program reading one, never
/// reported as an API error).
#[no_mangle]
pub unsafe extern "C" fn cudaGetLastError() -> CudaError {
    read_error(unsafe { real().cudaGetLastError() })
}

/// Hook of `cudaPeekAtLastError` (as `cudaGetLastError`).
#[no_mangle]
pub unsafe extern "C" fn cudaPeekAtLastError() -> CudaError {
    read_error(unsafe { real().cudaPeekAtLastError() })
}

/// Polls for device reports after a call that returned the pending error `err`.
fn read_error(err: CudaError) -> CudaError {
    runtime::initialized().map_or(err, |rt| rt.after_call(err))
}
