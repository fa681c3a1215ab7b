//! `cudaDeviceReset`: destroys every allocation, cusafe's windows and the runtime page.
//! The runtime stops tagging (later allocations pass through, with one warning) and
//! does not count blocks that were live at the reset as leaks. The report page is the
//! runtime's own memory, so findings from before the reset are still read.

use super::polled;
use crate::cuda::real::{real, CudaError};
use crate::runtime;

/// Hook of `cudaDeviceReset`.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceReset() -> CudaError {
    if let Some(rt) = runtime::initialized() {
        rt.note_reset();
    }
    polled("cudaDeviceReset", unsafe { real().cudaDeviceReset() })
}
