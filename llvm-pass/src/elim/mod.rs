//! Check elimination (docs/pass.md, "Check elimination"), decided on the collected accesses before anything
//! changes, and sound by construction:
//!
//! * **Recurring**: a range dominated by an already-checked range with the same root,
//!   the same address and at least its length is not checked again. Blocks are freed
//!   only by the host, so a range that passed stays valid for the rest of the kernel; a
//!   local object's scope can end inside its own function, so functions that mark
//!   scopes (`locals`) keep every check.
//! * **Shared root part**: the root half of a heap check (tag, class, header address,
//!   header load) depends only on the root; a check dominated by another on the same
//!   root reuses its values instead of loading the header again.
//! * **Loop hoisting**: when the root is invariant in a loop and the check's block runs
//!   on every trip through the loop (it dominates every latch and every exiting block),
//!   the root half moves to the loop's preheader, outward through enclosing loops while
//!   that holds. The loop then runs the check's compare and branch only; the header is
//!   loaded once, and only when the program is about to make the access. A root that is
//!   a function argument (or derived from one by GEPs) also moves out of loops that run
//!   its check on some trips only (`if (i < n) acc += A[i * m + k]` in a tiled loop):
//!   its header is then loaded whenever the loop is entered. That load is the only
//!   thing done early; it cannot fault for a live block, a freed one (a tombstone,
//!   `docs/runtime.md`) or a foreign pointer (no load), only for a stale pointer whose
//!   tombstone was recycled, passed to a kernel that then never touches it. No check is
//!   moved out of its block, so nothing is reported that the program would not do.
//!
//! * **Loop ranges**: an access that runs on every trip of a loop, through an address
//!   affine in the loop with a computable trip count or the same on every trip (`loops`,
//!   the shim's scalar evolution), is checked once in the preheader for the whole range
//!   `[lo, lo + span)` its trips cover, and not in the loop. The preheader runs only when the loop is
//!   entered, and then every trip's access runs (the loop calls nothing that could stop
//!   the thread), so the range is exactly what the program will touch.
//! * **Neighbouring**: checked ranges in one block with the same root and the same
//!   base plus constant offsets (`a[i-1]`, `a[i]`, `a[i+1]`; an unrolled loop body),
//!   with no call between them, get one check of their union `[lo, hi)` before the
//!   first. Bounds are one interval, so the union fits iff every member does; when it
//!   does not, the cold path checks the members one by one in program order and
//!   reports each that fails at its own line — never one the block would not reach.
//!   (Recover mode does not skip merged accesses.)
//!
//! * **Loop-invariant verdicts**: a check (or batch) in a loop whose every input — root,
//!   address or group base, run-time length, root half — is defined outside the loop
//!   has its compares built in the loop's preheader (outward while that holds); only
//!   the branch stays at the access, on a predicate computed once. Computing a compare
//!   early does nothing, so nothing is reported earlier; the cold path computes each
//!   member's verdict again at the access. (Trap-mode builds: recover mode keeps its
//!   per-access skips.)
//!
//! * **Index hulls** (`hull`): consecutive row checks `gep T, P, sext x_r` of one block
//!   become one check of the hull between the least and the greatest `x_r`.
//! * **Offsets** (`offset`): a check of a range a constant number of bytes past a
//!   dominating checked range of the same root and base compares that check's offset
//!   against a bound built once per window (trap-mode builds).
//! * **Index groups** (`index`): checks of one block through different windowed kernel
//!   parameters at one index `x` become one compare of `x` against bounds the runtime
//!   works out at launch for those parameters.
//! * **Value intervals**: an access of a statically sized object whose offset, over the
//!   values its indices can take at the access (`intervals`: induction-variable bounds,
//!   arithmetic, the branch conditions on the way there), stays inside the object is
//!   not checked (nw's `temp[m - tx + 1][tx + 1]` under `if (tx <= m)`).
//!
//! `CUSAFE_PASS_OPT=0` turns all of it off (the perf suite's ablation build).
//!
//! * **Deferred branches** (`defer`, trap-mode builds): a single check of a plain load
//!   or store does not branch at its access; a failing access goes to a sink instead,
//!   and one branch later in the block (before the next call, branching check or the
//!   terminator) reports the first member that failed.
//!
//! This module is the planner (`plan()`); the plan it hands the emitter (`check.rs`) is
//! made of the `plan` module's types, which build no IR. The steps after the first pass
//! over the accesses are modules of their own, each over the plan's types only: `stride`,
//! `hull` and `index` (groups), `batch`, then `defer` (the last); `join` holds what they share (when checks
//! can become one), `cold` which checks can skip their access (decided here, used by
//! the emitter too).

