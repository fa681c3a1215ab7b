//! Deferred branches, a trap-mode step after batches: a check's branch to its report
//! splits the block before its access, and ptxas schedules no load across a branch, so
//! a block of checked loads and stores waits for each memory latency in turn (nw's tile
//! loads: three in a row where the plain build waits once).
//!
//! A deferred check computes its verdict at its access as before, but does not branch
//! there to its report. The access is made only where the verdict held (a branch
//! around it that ptxas predicates, `check::FnEmit::predicate`; a skipped load's value
//! is zero: the checks of [`predicated`]); or else, and everywhere with
//! `CUSAFE_PASS_PREDICATE=0`, the access's address becomes `verdict ? sink : address`.
//! One *flush* later in the block branches on the or of the verdicts pending since the
//! last flush. Its cold path looks at the members in program order and reports the
//! first that failed, with that access's own site, address and bounds (the values the
//! fast path computed). A failed access therefore never touches memory outside its
//! bounds: it is not made, or a load reads zeros from a read-only sink (or the start of
//! its own object) and a store writes to a write-only sink (or the start of its own
//! object, which a trap-mode build never reads again: the launch ends at the flush).
//!
//! Deferring pays only where a load of global memory follows in the block, or is the
//! deferred access itself: that load is what the branch would hold back. A check no such
//! load follows keeps its branch (a block's trailing stores, srad's five: deferred, their
//! selects and the flush's or cost more than the branches, 1.33x -> 1.45x on an H200).
//! So does a *lone load*, a region's only deferred access when no other load follows it:
//! its flush would come right after it, codegen puts that branch before the load anyway,
//! and the sink's selects stay on the load's address (llama_decode 1.038x -> 1.023x of
//! plain, nw 1.161x -> 1.146x, H100).
//!
//! A flush goes right before the first of these after a deferred check:
//! * a call that may stop the thread (anything but an intrinsic): what runs after a
//!   failed access and before the report stays inside the thread's own registers and
//!   the sinks;
//! * an access a pending check covers (the recurring rule: same root and address, so it
//!   has no check of its own) that cannot ride on that check: a covered plain load or
//!   store of at most [`SINK_BYTES`] goes to a sink on the covering verdict instead,
//!   with no flush (srad's and lud's `a[i] = a[i] + ...` stored to the real address
//!   before the load's verdict was out, until 2026-11-27; a flush there cost lud 14%);
//! * an access whose check branches (a group, a batch, a check not deferred): a report
//!   is always the first failing access in program order;
//! * the block's terminator: no loop trip and no path starts with a verdict pending.
//!
//! Deferred are single checks (no group, batch or loop-invariant verdict) of a plain
//! load or store of at most [`SINK_BYTES`] bytes, in the global, generic or shared space,
//! against the heap or a `__shared__` or `__device__` object at least as large and as
//! aligned as the access, in trap-mode builds only (a recover build reports and goes on
//! at the access).
//! Not deferred:
//! * loads of pointers: a zero read from the sink could be a later check's root in the
//!   same region, whose header load would then read address zero's block;
//! * loads through a `__restrict__` read-only kernel parameter: the sink, another
//!   underlying object, would take the load off the non-coherent path (`ld.global.nc`);
//! * volatile accesses, atomics and memory intrinsics;
//! * checks whose cold path may return (pseudo-pointer roots: `__cusafe_slow` decides).

use super::join::stops;
use super::plan::{Anchor, CheckPlan, Flush, Lifted, Plan, RangeId};
use super::ColdPaths;
use crate::classify::{pointer_root, strip_pointer_casts, ObjSize};
use crate::collect::{Access, Len, Range, Target};
use crate::ir::{AS_GENERIC, AS_GLOBAL, AS_SHARED};
use crate::lift::{lone_load, triangle, Triangle};
use crate::sys::{addr_space, global_variable, operand, param_parent};
use cusafe_format::report::{ACCESS_ATOMIC, ACCESS_RANGE, OBJECT_GLOBAL_VAR, OBJECT_SHARED};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::basic_block::BasicBlock;
use inkwell::types::AnyTypeEnum;
use inkwell::values::{AsValueRef, InstructionOpcode, InstructionValue, PointerValue};
use std::collections::{HashMap, HashSet};

