//! The driver's sets (`cuMemsetD8/D16/D32`, their 2D and asynchronous forms): the
//! written range is checked against the exact size of a cusafe buffer, as for
//! `cudaMemset*`, then the call is passed through. The element size is the size of
//! the value's type.

use std::mem::size_of;

use super::{Call, CuResult, DevPtr, Stream};
use crate::check::extent_2d;
use crate::hooks::checked;
use crate::hooks::memset::range;

/// Bytes written by `n` elements of `V`.
fn bytes<V>(n: usize) -> u64 {
    (n as u64).saturating_mul(size_of::<V>() as u64)
}

/// Bytes spanned by a 2D set of `h` rows of `w` elements of `V`, `pitch` bytes apart.
fn bytes_2d<V>(pitch: usize, w: usize, h: usize) -> u64 {
    extent_2d(pitch as u64, bytes::<V>(w), h as u64)
}

/// `cuMemsetD8_v2`, `D16`, `D32` (and `_ptds`).
pub(super) unsafe fn d1<V: Copy>(
    real: unsafe extern "C" fn(DevPtr, V, usize) -> CuResult,
    call: Call,
    dst: DevPtr,
    v: V,
    n: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    checked(call.api, &range(call.api, dst, bytes::<V>(n)), || unsafe {
        real(dst, v, n)
    })
}

/// `cuMemsetD8Async`, `D16`, `D32` (and `_ptsz`).
pub(super) unsafe fn d1_async<V: Copy>(
    real: unsafe extern "C" fn(DevPtr, V, usize, Stream) -> CuResult,
    call: Call,
    dst: DevPtr,
    v: V,
    n: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    checked(call.api, &range(call.api, dst, bytes::<V>(n)), || unsafe {
        real(dst, v, n, stream)
    })
}

/// `cuMemsetD2D8_v2`, `D16`, `D32` (and `_ptds`).
pub(super) unsafe fn d2<V: Copy>(
    real: unsafe extern "C" fn(DevPtr, usize, V, usize, usize) -> CuResult,
    call: Call,
    dst: DevPtr,
    pitch: usize,
    v: V,
    w: usize,
    h: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    checked(
        call.api,
        &range(call.api, dst, bytes_2d::<V>(pitch, w, h)),
        || unsafe { real(dst, pitch, v, w, h) },
    )
}

/// `cuMemsetD2D8Async`, `D16`, `D32` (and `_ptsz`).
pub(super) unsafe fn d2_async<V: Copy>(
    real: unsafe extern "C" fn(DevPtr, usize, V, usize, usize, Stream) -> CuResult,
    call: Call,
    dst: DevPtr,
    pitch: usize,
    v: V,
    w: usize,
    h: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    checked(
        call.api,
        &range(call.api, dst, bytes_2d::<V>(pitch, w, h)),
        || unsafe { real(dst, pitch, v, w, h, stream) },
    )
}
