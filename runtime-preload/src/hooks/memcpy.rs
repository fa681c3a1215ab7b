//! `cudaMemcpy`, `cudaMemcpyAsync`, `cudaMemcpy2D`, `cudaMemcpy2DAsync`: the source and
//! destination ranges are checked against the exact size of cusafe buffers (whatever
//! the copy kind says; host pointers are never in a cusafe window), then the call is
//! passed through.

use std::ffi::{c_int, c_void};

use super::checked;
use crate::check::{extent_2d, ApiRange};
use crate::cuda::real::{real, CudaError, Stream};

/// The destination and source operands of a copy.
pub(super) fn ranges(
    api: &'static str,
    dst: u64,
    src: u64,
    dst_len: u64,
    src_len: u64,
) -> [ApiRange; 2] {
    [
        ApiRange {
            api,
            operand: "dst",
            ptr: dst,
            len: dst_len,
            write: true,
        },
        ApiRange {
            api,
            operand: "src",
            ptr: src,
            len: src_len,
            write: false,
        },
    ]
}

/// Hook of `cudaMemcpy`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
) -> CudaError {
    let n = count as u64;
    checked(
        "cudaMemcpy",
        &ranges("cudaMemcpy", dst as u64, src as u64, n, n),
        || unsafe { real().cudaMemcpy(dst, src, count, kind) },
    )
}

/// Hook of `cudaMemcpyAsync`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpyAsync(
    dst: *mut c_void,
    src: *const c_void,
    count: usize,
    kind: c_int,
    stream: Stream,
) -> CudaError {
    let n = count as u64;
    checked(
        "cudaMemcpyAsync",
        &ranges("cudaMemcpyAsync", dst as u64, src as u64, n, n),
        || unsafe { real().cudaMemcpyAsync(dst, src, count, kind, stream) },
    )
}

/// Hook of `cudaMemcpy2D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMemcpy2D(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
) -> CudaError {
    let (w, h) = (width as u64, height as u64);
    let r = ranges(
        "cudaMemcpy2D",
        dst as u64,
        src as u64,
        extent_2d(dpitch as u64, w, h),
        extent_2d(spitch as u64, w, h),
    );
    checked("cudaMemcpy2D", &r, || unsafe {
        real().cudaMemcpy2D(dst, dpitch, src, spitch, width, height, kind)
    })
}

/// Hook of `cudaMemcpy2DAsync`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cudaMemcpy2DAsync(
    dst: *mut c_void,
    dpitch: usize,
    src: *const c_void,
    spitch: usize,
    width: usize,
    height: usize,
    kind: c_int,
    stream: Stream,
) -> CudaError {
    let (w, h) = (width as u64, height as u64);
    let r = ranges(
        "cudaMemcpy2DAsync",
        dst as u64,
        src as u64,
        extent_2d(dpitch as u64, w, h),
        extent_2d(spitch as u64, w, h),
    );
    checked("cudaMemcpy2DAsync", &r, || unsafe {
        real().cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, stream)
    })
}
