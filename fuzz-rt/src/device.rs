//! The device edge map's hand-off: `libcusafe_rt.so` owns the device map; this archive
//! tells it where the engine's device slice is and asks for a copy after each input.
//! The runtime is found with `dlsym`, so CPU-only targets (no runtime) link and run.

use std::ffi::{c_int, c_void, CStr};
use std::sync::OnceLock;

type Attach = unsafe extern "C" fn(*mut u8, usize) -> c_int;
type Collect = unsafe extern "C" fn() -> c_int;

fn symbol(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Gives the runtime the engine's device slice (no CUDA call is made).
///
/// # Safety
/// `sink` must point to `len` writable bytes that live as long as the process.
pub unsafe fn attach(sink: *mut u8, len: usize) {
    let f = symbol(c"cusafe_rt_fuzz_attach");
    if !f.is_null() {
        // SAFETY: the runtime's exported function of this signature; the caller's
        // promise about `sink`.
        unsafe { std::mem::transmute::<*mut c_void, Attach>(f)(sink, len) };
    }
}

/// What the runtime said after an input.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Collected {
    /// The map was copied (or no kernel ran, or there is no runtime).
    Ok,
    /// The CUDA context is dead (a trap or a fault): the process must end.
    ContextLost(i32),
}

/// Waits for the device, lets the runtime print this input's reports and copies the
/// device edges into the engine's map.
pub fn collect() -> Collected {
    static COLLECT: OnceLock<usize> = OnceLock::new();
    let f = *COLLECT.get_or_init(|| symbol(c"cusafe_rt_fuzz_collect") as usize) as *mut c_void;
    if f.is_null() {
        return Collected::Ok;
    }
    // SAFETY: the runtime's exported function of this signature.
    let rc = unsafe { std::mem::transmute::<*mut c_void, Collect>(f)() };
    if rc < 0 {
        Collected::ContextLost(rc)
    } else {
        Collected::Ok
    }
}