mod batch;
mod cold;
pub mod defer;
mod hull;
mod index;
mod join;
mod offset;
pub mod plan;
mod stride;

pub use cold::ColdPaths;
pub use index::is_load as index_load;

use crate::base::{decompose, Base, Guard, Parts};
use crate::classify::{const_int, pointer_root, ObjSize};
use crate::collect::{Access, Len, Range, Target};
use crate::dom::Cfg;
use crate::intervals::Intervals;
use crate::ir::{callee, opcode, Ir};
use crate::loops::LoopAnalyses;
use crate::options::{PassOptions, Recover};
use crate::remat::Remat;
use cusafe_format::report::ACCESS_RANGE;
use inkwell::values::{BasicValue, InstructionValue, PointerValue};
use join::{can_join, may_stop, same_target};
use llvm_sys::LLVMOpcode;
use plan::{Anchor, CheckPlan, Group, LoopCheck, Plan, RangeId, Shape, Unit};
use std::collections::HashSet;

fn same_len(a: &Len, b: &Len) -> bool {
    match (a, b) {
        (Len::Const(x), Len::Const(y)) => x >= y,
        (Len::Value(x), Len::Value(y)) => x == y,
        _ => false,
    }
}

/// The terminator of block `b` of `cfg` (a preheader's: a branch to its loop).
fn terminator<'ctx>(cfg: &Cfg<'ctx>, b: usize) -> InstructionValue<'ctx> {
    let term = cfg.blocks[b].get_terminator();
    term.expect("a preheader ends in a branch")
}

/// Whether instruction `i` is inside the loop with body `body`.
fn defined_in<'ctx>(cfg: &Cfg<'ctx>, i: InstructionValue<'ctx>, body: &[bool]) -> bool {
    cfg.block_of(i).is_none_or(|b| body[b])
}

/// The outermost preheader the root half of a check in block `b` on `root` can move to:
/// out of each loop that does not define the root and, unless the root is a function
/// argument or derived from one, whose every trip runs block `b`.
fn hoist_target<'ctx>(
    cfg: &Cfg<'ctx>,
    b: usize,
    root: PointerValue<'ctx>,
) -> Option<InstructionValue<'ctx>> {
    let from_argument = crate::sys::param_parent(pointer_root(root)).is_some();
    let mut at = b;
    let mut target = None;
    for l in cfg.loops_of(b) {
        if !l.body[at] {
            break; // not nested around the position reached: stop there
        }
        let runs_every_trip = l.must_pass.iter().all(|&x| cfg.block_dominates(at, x));
        let inside = root
            .as_instruction()
            .is_some_and(|i| defined_in(cfg, i, &l.body));
        let (Some(p), false) = (l.preheader, inside) else {
            break;
        };
        if !runs_every_trip && !from_argument {
            break;
        }
        target = Some(terminator(cfg, p));
        at = p;
    }
    target
}

/// The earliest point of `access`'s block where the root half of its check on `root`
/// can be built instead of right before the access: after the block's phis, the root's
/// definition, the last call that may not return and the last access whose check can
/// skip it (a skip jumps from that check to past its access, so code in between would
/// not dominate ours). From there the access runs unless an earlier check in the block
/// fails, so the header is loaded only where the program is about to touch the block (a
/// stray root's header load can fault only where its access would), but the load starts
/// before the block's earlier checks and accesses and its latency overlaps theirs
/// (conv2d's store no longer waits for it after the loads' checks).
fn raise<'ctx>(
    access: InstructionValue<'ctx>,
    root: PointerValue<'ctx>,
    may_skip: &HashSet<InstructionValue<'ctx>>,
) -> InstructionValue<'ctx> {
    let mut at = access;
    loop {
        let Some(prev) = at.get_previous_instruction() else {
            return at;
        };
        let stop = root.as_instruction() == Some(prev)
            || may_skip.contains(&prev)
            || opcode(prev) == Some(LLVMOpcode::LLVMPHI)
            || (opcode(prev) == Some(LLVMOpcode::LLVMCall) && callee(prev).is_none_or(may_stop));
        if stop {
            return at;
        }
        at = prev;
    }
}

