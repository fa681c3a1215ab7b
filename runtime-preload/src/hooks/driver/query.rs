//! `cuMemGetAddressRange_v2`: for a pointer into a live cusafe buffer, the buffer as the
//! program allocated it (its payload start and exact size), not the driver's mapping
//! around it (which also holds the header and the slot's padding). Code that computes
//! offsets from the base (IPC handles, allocator bookkeeping) sees its own buffer.

use super::{Call, CuResult, DevPtr};
use crate::cuda::real::SUCCESS;
use crate::runtime;

/// `cuMemGetAddressRange_v2`.
pub(super) unsafe fn address_range(
    real: unsafe extern "C" fn(*mut DevPtr, *mut usize, DevPtr) -> CuResult,
    _call: Call,
    base: *mut DevPtr,
    size: *mut usize,
    dptr: DevPtr,
) -> CuResult {
    let Some((start, bytes)) = runtime::initialized().and_then(|rt| rt.user_range(dptr)) else {
        // SAFETY: the caller's arguments.
        return unsafe { real(base, size, dptr) };
    };
    // SAFETY: each out-pointer is null (not wanted) or writable, as for the driver.
    unsafe {
        if let Some(b) = base.as_mut() {
            *b = start;
        }
        if let Some(s) = size.as_mut() {
            *s = bytes as usize;
        }
    }
    SUCCESS
}
