//! `libcusafe_fuzz.a`: the target side of `cusafe fuzz`.
//!
//! `cusafe-clang++ --cusafe-fuzz` links this archive into the program. It brings:
//!
//! * host edge coverage: SanitizerCoverage's `trace-pc-guard` callbacks from
//!   `libafl_targets` (hit counts into the engine's shared map);
//! * the AFL++ fork server and persistent mode from `libafl_targets`, started by a
//!   constructor before `main` and so before the program's first CUDA call
//!   ([`server`]);
//! * the persistent harness API of `<cusafe/fuzz.h>` ([`turns`], [`input`]);
//! * the hand-off of the device edge map from `libcusafe_rt.so` ([`device`]);
//! * AddressSanitizer findings as JSON lines the engine reads ([`asan`]).
//!
//! Outside the fuzzer (no `__AFL_SHM_ID`) the program runs as it would without the
//! archive, its harness once on one input.

pub mod asan;
pub mod device;
pub mod input;
pub mod server;
pub mod turns;

/// Present in every binary linked with this archive: `cusafe fuzz` looks for it to
/// tell a fuzz build from a binary built without `--cusafe-fuzz`.
#[no_mangle]
#[used]
pub static cusafe_fuzz_rt_present: u32 = 1;

/// Runs before `main` (the archive's constructor): maps the engine's shared map, hands
/// the device part to the runtime and starts the fork server. Exported so that the
/// compiler driver can name it with `-Wl,-u` and pull this archive member in.
#[no_mangle]
pub extern "C" fn cusafe_fuzz_init() {
    server::start();
}

#[used]
#[link_section = ".init_array"]
static INIT: extern "C" fn() = cusafe_fuzz_init;
