//! One row of the driver hook table: an entry point as `cuGetProcAddress` names it, the
//! first API version whose signature the hook has, and its variants (the default one and
//! the per-thread-default-stream one, `_ptds`/`_ptsz`), each with its exported symbol,
//! its hook and the real function the hook calls.

use std::ffi::{c_int, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::cuda::libcuda;

/// Every hook, as an untyped function pointer.
pub type HookFn = unsafe extern "C" fn();

/// One variant of an entry point.
pub struct Variant {
    /// The exported symbol (the hook's name and libcuda's), NUL-terminated; empty when
    /// the entry point has no such variant.
    pub symbol: &'static str,
    /// The hook.
    pub hook: Option<HookFn>,
    /// The real function (0: not known yet).
    real: AtomicUsize,
}

impl Variant {
    /// A variant exported as `symbol` (NUL-terminated) and served by `hook`.
    pub const fn new(symbol: &'static str, hook: HookFn) -> Variant {
        Variant {
            symbol,
            hook: Some(hook),
            real: AtomicUsize::new(0),
        }
    }

    /// The missing variant.
    pub const fn none() -> Variant {
        Variant {
            symbol: "",
            hook: None,
            real: AtomicUsize::new(0),
        }
    }

    /// Whether the entry point has this variant.
    pub fn exists(&self) -> bool {
        self.hook.is_some()
    }

    /// The exported symbol without its NUL (for messages).
    pub fn name(&self) -> &'static str {
        self.symbol.trim_end_matches('\0')
    }

    /// Records `real` as the real function unless one is known already (the driver may
    /// hand out several addresses for one entry point; they behave the same). An address
    /// in this library is a hook, not the real function: a driver whose own references
    /// to its exports are interposable hands those out. It is ignored (the real one is
    /// then libcuda's export of the variant's symbol).
    pub fn offer(&self, real: usize) {
        if libcuda::in_this_library(real) {
            return;
        }
        let _ = self
            .real
            .compare_exchange(0, real, Ordering::AcqRel, Ordering::Acquire);
    }

    /// The real function's address: the one offered, else libcuda's export (0: none).
    pub fn real_addr(&self) -> usize {
        let r = self.real.load(Ordering::Acquire);
        if r != 0 || !self.exists() {
            return r;
        }
        let sym = CStr::from_bytes_with_nul(self.symbol.as_bytes()).expect("NUL-terminated");
        let exported = libcuda::symbol(sym);
        if exported != 0 {
            self.offer(exported);
        }
        self.real.load(Ordering::Acquire)
    }

    /// The real function as type `F` (a function pointer type of the hook's signature).
    ///
    /// # Safety
    /// `F` must be the entry point's C signature.
    pub unsafe fn real<F: Copy>(&self) -> Option<F> {
        // SAFETY: a function address of the signature the caller names.
        unsafe { libcuda::as_fn(self.real_addr()) }
    }
}

/// One hooked entry point.
pub struct Entry {
    /// The name `cuGetProcAddress` is asked for, e.g. `cuMemcpyHtoD`.
    pub name: &'static str,
    /// The first `cudaVersion` with the hook's signature (older ones pass through).
    pub since: c_int,
    /// The default variant and the per-thread-default-stream one.
    pub variants: [Variant; 2],
}

/// `CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM`.
pub const PER_THREAD_FLAG: u64 = 2;

impl Entry {
    /// The variant a `cuGetProcAddress` answer `got` (asked with `flags`) is: the one
    /// whose export has this address, else the one `flags` asks for.
    pub fn variant_of(&self, got: usize, flags: u64) -> &Variant {
        let [default, per_thread] = &self.variants;
        if !per_thread.exists() {
            return default;
        }
        if per_thread.real_addr() == got {
            return per_thread;
        }
        if default.real_addr() == got || flags & PER_THREAD_FLAG == 0 {
            return default;
        }
        per_thread
    }
}
