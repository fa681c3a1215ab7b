//! `cudaLaunchKernel`: starts the runtime before the first launch (instrumented kernels
//! read the runtime page), orders pending header writes before the kernel, launches,
//! and polls for reports of earlier kernels.

use std::ffi::c_void;

use super::polled;
use crate::cuda::real::{real, CudaError, Dim3, Stream};
use crate::runtime;

/// Hook of `cudaLaunchKernel`.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernel(
    func: *const c_void,
    grid: Dim3,
    block: Dim3,
    args: *mut *mut c_void,
    shared_mem: usize,
    stream: Stream,
) -> CudaError {
    if let Some(rt) = runtime::get() {
        rt.before_launch(stream as usize);
    }
    polled(unsafe { (real().cudaLaunchKernel)(func, grid, block, args, shared_mem, stream) })
}