/// Groups the planned checks of one block into neighbours (see the module doc).
fn group_neighbours<'ctx>(
    ir: &Ir,
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    plan: &mut Plan<'ctx>,
) {
    struct Open<'ctx> {
        root: PointerValue<'ctx>,
        target: Target,
        base: Base<'ctx>,
        members: Vec<(RangeId, i64)>,
        lo: i64,
        hi: i64,
        guard: Option<Guard<'ctx>>,
        /// Each member's real address, built before the first access (needed once
        /// the group is guarded).
        exact: Vec<Option<Remat<'ctx>>>,
    }
    let mut open: Vec<Open> = Vec::new();
    let mut block = None;
    let order = plan.order.clone();
    let close = |open: &mut Vec<Open<'ctx>>, plan: &mut Plan<'ctx>| {
        for g in open.drain(..) {
            if g.members.len() >= 2 {
                let (base, lo, hi, guard) = (g.base, g.lo, g.hi, g.guard);
                let exact = match guard {
                    // (Joining a guarded group takes every member's real address.)
                    Some(_) => match g.exact.into_iter().collect::<Option<Vec<_>>>() {
                        Some(e) => e,
                        None => continue,
                    },
                    None => Vec::new(),
                };
                plan.add_group(
                    Shape::Offsets {
                        base,
                        lo,
                        hi,
                        guard,
                    },
                    g.members,
                    exact,
                );
            }
        }
    };
    for &i in &order {
        let acc = &accesses[i];
        let bb = acc.inst.get_parent().expect("an access is in a block");
        if block != Some(bb) {
            close(&mut open, plan);
            block = Some(bb);
        }
        for (id, r) in RangeId::all(i, acc) {
            let (CheckPlan::Check(_), Len::Const(len)) = (plan.of(id), r.len) else {
                continue;
            };
            let Some(Parts { base, off, assumed }) = decompose(ir, r.addr, true) else {
                continue;
            };
            let end = off.checked_add(len as i64);
            let joined = open
                .iter_mut()
                .find(|g| g.root == r.root && same_target(&g.target, &r.target) && g.base == base);
            match (joined, end) {
                (Some(g), Some(end)) => {
                    let leader = g.members[0].0.inst(accesses);
                    let exact = Remat::plan(cfg, r.addr.into(), leader);
                    // The group's guard with this member's assumption; `None`: they
                    // do not go together.
                    let guard = match (g.guard, assumed) {
                        (g0, None) => Some(g0),
                        (g0, Some(a)) => g0.unwrap_or(Guard::new(a.x)).with(a).map(Some),
                    };
                    let Some(guard) = guard else { continue };
                    let mut leaves = base.leaves();
                    if let Some(gd) = guard {
                        // Guarded: the cold path needs every member's real address.
                        if exact.is_none() || g.exact.iter().any(Option::is_none) {
                            continue;
                        }
                        leaves.push(gd.x.into());
                        let all = g.exact.iter().chain([&exact]).flatten();
                        leaves.extend(all.flat_map(Remat::leaves));
                    }
                    if can_join(cfg, leader, &leaves, acc.inst) {
                        g.members.push((id, off));
                        g.lo = g.lo.min(off);
                        g.hi = g.hi.max(end);
                        g.guard = guard;
                        g.exact.push(exact);
                    }
                }
                (None, Some(end)) => open.push(Open {
                    root: r.root,
                    target: r.target.clone(),
                    base,
                    members: vec![(id, off)],
                    lo: off,
                    hi: end,
                    guard: assumed.and_then(|a| Guard::new(a.x).with(a)),
                    exact: vec![Remat::plan(cfg, r.addr.into(), acc.inst)],
                }),
                _ => {}
            }
        }
    }
    close(&mut open, plan);
}

