//! Where a tagged pointer's block is, as IR (docs/formats.md, "Blocks and classes",
//! "Packed blocks"): the one place that knows both layouts, shared by the check's root
//! half (`check`) and the pointer-arithmetic rule (`arith`).
//!
//! * Power-of-two blocks (every class outside the packed sub-windows): the base is the
//!   pointer with its low `t + 3` bits cleared.
//! * Packed blocks (tags 13..=18, field `f` = bits 33..40 below 255): the block index in
//!   its slab is `trunc((x - 0.5) / (f + 1))` with `x` the slab offset plus 255 in
//!   steps, the division `div.approx.f32` (exact here: `cusafe_format::packed`), and
//!   the payload `slab + ((k (f + 1) + 1) << e)`.
//!
//! Both are computed branch-free; the caller selects by `packed`. For pointers of other
//! tags the packed values are garbage (never selected).

use crate::ir::Ir;
use cusafe_format::block::class_shift;
use cusafe_format::packed::{
    step_shift, FIELD_MASK, FIELD_SHIFT, FIRST_PACKED_CLASS, LAST_PACKED_CLASS, POW2_FIELD,
    SLAB_STEPS_SHIFT, UNDERFLOW,
};
use inkwell::values::IntValue;
use inkwell::IntPredicate;

/// The block of a tagged pointer `ri` with tag field `t` (an `i64`), both layouts.
pub struct Block<'ctx> {
    /// Whether `ri` is in a packed sub-window (`i1`).
    pub packed: IntValue<'ctx>,
    /// A power-of-two block's base (its header, or its slotted header's block).
    pub base: IntValue<'ctx>,
    /// A power-of-two block's size.
    pub size: IntValue<'ctx>,
    /// A packed block's payload start.
    pub payload: IntValue<'ctx>,
    /// A packed block's extent (its tile's length).
    pub extent: IntValue<'ctx>,
}

impl<'ctx> Block<'ctx> {
    /// The range the pointer-arithmetic rule keeps a pointer in: the power-of-two
    /// block, or the packed tile (255 bytes below the payload to one past its room).
    pub fn tile(&self, ir: &Ir<'ctx>) -> (IntValue<'ctx>, IntValue<'ctx>) {
        let lo = ir.sub(self.payload, ir.c64(UNDERFLOW));
        (
            ir.select(self.packed, lo, self.base),
            ir.select(self.packed, self.extent, self.size),
        )
    }
}

/// Computes both layouts' block of `ri` at the builder's position; `t` is its tag field
/// (`ri >> 41`, masked or not: values out of the tag range are never packed).
pub fn locate<'ctx>(ir: &Ir<'ctx>, ri: IntValue<'ctx>, t: IntValue<'ctx>) -> Block<'ctx> {
    use IntPredicate::*;
    // Shift amounts are kept below 64 for tags whose result goes unused.
    let shift = ir.and(ir.add(t, ir.c64(class_shift(0).into())), ir.c64(63));
    let size = ir.shl(ir.c64(1), shift);
    let base = ir.and(ri, ir.sub(ir.c64(0), size));
    let field = ir.and(ir.lshr(ri, ir.c64(FIELD_SHIFT.into())), ir.c64(FIELD_MASK));
    let packed_tag = ir.icmp(
        ULT,
        ir.sub(t, ir.c64(FIRST_PACKED_CLASS.into())),
        ir.c64((LAST_PACKED_CLASS - FIRST_PACKED_CLASS + 1).into()),
    );
    let packed = ir.and(packed_tag, ir.icmp(NE, field, ir.c64(POW2_FIELD.into())));
    // e = t - 5: the step's log2 (`packed::step_shift`).
    let to_step = FIRST_PACKED_CLASS - step_shift(FIRST_PACKED_CLASS);
    let e = ir.and(ir.sub(t, ir.c64(to_step.into())), ir.c64(63));
    let slab_mask = ir.sub(
        ir.shl(
            ir.c64(1),
            ir.and(ir.add(e, ir.c64(SLAB_STEPS_SHIFT.into())), ir.c64(63)),
        ),
        ir.c64(1),
    );
    let off = ir.and(ri, slab_mask);
    let slab = ir.xor(ri, off);
    let x = ir.lshr(ir.add(off, ir.c64(UNDERFLOW)), e);
    let units = ir.add(field, ir.c64(1));
    let k = block_index(ir, x, units);
    let payload = ir.add(slab, ir.shl(ir.add(ir.mul(k, units), ir.c64(1)), e));
    Block {
        packed,
        base,
        size,
        payload,
        extent: ir.shl(units, e),
    }
}

/// `trunc((x - 0.5) / units)` with `div.approx.f32`, `x < 2^14 + 1`, `units < 256`:
/// the exact `(x - 1) / units` for `x >= 1`, 0 for `x = 0` (`cusafe_format::packed`).
fn block_index<'ctx>(ir: &Ir<'ctx>, x: IntValue<'ctx>, units: IntValue<'ctx>) -> IntValue<'ctx> {
    let f32t = ir.ctx.f32_type();
    let to_float = |v: IntValue<'ctx>| {
        let v = ir.int_cast(v, ir.i32);
        ir.b.build_unsigned_int_to_float(v, f32t, "")
            .expect("positioned")
    };
    let xm =
        ir.b.build_float_sub(to_float(x), f32t.const_float(0.5), "")
            .expect("positioned");
    let q = ir.intrinsic(
        "llvm.nvvm.div.approx.f",
        &[],
        &[xm.into(), to_float(units).into()],
    );
    let q = q.into_float_value();
    let k = ir.intrinsic("llvm.nvvm.f2ui.rz", &[], &[q.into()]);
    let k = k.into_int_value();
    ir.int_cast(k, ir.i64)
}
