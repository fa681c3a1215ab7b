//! Small helpers over the driver API (cudarc's `driver::sys`, loaded from libcuda at
//! the first call): error conversion, the context every driver call needs, device
//! queries.

use std::ffi::CStr;

use cudarc::driver::sys as cu;

use crate::alloc::BackendError;

/// The driver's numeric code of `r`.
pub fn code(r: cu::CUresult) -> i32 {
    r as i32
}

/// `Ok` for `CUDA_SUCCESS`, else an error naming `op` and the driver's message.
pub fn check(op: &'static str, r: cu::CUresult) -> Result<(), BackendError> {
    if r == cu::CUresult::CUDA_SUCCESS {
        return Ok(());
    }
    Err(BackendError {
        op,
        code: code(r),
        message: describe(r),
    })
}

/// "CUDA_ERROR_OUT_OF_MEMORY: out of memory" for a driver result.
pub fn describe(r: cu::CUresult) -> String {
    let text = |f: unsafe fn(cu::CUresult, *mut *const std::ffi::c_char) -> cu::CUresult| {
        let mut p = std::ptr::null();
        // SAFETY: the driver writes a pointer to a static string, or leaves it null.
        let ok = unsafe { f(r, &mut p) } == cu::CUresult::CUDA_SUCCESS && !p.is_null();
        // SAFETY: p points to a NUL-terminated static string.
        ok.then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
    };
    match (text(cu::cuGetErrorName), text(cu::cuGetErrorString)) {
        (Some(n), Some(s)) => format!("{n}: {s}"),
        _ => format!("driver error {}", code(r)),
    }
}

/// Whether libcuda can be loaded at all (no driver: no GPU work in this process).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library.
    unsafe { cu::is_culib_present() }
}

/// A driver context handle (the primary context the runtime made current).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context(cu::CUcontext);

// SAFETY: a CUcontext is a process-wide handle usable from any thread.
unsafe impl Send for Context {}
// SAFETY: as above; the handle itself is never mutated.
unsafe impl Sync for Context {}

impl Context {
    /// The calling thread's current context (after the runtime initialised it).
    pub fn current() -> Result<Context, BackendError> {
        let mut c = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check("cuCtxGetCurrent", unsafe { cu::cuCtxGetCurrent(&mut c) })?;
        if c.is_null() {
            return Err(BackendError {
                op: "cuCtxGetCurrent",
                code: 0,
                message: "no current context".into(),
            });
        }
        Ok(Context(c))
    }

    /// The calling thread's current context, if there is one (no error when none).
    pub fn current_or_none() -> Option<Context> {
        let mut c = std::ptr::null_mut();
        // SAFETY: writes one handle.
        let r = unsafe { cu::cuCtxGetCurrent(&mut c) };
        (r == cu::CUresult::CUDA_SUCCESS && !c.is_null()).then_some(Context(c))
    }

    /// The context of a raw handle [`Context::raw`] returned.
    pub fn from_raw(raw: *mut std::ffi::c_void) -> Context {
        Context(raw.cast())
    }

    /// The raw handle.
    pub fn raw(self) -> *mut std::ffi::c_void {
        self.0.cast()
    }

    /// The device of the current context.
    pub fn device() -> Result<cu::CUdevice, BackendError> {
        let mut d = 0;
        // SAFETY: writes one device ordinal.
        check("cuCtxGetDevice", unsafe { cu::cuCtxGetDevice(&mut d) })?;
        Ok(d)
    }

    /// Makes this context current on the calling thread until the guard is dropped
    /// (then the previous one comes back, if there was one).
    pub fn enter(self) -> CtxGuard {
        let mut prev = std::ptr::null_mut();
        // SAFETY: reads/sets the calling thread's current context.
        unsafe {
            if cu::cuCtxGetCurrent(&mut prev) != cu::CUresult::CUDA_SUCCESS {
                prev = std::ptr::null_mut();
            }
            if prev != self.0 {
                cu::cuCtxSetCurrent(self.0);
            }
        }
        CtxGuard {
            restore: (!prev.is_null() && prev != self.0).then_some(prev),
        }
    }
}

/// Restores the previous current context on drop.
#[derive(Debug)]
pub struct CtxGuard {
    restore: Option<cu::CUcontext>,
}

impl Drop for CtxGuard {
    fn drop(&mut self) {
        if let Some(prev) = self.restore {
            // SAFETY: `prev` was the thread's current context a moment ago.
            unsafe { cu::cuCtxSetCurrent(prev) };
        }
    }
}

/// How many devices the process sees (0 when the driver cannot say).
pub fn device_count() -> i32 {
    let mut count = 0;
    // SAFETY: writes one int; it stays 0 if the query fails.
    unsafe { cu::cuDeviceGetCount(&mut count) };
    count
}

/// An integer attribute of `device`.
pub fn attribute(device: cu::CUdevice, attr: cu::CUdevice_attribute) -> Result<i32, BackendError> {
    let mut v = 0;
    // SAFETY: writes one int.
    check("cuDeviceGetAttribute", unsafe {
        cu::cuDeviceGetAttribute(&mut v, attr, device)
    })?;
    Ok(v)
}

/// Whether device code may reach the address `p`, which no cusafe block holds: memory
/// the driver knows (an allocation of any allocator, registered or managed memory, a
/// module's globals), or, on a device that reads pageable host memory (HMM or ATS:
/// `device`'s `PAGEABLE_MEMORY_ACCESS`), any page the process maps. Only the driver's
/// "not a pointer it knows" makes `p` unknown: any other answer counts as reachable,
/// so a launch is never refused or reported on a failed query.
pub fn reachable(p: u64, device: Option<cu::CUdevice>) -> bool {
    let mut memory_type = 0u32;
    // SAFETY: writes one u32 (the attribute's type).
    let r = unsafe {
        cu::cuPointerGetAttribute(
            (&mut memory_type as *mut u32).cast(),
            cu::CUpointer_attribute::CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
            p,
        )
    };
    if r != cu::CUresult::CUDA_ERROR_INVALID_VALUE {
        return true;
    }
    pageable_access(device) && host_maps(p)
}

/// Whether `device` reads pageable host memory (asked once per process).
fn pageable_access(device: Option<cu::CUdevice>) -> bool {
    static ANSWER: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ANSWER.get_or_init(|| {
        device.is_none_or(|d| {
            attribute(
                d,
                cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS,
            )
            .ok()
            .is_none_or(|v| v != 0)
        })
    })
}

/// Whether the process maps the page holding `p` (any protection): `msync` fails
/// with `ENOMEM` on an unmapped page.
fn host_maps(p: u64) -> bool {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) }.max(4096) as u64;
    // SAFETY: msync only inspects the mapping of the page; nothing is written back for
    // MS_ASYNC on anonymous memory, and an unmapped page is an error, not a fault.
    unsafe {
        libc::msync(
            (p & !(page - 1)) as *mut libc::c_void,
            page as usize,
            libc::MS_ASYNC,
        ) == 0
    }
}
