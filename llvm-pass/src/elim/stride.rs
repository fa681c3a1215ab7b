//! Strided groups, a form of neighbouring checks (`elim`): accesses of one block at
//! `p + m * s + off` with one run-time stride `s` and constant multiples `m` (the rows
//! of an unrolled `for (ty = 0; ty < 16; ty++) ref[ty][tx] = reference[index + cols *
//! ty]`, whose addresses the optimizer makes `gep i32, p, (mul nsw (sext cols), ty)`).
//!
//! All of them run (one block, no call that may stop the thread between the first and
//! the last) and bounds are one interval, so one check of the hull
//! `[min(a_lo, a_hi), max(a_lo, a_hi) + len)` of the two outermost members `a_lo` (the
//! least multiple) and `a_hi` (the greatest) before the first member fits iff every
//! member does: the members lie on the straight line between the two, because `s` is
//! a 32-bit value extended to 64 bits and `|m| < 2^30`, so the walk from `a_lo` to `a_hi`
//! is under 2^63 bytes and cannot wrap around the address space. When the hull does
//! not fit, the cold path checks the members one by one in program order (as for
//! neighbours), so only accesses the block makes are reported.
//!
//! The hull fits exactly when both outermost members do, so the emitter checks those
//! two, each as its own access (one compare each, no run-time minimum, maximum or
//! length), under one branch.
//!
//! This step records the group in the plan (`plan::Stride`); the emitter builds its
//! two ends' and the members' addresses (`shape.rs`).

use super::join::{can_join, same_target};
use super::plan::{CheckPlan, Plan, RangeId, Shape, Stride};
use crate::base::strip_constant_geps;
use crate::classify::const_operand;
use crate::collect::{Access, Len, Target};
use crate::dom::Cfg;
use crate::ir::{int_operand, opcode, operand, Ir};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, IntValue, PointerValue};
use llvm_sys::LLVMOpcode;

/// Most bytes per unit of stride one member may be from the group's pointer.
const MAX_MULTIPLE: i64 = 1 << 30;

/// Where an address lies: `ptr + multiple * stride + off`, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place<'ctx> {
    /// The pointer the members share.
    pub ptr: PointerValue<'ctx>,
    /// The run-time stride and this address's multiple of it; `None` for `ptr` itself
    /// (multiple 0, fits any stride).
    pub stride: Option<(IntValue<'ctx>, i64)>,
    /// Constant bytes on top.
    pub off: i64,
}

/// Whether `v` is a 64-bit value extended from 32 bits or fewer (so `|v| < 2^32`).
fn narrow(v: IntValue) -> bool {
    matches!(opcode(v), Some(LLVMOpcode::LLVMSExt | LLVMOpcode::LLVMZExt))
        && int_operand(v, 0).get_type().get_bit_width() <= 32
}

/// Whether arithmetic instruction `v` (`mul` or `shl`) has the `nsw` flag.
fn nsw(v: IntValue) -> bool {
    let flag = v.as_instruction().map(|i| i.get_no_signed_wrap_flag());
    let flag = flag.expect("an instruction");
    flag.expect("an instruction that can carry nsw")
}

/// The place of `addr` (see [`Place`]), or `None` when a constant offset overflows.
pub fn place<'ctx>(ir: &Ir, addr: PointerValue<'ctx>) -> Option<Place<'ctx>> {
    let (v, off) = strip_constant_geps(ir, addr)?;
    let itself = Place {
        ptr: v,
        stride: None,
        off,
    };
    let Some(gep) = v
        .as_instruction()
        .filter(|&g| opcode(g) == Some(LLVMOpcode::LLVMGetElementPtr) && g.get_num_operands() == 2)
    else {
        return Some(itself);
    };
    let idx = operand(gep, 1).expect("a GEP's index").into_int_value();
    let nsw_by =
        |min: i64, max: i64| const_operand(idx, 1).filter(|c| (min..=max).contains(c) && nsw(idx));
    let (x, times) = match opcode(idx) {
        Some(LLVMOpcode::LLVMMul) => match nsw_by(-MAX_MULTIPLE, MAX_MULTIPLE) {
            Some(c) => (int_operand(idx, 0), c),
            None => (idx, 1),
        },
        Some(LLVMOpcode::LLVMShl) => match nsw_by(0, 29) {
            Some(c) => (int_operand(idx, 0), 1 << c),
            None => (idx, 1),
        },
        _ => (idx, 1),
    };
    let elem = gep.get_gep_source_element_type().expect("a GEP");
    let size = ir.layout().get_abi_size(&elem) as i64;
    let multiple = times.checked_mul(size).filter(|m| m.abs() < MAX_MULTIPLE);
    match multiple {
        Some(m) if narrow(x) => Some(Place {
            ptr: operand(gep, 0)
                .expect("a GEP's pointer")
                .into_pointer_value(),
            stride: Some((x, m)),
            off,
        }),
        _ => Some(itself),
    }
}

/// Groups the accesses of each block still checked one by one (`CheckPlan::Check`,
/// constant length) into strided groups (see the module doc), after the neighbouring
/// groups are formed.
pub fn form<'ctx>(ir: &Ir, cfg: &Cfg<'ctx>, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    struct Open<'ctx> {
        root: PointerValue<'ctx>,
        target: Target,
        block: BasicBlock<'ctx>,
        ptr: PointerValue<'ctx>,
        off: i64,
        len: u64,
        /// Set by the first member with a stride (the first may be the pointer itself).
        stride: Option<IntValue<'ctx>>,
        lo: i64,
        hi: i64,
        members: Vec<(RangeId, i64)>,
    }
    let mut open: Vec<Open> = Vec::new();
    for &i in &plan.order.clone() {
        let acc = &accesses[i];
        let bb = acc.inst.get_parent().expect("an access is in a block");
        for (id, r) in RangeId::all(i, acc) {
            let (CheckPlan::Check(_), Len::Const(len)) = (plan.of(id), r.len) else {
                continue;
            };
            let Some(at) = place(ir, r.addr) else {
                continue;
            };
            let stride = at.stride.map(|(s, _)| s);
            let m = at.stride.map_or(0, |(_, m)| m);
            let joinable = |g: &Open| {
                let same = g.block == bb
                    && g.root == r.root
                    && same_target(&g.target, &r.target)
                    && (g.ptr, g.off, g.len) == (at.ptr, at.off, len)
                    && (stride.is_none() || g.stride.is_none() || g.stride == stride);
                let leaves = [Some(at.ptr.into()), stride.or(g.stride).map(Into::into)];
                let leaves: Vec<BasicValueEnum> = leaves.into_iter().flatten().collect();
                same && can_join(cfg, g.members[0].0.inst(accesses), &leaves, acc.inst)
            };
            match open.iter_mut().find(|g| joinable(g)) {
                Some(g) => {
                    g.stride = g.stride.or(stride);
                    g.lo = g.lo.min(m);
                    g.hi = g.hi.max(m);
                    g.members.push((id, m));
                }
                None => open.push(Open {
                    root: r.root,
                    target: r.target.clone(),
                    block: bb,
                    ptr: at.ptr,
                    off: at.off,
                    len,
                    stride,
                    lo: m,
                    hi: m,
                    members: vec![(id, m)],
                }),
            }
        }
    }
    for g in open {
        if let (Some(stride), true) = (g.stride, g.lo < g.hi) {
            let shape = Stride {
                ptr: g.ptr,
                stride,
                off: g.off,
                len: g.len,
                lo: g.lo,
                hi: g.hi,
            };
            plan.add_group(Shape::Strided(shape), g.members, Vec::new());
        }
    }
}
