//! Start-up of the device-visible state: the report page (pinned, host-mapped memory
//! that device code writes records into) and the runtime page at the fixed address
//! `RTPAGE_ADDR` (window 36) that tells device code where the report page is.
//!
//! The report page is the runtime's own `mmap`, registered with the driver's
//! `cuMemHostRegister` rather than allocated by CUDA, so the host can still read it
//! after `cudaDeviceReset` (which frees every CUDA host allocation). Only driver calls:
//! the runtime also starts in processes without libcudart.

use std::sync::atomic::{AtomicU64, Ordering};

use cudarc::driver::sys as cu;
use cusafe_format::pointer::WINDOW_SIZE;
use cusafe_format::report::PAGE_BYTES;
use cusafe_format::rtpage::{contents, RTPAGE_ADDR, RTPAGE_BYTES, RTPAGE_MAPPED_BYTES};

use super::driver::{check, code};
use super::vmm::VmmBackend;
use crate::alloc::{Access, Backend, BackendError};
use crate::report::page::init_page;

/// Bytes mapped for the report page (whole host pages).
const MAPPED_BYTES: usize = PAGE_BYTES.next_multiple_of(4096);

/// The report page.
#[derive(Debug)]
pub struct ReportPage {
    host: *mut u8,
    /// The page's device address (equal to the host address under UVA); it may change
    /// when the page is registered again after a reset.
    device: AtomicU64,
}

// SAFETY: the page is memory that lives for the whole process; it is only read (with
// volatile loads) after initialisation.
unsafe impl Send for ReportPage {}
// SAFETY: as above.
unsafe impl Sync for ReportPage {}

impl ReportPage {
    /// The page's host address, valid for [`PAGE_BYTES`] bytes for the whole process.
    pub fn host(&self) -> *const u8 {
        self.host
    }

    /// The page's device address.
    pub fn device(&self) -> u64 {
        self.device.load(Ordering::Acquire)
    }

    /// After `cudaDeviceReset` (which ends every host registration): empties the page
    /// (the caller took its records and forgets which it took) and registers it again
    /// in the current context. Returns the device address.
    pub fn register_again(&self) -> Result<u64, String> {
        // SAFETY: the page is MAPPED_BYTES of our own memory for the whole process, and
        // no device code runs across a reset.
        init_page(unsafe { std::slice::from_raw_parts_mut(self.host, PAGE_BYTES) });
        let device = register(self.host.cast())
            .map_err(|e| format!("the report page cannot be mapped for the device again: {e}"))?;
        self.device.store(device, Ordering::Release);
        Ok(device)
    }
}

/// `CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED`: a registration that outlived a reset.
const ALREADY_REGISTERED: i32 = 712;

/// Registers the page's memory with the driver (mapped) and returns its device address.
fn register(host: *mut libc::c_void) -> Result<u64, BackendError> {
    // SAFETY: registers memory we own for the whole process.
    let r =
        unsafe { cu::cuMemHostRegister_v2(host, MAPPED_BYTES, cu::CU_MEMHOSTREGISTER_DEVICEMAP) };
    if code(r) != ALREADY_REGISTERED {
        check("cuMemHostRegister", r)?;
    }
    let mut device = 0;
    // SAFETY: writes one address.
    check("cuMemHostGetDevicePointer", unsafe {
        cu::cuMemHostGetDevicePointer_v2(&mut device, host, 0)
    })?;
    Ok(device)
}

/// Maps, initialises and registers the report page.
pub fn alloc_report_page() -> Result<ReportPage, String> {
    // SAFETY: a fresh private anonymous mapping, never unmapped after success.
    let host = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            MAPPED_BYTES,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if host == libc::MAP_FAILED {
        return Err("mmap of the report page failed".into());
    }
    // SAFETY: `host` points to MAPPED_BYTES >= PAGE_BYTES bytes we own.
    init_page(unsafe { std::slice::from_raw_parts_mut(host.cast::<u8>(), PAGE_BYTES) });
    let device = match register(host) {
        Ok(d) => d,
        Err(e) => {
            // SAFETY: unmaps the mapping made above (never handed out).
            unsafe { libc::munmap(host, MAPPED_BYTES) };
            return Err(format!(
                "the report page cannot be mapped for the device: {e}"
            ));
        }
    };
    Ok(ReportPage {
        host: host.cast(),
        device: AtomicU64::new(device),
    })
}

/// Reserves window 36, where the devices' runtime pages go (the first device's at
/// `RTPAGE_ADDR`, the n-th's at `device_page(n)`).
pub fn reserve_runtime_window(backend: &mut VmmBackend) -> Result<(), String> {
    backend
        .reserve(RTPAGE_ADDR, WINDOW_SIZE)
        .map_err(|e| format!("runtime page: {e}"))
}

/// Maps the runtime page and the stack-epoch state (zeroed) of `device` at `at` (in
/// window 36, reserved) and writes the report page's device address, the option
/// `flags`, the magic and a zero claim counter into it; the rest of the mapping is
/// zeroed (coverage, stack epochs, the device heap's state). Returns the page's memory.
pub fn install_runtime_page(
    backend: &mut VmmBackend,
    at: u64,
    device: i32,
    report_page: u64,
    flags: u32,
) -> Result<cu::CUmemGenericAllocationHandle, String> {
    let step = |e: BackendError| format!("runtime page: {e}");
    // The page itself plus the stack-epoch state behind it, all zeroed.
    let h = backend.create(RTPAGE_MAPPED_BYTES, device).map_err(step)?;
    if let Err(e) = backend.map(at, RTPAGE_MAPPED_BYTES, h, Access::ReadWrite) {
        let _ = backend.release(h);
        return Err(step(e));
    }
    let mut bytes = vec![0u8; RTPAGE_MAPPED_BYTES as usize];
    bytes[..RTPAGE_BYTES].copy_from_slice(&contents(report_page, flags));
    backend.copy_to_device(at, &bytes).map_err(step)?;
    Ok(h)
}

/// After a reset: gives back what of the runtime page may have outlived it (its
/// mapping, its memory `handle` when not 0, window 36's reservation), errors ignored
/// (they mean it is gone already).
pub fn drop_runtime_page(backend: &mut VmmBackend, handle: cu::CUmemGenericAllocationHandle) {
    let _ = backend.unmap(RTPAGE_ADDR, RTPAGE_MAPPED_BYTES);
    if handle != 0 {
        let _ = backend.release(handle);
    }
    let _ = backend.unreserve(RTPAGE_ADDR, WINDOW_SIZE);
}
