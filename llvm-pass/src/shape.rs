//! The emitter's half of check elimination's group shapes (`elim::plan::Shape`): builds,
//! for `check.rs`, the one range whose check stands for a group's members and each
//! member's address for the cold path. The planner only describes the shapes
//! (`elim/stride.rs` and `elim/hull.rs` say why their ranges hold every member).

use crate::base::{Base, Guard, Index, Widen};
use crate::collect::Len;
use crate::elim::plan::{Hull, Shape, Stride};
use crate::ir::Ir;
use inkwell::types::{AnyTypeEnum, AsTypeRef};
use inkwell::values::{AsValueRef, IntValue, PointerValue};
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate;

/// `i8` GEP of `ptr` by `bytes`, at the builder's position.
fn byte_gep(ir: &Ir, ptr: LLVMValueRef, bytes: LLVMValueRef) -> LLVMValueRef {
    let (ptr, bytes) = unsafe { (PointerValue::new(ptr), IntValue::new(bytes)) };
    unsafe { ir.b.build_gep(ir.i8, ptr, &[bytes], "") }
        .expect("positioned")
        .as_value_ref()
}

/// `a * b`, at the builder's position.
fn mul(ir: &Ir, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
    let (a, b) = unsafe { (IntValue::new(a), IntValue::new(b)) };
    ir.b.build_int_mul(a, b, "")
        .expect("positioned")
        .as_value_ref()
}

/// Builds, at the builder's position, the start and length of the one range whose check
/// stands for the members' of `shape`, and for a guarded shape the flag that its guard
/// fails (the check must fail then too).
pub fn union(ir: &Ir, shape: &Shape) -> (LLVMValueRef, Len, Option<LLVMValueRef>) {
    match shape {
        Shape::Offsets {
            base,
            lo,
            hi,
            guard,
        } => (
            base.build(ir, *lo),
            Len::Const((hi - lo) as u64),
            guard.map(|g| g.wraps(ir)),
        ),
        Shape::Strided(s) => {
            let (addr, len) = stride_hull(ir, s);
            (addr, len, None)
        }
        Shape::Hull(h) => {
            let (addr, len, wraps) = hull_union(ir, h);
            (addr, Len::Value(len), wraps)
        }
    }
}

/// Builds, at the builder's position, the address of the member of `shape` with value
/// `x`; `None` for a hull, whose members are rebuilt from their exact addresses.
pub fn member(ir: &Ir, shape: &Shape, x: i64) -> Option<LLVMValueRef> {
    match shape {
        Shape::Offsets { base, .. } => Some(base.build(ir, x)),
        Shape::Strided(s) => Some(stride_member(ir, s, x)),
        Shape::Hull(_) => None,
    }
}

/// Builds the address of the strided group's member at multiple `m`, at the builder's
/// position.
fn stride_member(ir: &Ir, s: &Stride, m: i64) -> LLVMValueRef {
    let bytes = mul(ir, s.stride, ir.c64(m as u64));
    let bytes = ir.add(bytes, ir.c64(s.off as u64));
    byte_gep(ir, s.ptr, bytes)
}

/// Builds the hull of a strided group's members (`elim/stride.rs`): its lowest address
/// and its run-time length.
fn stride_hull(ir: &Ir, s: &Stride) -> (LLVMValueRef, Len) {
    use LLVMIntPredicate::*;
    let a = stride_member(ir, s, s.lo);
    let z = stride_member(ir, s, s.hi);
    let (ai, zi) = (ir.to_int(a), ir.to_int(z));
    let below = ir.icmp(LLVMIntULT, ai, zi);
    let min = ir.select(below, ai, zi);
    let max = ir.select(below, zi, ai);
    let lowest = byte_gep(ir, a, ir.sub(min, ai));
    (lowest, Len::Value(ir.add(ir.sub(max, min), ir.c64(s.len))))
}

/// Builds, at the builder's position, an index hull's start and byte length
/// (`elim/hull.rs`), and the flag that some assumed addition could wrap.
fn hull_union(ir: &Ir, h: &Hull) -> (LLVMValueRef, LLVMValueRef, Option<LLVMValueRef>) {
    use LLVMIntPredicate::*;
    let xs: Vec<LLVMValueRef> = h.xs.iter().map(|r| r.build(ir, |v| v)).collect();
    let pick = |pred, acc: LLVMValueRef, x: LLVMValueRef| ir.select(ir.icmp(pred, x, acc), x, acc);
    let least = xs[1..].iter().fold(xs[0], |m, &x| pick(LLVMIntSLT, m, x));
    let most = xs[1..].iter().fold(xs[0], |m, &x| pick(LLVMIntSGT, m, x));
    let base_at = |x| Base {
        ptr: h.ptr,
        gep: Some((
            h.elem,
            vec![Index {
                terms: vec![x],
                ext: Widen::Sign(ir.i64.as_type_ref()),
            }],
        )),
    };
    let start = base_at(least).build(ir, h.lo);
    let size = ir
        .layout()
        .get_abi_size(&unsafe { AnyTypeEnum::new(h.elem) });
    let wide = |x| {
        let x = unsafe { IntValue::new(x) };
        ir.b.build_int_s_extend(x, ir.i64, "")
            .expect("positioned")
            .as_value_ref()
    };
    let rows = mul(ir, ir.sub(wide(most), wide(least)), ir.c64(size));
    let len = ir.add(rows, ir.c64((h.hi - h.lo) as u64));
    let wraps = h.wrap.map(|(lo, hi)| {
        let at = |x| Guard { x, lo, hi }.wraps(ir);
        ir.or(at(least), at(most))
    });
    (start, len, wraps)
}