/// The largest access a sink takes, in bytes (each sink is this large).
pub const SINK_BYTES: u64 = 64;

/// What an access does at its place in its block.
enum Kind {
    /// Its checks are deferred (these ranges).
    Deferred(Vec<RangeId>),
    /// One of its checks branches at the access.
    Branches,
    /// It emits no check (proven, covered, or a later member of a group or batch).
    Quiet,
}

/// Defers what can be deferred in a planned function and places the flushes (see the
/// module doc). `cold` says which checks' cold paths may return; with `lift`, the check
/// of a triangle's lone load is built at the triangle's branch (`crate::lift`) and the
/// pending checks flow on into the triangle's join.
pub fn form<'ctx>(accesses: &[Access<'ctx>], cold: &ColdPaths, plan: &mut Plan<'ctx>, lift: bool) {
    let Some(func) = accesses
        .first()
        .and_then(|a| a.inst.get_parent())
        .and_then(|bb| bb.get_parent())
    else {
        return;
    };
    let at: HashMap<InstructionValue, usize> = accesses
        .iter()
        .enumerate()
        .map(|(i, a)| (a.inst, i))
        .collect();
    let preds = crate::lift::predecessors(func);
    let blocks = func.get_basic_blocks();
    let position: HashMap<BasicBlock, usize> =
        blocks.iter().enumerate().map(|(k, &b)| (b, k)).collect();
    // Regions that flow on into a triangle's join, and the loads lifted to their branch.
    let mut carried: HashMap<BasicBlock, Region> = HashMap::new();
    let mut lifted_loads: HashSet<InstructionValue> = HashSet::new();
    for bb in blocks.iter().copied() {
        let mut region = carried.remove(&bb).unwrap_or_default();
        let mut next = bb.get_first_instruction();
        while let Some(inst) = next {
            next = inst.get_next_instruction();
            if lifted_loads.contains(&inst) {
                continue;
            }
            let lifted = lift
                .then(|| liftable(inst, &at, accesses, cold, plan, &preds, &position))
                .flatten();
            if let Some((t, load, id, anchor)) = lifted {
                plan.set(id, CheckPlan::Check(anchor));
                region.pending.push((id, load));
                region.lifted = true;
                region.load(load);
                plan.lifted.insert(
                    id,
                    Lifted {
                        branch: inst,
                        on_true: t.on_true,
                    },
                );
                lifted_loads.insert(load);
                carried.insert(t.join, std::mem::take(&mut region));
                continue;
            }
            let flush_here = match at.get(&inst) {
                Some(&i) => match kind(i, &accesses[i], cold, plan) {
                    Kind::Deferred(ids) => {
                        region.pending.extend(ids.into_iter().map(|id| (id, inst)));
                        region.load(inst);
                        continue;
                    }
                    Kind::Branches => Some(true),
                    // An access that a pending check covers (the same root and address:
                    // the recurring rule) has no check of its own: it rides on the
                    // covering verdict to a sink, or the verdict must be out first.
                    Kind::Quiet => (!region.ride(i, &accesses[i], accesses, plan)).then_some(false),
                },
                None if inst.is_terminator() || stops(inst) => Some(false),
                // A lifted region flushes before a call that does something, a barrier
                // included (`busy_call`): its verdicts and report values would be live
                // across what follows (syrk's unrolled tile product after
                // `__syncthreads()`: 32 -> 64 registers and spills with the flush at the
                // block's end).
                None if region.lifted && busy_call(inst) => Some(false),
                None => None,
            };
            if let Some(at_access) = flush_here {
                region.close(inst, at_access, plan);
            }
            region.load(inst);
        }
    }
}

