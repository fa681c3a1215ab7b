//! The formats cusafe's parts agree on, in one place.
//!
//! * [`pointer`]: the bits of a global cusafe pointer (poison, tag, address) and the
//!   pointer-arithmetic (XOR) rule.
//! * [`block`]: size classes, the in-band header and the block layout.
//! * [`devheap`]: the device heap's arena (in-kernel `malloc`/`free`) and its state.
//! * [`pseudo`]: local-memory pseudo-pointers and stack epochs.
//! * [`launch`]: hidden kernel parameters carrying each pointer argument's bounds.
//! * [`fuzz`]: the map layout and variables shared by `cusafe fuzz` and its targets.
//! * [`rtpage`]: the fixed device address where device code finds the runtime's state.
//! * [`report`]: the report page and record written by device code and read by the host.
//! * [`stack`]: the marker of modules whose stack the driver cannot size.
//! * [`pass_env`]: the names of the variables that configure the pass.
//!
//! `docs/formats.md` describes the same layouts in prose; the device runtime
//! (`device-rt/cusafe_rt.c`) repeats the few constants it needs and a test checks
//! that the two agree.

pub mod block;
pub mod devheap;
pub mod fuzz;
pub mod launch;
pub mod pass_env;
pub mod pointer;
pub mod pseudo;
pub mod report;
pub mod rtpage;
pub mod stack;
