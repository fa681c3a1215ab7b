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

use crate::collect::{Access, Len};
use crate::dom::Cfg;
use crate::elim::{call_between, Anchor, Plan, RangePlan};
use llvm_sys::core::*;
use llvm_sys::prelude::*;

/// Most checks one batch takes: every member's address is live from the batch's branch
/// to its access.
const MAX_UNITS: usize = 16;

/// One check of a batch: (access, range, its plan before batching: a `Check` or a
/// neighbouring group's `Leader`).
pub type Unit = (usize, usize, RangePlan);

/// Checks of one block that share one branch.
#[derive(Debug)]
pub struct Batch {
    /// The checks, in program order.
    pub units: Vec<Unit>,
}

/// Forms the batches of a planned function (see the module doc): units get
/// `RangePlan::Batched`, anchors built after a batch's first access move to it.
pub fn form(cfg: &Cfg, accesses: &[Access], plan: &mut Plan) {
    let mut batch: Vec<Unit> = Vec::new();
    let order = plan.order.clone();
    for &i in &order {
        let inst = accesses[i].inst;
        for k in 0..accesses[i].ranges.len() {
            let p = plan.plans[i][k];
            if !matches!(p, RangePlan::Check(_) | RangePlan::Leader(..)) {
                continue;
            }
            let joins = batch.first().is_some_and(|&(l, _, _)| {
                let leader = accesses[l].inst;
                batch.len() < MAX_UNITS
                    && unsafe { LLVMGetInstructionParent(leader) == LLVMGetInstructionParent(inst) }
                    && !call_between(leader, inst)
                    && needs(accesses, plan, i, k, p)
                        .iter()
                        .all(|&v| available(cfg, v, leader))
            });
            if !joins {
                close(&mut batch, cfg, accesses, plan);
            }
            batch.push((i, k, p));
        }
    }
    close(&mut batch, cfg, accesses, plan);
}

/// Records a finished batch (of two or more checks) in the plan.
fn close(batch: &mut Vec<Unit>, cfg: &Cfg, accesses: &[Access], plan: &mut Plan) {
    if batch.len() < 2 {
        batch.clear();
        return;
    }
    let leader = accesses[batch[0].0].inst;
    // Root halves built at a later member's access move to the batch's first access.
    let late: Vec<Anchor> = batch
        .iter()
        .filter_map(|&(_, _, p)| anchor_of(p))
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
        for (_, _, p) in batch.iter_mut() {
            set_anchor(p, a, earlier);
        }
    }
    let id = plan.batches.len();
    for &(i, k, _) in batch.iter() {
        plan.plans[i][k] = RangePlan::Batched(id);
    }
    plan.batched += batch.len() as u32 - 1;
    plan.batches.push(Batch {
        units: std::mem::take(batch),
    });
}

/// The anchor a `Check` or `Leader` plan takes its root half from.
pub fn anchor_of(p: RangePlan) -> Option<Anchor> {
    match p {
        RangePlan::Check(a) | RangePlan::Leader(a, _) => a,
        _ => None,
    }
}

fn set_anchor(p: &mut RangePlan, from: Anchor, to: Anchor) {
    match p {
        RangePlan::Check(Some(a)) | RangePlan::Leader(Some(a), _) if *a == from => *a = to,
        _ => {}
    }
}

/// The values the compare of range `k` of access `i` (planned `p`) is built from.
pub fn needs(
    accesses: &[Access],
    plan: &Plan,
    i: usize,
    k: usize,
    p: RangePlan,
) -> Vec<LLVMValueRef> {
    let r = &accesses[i].ranges[k];
    let mut out = vec![r.root];
    match p {
        RangePlan::Leader(_, g) => out.extend(plan.groups[g].leaves()),
        _ => out.push(r.addr),
    }
    if let Len::Value(v) = r.len {
        out.push(v);
    }
    out
}

/// Whether `v` is available right before `leader`: a constant or argument, or an
/// instruction that dominates it.
fn available(cfg: &Cfg, v: LLVMValueRef, leader: LLVMValueRef) -> bool {
    let constant = unsafe { LLVMIsAInstruction(v).is_null() };
    constant || cfg.dominates(v, leader)
}
