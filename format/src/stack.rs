//! The GPU stack of instrumented kernels whose stack the driver cannot size.
//!
//! ptxas sizes a kernel's stack when its call graph is known and acyclic; the driver
//! then gives it what it needs. A kernel that recurses or calls through a pointer gets
//! the context's stack limit instead (1 KiB per thread by default). Instrumented frames
//! are larger than plain ones (a tagged local array takes a slot of its size class
//! plus a header, and -O0 spills more), so a recursion that fits plainly can overflow
//! once instrumented. The pass marks such a module with [`MARKER_SYMBOL`]; at the first
//! launch of one of its kernels the runtime multiplies the context's stack limit by
//! [`SCALE`] once (unless `CUSAFE_OPTIONS=stack_size` says otherwise).

/// The device global (one byte) of a module with recursion or indirect calls.
pub const MARKER_SYMBOL: &str = "__cusafe_dynamic_stack";
/// By how much the runtime raises the stack limit for a marked module. Measured on
/// generated programs: instrumented frames of recursive kernels were up to 3.4 times
/// their plain size (-O0 and -O2), and 4 KiB ran every one that overflowed 1 KiB.
pub const SCALE: usize = 4;
