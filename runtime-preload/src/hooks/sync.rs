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
        Some(rt) => rt.after_call(rt.device_sync()),
        None => unsafe { real().cudaDeviceSynchronize() },
    }
}

/// Hook of `cudaStreamSynchronize`.
#[no_mangle]
pub unsafe extern "C" fn cudaStreamSynchronize(stream: Stream) -> CudaError {
    polled(unsafe { real().cudaStreamSynchronize(stream) })
}

/// Hook of `cudaEventSynchronize`.
#[no_mangle]
pub unsafe extern "C" fn cudaEventSynchronize(event: Event) -> CudaError {
    polled(unsafe { real().cudaEventSynchronize(event) })
}

/// Hook of `cudaGetLastError`.
#[no_mangle]
pub unsafe extern "C" fn cudaGetLastError() -> CudaError {
    polled(unsafe { real().cudaGetLastError() })
}

/// Hook of `cudaPeekAtLastError`.
#[no_mangle]
pub unsafe extern "C" fn cudaPeekAtLastError() -> CudaError {
    polled(unsafe { real().cudaPeekAtLastError() })
}
