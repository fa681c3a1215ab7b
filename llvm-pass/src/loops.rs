//! Loop ranges through the shim's ScalarEvolution (`shim/plugin.cpp`): the bytes an
//! access covers over all trips of its loop, expanded in the loop's preheader, so that
//! one check there can stand for the check on every trip (`elim`).

use crate::collect::Range;
use crate::ffi::{
    cusafe_loop_range, cusafe_loop_ranges_free, cusafe_loop_ranges_new, cusafe_signed_range,
    cusafe_simplify_loops, LoopAnalysesRef,
};
use inkwell::values::{
    AsValueRef, BasicValueEnum, FunctionValue, InstructionValue, IntValue, PointerValue,
};

/// Gives every loop of function `f` a preheader (loop-simplify form, through the shim),
/// where the optimizer's last clean-ups folded it away: hoisted root halves and loop
/// ranges go there.
pub fn simplify(f: FunctionValue) {
    unsafe { cusafe_simplify_loops(f.as_value_ref()) };
}

/// One function's loop analyses (dominators, loops, scalar evolution). Build it before
/// the function changes and drop it before instrumenting: the analyses do not follow
/// later edits.
pub struct LoopAnalyses(LoopAnalysesRef);

/// The range of one access over its loop.
pub struct LoopRange<'ctx> {
    /// The lowest address the loop's accesses touch (the access's pointer type).
    pub lo: PointerValue<'ctx>,
    /// Bytes from `lo` that they cover (i64).
    pub span: IntValue<'ctx>,
    /// Where its check goes: the loop preheader's terminator.
    pub at: InstructionValue<'ctx>,
}

impl LoopAnalyses {
    /// Analyses function `f`.
    pub fn new(f: FunctionValue) -> LoopAnalyses {
        LoopAnalyses(unsafe { cusafe_loop_ranges_new(f.as_value_ref()) })
    }

    /// What instruction `inst` touches over every trip of its innermost loop, when on
    /// each trip it touches `[r.addr - below, r.addr + len)`: known when `inst` runs on
    /// every trip (or on the leading trips only, `iv < X`: then over those trips, with a
    /// length of 0 when none runs it), the address is the same on every trip or affine
    /// in the loop with a computable trip count, `r.root` is defined outside it and the
    /// loop calls nothing but intrinsics (see the shim). Expanded in the preheader.
    pub fn range<'ctx>(
        &self,
        inst: InstructionValue<'ctx>,
        r: &Range<'ctx>,
        below: u64,
        len: u64,
    ) -> Option<LoopRange<'ctx>> {
        let (mut lo, mut span, mut at) = (
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            std::ptr::null_mut(),
        );
        let (inst, addr, root) = (
            inst.as_value_ref(),
            r.addr.as_value_ref(),
            r.root.as_value_ref(),
        );
        let found = unsafe {
            cusafe_loop_range(
                self.0, inst, addr, root, below, len, &mut lo, &mut span, &mut at, true,
            )
        };
        // Safety: the shim gives the address expanded in the access's pointer type, an
        // i64 span and the preheader's terminator.
        found.then(|| unsafe {
            LoopRange {
                lo: PointerValue::new(lo),
                span: IntValue::new(span),
                at: InstructionValue::new(at),
            }
        })
    }
}

impl LoopAnalyses {
    /// Whether [`LoopAnalyses::range`] would check range `r` of `inst` once in its
    /// loop's preheader (builds nothing).
    pub fn has_range(&self, inst: InstructionValue, r: &Range) -> bool {
        let mut out = std::ptr::null_mut();
        let (mut span, mut at) = (std::ptr::null_mut(), std::ptr::null_mut());
        unsafe {
            cusafe_loop_range(
                self.0,
                inst.as_value_ref(),
                r.addr.as_value_ref(),
                r.root.as_value_ref(),
                0,
                1,
                &mut out,
                &mut span,
                &mut at,
                false,
            )
        }
    }

    /// The signed range ScalarEvolution knows for integer `v` wherever it is defined
    /// (induction variables bounded by trip counts, range metadata and attributes);
    /// `None` when it knows nothing.
    pub fn signed_range(&self, v: BasicValueEnum) -> Option<(i64, i64)> {
        let (mut lo, mut hi) = (0, 0);
        let v = v.as_value_ref();
        unsafe { cusafe_signed_range(self.0, v, &mut lo, &mut hi) }.then_some((lo, hi))
    }
}

impl Drop for LoopAnalyses {
    fn drop(&mut self) {
        unsafe { cusafe_loop_ranges_free(self.0) }
    }
}
