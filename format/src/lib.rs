//! The formats cusafe's parts agree on, in one place.
//!
//! * [`pointer`]: the bits of a global cusafe pointer (poison, tag, address) and the
//!   pointer-arithmetic (XOR) rule.
//! * [`block`]: size classes, the in-band header and the block layout.
//! * [`devheap`]: the device heap's arena (in-kernel `malloc`/`free`) and its state.
//! * [`pseudo`]: local-memory pseudo-pointers and stack epochs.
//! * [`launch`]: hidden kernel parameters carrying each pointer argument's bounds.
//! * [`fuzz`]: the map layout and variables shared by `cusafe fuzz` and its targets.
//! * [`rtpage`]: the runtime page, where device code finds the runtime's state (its
//!   address in the per-module constant `__cusafe_rtpage`).
//! * [`report`]: the report page and record written by device code and read by the host.
//! * [`stack`]: the marker of modules whose stack the driver cannot size.
//! * [`pass_env`]: the names of the variables that configure the pass.
//! * [`c_header`](mod@c_header): the constants C code needs, as a generated C header.
//!
//! `docs/formats.md` describes the same layouts in prose. The C code that must agree
//! with them (the device runtime `device-rt/cusafe_rt.c`, the runtime's fake CUDA in
//! its tests) is compiled with the header [`c_header()`] generates, which defines the
//! constants it uses as `CUSAFE_*` macros.

pub mod block;
pub mod c_header;
pub mod devheap;
pub mod fuzz;
pub mod launch;
pub mod packed;
pub mod pass_env;
pub mod pointer;
pub mod pseudo;
pub mod report;
pub mod rtpage;
pub mod stack;

pub use c_header::c_header;
