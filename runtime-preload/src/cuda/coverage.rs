//! The device edge-coverage map in the runtime page (`format::rtpage::COVERAGE_OFFSET`):
//! read out after an input; zeroing goes through the private write stream
//! (`HeaderStream::zero_now`).

use cudarc::driver::sys as cu;
use cusafe_format::rtpage::{COVERAGE_BYTES, COVERAGE_OFFSET, RTPAGE_ADDR};

use super::driver::check;
use crate::alloc::BackendError;

/// Device address of the map.
pub const MAP_ADDR: u64 = RTPAGE_ADDR + COVERAGE_OFFSET;
/// Bytes of the map.
pub const MAP_BYTES: usize = COVERAGE_BYTES as usize;

/// Copies the first `out.len()` (at most [`MAP_BYTES`]) bytes of the map into `out`,
/// synchronously (the caller holds the context and has waited for the device).
pub fn read_map(out: &mut [u8]) -> Result<(), BackendError> {
    let n = out.len().min(MAP_BYTES);
    // SAFETY: the map is mapped device memory of MAP_BYTES bytes; `out` has n bytes.
    check("cuMemcpyDtoH", unsafe {
        cu::cuMemcpyDtoH_v2(out.as_mut_ptr().cast(), MAP_ADDR, n)
    })
}