/// Plans the checks of one function's accesses. `cold`: the module's cold paths (which
/// checks can skip their access); `scoped` says the function marks local scopes (no
/// recurring elimination then); `slots`: the launch-time index groups of the module's
/// kernels (`launch::index_slots`); `opts`: whether to eliminate at all
/// ([`PassOptions::optimise`]) and the recover mode, which keeps some forms out.
pub fn plan<'ctx>(
    ir: &Ir,
    cfg: &Cfg<'ctx>,
    accesses: &[Access<'ctx>],
    cold: &ColdPaths,
    scoped: bool,
    slots: &[crate::launch::IndexSlot<'ctx>],
    opts: &PassOptions,
) -> Plan<'ctx> {
    let block_of = |a: &Access| cfg.block_of(a.inst);
    let mut order: Vec<usize> = (0..accesses.len()).collect();
    // Reverse post order of blocks, then position: a dominator comes before what it
    // dominates (layout order does not promise that). Unreachable blocks go last.
    order.sort_by_key(|&i| block_of(&accesses[i]).unwrap_or(usize::MAX));
    let mut plan = Plan {
        plans: accesses
            .iter()
            .map(|a| vec![CheckPlan::Check(None); a.ranges.len()])
            .collect(),
        ..Plan::default()
    };
    let Some(first) = accesses.first().filter(|_| opts.optimise) else {
        plan.order = order;
        return plan;
    };
    let may_skip: HashSet<InstructionValue> = accesses
        .iter()
        .filter(|a| cold.may_skip(a))
        .map(|a| a.inst)
        .collect();
    let func = first.inst.get_parent().and_then(|bb| bb.get_parent());
    let scev = LoopAnalyses::new(func.expect("an access is in a function"));
    let intervals = Intervals::new(cfg, &scev, ir.layout());
    // Ranges already planned, with where their root half lives.
    type Done<'a, 'ctx> = (
        InstructionValue<'ctx>,
        &'a Range<'ctx>,
        Option<Anchor<'ctx>>,
    );
    let mut done: Vec<Done> = Vec::new();
    for &i in &order {
        let acc = &accesses[i];
        let Some(b) = block_of(acc) else { continue };
        for (k, r) in acc.ranges.iter().enumerate() {
            if in_bounds(&intervals, acc.inst, r) {
                plan.plans[i][k] = CheckPlan::Covered;
                plan.proven += 1;
                continue;
            }
            let dominating = |&&(inst, _, _): &&Done| cfg.dominates(inst, acc.inst);
            let covered = !scoped
                && done.iter().filter(dominating).any(|(_, s, _)| {
                    s.root == r.root
                        && s.addr == r.addr
                        && same_len(&s.len, &r.len)
                        && same_target(&s.target, &r.target)
                });
            if covered {
                plan.plans[i][k] = CheckPlan::Covered;
                plan.removed += 1;
                continue;
            }
            let anchor = matches!(r.target, Target::Heap).then(|| {
                if let Some(before) = hoist_target(cfg, b, r.root) {
                    plan.hoisted += 1;
                    return Anchor {
                        root: r.root,
                        before,
                        hoisted: true,
                    };
                }
                let earlier = done
                    .iter()
                    .filter(dominating)
                    .find_map(|(_, s, a)| a.filter(|_| s.root == r.root));
                match earlier {
                    Some(a) => {
                        if a.hoisted {
                            plan.hoisted += 1;
                        } else {
                            plan.shared += 1;
                        }
                        a
                    }
                    None => Anchor {
                        root: r.root,
                        before: raise(acc.inst, r.root, &may_skip),
                        hoisted: false,
                    },
                }
            });
            plan.plans[i][k] = CheckPlan::Check(anchor);
            done.push((acc.inst, r, anchor));
        }
    }
    plan.order = order;
    if !scoped && opts.recover != Recover::Skip {
        // A scope can end between two neighbours or two trips, and a strict recover
        // build skips each failing access: every access then keeps its own check.
        group_neighbours(ir, cfg, accesses, &mut plan);
        stride::form(ir, cfg, accesses, &mut plan);
        if !opts.recover_build() {
            hull::form(ir, cfg, accesses, &mut plan);
        }
        hoist_loop_ranges(&scev, accesses, &mut plan);
        if !opts.recover_build() {
            index::form(ir, cfg, accesses, &mut plan, slots);
        }
        batch::form(cfg, accesses, &mut plan);
        if !opts.recover_build() {
            hoist_verdicts(cfg, accesses, &mut plan);
            if opts.defer {
                defer::form(accesses, cold, &mut plan, opts.lifts());
                if opts.predicate {
                    plan.predicated = defer::predicated(&plan.flushes, &plan.lifted);
                }
            }
            if opts.offsets {
                offset::form(ir, cfg, accesses, &mut plan);
            }
        }
    }
    plan
}