/// When `branch` heads a triangle (`crate::lift`) whose run block makes one load and
/// nothing else but store its value to `__shared__` memory where no check is needed,
/// and that load's one check can be deferred and built at the branch: the
/// triangle, the load, the check and where its root half goes. The join must come after
/// the head and the run block in `position` (the order [`form`] visits blocks in), so
/// the region reaches it before it is visited.
fn liftable<'ctx>(
    branch: InstructionValue<'ctx>,
    at: &HashMap<InstructionValue<'ctx>, usize>,
    accesses: &[Access<'ctx>],
    cold: &ColdPaths,
    plan: &Plan<'ctx>,
    preds: &HashMap<BasicBlock<'ctx>, usize>,
    position: &HashMap<BasicBlock<'ctx>, usize>,
) -> Option<(
    Triangle<'ctx>,
    InstructionValue<'ctx>,
    RangeId,
    Option<Anchor<'ctx>>,
)> {
    if !branch.is_terminator() {
        return None;
    }
    let t = triangle(branch, preds)?;
    let (load, stores) = lone_load(&t)?;
    let &i = at.get(&load)?;
    // A halo load's tile store is skipped with the load where the check fails: it must
    // have no check of its own (proven in bounds, a box copy's).
    let unchecked = |s: &InstructionValue<'ctx>| {
        at.get(s).is_none_or(|&k| {
            RangeId::all(k, &accesses[k]).all(|(id, _)| plan.emitted_at(id).is_none())
        })
    };
    if !stores.iter().all(unchecked) {
        return None;
    }
    let order = |b: BasicBlock<'ctx>| position.get(&b).copied();
    let head = branch.get_parent()?;
    if order(t.join)? <= order(head)?.max(order(t.then)?) {
        return None;
    }
    let mut emitting =
        RangeId::all(i, &accesses[i]).filter(|&(id, _)| plan.emitted_at(id).is_some());
    let (id, r) = emitting.next()?;
    // The root half is built before the branch: where it was already (a loop
    // preheader), or else right before the branch when the root is a kernel or
    // function parameter (or derived from one), like a root half hoisted out of a loop
    // that runs its check on some trips only (`elim`): a windowed parameter's needs no
    // code, and a header load there cannot fault but for a stale pointer.
    let anchor = match plan.of(id) {
        CheckPlan::Check(None) => Some(None),
        CheckPlan::Check(Some(a)) if a.hoisted => Some(Some(a)),
        CheckPlan::Check(Some(a)) if param_parent(pointer_root(a.root)).is_some() => {
            Some(Some(Anchor {
                before: branch,
                ..a
            }))
        }
        _ => None,
    }?;
    // The load goes to no sink, so `__restrict__` loads qualify.
    let ok = emitting.next().is_none() && deferrable(id, r, load, cold, plan, true);
    ok.then_some((t, load, id, anchor))
}

/// The deferred checks of one block since its last flush.
#[derive(Default)]
struct Region<'ctx> {
    /// Each with its access, in program order.
    pending: Vec<(RangeId, InstructionValue<'ctx>)>,
    /// How many of them a global or generic load follows or makes (the rest gain
    /// nothing from deferring: no load waits behind their branches).
    followed: usize,
    /// Whether one of them is lifted (`crate::lift`).
    lifted: bool,
    /// The last global or generic load noted.
    last_load: Option<InstructionValue<'ctx>>,
}

impl<'ctx> Region<'ctx> {
    /// Notes `inst`: a load from global or generic memory makes every pending check,
    /// its own included, worth deferring.
    fn load(&mut self, inst: InstructionValue<'ctx>) {
        if memory_load(inst) {
            self.followed = self.pending.len();
            self.last_load = Some(inst);
        }
    }

