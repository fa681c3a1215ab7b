//! Index hulls, a form of neighbouring checks (`elim`) over groups whose bases differ by
//! a run-time index: the rows of conv3d's unrolled 3x3x3 stencil,
//! `A[sext(row_r + k + dk)]` for nine rows `row_r` the optimizer computes one by one
//! (`((i + di) * nj + (j + dj)) * nk`), each row a neighbouring group of three.
//!
//! Consecutive checks of one block, each a neighbouring group (or a single range) whose
//! base is `gep T, P, sext x_r` (one 32-bit-or-narrower index, sign-extended, all of one type) with the
//! same `P`, `T` and root, with no call that may stop the thread between the first and
//! the last and no other check between them, become one check: with
//! `lo_x = smin(x_r)` and `hi_x = smax(x_r)`, of
//! `[P + size(T) * sext(lo_x) + lo, P + size(T) * sext(hi_x) + hi)`, `lo`/`hi` the least
//! and greatest byte offsets of the members around their own base. Sign extension keeps
//! the order of the `x_r`, so every member lies inside; bounds are one interval, so the
//! hull fits iff the members do, and when it does not, the cold path checks every member
//! at its real address (cloned before the check, [`Remat`]) in program order and reports
//! each that fails at its own site. Where a member's split assumed `x_r + c` does not
//! wrap ([`crate::base::Guard`]), the hull's check also fails when `lo_x + c` or
//! `hi_x + c` could wrap for some `c` of any member: the extremes are where wrapping
//! starts.
//!
//! The indices of later rows are computed after the first access; their pure arithmetic
//! is cloned to before it ([`Remat`]), which the backend shares with the originals.
//! Trap-mode builds only (recover mode's phis are not followed into the clones).
//!
//! This step records the hull in the plan (`plan::Hull`); the emitter builds its range
//! (`shape.rs`).

use super::join::{call_between, same_target};
use super::plan::{CheckPlan, Hull, Plan, RangeId, Shape};
use crate::base::{decompose, Base, Index, Parts, Widen};
use crate::collect::{Access, Len};
use crate::dom::Cfg;
use crate::ir::Ir;
use crate::remat::Remat;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{IntValue, PointerValue};

/// Most rows one hull takes (their indices' clones are live from the check on).
const MAX_ROWS: usize = 9;

/// A check that may join a hull: its base's pointer, element type, index, and the
/// members' offsets around it.
struct Row<'ctx> {
    unit: RangeId,
    ptr: PointerValue<'ctx>,
    elem: BasicTypeEnum<'ctx>,
    x: IntValue<'ctx>,
    lo: i64,
    hi: i64,
    wrap: Option<(i64, i64)>,
    /// The ranges the check covers.
    members: Vec<RangeId>,
}

/// `base` as `(ptr, T, x)` when it is `gep T, ptr, sext x` with `x` of 32 bits or fewer.
fn row_base<'ctx>(
    base: &Base<'ctx>,
) -> Option<(PointerValue<'ctx>, BasicTypeEnum<'ctx>, IntValue<'ctx>)> {
    let (elem, idx) = base.gep.as_ref()?;
    match &idx[..] {
        [Index {
            terms,
            ext: Widen::Sign(_),
        }] if terms.len() == 1 => {
            let bits = terms[0].get_type().get_bit_width();
            (bits <= 32).then_some((base.ptr, *elem, terms[0]))
        }
        _ => None,
    }
}

/// The row a planned check is, if it can be one.
fn row_of<'ctx>(
    ir: &Ir,
    accesses: &[Access<'ctx>],
    plan: &Plan<'ctx>,
    id: RangeId,
) -> Option<Row<'ctx>> {
    match plan.of(id) {
        CheckPlan::Leader(_, g) => {
            let group = &plan.groups[g];
            let Shape::Offsets {
                base,
                lo,
                hi,
                guard,
            } = &group.shape
            else {
                return None;
            };
            let (ptr, elem, x) = row_base(base)?;
            if guard.is_some_and(|g| g.x != x) {
                return None;
            }
            Some(Row {
                unit: id,
                ptr,
                elem,
                x,
                lo: *lo,
                hi: *hi,
                wrap: guard.map(|g| (g.lo, g.hi)),
                members: group.members.iter().map(|&(m, _)| m).collect(),
            })
        }
        CheckPlan::Check(_) => {
            let r = id.of(accesses);
            let Len::Const(len) = r.len else { return None };
            let Parts { base, off, assumed } = decompose(ir, r.addr, true)?;
            let (ptr, elem, x) = row_base(&base)?;
            if assumed.is_some_and(|a| a.x != x) {
                return None;
            }
            Some(Row {
                unit: id,
                ptr,
                elem,
                x,
                lo: off,
                hi: off.checked_add(len as i64)?,
                wrap: assumed.map(|a| (a.c.min(0), a.c.max(0))),
                members: vec![id],
            })
        }
        _ => None,
    }
}

