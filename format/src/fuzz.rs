//! The contract between `cusafe fuzz` (the engine) and `libcusafe_fuzz.a` (linked into
//! fuzz targets): the coverage map's layout, the environment variables the engine sets,
//! and the marker a persistent harness leaves in the binary.
//!
//! The engine's shared map (AFL++'s `__AFL_SHM_ID`) is one buffer of [`MAP_BYTES`]:
//!
//! | bytes | what |
//! |---|---|
//! | `0 .. HOST_MAP_BYTES` | host edges: SanitizerCoverage guards, hit counts |
//! | `HOST_MAP_BYTES .. MAP_BYTES` | device edges: the runtime's device map, copied after each input |

use crate::rtpage::COVERAGE_BYTES;

/// Bytes of host edge coverage (guard ids must stay below this).
pub const HOST_MAP_BYTES: usize = 1 << 16;
/// Offset of the device edges in the shared map.
pub const DEVICE_MAP_OFFSET: usize = HOST_MAP_BYTES;
/// Bytes of device edge coverage (the runtime page's map).
pub const DEVICE_MAP_BYTES: usize = COVERAGE_BYTES as usize;
/// The whole shared map.
pub const MAP_BYTES: usize = HOST_MAP_BYTES + DEVICE_MAP_BYTES;

/// The string `CUSAFE_FUZZ_TARGET` / `CUSAFE_FUZZ_LOOP` put in a binary: it may run
/// persistently (many inputs in one process).
pub const PERSISTENT_MARKER: &[u8] = b"##CUSAFE_FUZZ_PERSISTENT##";
/// A symbol every binary linked with `libcusafe_fuzz.a` defines.
pub const RT_MARKER_SYMBOL: &str = "cusafe_fuzz_rt_present";

/// Turns of a persistent loop before the process is replaced (decimal).
pub const TURNS_ENV: &str = "CUSAFE_FUZZ_TURNS";
/// Input file for a harness run outside the fuzzer (else argv\[1\], else stdin).
pub const INPUT_ENV: &str = "CUSAFE_FUZZ_INPUT";
/// File to which `libcusafe_fuzz.a` appends host-side (AddressSanitizer) findings as
/// JSON lines, beside the runtime's `json_path`.
pub const HOST_JSON_ENV: &str = "CUSAFE_FUZZ_HOST_JSON";