    /// Lets access `i` (`acc`, which emits no check) ride on the pending checks that
    /// cover its ranges (same root and address): each such range then goes to a sink
    /// on the covering verdict ([`Plan::riders`]). `false` when one cannot (the access
    /// is no plain load or store, or no sink fits it): the caller flushes before it.
    fn ride(
        &self,
        i: usize,
        acc: &Access<'ctx>,
        accesses: &[Access<'ctx>],
        plan: &mut Plan<'ctx>,
    ) -> bool {
        let mut riders = Vec::new();
        for (id, r) in RangeId::all(i, acc) {
            let covering = self.pending.iter().find(|&&(p, _)| {
                let p = p.of(accesses);
                p.root == r.root && p.addr == r.addr
            });
            if let Some(&(by, _)) = covering {
                if !plain_access(acc.inst) || !sinkable(r, acc.inst) {
                    return false;
                }
                riders.push((id, by));
            }
        }
        plan.riders.extend(riders);
        true
    }

    /// Ends the region at `before` (an access whose checks branch when `at_access`):
    /// the members a load follows are deferred to one flush, right before the first of
    /// the others (which keep their own branches) or else before `before`.
    fn close(&mut self, before: InstructionValue<'ctx>, at_access: bool, plan: &mut Plan<'ctx>) {
        let mut members = std::mem::take(&mut self.pending);
        let followed = std::mem::take(&mut self.followed);
        let lifted = std::mem::take(&mut self.lifted);
        let last_load = self.last_load.take();
        let rest = members.split_off(followed);
        if members.is_empty() {
            return;
        }
        // A lone load keeps its own branch (see the module doc); its riders then need
        // no sink: its check traps before them.
        let lone = members
            .iter()
            .all(|&(_, inst)| Some(inst) == last_load && is_load(inst));
        if lone && !lifted {
            let ids: HashSet<RangeId> = members.iter().map(|&(id, _)| id).collect();
            plan.riders.retain(|_, by| !ids.contains(by));
            return;
        }
        let (before, at_access) = match rest.first() {
            Some(&(_, inst)) => (inst, true),
            None => (before, at_access),
        };
        plan.deferred.extend(members.iter().map(|&(id, _)| id));
        plan.flushes.push(Flush {
            before,
            at_access,
            members: members.into_iter().map(|(id, _)| id).collect(),
        });
    }
}

/// Whether `inst` is a call that does something: any but a thread-index read or a
/// debug intrinsic (a barrier is one).
fn busy_call(inst: InstructionValue) -> bool {
    if inst.get_opcode() != InstructionOpcode::Call || crate::remat::pure_value(inst) {
        return false;
    }
    !crate::sys::callee(inst).is_some_and(|f| crate::sys::name(f).starts_with("llvm.dbg."))
}

/// Whether `inst` loads from the global or generic space (a load or an atomic).
fn memory_load(inst: InstructionValue) -> bool {
    let loads = matches!(
        inst.get_opcode(),
        InstructionOpcode::Load | InstructionOpcode::AtomicRMW | InstructionOpcode::AtomicCmpXchg
    );
    loads
        && operand(inst, 0)
            .is_some_and(|addr| matches!(addr_space(addr), Some(AS_GLOBAL | AS_GENERIC)))
}

/// What access `i` does at its place (see [`Kind`]).
fn kind<'ctx>(i: usize, acc: &Access<'ctx>, cold: &ColdPaths, plan: &Plan<'ctx>) -> Kind {
    let emitting: Vec<(RangeId, &Range)> = RangeId::all(i, acc)
        .filter(|&(id, _)| plan.emitted_at(id).is_some())
        .collect();
    if emitting.is_empty() {
        return Kind::Quiet;
    }
    let deferrable = emitting
        .iter()
        .all(|&(id, r)| deferrable(id, r, acc.inst, cold, plan, false));
    if deferrable {
        Kind::Deferred(emitting.into_iter().map(|(id, _)| id).collect())
    } else {
        Kind::Branches
    }
}

