//! The emitter's half of check elimination's group shapes (`elim::plan::Shape`): builds,
//! for `check.rs`, what a group's check compares in place of its members (one range, a
//! strided group's two ends, or an index hull's first and last bytes) and each member's
//! address for the cold path. The planner only describes the shapes (`elim/stride.rs`
//! and `elim/hull.rs` say why their ranges hold every member).

use crate::base::{Base, Guard, Index, Widen};
use crate::elim::plan::{Hull, Shape, Stride};
use crate::ir::Ir;
use inkwell::values::{IntValue, PointerValue};

/// How a group's members are checked together in the fast path.
pub enum Cover<'ctx> {
    /// One range whose check stands for every member of an offset group: its start,
    /// its length, and for a guarded group the flag that its guard fails (the check must
    /// fail then too).
    Union(PointerValue<'ctx>, u64, Option<IntValue<'ctx>>),
    /// A strided group's two end members (`elim/stride.rs`: every member lies between
    /// them), as each one's multiple and address, each checked as that member's own
    /// access. The window is one interval, so both fit exactly when the members' hull
    /// does; two one-compare checks cost fewer instructions than the hull's run-time
    /// start and length.
    Ends([(i64, PointerValue<'ctx>); 2]),
    /// An index hull's first and last bytes, each checked as a range of one byte, and
    /// the flag that some assumed addition could wrap: the window is one interval, so
    /// both fit exactly when the hull does, at one compare each, with no run-time
    /// length.
    Bytes([PointerValue<'ctx>; 2], Option<IntValue<'ctx>>),
}

/// Builds, at the builder's position, what stands for the members of `shape` in its
/// check (see [`Cover`]). `start`: an offset shape's start as a value that exists (the
/// address of a member at `lo`), used instead of rebuilding it.
pub fn cover<'ctx>(
    ir: &Ir<'ctx>,
    shape: &Shape<'ctx>,
    start: Option<PointerValue<'ctx>>,
) -> Cover<'ctx> {
    match shape {
        Shape::Offsets {
            base,
            lo,
            hi,
            guard,
        } => Cover::Union(
            start.unwrap_or_else(|| base.build(ir, *lo)),
            (hi - lo) as u64,
            guard.map(|g| g.wraps(ir)),
        ),
        Shape::Strided(s) => Cover::Ends([s.lo, s.hi].map(|m| (m, stride_member(ir, s, m)))),
        Shape::Hull(h) => {
            let (bytes, wraps) = hull_bytes(ir, h);
            Cover::Bytes(bytes, wraps)
        }
        Shape::Index(_) => unreachable!("an index group compares its index, not a union"),
    }
}

/// Builds, at the builder's position, the address of the member of `shape` with value
/// `x`; `None` for a hull or an index group, whose members are rebuilt from their exact
/// addresses.
pub fn member<'ctx>(ir: &Ir<'ctx>, shape: &Shape<'ctx>, x: i64) -> Option<PointerValue<'ctx>> {
    match shape {
        Shape::Offsets { base, .. } => Some(base.build(ir, x)),
        Shape::Strided(s) => Some(stride_member(ir, s, x)),
        Shape::Hull(_) | Shape::Index(_) => None,
    }
}

/// Builds the address of the strided group's member at multiple `m`, at the builder's
/// position.
fn stride_member<'ctx>(ir: &Ir<'ctx>, s: &Stride<'ctx>, m: i64) -> PointerValue<'ctx> {
    let bytes = ir.mul(s.stride, ir.c64(m as u64));
    let bytes = ir.add(bytes, ir.c64(s.off as u64));
    ir.byte_gep(s.ptr, bytes)
}

/// Builds, at the builder's position, the addresses of an index hull's first and last
/// bytes (`elim/hull.rs`), and the flag that some assumed addition could wrap.
fn hull_bytes<'ctx>(
    ir: &Ir<'ctx>,
    h: &Hull<'ctx>,
) -> ([PointerValue<'ctx>; 2], Option<IntValue<'ctx>>) {
    use inkwell::IntPredicate::*;
    let xs: Vec<IntValue> =
        h.xs.iter()
            .map(|r| r.build(ir, |v| v).into_int_value())
            .collect();
    let pick =
        |pred, acc: IntValue<'ctx>, x: IntValue<'ctx>| ir.select(ir.icmp(pred, x, acc), x, acc);
    let least = xs[1..].iter().fold(xs[0], |m, &x| pick(SLT, m, x));
    let most = xs[1..].iter().fold(xs[0], |m, &x| pick(SGT, m, x));
    let base_at = |x| Base {
        ptr: h.ptr,
        gep: Some((
            h.elem,
            vec![Index {
                terms: vec![x],
                ext: Widen::Sign(ir.i64),
            }],
        )),
    };
    let first = base_at(least).build(ir, h.lo);
    let last = base_at(most).build(ir, h.hi - 1);
    let wraps = h.wrap.map(|(lo, hi)| {
        let at = |x| Guard { x, lo, hi }.wraps(ir);
        ir.or(at(least), at(most))
    });
    ([first, last], wraps)
}
