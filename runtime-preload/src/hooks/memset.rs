//! `cudaMemset`, `cudaMemsetAsync`, `cudaMemset2D`: the written range is checked
//! against the exact size of a cusafe buffer, then the call is passed through.

use std::ffi::{c_int, c_void};

use super::checked;
use crate::check::{extent_2d, ApiRange};
use crate::cuda::real::{real, CudaError, Stream};

/// The written operand of a set.
pub(super) fn range(api: &'static str, ptr: u64, len: u64) -> [ApiRange; 1] {
    [ApiRange {
        api,
        operand: "devPtr",
        ptr,
        len,
        write: true,
    }]
}

/// Hook of `cudaMemset`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset(dev_ptr: *mut c_void, value: c_int, count: usize) -> CudaError {
    checked(
        "cudaMemset",
        &range("cudaMemset", dev_ptr as u64, count as u64),
        || unsafe { real().cudaMemset(dev_ptr, value, count) },
    )
}

/// Hook of `cudaMemsetAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemsetAsync(
    dev_ptr: *mut c_void,
    value: c_int,
    count: usize,
    stream: Stream,
) -> CudaError {
    checked(
        "cudaMemsetAsync",
        &range("cudaMemsetAsync", dev_ptr as u64, count as u64),
        || unsafe { real().cudaMemsetAsync(dev_ptr, value, count, stream) },
    )
}

/// Hook of `cudaMemset2D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemset2D(
    dev_ptr: *mut c_void,
    pitch: usize,
    value: c_int,
    width: usize,
    height: usize,
) -> CudaError {
    let len = extent_2d(pitch as u64, width as u64, height as u64);
    checked(
        "cudaMemset2D",
        &range("cudaMemset2D", dev_ptr as u64, len),
        || unsafe { real().cudaMemset2D(dev_ptr, pitch, value, width, height) },
    )
}
