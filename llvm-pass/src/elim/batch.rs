//! Batches, check elimination's last step: the checks left in one block run as one
//! branch. Each check still compares its own range (one compare each), but the
//! compares are or-ed into one verdict taken before the block's first checked access;
//! only when it fails does the cold path look at the members one by one, in program
//! order, and report each that fails at its own site.
//!
//! A check joins the batch of an earlier check in its block when
//! * no call that may stop the thread lies between them (as for neighbouring groups:
//!   the block then runs from the first access to the last, so a reported member is an
//!   access the program makes), and
//! * what its compare needs (root, address, run-time length, group base) is available
//!   at the batch's first access. Nothing moves to make it so: moving the pure
//!   arithmetic between the two up (an experiment, measured in one-off ptxas runs on
//!   2026-11-22) made more batches but kept every address live from the batch's branch
//!   on: conv3d went 32 -> 72 registers, kmeans 54 -> 79, conv2d 32 -> 41.
//!
//! The first check that cannot join closes the batch and starts the next, so a batch
//! never reports past a check that would have stopped the thread. Recover mode does not
//! skip the accesses of a batch (as for neighbouring groups); trap mode stops at the
//! first report.

use super::join::{available, call_between};
use super::plan::{Anchor, Batch, CheckPlan, Plan, RangeId, Unit};
use crate::collect::{Access, Len};
use crate::dom::Cfg;
use inkwell::values::BasicValueEnum;

/// Most checks one batch takes: every member's address is live from the batch's branch
/// to its access.
const MAX_UNITS: usize = 16;

/// Forms the batches of a planned function (see the module doc): units get
/// `CheckPlan::Batched`, anchors built after a batch's first access move to it.
pub fn form<'ctx>(cfg: &Cfg<'ctx>, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    let mut batch: Vec<Unit> = Vec::new();
    let order = plan.order.clone();
    for &i in &order {
        let inst = accesses[i].inst;
        for (id, _) in RangeId::all(i, &accesses[i]) {
            let p = plan.of(id);
            if !matches!(p, CheckPlan::Check(_) | CheckPlan::Leader(..)) {
                continue;
            }
            let unit = Unit { id, plan: p };
            let joins = batch.first().is_some_and(|first| {
                let leader = first.id.inst(accesses);
                batch.len() < MAX_UNITS
                    && leader.get_parent() == inst.get_parent()
                    && !call_between(leader, inst)
                    && needs(accesses, plan, unit)
                        .iter()
                        .all(|&v| available(cfg, v, leader))
            });
            if !joins {
                close(&mut batch, cfg, accesses, plan);
            }
            batch.push(unit);
        }
    }
    close(&mut batch, cfg, accesses, plan);
}

/// Records a finished batch (of two or more checks) in the plan.
fn close<'ctx>(
    batch: &mut Vec<Unit<'ctx>>,
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    plan: &mut Plan<'ctx>,
) {
    if batch.len() < 2 {
        batch.clear();
        return;
    }
    let leader = batch[0].id.inst(accesses);
    // Root halves built at a later member's access move to the batch's first access.
    let late: Vec<Anchor> = batch
        .iter()
        .filter_map(|u| u.plan.anchor())
        .filter(|a| !a.hoisted && a.before != leader && !cfg.dominates(a.before, leader))
        .collect();
    for a in late {
        let earlier = Anchor {
            before: leader,
            ..a
        };
        for p in plan.plans.iter_mut().flatten() {
            set_anchor(p, a, earlier);
        }
        for u in batch.iter_mut() {
            set_anchor(&mut u.plan, a, earlier);
        }
    }
    let id = plan.batches.len();
    for u in batch.iter() {
        plan.set(u.id, CheckPlan::Batched(id));
    }
    plan.batched += batch.len() as u32 - 1;
    plan.batches.push(Batch {
        units: std::mem::take(batch),
    });
}

fn set_anchor<'ctx>(p: &mut CheckPlan<'ctx>, from: Anchor<'ctx>, to: Anchor<'ctx>) {
    match p {
        CheckPlan::Check(Some(a)) | CheckPlan::Leader(Some(a), _) if *a == from => *a = to,
        _ => {}
    }
}

/// The values the compare of `unit` is built from.
pub fn needs<'ctx>(
    accesses: &[Access<'ctx>],
    plan: &Plan<'ctx>,
    unit: Unit<'ctx>,
) -> Vec<BasicValueEnum<'ctx>> {
    let r = unit.id.of(accesses);
    let mut out = vec![r.root.into()];
    match unit.plan {
        CheckPlan::Leader(_, g) => out.extend(plan.groups[g].leaves()),
        _ => out.push(r.addr.into()),
    }
    if let Len::Value(v) = r.len {
        out.push(v.into());
    }
    out
}
