//! `cudaDeviceReset`: destroys every allocation, cusafe's windows, the runtime page, the
//! report page's registration and the private stream. The runtime notes it; the next
//! hooked call that needs the device side sets it up again (`runtime/revive.rs`), and
//! blocks live at the reset count as freed by it (not leaks). The reset of another
//! device the runtime serves frees that device's blocks the same way and ends tagging
//! there (`runtime/devices.rs`). The report page is the
//! runtime's own memory, so findings from before the reset are still read (here, after
//! the real call).

use super::polled;
use crate::cuda::real::{real, CudaError};
use crate::runtime;

/// Hook of `cudaDeviceReset`.
#[no_mangle]
pub unsafe extern "C" fn cudaDeviceReset() -> CudaError {
    if let Some(rt) = runtime::initialized() {
        rt.note_reset_here();
    }
    polled("cudaDeviceReset", unsafe { real().cudaDeviceReset() })
}