/// Whether range `r` of access `inst` is of an object of known size and, by the values
/// its indices can take there, inside it.
pub fn in_bounds(intervals: &Intervals, inst: InstructionValue, r: &Range) -> bool {
    let (Target::Object(o), Len::Const(len)) = (&r.target, r.len) else {
        return false;
    };
    let ObjSize::Const(size) = o.size else {
        return false;
    };
    intervals
        .offset(inst, r.addr, r.root)
        .is_some_and(|off| off.lo >= 0 && off.hi + len as i128 <= size as i128)
}

/// Finds the checks whose verdicts can be built in a loop preheader (see the module
/// doc) and records where.
fn hoist_verdicts<'ctx>(cfg: &Cfg<'ctx>, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    // Each emitted check: its units (a batch's, or one check or group of its own).
    let mut emits: Vec<Vec<Unit>> = plan.batches.iter().map(|b| b.units.clone()).collect();
    for (i, plans) in plan.plans.iter().enumerate() {
        for (k, &p) in plans.iter().enumerate() {
            if matches!(p, CheckPlan::Check(_) | CheckPlan::Leader(..)) {
                let id = RangeId {
                    access: i,
                    range: k,
                };
                emits.push(vec![Unit { id, plan: p }]);
            }
        }
    }
    for units in emits {
        let first = units[0].id;
        let Some(b) = cfg.block_of(first.inst(accesses)) else {
            continue;
        };
        // The instructions the compares are built from, and where their root halves are.
        let needs: Vec<InstructionValue> = units
            .iter()
            .flat_map(|&u| batch::needs(accesses, plan, u))
            .filter_map(|v| v.as_instruction_value())
            .chain(
                units
                    .iter()
                    .filter_map(|u| u.plan.anchor().map(|a| a.before)),
            )
            .collect();
        // Every heap check has an anchor; an object check needs none.
        let heap_without = units
            .iter()
            .any(|u| matches!(u.id.of(accesses).target, Target::Heap) && u.plan.anchor().is_none());
        if heap_without {
            continue;
        }
        if let Some(at) = invariant_point(cfg, b, &needs) {
            plan.verdicts_at.insert(first, at);
        }
    }
}

/// The outermost preheader terminator, over the loops around block `b`, outside which
/// every instruction of `vals` is; `None` when not even the innermost loop's.
fn invariant_point<'ctx>(
    cfg: &Cfg<'ctx>,
    b: usize,
    vals: &[InstructionValue<'ctx>],
) -> Option<InstructionValue<'ctx>> {
    let mut target = None;
    for l in cfg.loops_of(b) {
        let outside = vals.iter().all(|&v| !defined_in(cfg, v, &l.body));
        let (Some(p), true) = (l.preheader, outside) else {
            break;
        };
        target = Some(terminator(cfg, p));
    }
    target
}

/// Moves checks (single ranges and neighbouring groups) whose loop range is known out
/// of their loop: one check of the whole range in the preheader instead.
fn hoist_loop_ranges<'ctx>(loops: &LoopAnalyses, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    for i in plan.order.clone() {
        for (id, r) in RangeId::all(i, &accesses[i]) {
            // Per trip: the range itself, or its group's union around it.
            let (below, len) = match (plan.of(id), r.len) {
                (CheckPlan::Check(_), Len::Const(len)) => (0, len),
                (CheckPlan::Leader(_, g), _) => match &plan.groups[g] {
                    // A guarded union lies around the leader's address only when the
                    // guard holds: no loop range from it.
                    Group {
                        shape:
                            Shape::Offsets {
                                lo,
                                hi,
                                guard: None,
                                ..
                            },
                        members,
                        ..
                    } => {
                        let off = members[0].1;
                        ((off - lo) as u64, (hi - off) as u64)
                    }
                    // A strided union is no constant range per trip.
                    _ => continue,
                },
                _ => continue,
            };
            let Some(lr) = loops.range(accesses[i].inst, r, below, len) else {
                continue;
            };
            // The check that used an anchor's root half is gone from the loop.
            plan.drop_anchor(id, accesses[i].inst);
            plan.set(id, CheckPlan::Covered);
            plan.loop_checks.push(LoopCheck {
                access: i,
                range: Range {
                    addr: lr.lo,
                    // A span the expansion folded to a constant compares like a
                    // constant length (one compare against a bound).
                    len: const_int(lr.span.into())
                        .and_then(|n| u64::try_from(n).ok())
                        .map_or(Len::Value(lr.span), Len::Const),
                    flags: r.flags | ACCESS_RANGE,
                    last_byte: false,
                    ..r.clone()
                },
                at: lr.at,
            });
        }
    }
}
