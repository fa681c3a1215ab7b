//! Start-up of the device-visible state: the report page (pinned, host-mapped memory
//! that device code writes records into) and the runtime page at the fixed address
//! `RTPAGE_ADDR` (window 36) that tells device code where the report page is.

use std::ffi::c_void;

use cusafe_format::block::GRANULE;
use cusafe_format::pointer::WINDOW_SIZE;
use cusafe_format::report::PAGE_BYTES;
use cusafe_format::rtpage::{contents, RTPAGE_ADDR, RTPAGE_BYTES};

use super::real::{real, HOST_ALLOC_MAPPED, SUCCESS};
use super::vmm::VmmBackend;
use crate::alloc::Backend;
use crate::report::page::init_page;

/// The report page.
#[derive(Debug)]
pub struct ReportPage {
    host: *mut u8,
    /// The page's device address (equal to the host address under UVA).
    pub device: u64,
}

// SAFETY: the page is pinned memory that lives for the whole process; it is only read
// (with volatile loads) after initialisation.
unsafe impl Send for ReportPage {}
// SAFETY: as above.
unsafe impl Sync for ReportPage {}

impl ReportPage {
    /// The page's host address, valid for [`PAGE_BYTES`] bytes for the whole process.
    pub fn host(&self) -> *const u8 {
        self.host
    }
}

/// Allocates and initialises the report page.
pub fn alloc_report_page() -> Result<ReportPage, String> {
    let r = real();
    let mut host: *mut c_void = std::ptr::null_mut();
    // SAFETY: the real runtime functions, called as documented.
    let e = unsafe { (r.cudaHostAlloc)(&mut host, PAGE_BYTES, HOST_ALLOC_MAPPED) };
    if e != SUCCESS || host.is_null() {
        return Err(format!(
            "cudaHostAlloc of the report page failed (error {e})"
        ));
    }
    // SAFETY: `host` points to PAGE_BYTES bytes we own.
    init_page(unsafe { std::slice::from_raw_parts_mut(host.cast::<u8>(), PAGE_BYTES) });
    let mut device: *mut c_void = std::ptr::null_mut();
    // SAFETY: as above.
    let e = unsafe { (r.cudaHostGetDevicePointer)(&mut device, host, 0) };
    if e != SUCCESS {
        return Err(format!(
            "cudaHostGetDevicePointer of the report page failed (error {e})"
        ));
    }
    Ok(ReportPage {
        host: host.cast(),
        device: device as u64,
    })
}

/// Reserves window 36, maps one granule at `RTPAGE_ADDR` and writes the report page's
/// device address, the option `flags` and the magic into it; the rest of the granule
/// is zeroed (room for more device state, e.g. stack epochs).
pub fn install_runtime_page(
    backend: &mut VmmBackend,
    report_page: u64,
    flags: u32,
) -> Result<(), String> {
    let step = |e: crate::alloc::BackendError| format!("runtime page: {e}");
    backend.reserve(RTPAGE_ADDR, WINDOW_SIZE).map_err(step)?;
    let h = backend.create(GRANULE).map_err(step)?;
    backend.map(RTPAGE_ADDR, GRANULE, h).map_err(step)?;
    let mut bytes = vec![0u8; GRANULE as usize];
    bytes[..RTPAGE_BYTES].copy_from_slice(&contents(report_page, flags));
    backend.copy_to_device(RTPAGE_ADDR, &bytes).map_err(step)
}
