//! The fuzzing hooks `cusafe_rt_fuzz_attach` and `cusafe_rt_fuzz_collect`: what
//! `libcusafe_fuzz.a` calls to get each input's device edge coverage and device reports
//! (`runtime/fuzz.rs` does the work).

use std::ffi::c_int;

use crate::runtime::fuzz;

/// `int cusafe_rt_fuzz_attach(unsigned char *sink, size_t len)`: remembers the fuzzer's
/// device-edge map, `len` bytes at `sink` (normally `COVERAGE_BYTES`; a null `sink` or a
/// zero `len` detaches). Makes no CUDA call. Returns 0.
///
/// # Safety
/// `sink` must point to `len` writable bytes that stay valid until the process ends or
/// the next attach.
#[no_mangle]
pub unsafe extern "C" fn cusafe_rt_fuzz_attach(sink: *mut u8, len: usize) -> c_int {
    // SAFETY: the caller's promise.
    unsafe { fuzz::attach(sink, len) };
    0
}

/// `int cusafe_rt_fuzz_collect(void)`: after an input, waits for the device, ors the
/// device coverage map (its first `min(len, COVERAGE_BYTES)` bytes) into the attached
/// map, zeroes the device map and prints or writes every device report of the input.
/// Returns 0 (also when the runtime never started: no kernel ran), or minus the CUDA
/// error code when waiting for, reading or zeroing the device fails (after a trap or
/// fault the context is dead: end the process).
#[no_mangle]
pub extern "C" fn cusafe_rt_fuzz_collect() -> c_int {
    fuzz::collect()
}
