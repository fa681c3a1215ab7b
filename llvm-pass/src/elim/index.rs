//! Index groups, a form of neighbouring checks (`elim`) across roots: single checks of
//! loads of one block at `getelementptr T, p, x` through different windowed kernel
//! parameters `p` with one index `x` and `size(T)` bytes each (srad_2's `dn[idx]`,
//! `ds[idx]`, `dw[idx]`, `de[idx]`, `j[idx]`), with no call
//! that may stop the thread between the first and the last, become one check of the
//! index: `x - lo <u span`, on the bounds the runtime worked out at launch for exactly
//! those parameters and that element size (`crate::launch::IndexSlot`,
//! `cusafe_format::launch::index_bounds`). It holds exactly when every member's access
//! fits its window, so when it fails some member fails: the cold path checks every
//! member at its real address (cloned before the check, [`Remat`]) against its own
//! window in program order, and reports each that fails at its own site.
//!
//! A block's members must match a kernel's group exactly (the group's bounds are the
//! meet of all its members' windows: a member the block lacks could narrow them), so
//! the groups themselves are chosen earlier, from the same blocks
//! (`launch::add_index_groups`, blocks outside loops). Trap-mode builds only, like
//! index hulls. This step runs after loop ranges (an access a loop range covers needs
//! no check in the loop) and before batches (the group's check can join a batch).

use super::join::can_join;
use super::plan::{CheckPlan, IndexShape, Plan, RangeId, Shape};
use crate::collect::{Access, Len, Target};
use crate::dom::Cfg;
use crate::ir::Ir;
use crate::launch::{indexed, IndexSlot};
use crate::remat::Remat;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{InstructionOpcode, IntValue, PointerValue};

/// Checks of one block at one index and element size, in program order, each with the
/// parameter it goes through.
struct Open<'ctx> {
    x: IntValue<'ctx>,
    scale: u64,
    members: Vec<(RangeId, PointerValue<'ctx>)>,
}

/// Forms the index groups of a planned function whose kernel has `slots` (see the
/// module doc).
pub fn form<'ctx>(
    ir: &Ir,
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    plan: &mut Plan<'ctx>,
    slots: &[IndexSlot<'ctx>],
) {
    if slots.is_empty() {
        return;
    }
    let mut open: Vec<Open> = Vec::new();
    let mut block: Option<BasicBlock> = None;
    for i in plan.order.clone() {
        let acc = &accesses[i];
        if block != acc.inst.get_parent() {
            for o in open.drain(..) {
                close(cfg, accesses, plan, slots, o);
            }
            block = acc.inst.get_parent();
        }
        for (id, r) in RangeId::all(i, acc) {
            let (CheckPlan::Check(_), Target::Heap, Len::Const(len)) =
                (plan.of(id), &r.target, r.len)
            else {
                continue;
            };
            let Some(ix) = indexed(ir, r.addr, len) else {
                continue;
            };
            let member = is_load(acc)
                && r.root == ix.param
                && slots.iter().any(|s| s.members.contains(&r.root));
            if !member {
                continue;
            }
            let joined = open.iter_mut().find(|o| {
                let leader = o.members[0].0.inst(accesses);
                o.x == ix.x && o.scale == ix.scale && can_join(cfg, leader, &[], acc.inst)
            });
            match joined {
                Some(o) => o.members.push((id, r.root)),
                None => open.push(Open {
                    x: ix.x,
                    scale: ix.scale,
                    members: vec![(id, r.root)],
                }),
            }
        }
    }
    for o in open {
        close(cfg, accesses, plan, slots, o);
    }
}

/// Whether `acc` is a load: only loads join index groups (see [`crate::launch`]).
pub fn is_load(acc: &Access) -> bool {
    acc.inst.get_opcode() == InstructionOpcode::Load
}

/// Makes one index group of `o`'s members through the parameters of the kernel's
/// largest group whose every parameter `o` reaches (two or more), when every member's
/// address can be rebuilt before the first of them.
fn close<'ctx>(
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    plan: &mut Plan<'ctx>,
    slots: &[IndexSlot<'ctx>],
    o: Open<'ctx>,
) {
    let reaches = |s: &&IndexSlot<'ctx>| {
        s.scale == o.scale
            && s.members
                .iter()
                .all(|p| o.members.iter().any(|m| m.1 == *p))
    };
    let Some(slot) = slots.iter().filter(reaches).max_by_key(|s| s.members.len()) else {
        return;
    };
    let members: Vec<RangeId> = o
        .members
        .iter()
        .filter(|(_, p)| slot.members.contains(p))
        .map(|&(id, _)| id)
        .collect();
    // The index is available at the leader: its own address is built from it.
    let leader = members[0].inst(accesses);
    let exact = members
        .iter()
        .map(|&m| Remat::plan(cfg, m.of(accesses).addr.into(), leader))
        .collect::<Option<Vec<_>>>();
    let Some(exact) = exact else { return };
    let shape = Shape::Index(IndexShape {
        x: o.x,
        lo: slot.lo,
        span: slot.span,
    });
    plan.indexed += members.len() as u32 - 1;
    plan.add_group(shape, members.into_iter().map(|m| (m, 0)).collect(), exact);
}
