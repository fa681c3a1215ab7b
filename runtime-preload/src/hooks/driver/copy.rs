//! The driver's copies (`cuMemcpy*`): each operand's byte range is checked against the
//! exact size of a cusafe buffer, as for `cudaMemcpy*`, then the call is passed through.
//! Host operands are never in a cusafe window and need no case of their own. 3D copies
//! and copies to or from CUDA arrays are not checked.

use std::ffi::c_void;

use super::{Call, Ctx, CuResult, DevPtr, Stream};
use crate::check::{extent_2d, ApiRange};
use crate::hooks::checked;
use crate::hooks::memcpy::ranges;

/// `CUDA_MEMCPY2D` (memory types kept as integers).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Memcpy2D {
    src_x_bytes: usize,
    src_y: usize,
    src_memory_type: u32,
    src_host: *const c_void,
    src_device: DevPtr,
    src_array: *mut c_void,
    src_pitch: usize,
    dst_x_bytes: usize,
    dst_y: usize,
    dst_memory_type: u32,
    dst_host: *mut c_void,
    dst_device: DevPtr,
    dst_array: *mut c_void,
    dst_pitch: usize,
    width_bytes: usize,
    height: usize,
}

/// `CU_MEMORYTYPE_DEVICE` and `CU_MEMORYTYPE_UNIFIED`: the operand is `*Device`.
const DEVICE_TYPES: [u32; 2] = [2, 4];

impl Memcpy2D {
    /// (dst start, dst bytes, src start, src bytes); 0/0 for operands not in device memory.
    fn operands(&self) -> (u64, u64, u64, u64) {
        let side = |ty: u32, base: DevPtr, x: usize, y: usize, pitch: usize| {
            if DEVICE_TYPES.contains(&ty) {
                let start = base
                    .wrapping_add((y as u64).wrapping_mul(pitch as u64))
                    .wrapping_add(x as u64);
                let len = extent_2d(pitch as u64, self.width_bytes as u64, self.height as u64);
                (start, len)
            } else {
                (0, 0)
            }
        };
        let (d, dl) = side(
            self.dst_memory_type,
            self.dst_device,
            self.dst_x_bytes,
            self.dst_y,
            self.dst_pitch,
        );
        let (s, sl) = side(
            self.src_memory_type,
            self.src_device,
            self.src_x_bytes,
            self.src_y,
            self.src_pitch,
        );
        (d, dl, s, sl)
    }
}

/// Checks `n` bytes at `dst` and at `src`, then runs `go`.
fn copy(call: Call, dst: u64, src: u64, n: usize, go: impl FnOnce() -> CuResult) -> CuResult {
    let n = n as u64;
    checked(call.api, &ranges(call.api, dst, src, n, n), go)
}

/// `cuMemcpy`, `cuMemcpyDtoD_v2` (and `_ptds`).
pub(super) unsafe fn dev_dev(
    real: unsafe extern "C" fn(DevPtr, DevPtr, usize) -> CuResult,
    call: Call,
    dst: DevPtr,
    src: DevPtr,
    n: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src, n, || unsafe { real(dst, src, n) })
}

/// `cuMemcpyAsync`, `cuMemcpyDtoDAsync_v2` (and `_ptsz`).
pub(super) unsafe fn dev_dev_async(
    real: unsafe extern "C" fn(DevPtr, DevPtr, usize, Stream) -> CuResult,
    call: Call,
    dst: DevPtr,
    src: DevPtr,
    n: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src, n, || unsafe { real(dst, src, n, stream) })
}

/// `cuMemcpyHtoD_v2` (and `_ptds`).
pub(super) unsafe fn htod(
    real: unsafe extern "C" fn(DevPtr, *const c_void, usize) -> CuResult,
    call: Call,
    dst: DevPtr,
    src: *const c_void,
    n: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src as u64, n, || unsafe { real(dst, src, n) })
}

/// `cuMemcpyDtoH_v2` (and `_ptds`).
pub(super) unsafe fn dtoh(
    real: unsafe extern "C" fn(*mut c_void, DevPtr, usize) -> CuResult,
    call: Call,
    dst: *mut c_void,
    src: DevPtr,
    n: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst as u64, src, n, || unsafe { real(dst, src, n) })
}

/// `cuMemcpyHtoDAsync_v2` (and `_ptsz`).
pub(super) unsafe fn htod_async(
    real: unsafe extern "C" fn(DevPtr, *const c_void, usize, Stream) -> CuResult,
    call: Call,
    dst: DevPtr,
    src: *const c_void,
    n: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src as u64, n, || unsafe {
        real(dst, src, n, stream)
    })
}

/// `cuMemcpyDtoHAsync_v2` (and `_ptsz`).
pub(super) unsafe fn dtoh_async(
    real: unsafe extern "C" fn(*mut c_void, DevPtr, usize, Stream) -> CuResult,
    call: Call,
    dst: *mut c_void,
    src: DevPtr,
    n: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst as u64, src, n, || unsafe {
        real(dst, src, n, stream)
    })
}

/// `cuMemcpyPeer` (and `_ptds`).
pub(super) unsafe fn peer(
    real: unsafe extern "C" fn(DevPtr, Ctx, DevPtr, Ctx, usize) -> CuResult,
    call: Call,
    dst: DevPtr,
    dst_ctx: Ctx,
    src: DevPtr,
    src_ctx: Ctx,
    n: usize,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src, n, || unsafe {
        real(dst, dst_ctx, src, src_ctx, n)
    })
}

/// `cuMemcpyPeerAsync` (and `_ptsz`).
pub(super) unsafe fn peer_async(
    real: unsafe extern "C" fn(DevPtr, Ctx, DevPtr, Ctx, usize, Stream) -> CuResult,
    call: Call,
    dst: DevPtr,
    dst_ctx: Ctx,
    src: DevPtr,
    src_ctx: Ctx,
    n: usize,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    copy(call, dst, src, n, || unsafe {
        real(dst, dst_ctx, src, src_ctx, n, stream)
    })
}

/// The ranges of a 2D copy described by `p` (none for a null descriptor: the driver
/// refuses it).
fn ranges_2d(call: Call, p: *const Memcpy2D) -> Option<[ApiRange; 2]> {
    // SAFETY: the program passes a valid descriptor or null.
    let (dst, dl, src, sl) = unsafe { p.as_ref() }?.operands();
    Some(ranges(call.api, dst, src, dl, sl))
}

/// `cuMemcpy2D_v2`, `cuMemcpy2DUnaligned_v2` (and `_ptds`).
pub(super) unsafe fn two_d(
    real: unsafe extern "C" fn(*const Memcpy2D) -> CuResult,
    call: Call,
    p: *const Memcpy2D,
) -> CuResult {
    // SAFETY: the caller's argument.
    checked(
        call.api,
        ranges_2d(call, p).as_ref().map_or(&[], |r| r),
        || unsafe { real(p) },
    )
}

/// `cuMemcpy2DAsync_v2` (and `_ptsz`).
pub(super) unsafe fn two_d_async(
    real: unsafe extern "C" fn(*const Memcpy2D, Stream) -> CuResult,
    call: Call,
    p: *const Memcpy2D,
    stream: Stream,
) -> CuResult {
    // SAFETY: the caller's arguments.
    checked(
        call.api,
        ranges_2d(call, p).as_ref().map_or(&[], |r| r),
        || unsafe { real(p, stream) },
    )
}
