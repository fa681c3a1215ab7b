//! `libcusafe_asan_defaults.a`: AddressSanitizer's defaults for host code built with
//! `cusafe-clang++ -fsanitize=address` beside cusafe's device checks.
//!
//! ASan reads its built-in options from `__asan_default_options`, a weak function of its
//! static runtime that a program may define. The definition must be in the executable:
//! the runtime's weak one is linked into the executable too, and binds before any
//! shared library's (a definition in `libcusafe_rt.so` is never called). So
//! `cusafe-clang++` links this archive when the link has `-fsanitize=address`, with
//! `-Wl,--undefined=`[`CUSAFE_ASAN_DEFAULTS_SYMBOL`]: an archive member is only
//! pulled in for a symbol still undefined, and `__asan_default_options` is already
//! defined (weakly) by ASan's runtime. The crate is one codegen unit (the workspace's
//! `Cargo.toml`), so that member also holds [`__asan_default_options`], whose strong
//! definition then wins over ASan's weak one.
//!
//! The member references nothing else, so the program gets this crate's two functions
//! and nothing of Rust's standard library, although the archive carries it: the crate
//! cannot be `no_std` (a `no_std` static library needs `panic = "abort"`, a
//! workspace-wide setting) and needs no dependency. `ASAN_OPTIONS` overrides every
//! default (ASan parses it after these).

#![warn(missing_docs)]

use core::ffi::c_char;

/// ASan's defaults for a program with host ASan and cusafe: `protect_shadow_gap=0` (the
/// CUDA driver maps memory in the range ASan would protect; with the gap protected,
/// CUDA fails to start — measured in fuzz mode on an H100 with driver 580) and
/// `detect_leaks=0` (allocations of the CUDA runtime and driver still live at exit are
/// not the program's leaks; device leaks are `libcusafe_rt.so`'s `detect_leaks`).
pub const DEFAULT_OPTIONS: &core::ffi::CStr = c"protect_shadow_gap=0:detect_leaks=0";

/// Name of [`cusafe_asan_defaults`], the symbol the link asks for to pull in this
/// archive's member.
pub const CUSAFE_ASAN_DEFAULTS_SYMBOL: &str = "cusafe_asan_defaults";

/// ASan's hook for its built-in options: [`DEFAULT_OPTIONS`].
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const c_char {
    DEFAULT_OPTIONS.as_ptr()
}

/// The symbol `cusafe-clang++` names with `-Wl,--undefined=` so that the linker takes
/// this archive's member (and with it [`__asan_default_options`]); returns the same
/// options, so a debugger or test can read what the program was linked with.
#[no_mangle]
pub extern "C" fn cusafe_asan_defaults() -> *const c_char {
    DEFAULT_OPTIONS.as_ptr()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_symbols_give_the_defaults_cuda_needs() {
        // SAFETY: both return a pointer to the static NUL-terminated DEFAULT_OPTIONS.
        let hook = unsafe { core::ffi::CStr::from_ptr(__asan_default_options()) };
        let marker = unsafe { core::ffi::CStr::from_ptr(cusafe_asan_defaults()) };
        assert_eq!(hook, marker);
        let options = hook.to_str().unwrap();
        assert!(options.split(':').any(|o| o == "protect_shadow_gap=0"));
        assert!(options.split(':').any(|o| o == "detect_leaks=0"));
        assert_eq!(CUSAFE_ASAN_DEFAULTS_SYMBOL, "cusafe_asan_defaults");
    }
}