/// Whether the check of range `id` (`r`) of access `inst` can be deferred (see the
/// module doc); `skipped`: its access is skipped where the check fails, never sent to a
/// sink, so a load through a `__restrict__` read-only parameter qualifies too.
fn deferrable<'ctx>(
    id: RangeId,
    r: &Range<'ctx>,
    inst: InstructionValue<'ctx>,
    cold: &ColdPaths,
    plan: &Plan<'ctx>,
    skipped: bool,
) -> bool {
    plain_access(inst)
        && matches!(plan.of(id), CheckPlan::Check(_))
        && !plan.verdicts_at.contains_key(&id)
        && !cold.out_of_line(r, r.root)
        && sinkable(r, inst)
        && (skipped || !(is_load(inst) && non_coherent(r.root)))
}

/// Whether `inst` is a load or store that is not volatile, and no load of a pointer.
fn plain_access(inst: InstructionValue) -> bool {
    let volatile = inst.get_volatile().unwrap_or(true);
    match inst.get_opcode() {
        InstructionOpcode::Load => {
            !volatile && !matches!(inst.get_type(), AnyTypeEnum::PointerType(_))
        }
        InstructionOpcode::Store => !volatile,
        _ => false,
    }
}

/// Whether `inst` is a load.
fn is_load(inst: InstructionValue) -> bool {
    inst.get_opcode() == InstructionOpcode::Load
}

/// Whether a sink can stand in for range `r`'s access `inst`: a constant length up to
/// [`SINK_BYTES`], a heap access in the global or generic space aligned to at most
/// [`SINK_BYTES`], or an access of a `__shared__` or `__device__` variable at least as
/// large and as aligned as the access (its own start is then the sink: a vector access
/// aligned past its object's alignment would fault there, misaligned, before the report).
fn sinkable(r: &Range, inst: InstructionValue) -> bool {
    let Len::Const(len) = r.len else {
        return false;
    };
    let space = addr_space(r.addr);
    let align = u64::from(inst.get_alignment().unwrap_or(u32::MAX));
    (1..=SINK_BYTES).contains(&len)
        && match &r.target {
            Target::Heap => matches!(space, Some(AS_GLOBAL | AS_GENERIC)) && align <= SINK_BYTES,
            Target::Object(o) => {
                matches!(space, Some(AS_GLOBAL | AS_GENERIC | AS_SHARED))
                    && o.space & (OBJECT_SHARED | OBJECT_GLOBAL_VAR) != 0
                    && matches!(o.size, ObjSize::Const(size) if size >= len)
                    && global_variable(strip_pointer_casts(r.root))
                        .is_some_and(|g| u64::from(g.get_alignment()) >= align)
            }
        }
        && r.flags & (ACCESS_ATOMIC | ACCESS_RANGE) == 0
}

/// Whether `root` is a kernel parameter that NVPTX may load through the non-coherent
/// path: `noalias` (`__restrict__`) and read-only.
fn non_coherent(root: PointerValue) -> bool {
    let root = strip_pointer_casts(root);
    let Some(f) = param_parent(root) else {
        return false;
    };
    let Some(index) = f
        .get_param_iter()
        .position(|p| p.as_value_ref() == root.as_value_ref())
    else {
        return false;
    };
    let has = |name: &str| {
        f.get_enum_attribute(
            AttributeLoc::Param(index as u32),
            Attribute::get_named_enum_kind_id(name),
        )
        .is_some()
    };
    has("noalias") && (has("readonly") || has("readnone"))
}

/// The deferred checks to predicate rather than sink ([`Plan::predicated`]): the
/// members of each flush that has two or more, or a lifted one (whose verdict is and-ed
/// with its branch's condition, which a sink's select would not see). A flush right
/// after its only member gains nothing from a branch around the access: codegen threads
/// that branch into the flush's on the same verdict, and the access waits for it again,
/// behind a reconvergence barrier (bptree's `find_range_k`: 10 more branches than with
/// sinks).
pub fn predicated(flushes: &[Flush], lifted: &HashMap<RangeId, Lifted>) -> HashSet<RangeId> {
    flushes
        .iter()
        .filter(|f| f.members.len() >= 2 || f.members.iter().any(|m| lifted.contains_key(m)))
        .flat_map(|f| f.members.iter().copied())
        .collect()
}
