//! `cudaDeviceSynchronize`, `cudaStreamSynchronize`, `cudaEventSynchronize`,
//! `cudaGetLastError`, `cudaPeekAtLastError`: passed through, then the report page is
//! polled (these are where a trapped kernel's error shows up).

use super::polled;
use crate::cuda::real::{real, CudaError, Event, Stream};
use crate::runtime;

/// Hook of `cudaDeviceSynchronize` (also lets `cudaFree` skip its own wait until the
/// next launch).
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceSynchronize() -> CudaError {
    match runtime::initialized() {
        Some(rt) => rt.after_api("cudaDeviceSynchronize", rt.device_sync()),
        None => unsafe { real().cudaDeviceSynchronize() },
    }
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
