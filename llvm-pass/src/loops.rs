//! Loop ranges through the shim's ScalarEvolution (`shim/plugin.cpp`): the bytes an
//! access covers over all trips of its loop, expanded in the loop's preheader, so that
//! one check there can stand for the check on every trip (`elim`).

use crate::collect::Range;
use crate::ffi::{
    cusafe_loop_range, cusafe_loop_ranges_free, cusafe_loop_ranges_new, cusafe_signed_range,
    cusafe_simplify_loops, LoopAnalysesRef,
};
use llvm_sys::prelude::*;

/// Gives every loop of function `f` a preheader (loop-simplify form, through the shim),
/// where the optimizer's last clean-ups folded it away: hoisted root halves and loop
/// ranges go there.
pub fn simplify(f: LLVMValueRef) {
    unsafe { cusafe_simplify_loops(f) };
}

/// One function's loop analyses (dominators, loops, scalar evolution). Build it before
/// the function changes and drop it before instrumenting: the analyses do not follow
/// later edits.
pub struct LoopAnalyses(LoopAnalysesRef);

/// The range of one access over its loop.
pub struct LoopRange {
    /// The lowest address the loop's accesses touch (the access's pointer type).
    pub lo: LLVMValueRef,
    /// Bytes from `lo` that they cover (i64).
    pub span: LLVMValueRef,
    /// Where its check goes: the loop preheader's terminator.
    pub at: LLVMValueRef,
}

impl LoopAnalyses {
    /// Analyses function `f`.
    pub fn new(f: LLVMValueRef) -> LoopAnalyses {
        LoopAnalyses(unsafe { cusafe_loop_ranges_new(f) })
    }

    /// What instruction `inst` touches over every trip of its innermost loop, when on
    /// each trip it touches `[r.addr - below, r.addr + len)`: known when the loop's trip
    /// count is computable, `inst` runs on every trip, the address is affine in the
    /// loop, `r.root` is defined outside it and the loop calls nothing but intrinsics
    /// (see the shim). Expanded in the preheader.
    pub fn range(&self, inst: LLVMValueRef, r: &Range, below: u64, len: u64) -> Option<LoopRange> {
        let (mut lo, mut span, mut at) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        let found = unsafe {
            cusafe_loop_range(
                self.0, inst, r.addr, r.root, below, len, &mut lo, &mut span, &mut at,
            )
        };
        found.then_some(LoopRange { lo, span, at })
    }
}

impl LoopAnalyses {
    /// The signed range ScalarEvolution knows for integer `v` wherever it is defined
    /// (induction variables bounded by trip counts, range metadata and attributes);
    /// `None` when it knows nothing.
    pub fn signed_range(&self, v: LLVMValueRef) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (0, 0);
        unsafe { cusafe_signed_range(self.0, v, &mut lo, &mut hi) }.then_some((lo, hi))
    }
}

impl Drop for LoopAnalyses {
    fn drop(&mut self) {
        unsafe { cusafe_loop_ranges_free(self.0) }
    }
}
