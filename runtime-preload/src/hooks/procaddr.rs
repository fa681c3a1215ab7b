//! `cuGetProcAddress` (CUDA 11.3 to 11.8 form) and `cuGetProcAddress_v2` (CUDA 12 and
//! later): how cudart, static or shared, and many libraries get every driver entry
//! point. The real lookup runs first; when it succeeds on an entry point of the hook
//! table at a version with the hooked signature, the caller gets the hook of the
//! variant it asked for (default or per-thread default stream, told apart by the
//! address the driver returned, else by `flags`) and the hook keeps the real address.
//! A request for `cuGetProcAddress` itself gets these hooks.

use std::ffi::{c_char, c_int, c_void, CStr};

use super::driver::{entry_for, CuResult, NOT_FOUND};
use crate::cuda::libcuda;
use crate::cuda::real::SUCCESS;

/// `cuGetProcAddress`'s form in CUDA 11.
type V1 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64) -> CuResult;
/// `cuGetProcAddress_v2`.
type V2 = unsafe extern "C" fn(*const c_char, *mut *mut c_void, c_int, u64, *mut c_int) -> CuResult;

/// The first version whose `cuGetProcAddress` is `cuGetProcAddress_v2`.
const V2_SINCE: c_int = 12000;
/// The real function exported as `symbol`.
fn real<F: Copy>(symbol: &CStr) -> Option<F> {
    // SAFETY: libcuda's export of this name has the signature `F` names.
    unsafe { libcuda::as_fn(libcuda::symbol(symbol)) }
}

/// This module's hook of `symbol`, when it is `cuGetProcAddress` or `_v2`.
pub fn hook_for(symbol: &CStr) -> Option<*mut c_void> {
    match symbol.to_bytes() {
        b"cuGetProcAddress" => Some(cuGetProcAddress as *mut c_void),
        b"cuGetProcAddress_v2" => Some(cuGetProcAddress_v2 as *mut c_void),
        _ => None,
    }
}

/// Replaces the driver's answer `*pfn` for `symbol` at `version` with its hook.
///
/// # Safety
/// `symbol` is NUL-terminated; `pfn` holds the driver's answer.
unsafe fn swap(symbol: *const c_char, pfn: *mut *mut c_void, version: c_int, flags: u64) {
    if symbol.is_null() || pfn.is_null() {
        return;
    }
    // SAFETY: the caller's promise.
    let (name, got) = unsafe { (CStr::from_ptr(symbol), *pfn) };
    if got.is_null() {
        return;
    }
    let hook: Option<*mut c_void> = match name.to_bytes() {
        b"cuGetProcAddress" if version >= V2_SINCE => Some(cuGetProcAddress_v2 as *mut c_void),
        b"cuGetProcAddress" => Some(cuGetProcAddress as *mut c_void),
        _ => entry_for(name, version).and_then(|e| {
            let v = e.variant_of(got as usize, flags);
            v.offer(got as usize);
            v.hook.map(|h| h as *mut c_void)
        }),
    };
    if let Some(h) = hook {
        // SAFETY: `pfn` is the caller's out-pointer.
        unsafe { *pfn = h };
    }
}

/// Hook of the driver's `cuGetProcAddress` (CUDA 11 form).
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
) -> CuResult {
    let Some(real) = real::<V1>(c"cuGetProcAddress") else {
        return NOT_FOUND;
    };
    // SAFETY: the caller's arguments.
    let r = unsafe { real(symbol, pfn, version, flags) };
    if r == SUCCESS {
        // SAFETY: the call succeeded, so `symbol` and `*pfn` are valid.
        unsafe { swap(symbol, pfn, version, flags) };
    }
    r
}

/// Hook of the driver's `cuGetProcAddress_v2`.
#[no_mangle]
pub unsafe extern "C" fn cuGetProcAddress_v2(
    symbol: *const c_char,
    pfn: *mut *mut c_void,
    version: c_int,
    flags: u64,
    status: *mut c_int,
) -> CuResult {
    let Some(real) = real::<V2>(c"cuGetProcAddress_v2") else {
        return NOT_FOUND;
    };
    // SAFETY: the caller's arguments.
    let r = unsafe { real(symbol, pfn, version, flags, status) };
    if r == SUCCESS {
        // SAFETY: the call succeeded, so `symbol` and `*pfn` are valid.
        unsafe { swap(symbol, pfn, version, flags) };
    }
    r
}