/// Forms the hulls of a planned function (see the module doc).
pub fn form<'ctx>(ir: &Ir, cfg: &Cfg<'ctx>, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    let mut run: Vec<Row> = Vec::new();
    let order = plan.order.clone();
    for &i in &order {
        for (id, _) in RangeId::all(i, &accesses[i]) {
            if !matches!(plan.of(id), CheckPlan::Check(_) | CheckPlan::Leader(..)) {
                continue;
            }
            let row = row_of(ir, accesses, plan, id);
            let joins = match (run.first(), &row) {
                (Some(first), Some(row)) => {
                    let (a, b) = (&accesses[first.unit.access], &accesses[i]);
                    let (ra, rb) = (first.unit.of(accesses), id.of(accesses));
                    let same_block = a.inst.get_parent() == b.inst.get_parent();
                    same_block
                        && ra.root == rb.root
                        && same_target(&ra.target, &rb.target)
                        && (first.ptr, first.elem) == (row.ptr, row.elem)
                        && first.x.get_type() == row.x.get_type()
                        && !call_between(a.inst, b.inst)
                        && run.len() < MAX_ROWS
                }
                _ => false,
            };
            if !joins {
                close(cfg, accesses, plan, std::mem::take(&mut run));
            }
            run.extend(row);
        }
    }
    close(cfg, accesses, plan, run);
}

/// Makes one hull of `run` (rows of one index type) when it has two rows or more and
/// every index and member address can be rebuilt before its first access.
fn close<'ctx>(
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    plan: &mut Plan<'ctx>,
    run: Vec<Row<'ctx>>,
) {
    if run.len() < 2 {
        return;
    }
    let leader = run[0].unit.inst(accesses);
    let mut xs: Vec<IntValue> = run.iter().map(|r| r.x).collect();
    xs.dedup();
    let Some(xs) = xs
        .iter()
        .map(|&x| Remat::plan(cfg, x.into(), leader))
        .collect::<Option<Vec<_>>>()
    else {
        return;
    };
    let members: Vec<RangeId> = run.iter().flat_map(|r| r.members.clone()).collect();
    let exact = members
        .iter()
        .map(|&m| Remat::plan(cfg, m.of(accesses).addr.into(), leader))
        .collect::<Option<Vec<_>>>();
    let Some(exact) = exact else { return };
    let wrap = run
        .iter()
        .filter_map(|r| r.wrap)
        .reduce(|(a, b), (c, d)| (a.min(c), b.max(d)));
    // The guard's one compare needs the constants to span less than half the type.
    let bits = run[0].x.get_type().get_bit_width();
    if wrap.is_some_and(|(lo, hi)| hi - lo >= 1 << (bits - 1)) {
        return;
    }
    let hull = Hull {
        ptr: run[0].ptr,
        elem: run[0].elem,
        xs,
        lo: run.iter().map(|r| r.lo).min().unwrap_or(0),
        hi: run.iter().map(|r| r.hi).max().unwrap_or(0),
        wrap,
    };
    // The rows' own groups fold into this one: their members were counted merged.
    let folded: u32 = run.iter().map(|r| r.members.len() as u32 - 1).sum();
    plan.merged -= folded;
    for r in &run[1..] {
        plan.drop_anchor(r.unit, r.unit.inst(accesses));
    }
    let members = members.into_iter().map(|m| (m, 0)).collect();
    plan.add_group(Shape::Hull(hull), members, exact);
}
