//! Emits the inline check (docs/pass.md, "Per function", step 5) before an access, with the report call in a
//! cold block. In recover mode the report returns and the access is skipped (a load
//! then yields zero); in trap mode the report never returns.
//!
//! ```text
//!   root half (shared, or hoisted to a loop preheader: see elim/mod.rs)
//!     ri = root; t = ri >> 41; in = (t - 1) <u 35  (false for any root with bits 47..63)
//!     base = ri & (-1 << (t + 3)); slotted = t >=u 19
//!     packed, pay = crate::tile::locate(ri, t)      (packed sub-window; its payload)
//!     at = packed ? pay - 16
//!        : slotted ? base | ((base >> 18) & 0x1ffff0) : base   (header slot, 16 B each)
//!     hdr = load i64 (in ? at : @__cusafe_no_header)
//!     tagged = ri >=u 1 << 47                       (poisoned or pseudo)
//!     start = in ? (packed ? pay : base + (slotted ? 2 MiB : PREFIX))
//!                : (tagged ? ri : 64 KiB)
//!     limit = in ? hdr : (tagged ? 0 : 2^47 - 64 KiB)
//!   address half (at the access)
//!     end = (addr - start) + len
//!     br !(end <=u limit & end >=u len), cold, access
//!   cold: __cusafe_fail(addr, start, limit, len, site)  (device-rt sorts out the kind)
//! ```
//! The cold entry is `__cusafe_fail`, inlined after linking (a call would cost every
//! kernel registers), unless the root may be a pseudo-pointer
//! ([`crate::classify::may_be_pseudo`]): then it is a call of `__cusafe_slow`, which
//! finishes pseudo-pointer checks out of line.
//! Foreign pointers (tag outside 1..=35) read a zero word from a module global instead
//! of a header, so the fast path has one branch and no guarded load.

use crate::base::{decompose, Parts, Widen};
use crate::classify::{ObjSize, Object};
use crate::collect::{Access, Len, Range, Target};
use crate::elim::defer::SINK_BYTES;
use crate::elim::plan::{Anchor, CheckPlan, Flush, Lifted, LoopCheck, Plan, RangeId, Shape, Unit};
use crate::elim::ColdPaths;
use crate::ir::{addr_space, space, Ir, AS_GLOBAL};
use crate::launch::{RootPart, Windows};
use crate::shape::Cover;
use crate::sites::Sites;
use crate::strip::Roots;
use cusafe_format::block::{
    FIRST_SLOTTED_CLASS, GRANULE, HEADER_BYTES, HEADER_SLOTS, PREFIX, SLOT_SHIFT,
};
use cusafe_format::pointer::{FOREIGN_WINDOW, MAX_TAG, MIN_TAG, TAG_SHIFT};
use cusafe_format::pseudo::PSEUDO_BIT;
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::module::Linkage;
use inkwell::types::{BasicTypeEnum, FunctionType};
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode,
    InstructionValue, IntValue, PointerValue,
};
use inkwell::IntPredicate;
use std::cell::RefCell;
use std::collections::HashMap;

/// Root halves of heap checks already built, by where they were built.
pub type RootParts<'ctx> = HashMap<Anchor<'ctx>, RootPart<'ctx>>;

/// Values replaced by recover-mode phis: a loaded value used as a later access's root or
/// address must be read through its phi, which dominates where the original no longer does.
pub type Replaced<'ctx> = HashMap<BasicValueEnum<'ctx>, BasicValueEnum<'ctx>>;

/// The most loop ranges that share one branch. A set's verdicts are all built before
/// its branch; with more than two, ptxas kept fewer loop invariants in registers in the
/// loop after it (2mm's four ranges per preheader: 30 instead of 28 SASS a trip, 1.117x
/// against 1.022x with pairs on an H200, results/2026-11-27-h200-cold-paths), while
/// pairs (a matvec's weights and input) are where sharing paid.
const MAX_LOOP_SET: usize = 2;

/// One range of a cold chain ([`Checker::cold_chain`]): the access that names its site,
/// the range, its root before recover-mode phis replaced loads, and where its heap root
/// half was built (none: built in the cold path).
type ChainMember<'ctx> = (
    InstructionValue<'ctx>,
    Range<'ctx>,
    PointerValue<'ctx>,
    Option<Anchor<'ctx>>,
);

/// What [`Checker`] emits one function's checks with: the module-wide maps its checks
/// add to (borrowed), the function's own root halves and stripped roots (made here),
/// and the function's accesses and their plan. Made once per function.
pub struct FnEmit<'a, 'ctx> {
    /// The module's IR handles and builder.
    ir: &'a Ir<'ctx>,
    /// The module's report sites.
    sites: &'a mut Sites<'ctx>,
    /// The module's values replaced by recover-mode phis so far.
    replaced: &'a mut Replaced<'ctx>,
    /// The function's stripped roots.
    roots: Roots<'ctx>,
    /// The function's root halves built so far.
    parts: RootParts<'ctx>,
    /// The function.
    func: FunctionValue<'ctx>,
    /// The function's accesses, as collected.
    accesses: &'a [Access<'ctx>],
    /// The plan for `accesses`.
    plan: &'a Plan<'ctx>,
    /// Deferred checks built and not yet flushed.
    deferred: HashMap<RangeId, Deferred<'ctx>>,
    /// Which of the plan's flushes were emitted.
    flushed: Vec<bool>,
    /// The flushes that go before an access's own checks, by that access.
    flush_at: HashMap<InstructionValue<'ctx>, usize>,
    /// Deferred accesses to skip where their verdict failed, with that failure
    /// ([`FnEmit::predicate`], once every check of the function is built).
    predicated: Vec<(InstructionValue<'ctx>, IntValue<'ctx>)>,
    /// The offsets and windows of the checks built so far that later checks may
    /// compare instead of their own (`Plan::offsets`), by range.
    offsets: HashMap<RangeId, Offset<'ctx>>,
}

/// A built check's offset and the window it was compared against
/// ([`Checker::offset_verdict`]).
#[derive(Clone, Copy)]
struct Offset<'ctx> {
    off: IntValue<'ctx>,
    part: RootPart<'ctx>,
}

/// A deferred check (`elim::defer`) built at its access, waiting for its flush: what the
/// flush's cold path reports if it failed.
struct Deferred<'ctx> {
    /// The access.
    inst: InstructionValue<'ctx>,
    /// Its range.
    range: Range<'ctx>,
    /// The verdict built at the access.
    verdict: Verdict<'ctx>,
    /// The access length, as i64.
    len: IntValue<'ctx>,
    /// For a predicated check ([`Plan::predicated`]), the verdict's negation, built at
    /// the access: its branch and the flush both take it, so codegen builds one compare
    /// (with `inside` beside it, the flush's block got a copy of the compare, and the
    /// flush's `and` of compares became 64-bit maxima: lu 8 instructions more).
    bad: Option<IntValue<'ctx>>,
}

impl<'a, 'ctx> FnEmit<'a, 'ctx> {
    /// The state for emitting the checks of `func`, whose accesses are `accesses` and
    /// planned by `plan`; `sites` and `replaced` are the module's.
    pub fn new(
        ir: &'a Ir<'ctx>,
        sites: &'a mut Sites<'ctx>,
        replaced: &'a mut Replaced<'ctx>,
        func: FunctionValue<'ctx>,
        accesses: &'a [Access<'ctx>],
        plan: &'a Plan<'ctx>,
    ) -> FnEmit<'a, 'ctx> {
        FnEmit {
            ir,
            sites,
            replaced,
            roots: Roots::default(),
            parts: RootParts::new(),
            func,
            accesses,
            plan,
            deferred: HashMap::new(),
            flushed: vec![false; plan.flushes.len()],
            flush_at: plan
                .flushes
                .iter()
                .enumerate()
                .filter(|(_, f)| f.at_access)
                .map(|(k, f)| (f.before, k))
                .collect(),
            predicated: Vec::new(),
            offsets: HashMap::new(),
        }
    }

    /// Puts each deferred access that [`Plan::predicated`] keeps in bounds behind a
    /// branch on its verdict, which ptxas turns into a predicated load or store: the
    /// access is made only where the verdict held, and a skipped load's value is zero
    /// (what a sink reads). Last, when no check will be built before an access any more
    /// (a root half built there later would land behind the branch).
    pub fn predicate(&mut self) {
        let ir = self.ir;
        for (access, bad) in std::mem::take(&mut self.predicated) {
            let head = access.get_parent().expect("in a block");
            // The access ends its block (`Checker::instrument` split after it).
            let body = ir.split_before(access);
            let term = body
                .get_terminator()
                .expect("a split block ends in a branch");
            let after = crate::sys::successors(term)[0];
            head.get_terminator()
                .expect("a split block ends in a branch")
                .erase_from_basic_block();
            ir.at_end(head);
            ir.b.build_conditional_branch(bad, after, body)
                .expect("positioned");
            let Ok(ty) = BasicTypeEnum::try_from(access.get_type()) else {
                continue;
            };
            if access.get_first_use().is_none() {
                continue;
            }
            ir.at(after
                .get_first_instruction()
                .expect("a block ends in a branch"));
            let phi = ir.b.build_phi(ty, "cusafe.val").expect("positioned");
            access.replace_all_uses_with(&phi.as_instruction());
            let value = crate::sys::value(access).expect("a first-class value");
            phi.add_incoming(&[(&value, body), (&ty.const_zero(), head)]);
        }
    }
}

/// Makes lifted check `l`'s branch (`lift`) go to its load only where the branch's old
/// condition sent it there and the check held (`inside`, built right before the branch);
/// returns the failed verdict for the flush: the check failed where the load would have
/// run. Built with `select`s on the old condition, so neither value is poison where the
/// load would not run (its speculated address may be).
fn lift_branch<'ctx>(ir: &Ir<'ctx>, l: &Lifted<'ctx>, inside: IntValue<'ctx>) -> IntValue<'ctx> {
    let c = crate::sys::branch_condition(l.branch);
    let no = ir.ctx.bool_type().const_zero();
    let failed = ir.not(inside);
    let (bad, cond) = if l.on_true {
        // Load where c: go there where c and the check held (c xor bad).
        let bad = ir.select(c, failed, no);
        (bad, ir.xor(c, bad))
    } else {
        // Load where !c: go to the join where c or the check failed (c or bad).
        let bad = ir.select(c, no, failed);
        (bad, ir.or(c, bad))
    };
    crate::sys::set_branch_condition(l.branch, cond);
    bad
}

fn resolve<'ctx>(replaced: &Replaced<'ctx>, v: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
    replaced.get(&v).copied().unwrap_or(v)
}

/// [`resolve`] of a pointer.
fn resolve_ptr<'ctx>(replaced: &Replaced<'ctx>, p: PointerValue<'ctx>) -> PointerValue<'ctx> {
    resolve(replaced, p.into()).into_pointer_value()
}

/// The device runtime's out-of-line cold path (device-rt/cusafe_rt.c): it finishes
/// pseudo-pointer checks and reports; a non-zero result means "skip the access".
pub const SLOW_FN: &str = "__cusafe_slow";

/// The device runtime's cold path for roots that are no pseudo-pointer in recover-mode
/// builds, inlined: it reports; its result (always non-zero) means "skip the access".
pub const FAIL_FN: &str = "__cusafe_fail";

/// The device runtime's cold path for roots that are no pseudo-pointer in trap-mode
/// builds (the default): an out-of-line call that reports and never returns.
pub const TRAP_FN: &str = "__cusafe_trap";

/// Where deferred heap loads that failed read (`Checker::sink`): constant zeros.
pub const LOAD_SINK: &str = "__cusafe_sink_load";

/// Where deferred heap stores that failed write (`Checker::sink`).
pub const STORE_SINK: &str = "__cusafe_sink_store";

/// The global through which trap-mode cold paths call [`TRAP_FN`].
pub const TRAP_SLOT: &str = "__cusafe_trap_slot";

/// Module-level things every check uses.
pub struct Checker<'ctx> {
    /// The type of [`SLOW_FN`] and [`FAIL_FN`], which their calls are built with.
    report_ty: FunctionType<'ctx>,
    /// [`SLOW_FN`] (called with `report_ty`, whatever type a declaration the module
    /// already had gives it).
    slow_fn: PointerValue<'ctx>,
    /// [`FAIL_FN`] (called as `slow_fn` is).
    fail_fn: PointerValue<'ctx>,
    /// The type of [`TRAP_FN`].
    trap_ty: FunctionType<'ctx>,
    /// A global holding [`TRAP_FN`]'s address, in trap-mode builds: calls go through it
    /// (see `cold_call`).
    trap_slot: Option<PointerValue<'ctx>>,
    /// The zero word foreign pointers read instead of a header.
    no_header: PointerValue<'ctx>,
    /// Which cold path each check gets (the planner's view of them).
    cold: ColdPaths<'ctx>,
    /// The launch-time windows of kernel pointer parameters (`crate::launch`).
    windows: Windows<'ctx>,
    /// Builds the values of [`Checker::beside`] next to their window, wherever the main
    /// builder is.
    aux: Builder<'ctx>,
    /// Values derived from a window's start or size built so far, by that value, what
    /// was derived and the access length.
    derived: RefCell<HashMap<(IntValue<'ctx>, Derived, u64), IntValue<'ctx>>>,
}

/// What [`Checker::beside`] derived from a window value.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Derived {
    /// [`Checker::bound`] of a size.
    Bound,
    /// [`Checker::start_less`] of a start.
    StartLess,
}

impl<'ctx> Checker<'ctx> {
    /// Declares the cold-path functions and the no-header word in the module. `cold`:
    /// which cold path each check gets (a recover build's return); `windows`: the
    /// launch-time windows of kernel parameters.
    pub fn new(ir: &Ir<'ctx>, cold: ColdPaths<'ctx>, windows: Windows<'ctx>) -> Checker<'ctx> {
        // (addr, root, size compared against, access length, site): device-rt works
        // out the rest; every argument is a register live at the call.
        let params = [
            ir.i64.into(),
            ir.i64.into(),
            ir.i64.into(),
            ir.i32.into(),
            ir.ptr.into(),
        ];
        let report_ty = ir.i32.fn_type(&params, false);
        let trap_ty = ir.ctx.void_type().fn_type(&params, false);
        let declare = |name: &str, ty| ir.declare(name, ty).as_global_value().as_pointer_value();
        let no_header =
            ir.module()
                .add_global(ir.i64, Some(space(AS_GLOBAL)), "__cusafe_no_header");
        no_header.set_initializer(&ir.i64.const_int(0, false));
        no_header.set_linkage(Linkage::Internal);
        let trap_fn = declare(TRAP_FN, trap_ty);
        let trap_slot = (!cold.recover).then(|| {
            let slot = ir
                .module()
                .add_global(ir.ptr, Some(space(AS_GLOBAL)), TRAP_SLOT);
            slot.set_initializer(&trap_fn);
            slot.set_linkage(Linkage::Internal);
            slot.as_pointer_value()
        });
        Checker {
            report_ty,
            slow_fn: declare(SLOW_FN, report_ty),
            fail_fn: declare(FAIL_FN, report_ty),
            trap_ty,
            trap_slot,
            no_header: no_header.as_pointer_value(),
            cold,
            windows,
            aux: ir.ctx.create_builder(),
            derived: RefCell::new(HashMap::new()),
        }
    }

    /// Whether accesses rooted at `root` may keep the root's bits 47..63 (no strip): a
    /// kernel parameter with a launch-time window in a trap-mode build. Its window lets
    /// no access through unless the parameter is below bit 47 (a poisoned parameter's
    /// window is empty), and a failed check never returns.
    fn keeps_tags(&self, root: PointerValue<'ctx>) -> bool {
        self.trap_slot.is_some()
            && self
                .windows
                .contains_key(&crate::classify::strip_pointer_casts(root))
    }

    /// Instruments access `index` of `e`'s function: a check per planned range before
    /// it, each with its own cold report block, and the recover-mode skip after it.
    /// Ranges a dominating check covers get none; their accesses are still stripped.
    pub fn instrument(&self, e: &mut FnEmit<'_, 'ctx>, index: usize) {
        let (ir, accesses, plan) = (e.ir, e.accesses, e.plan);
        let acc = &accesses[index];
        let plans = &plan.plans[index];
        // Deferred checks before this access flush before its own checks.
        if let Some(&k) = e.flush_at.get(&acc.inst) {
            self.flush(e, k, &plan.flushes[k]);
        }
        // The checks this access emits, each a batch: a batch's first range emits the
        // whole batch; a single check and a neighbouring group (not batched) are their
        // own. Ranges another access's check covers emit nothing here.
        let emits: Vec<(usize, Vec<Unit<'ctx>>)> = (0..plans.len())
            .filter_map(|k| {
                let id = RangeId {
                    access: index,
                    range: k,
                };
                plan.emitted_at(id).map(|units| (k, units))
            })
            .collect();
        // Root halves first, before any of this access's checks: a skip edge from one
        // range's cold block jumps past the code of the next range's check.
        let anchors = emits
            .iter()
            .flat_map(|(_, units)| units.iter().filter_map(|u| u.plan.anchor()));
        for a in anchors {
            e.parts.entry(a).or_insert_with(|| {
                ir.at(a.before);
                self.root_part(ir, resolve_ptr(e.replaced, a.root))
            });
        }
        let access = acc.inst;
        let next = access
            .get_next_instruction()
            .expect("an access is no terminator");
        let cont = ir.split_before(next);
        let mut skipped_from = Vec::new();
        let mut sunk = Vec::new();
        let lifted_only = emits.iter().all(|(k, _)| {
            plan.lifted.contains_key(&RangeId {
                access: index,
                range: *k,
            })
        }) && !emits.is_empty();
        for (k, units) in emits {
            let r = &acc.ranges[k];
            let id = RangeId {
                access: index,
                range: k,
            };
            if plan.deferred.contains(&id) {
                let lifted = plan.lifted.get(&id);
                ir.at(lifted.map_or(acc.inst, |l| l.branch));
                let anchor = units[0].plan.anchor();
                let (verdict, len) = self
                    .offset_verdict(e, id, r, anchor)
                    .unwrap_or_else(|| self.verdict(e, r, anchor, true));
                let bad = match lifted {
                    Some(l) => Some(lift_branch(ir, l, verdict.inside)),
                    None => plan
                        .predicated
                        .contains(&id)
                        .then(|| ir.not(verdict.inside)),
                };
                if lifted.is_none() {
                    sunk.push((r, verdict.inside, bad));
                }
                let d = Deferred {
                    inst: acc.inst,
                    range: r.clone(),
                    verdict,
                    len,
                    bad,
                };
                e.deferred.insert(id, d);
                continue;
            }
            let hoisted = plan.verdicts_at.get(&id).copied();
            let (CheckPlan::Check(anchor), None) = (plans[k], hoisted) else {
                self.emit_batch(e, &units, hoisted);
                continue;
            };
            let original_root = r.root;
            let r = Range {
                addr: resolve_ptr(e.replaced, r.addr),
                root: resolve_ptr(e.replaced, r.root),
                ..r.clone()
            };
            let (slow_bb, skip) = self.emit_check(e, id, &r, original_root, anchor);
            let Some(skip) = skip else { continue };
            // The cold block goes on to the access, or past it when told to skip.
            let term = slow_bb
                .get_terminator()
                .expect("a split block ends in a branch");
            let go_on = crate::sys::successors(term)[0];
            term.erase_from_basic_block();
            ir.at_end(slow_bb);
            ir.b.build_conditional_branch(skip, cont, go_on)
                .expect("positioned");
            skipped_from.push(slow_bb);
        }
        for r in acc
            .ranges
            .iter()
            .filter(|r| matches!(r.target, Target::Heap) && !self.keeps_tags(r.root))
        {
            e.roots.strip_access(
                ir,
                e.func,
                acc.inst,
                r.operand,
                resolve_ptr(e.replaced, r.root),
            );
        }
        // So does a range with no check of its own that a deferred one covers (same root
        // and address), on that check's verdict (`elim::defer`, riders): it must not
        // reach the real address before the flush either.
        for (k, r) in acc.ranges.iter().enumerate() {
            let id = RangeId {
                access: index,
                range: k,
            };
            let by = plan.riders.get(&id).and_then(|by| e.deferred.get(by));
            if let Some(d) = by {
                sunk.push((r, d.verdict.inside, d.bad));
            }
        }
        // A lifted check's branch already skips its load (`lift_branch`).
        if lifted_only {
            return;
        }
        // A predicated check's access runs only when its verdict held
        // (`FnEmit::predicate`, at the end).
        ir.at(acc.inst);
        let bads = sunk.iter().map(|&(_, _, bad)| bad);
        if let Some(Some(bad)) = bads.reduce(|a, b| Some(ir.or(a?, b?))) {
            debug_assert!(skipped_from.is_empty(), "deferred checks never return");
            e.predicated.push((acc.inst, bad));
            return;
        }
        // Else a deferred check's access goes to a sink when its verdict failed.
        for (r, inside, _) in sunk {
            let addr = crate::sys::operand(acc.inst, r.operand)
                .expect("an access's address")
                .into_pointer_value();
            ir.at(acc.inst);
            let sink = self.sink(
                ir,
                r,
                addr,
                acc.inst.get_opcode() == InstructionOpcode::Store,
            );
            let s = ir.b.build_select(inside, addr, sink, "cusafe.sunk");
            let set = acc
                .inst
                .set_operand(r.operand, s.expect("positioned").into_pointer_value());
            debug_assert!(set, "an operand of the access");
        }
        // A value the program uses (not a store's) is the access's, or zero where it
        // was skipped.
        let Ok(ty) = BasicTypeEnum::try_from(access.get_type()) else {
            return;
        };
        if access.get_first_use().is_some() {
            let first = cont.get_first_instruction().expect("the access's block");
            ir.at(first);
            let phi = ir.b.build_phi(ty, "cusafe.val").expect("positioned");
            access.replace_all_uses_with(&phi.as_instruction());
            let value = crate::sys::value(access).expect("a first-class value");
            e.replaced.insert(value, phi.as_basic_value());
            let zero = ty.const_zero();
            let mut incoming: Vec<(&dyn BasicValue, _)> =
                vec![(&value, access.get_parent().expect("in a block"))];
            incoming.extend(
                skipped_from
                    .into_iter()
                    .map(|bb| (&zero as &dyn BasicValue, bb)),
            );
            phi.add_incoming(&incoming);
        }
    }

    /// Emits the flushes of `e`'s plan not emitted with an access (before calls and
    /// terminators); run after every access is instrumented, before the loop checks.
    pub fn emit_flushes(&self, e: &mut FnEmit<'_, 'ctx>) {
        let plan = e.plan;
        for (k, f) in plan.flushes.iter().enumerate() {
            self.flush(e, k, f);
        }
    }

    /// Emits flush `k` (`f`) unless it was: one branch on the or of its members'
    /// verdicts, right before `f.before`, whose cold path reports the first member that
    /// failed, in program order, with that member's own values.
    fn flush(&self, e: &mut FnEmit<'_, 'ctx>, k: usize, f: &Flush<'ctx>) {
        if std::mem::replace(&mut e.flushed[k], true) {
            return;
        }
        let ir = e.ir;
        let members: Vec<Deferred> = f
            .members
            .iter()
            .map(|id| {
                e.deferred
                    .remove(id)
                    .expect("a deferred check is built before its flush")
            })
            .collect();
        ir.at(f.before);
        let failed = match members.iter().map(|d| d.bad).collect::<Option<Vec<_>>>() {
            Some(bads) => bads.into_iter().reduce(|a, b| ir.or(a, b)),
            None => members
                .iter()
                .map(|d| d.verdict.inside)
                .reduce(|a, b| ir.and(a, b))
                .map(|all| ir.not(all)),
        };
        let term = ir.split_if_then(failed.expect("a flush has members"), f.before);
        for d in members {
            ir.at(term);
            // Built here, in the cold path: the fast path keeps `inside` only (or, in
            // predicated builds, the `bad` its access branched on).
            let bad = d.bad.unwrap_or_else(|| ir.not(d.verdict.inside));
            let report = ir.split_if_then(bad, term);
            ir.at(report);
            let root = d.range.root;
            self.cold_call(e, d.inst, &d.range, root, &d.verdict, d.len);
        }
    }

    /// Where a deferred access of range `r` through `addr` goes when its verdict failed:
    /// the start of its own object, or for the heap a module sink of [`SINK_BYTES`]
    /// bytes, read-only zeros for loads (a constant, so `ld.global.nc` is kept) and
    /// another for stores (`store`); in `addr`'s address space.
    fn sink(
        &self,
        ir: &Ir<'ctx>,
        r: &Range<'ctx>,
        addr: PointerValue<'ctx>,
        store: bool,
    ) -> PointerValue<'ctx> {
        let base = match r.target {
            Target::Object(_) => r.root,
            Target::Heap => {
                let name = if store { STORE_SINK } else { LOAD_SINK };
                let m = ir.module();
                let g = m.get_global(name).unwrap_or_else(|| {
                    let ty = ir.i8.array_type(SINK_BYTES as u32);
                    let g = m.add_global(ty, Some(space(AS_GLOBAL)), name);
                    g.set_initializer(&ty.const_zero());
                    g.set_constant(!store);
                    g.set_linkage(Linkage::Internal);
                    g.set_alignment(SINK_BYTES as u32);
                    g
                });
                g.as_pointer_value()
            }
        };
        if base.get_type() == addr.get_type() {
            return base;
        }
        let cast =
            ir.b.build_address_space_cast(base, addr.get_type(), "cusafe.sink");
        cast.expect("positioned")
    }

    /// The loop ranges of `e`'s plan, each checked right before its `at` (a loop
    /// preheader's terminator). With `share` (`CUSAFE_PASS_LOOP_SETS`, on by default),
    /// ranges checked before the same instruction share one branch: their verdicts are
    /// built there, the branch takes their or, and the cold path looks at each range
    /// again ([`Self::cold_chain`]), at most [`MAX_LOOP_SET`] ranges to a set. A report
    /// names the access's site. The loop runs either way: recover mode reports each
    /// range that fails and does not skip the loop's accesses.
    pub fn emit_loop_checks(
        &self,
        e: &mut FnEmit<'_, 'ctx>,
        checks: &[LoopCheck<'ctx>],
        share: bool,
    ) {
        let mut sets: Vec<Vec<&LoopCheck<'ctx>>> = Vec::new();
        for lc in checks {
            let joins = |s: &&mut Vec<&LoopCheck<'ctx>>| {
                share && s[0].at == lc.at && s.len() < MAX_LOOP_SET
            };
            match sets.iter_mut().find(joins) {
                Some(set) => set.push(lc),
                None => sets.push(vec![lc]),
            }
        }
        for set in sets {
            self.emit_loop_set(e, &set);
        }
    }

    /// One branch for the loop ranges `set`, all checked before `set[0].at`.
    fn emit_loop_set(&self, e: &mut FnEmit<'_, 'ctx>, set: &[&LoopCheck<'ctx>]) {
        let ir = e.ir;
        let at = set[0].at;
        // The expansions may be the program's own values (a loaded row pointer), which
        // recover-mode phis have replaced since.
        let ranges: Vec<Range<'ctx>> = set
            .iter()
            .map(|lc| {
                let len = match lc.range.len {
                    Len::Value(v) => Len::Value(resolve(e.replaced, v.into()).into_int_value()),
                    l => l,
                };
                Range {
                    root: resolve_ptr(e.replaced, lc.range.root),
                    addr: resolve_ptr(e.replaced, lc.range.addr),
                    len,
                    ..lc.range.clone()
                }
            })
            .collect();
        ir.at(at);
        // No anchor: each root half is built here, not taken from `e`'s. Each verdict's
        // negation joins the or right after it.
        let mut verdicts = Vec::new();
        let mut bad = None;
        for r in &ranges {
            let (v, len) = self.verdict(e, r, None, true);
            let out = ir.not(v.inside);
            bad = Some(bad.map_or(out, |b| ir.or(b, out)));
            verdicts.push((v, len));
        }
        let bad = bad.expect("a set has a range");
        let term = ir.split_if_then(bad, at);
        if let [(v, len)] = verdicts.as_slice() {
            ir.at(term);
            let inst = e.accesses[set[0].access].inst;
            self.cold_call(e, inst, &ranges[0], set[0].range.root, v, *len);
            return;
        }
        // Each range's verdict is exact: the or fails exactly when one of them does.
        let chain = set
            .iter()
            .zip(ranges)
            .map(|(lc, r)| (e.accesses[lc.access].inst, r, lc.range.root, None))
            .collect();
        self.cold_chain(e, term, chain, true);
    }

    /// The verdict on range `r` at the builder's position (the heap root half from
    /// `anchor` when `e` built it there, else built here), and the length as i64. `hot`:
    /// on a fast path (see `heap_verdict`), not in a cold block.
    fn verdict(
        &self,
        e: &FnEmit<'_, 'ctx>,
        r: &Range<'ctx>,
        anchor: Option<Anchor<'ctx>>,
        hot: bool,
    ) -> (Verdict<'ctx>, IntValue<'ctx>) {
        let ir = e.ir;
        let len = match r.len {
            Len::Const(n) => ir.c64(n),
            Len::Value(v) => ir.int_cast(v, ir.i64),
        };
        let v = match &r.target {
            Target::Heap => {
                let part = match anchor.and_then(|a| e.parts.get(&a)) {
                    Some(p) => *p,
                    None => self.root_part(ir, r.root),
                };
                self.heap_verdict(ir, r, len, part, hot)
            }
            Target::Object(o) => self.object_verdict(ir, r, o, len),
        };
        (v, len)
    }

    /// The cold call reporting `v` for the access `inst` of `e`'s function (site text
    /// and flags of `r`, `original_root`: its root before recover-mode phis replaced
    /// loads), at the builder's position, which must be right before its block's
    /// terminator; returns "skip the access", or `None` when the call never returns
    /// (trap-mode builds: the block then ends in `unreachable`).
    fn cold_call(
        &self,
        e: &mut FnEmit<'_, 'ctx>,
        inst: InstructionValue<'ctx>,
        r: &Range<'ctx>,
        original_root: PointerValue<'ctx>,
        v: &Verdict<'ctx>,
        len: IntValue<'ctx>,
    ) -> Option<IntValue<'ctx>> {
        let ir = e.ir;
        let out_of_line = self.cold.out_of_line(r, original_root);
        let text = e.sites.text(ir, e.func, inst, &v.object);
        let mut addr = ir.add(v.root, v.off);
        if v.past != 0 {
            addr = ir.add(addr, ir.c64(v.past));
        }
        let args: [BasicMetadataValueEnum; 5] = [
            addr.into(),
            v.root.into(),
            v.size.into(),
            ir.int_cast(len, ir.i32).into(),
            e.sites.site(ir, r.flags | v.space, text).into(),
        ];
        // Trap-mode calls are indirect: ptxas inlines a direct call of a function
        // and the report's registers then count in every kernel (gemm 30 -> 54 in a
        // one-off ptxas experiment); an indirect call keeps them the callee's own.
        let (ty, callee) = match (out_of_line, self.trap_slot) {
            (true, _) => (self.report_ty, self.slow_fn),
            (false, None) => (self.report_ty, self.fail_fn),
            (false, Some(slot)) => {
                let f = ir.b.build_load(ir.ptr, slot, "cusafe.trap");
                (self.trap_ty, f.expect("positioned").into_pointer_value())
            }
        };
        let call = ir.b.build_indirect_call(ty, callee, &args, "");
        let call = call.expect("positioned");
        let call_inst = crate::ir::call_instruction(call);
        if let Some(loc) = inst.get_debug_location() {
            call_inst.set_debug_location(Some(loc));
        }
        if ty == self.trap_ty {
            let bb = call_inst.get_parent().expect("built in a block");
            bb.get_terminator()
                .expect("a split block ends in a branch")
                .erase_from_basic_block();
            ir.at_end(bb);
            ir.b.build_unreachable().expect("positioned");
            return None;
        }
        let skip = crate::ir::int_result(call);
        Some(ir.icmp(IntPredicate::NE, skip, ir.c32(0)))
    }

    /// Emits the check of range `id` (`r`, its recover-mode phis resolved) before its
    /// access (`original_root`: see `cold_call`); returns the cold block and the value
    /// (computed there) that says whether to skip the access (`None`: the cold block
    /// does not return). A heap check whose cold block does not return leaves its
    /// offset for later checks (`Plan::offsets`): it passed wherever they run.
    fn emit_check(
        &self,
        e: &mut FnEmit<'_, 'ctx>,
        id: RangeId,
        r: &Range<'ctx>,
        original_root: PointerValue<'ctx>,
        anchor: Option<Anchor<'ctx>>,
    ) -> (BasicBlock<'ctx>, Option<IntValue<'ctx>>) {
        let ir = e.ir;
        let inst = id.inst(e.accesses);
        ir.at(inst);
        let (v, len) = self
            .offset_verdict(e, id, r, anchor)
            .unwrap_or_else(|| self.verdict(e, r, anchor, true));
        let term = ir.split_if_then(ir.not(v.inside), inst);
        // The cold block (before the call: a call that never returns erases `term`).
        let bb = term.get_parent().expect("a split block");
        ir.at(term);
        let skip = self.cold_call(e, inst, r, original_root, &v, len);
        if skip.is_none() && v.past == 0 && matches!(r.target, Target::Heap) {
            let part = RootPart {
                start: v.root,
                limit: v.size,
            };
            e.offsets.insert(id, Offset { off: v.off, part });
        }
        (bb, skip)
    }

    /// The verdict on range `id` (`r`) as `Plan::offsets` plans it, at the builder's
    /// position: the dominating check's offset against the bound for `r`'s length plus
    /// the bytes between them (`elim::offset`), when that check was built and `r`'s
    /// root half is its very window (from `anchor`, or a launch-time window); `None`
    /// otherwise (check `r` as usual).
    fn offset_verdict(
        &self,
        e: &FnEmit<'_, 'ctx>,
        id: RangeId,
        r: &Range<'ctx>,
        anchor: Option<Anchor<'ctx>>,
    ) -> Option<(Verdict<'ctx>, IntValue<'ctx>)> {
        let (from, past) = *e.plan.offsets.get(&id)?;
        let a = e.offsets.get(&from)?;
        let part = match anchor.and_then(|a| e.parts.get(&a)) {
            Some(p) => *p,
            None => *self
                .windows
                .get(&crate::classify::strip_pointer_casts(r.root))?,
        };
        let Len::Const(n) = r.len else { return None };
        if (part.start, part.limit) != (a.part.start, a.part.limit) {
            return None;
        }
        let ir = e.ir;
        let bound = self.bound(ir, part.limit, n + past);
        let verdict = Verdict {
            inside: ir.icmp(IntPredicate::ULT, a.off, bound),
            off: a.off,
            past,
            root: part.start,
            size: part.limit,
            space: 0,
            object: String::new(),
        };
        Some((verdict, ir.c64(n)))
    }

    /// Emits the one branch of a batch (`batch`; a single neighbouring group is a batch
    /// of one) before its first access: the or of each unit's verdict, a unit being a
    /// range or a neighbouring group's union `[lo, hi)`. When it fails, the cold path
    /// looks at the units in program order, and at a group's members one by one, and
    /// reports each range that fails, at its own site. Recover mode reports and goes on:
    /// batched accesses are not skipped. The verdicts are built before `verdicts_at`
    /// when given (a loop preheader's terminator: `elim`'s loop-invariant verdicts),
    /// else before the first access; the branch is always at the first access.
    fn emit_batch(
        &self,
        e: &mut FnEmit<'_, 'ctx>,
        units: &[Unit<'ctx>],
        verdicts_at: Option<InstructionValue<'ctx>>,
    ) {
        let (ir, accesses, plan) = (e.ir, e.accesses, e.plan);
        let inst = units[0].id.inst(accesses);
        let at = verdicts_at.unwrap_or(inst);
        // Per unit: its range (the union for a group) and its root half.
        let mut verdicts = Vec::new();
        let mut bad = None;
        // Guards of unions whose offsets assumed an index does not wrap.
        let mut guards = Vec::new();
        for &Unit { id, plan: p } in units {
            ir.at(at);
            let r = id.of(accesses);
            let anchor = p.anchor();
            let (inside, range, group, anchor) = match p {
                CheckPlan::Leader(_, g) => {
                    let group = &plan.groups[g];
                    let shape = group.shape.map(|v| resolve(e.replaced, v));
                    if let Shape::Index(ix) = shape {
                        // One compare of the index against the launch's bounds; the
                        // members are looked at in the cold path, each on its own root.
                        let x = ir.b.build_int_s_extend_or_bit_cast(ix.x, ir.i64, "");
                        let x = x.expect("positioned");
                        let inside = ir.icmp(IntPredicate::ULT, ir.sub(x, ix.lo), ix.span);
                        (inside, r.clone(), Some((group, shape)), None)
                    } else {
                        // The leader's own address, when it is where the union starts
                        // and the batch branches at the leader: the base is not rebuilt.
                        let lo = match shape {
                            Shape::Offsets { lo, .. } => Some(lo),
                            _ => None,
                        };
                        let own = group
                            .members
                            .iter()
                            .find(|&&(m, x)| m == id && Some(x) == lo)
                            .filter(|_| verdicts_at.is_none() && id.inst(accesses) == inst)
                            .map(|_| resolve_ptr(e.replaced, r.addr));
                        let at = |addr, len| Range {
                            addr,
                            root: resolve_ptr(e.replaced, r.root),
                            len,
                            last_byte: false,
                            ..r.clone()
                        };
                        // The ranges whose verdicts, and-ed, stand for the members'.
                        let ranges = match crate::shape::cover(ir, &shape, own) {
                            Cover::Union(addr, len, wraps) => {
                                guards.extend(wraps);
                                vec![at(addr, Len::Const(len))]
                            }
                            Cover::Bytes(bytes, wraps) => {
                                guards.extend(wraps);
                                bytes.map(|addr| at(addr, Len::Const(1))).to_vec()
                            }
                            // Each end as its member's own range (its length, and its
                            // last-byte form when aligned).
                            Cover::Ends(ends) => ends
                                .map(|(x, addr)| {
                                    let end = group.members.iter().find(|&&(_, y)| y == x);
                                    let (m, _) = end.expect("a strided group's ends are members");
                                    Range {
                                        addr,
                                        root: resolve_ptr(e.replaced, r.root),
                                        ..m.of(accesses).clone()
                                    }
                                })
                                .to_vec(),
                        };
                        let inside = ranges
                            .iter()
                            .map(|range| self.verdict(e, range, anchor, true).0.inside)
                            .reduce(|a, b| ir.and(a, b))
                            .expect("a cover has a range");
                        let range = ranges.into_iter().next().expect("a cover has a range");
                        (inside, range, Some((group, shape)), anchor)
                    }
                }
                _ => {
                    let range = Range {
                        addr: resolve_ptr(e.replaced, r.addr),
                        root: resolve_ptr(e.replaced, r.root),
                        ..r.clone()
                    };
                    let (v, _) = self.verdict(e, &range, anchor, true);
                    (v.inside, range, None, anchor)
                }
            };
            bad = Some(match bad {
                Some(b) => ir.or(b, ir.not(inside)),
                None => ir.not(inside),
            });
            verdicts.push((id, range, group, anchor));
        }
        let Some(bad) = bad else { return };
        // Whether the or says exactly that some member fails: no guard (a wrap makes the
        // union fail with every member in bounds) and no index hull (its union can
        // hold addresses no member touches). A plain range is checked again as it is;
        // an offset union runs from its lowest member's start to its highest member's
        // end, and the window is one interval, so when the union does not fit, one of
        // those two members does not; a strided group's two ends are members; an
        // index group's compare
        // fails exactly when some member's does (`launch::index_bounds`).
        let exact = guards.is_empty()
            && units.iter().all(|u| match u.plan {
                CheckPlan::Leader(_, g) => !matches!(plan.groups[g].shape, Shape::Hull(_)),
                _ => true,
            });
        let bad = guards.into_iter().fold(bad, |b, g| ir.or(b, g));
        // Each report block splits off before `term`, which stays the cold chain's last
        // branch (back to the first access).
        let term = ir.split_if_then(bad, inst);
        // The leaves of the members' rebuilt addresses, each passed once through
        // `Ir::opaque` in the cold block, where the first member that needs it is
        // rebuilt (before `term`, so it reaches every later member): the cold path's
        // copies of the address arithmetic then match nothing in the hot path, whose own
        // copies stay after the check instead of being computed before it and carried
        // through phis.
        let opaque: RefCell<HashMap<BasicValueEnum<'ctx>, BasicValueEnum<'ctx>>> =
            RefCell::default();
        let cold_leaf = |v: BasicValueEnum<'ctx>| {
            let v = resolve(e.replaced, v);
            *opaque.borrow_mut().entry(v).or_insert_with(|| ir.opaque(v))
        };
        let mut chain = Vec::new();
        for (id, range, group, anchor) in verdicts {
            // Its root before recover-mode phis replaced loads (see `cold_call`).
            let original_root = id.of(accesses).root;
            // The ranges to look at: the unit's own, or each member of its group. The
            // cold path computes their verdicts again, so the fast path keeps only the or
            // live (one predicate, not one per unit).
            let Some((group, shape)) = group else {
                chain.push((id.inst(accesses), range, original_root, anchor));
                continue;
            };
            // An index group's members each have their own root (its window).
            let own_roots = matches!(shape, Shape::Index(_));
            for (n, &(m, x)) in group.members.iter().enumerate() {
                ir.at(term);
                let addr = match group.exact.get(n) {
                    Some(exact) => exact.build(ir, cold_leaf).into_pointer_value(),
                    None => crate::shape::member(ir, &shape, x)
                        .expect("a group without exact addresses has members by value"),
                };
                let own = m.of(accesses);
                let member = if own_roots {
                    // Compared in the cold block alone: a constant length as a value
                    // (`fits`' general form), so that no bound or last-byte start is
                    // built beside the window, in the fast path, for this compare only.
                    let len = match own.len {
                        Len::Const(n) => Len::Value(ir.c64(n)),
                        l => l,
                    };
                    let root = resolve_ptr(e.replaced, own.root);
                    let r = Range {
                        addr,
                        root,
                        len,
                        last_byte: false,
                        ..own.clone()
                    };
                    (m.inst(accesses), r, own.root, None)
                } else {
                    let r = Range {
                        addr,
                        root: range.root,
                        ..own.clone()
                    };
                    (m.inst(accesses), r, original_root, anchor)
                };
                chain.push(member);
            }
        }
        self.cold_chain(e, term, chain, exact);
    }

    /// The cold path of a shared branch, before `term` (the cold block's terminator):
    /// each member of `chain` (the access that names its site, its range, its root
    /// before recover-mode phis replaced loads, its anchor) is compared again, in
    /// order, and reported when it fails. In trap mode, with an `exact` or and every
    /// report a trap (none out of line, which may return), the chain reaching its last
    /// member means that member fails: its report needs no compare, and the chain never
    /// goes back (no reconvergence around the shared branch).
    fn cold_chain(
        &self,
        e: &mut FnEmit<'_, 'ctx>,
        term: InstructionValue<'ctx>,
        chain: Vec<ChainMember<'ctx>>,
        exact: bool,
    ) {
        let ir = e.ir;
        let last_traps = exact
            && self.trap_slot.is_some()
            && chain
                .iter()
                .all(|(_, r, root, _)| !self.cold.out_of_line(r, *root));
        let n = chain.len();
        for (k, (at, r, original_root, anchor)) in chain.into_iter().enumerate() {
            ir.at(term);
            let (v, len) = self.verdict(e, &r, anchor, false);
            if !(last_traps && k + 1 == n) {
                let report = ir.split_if_then(ir.not(v.inside), term);
                ir.at(report);
            }
            self.cold_call(e, at, &r, original_root, &v, len);
        }
    }

    /// Whether the range `r` at offset `off` fits a window of `size` bytes. A constant
    /// length `len` >= 1 takes one compare, `off <u bound(size, len)`; otherwise
    /// `end <=u size & end >=u len` with `end = off + len` (or a zero run-time length).
    fn fits(
        &self,
        ir: &Ir<'ctx>,
        r: &Range<'ctx>,
        off: IntValue<'ctx>,
        size: IntValue<'ctx>,
        len: IntValue<'ctx>,
    ) -> IntValue<'ctx> {
        use IntPredicate::*;
        if let Len::Const(n @ 1..) = r.len {
            return ir.icmp(ULT, off, self.bound(ir, size, n));
        }
        let end = ir.add(off, len);
        let inside = ir.and(ir.icmp(ULE, end, size), ir.icmp(UGE, end, len));
        match r.len {
            Len::Const(_) => inside,
            Len::Value(_) => ir.or(inside, ir.icmp(EQ, len, ir.c64(0))),
        }
    }

    /// `size - (len - 1)`, or 0 when `size < len - 1`: the offsets below it are those
    /// where `len` bytes fit in `size` (none when the bound is 0, as for a freed block's
    /// zero header or a poisoned root's zero limit). Built once per window and length,
    /// right after the window's size (a constant folds), so a hoisted root half hoists
    /// its bounds too. One byte fits below `size` itself.
    fn bound(&self, ir: &Ir<'ctx>, size: IntValue<'ctx>, len: u64) -> IntValue<'ctx> {
        let ty = size.get_type();
        if len == 1 {
            return size;
        }
        if let Some(n) = size.get_zero_extended_constant() {
            // An object's size: fold.
            return ty.const_int(n.saturating_sub(len - 1), false);
        }
        self.beside(ir, size, (Derived::Bound, len), |at| {
            let k = ty.const_int(len - 1, false);
            let ge = at.build_int_compare(IntPredicate::UGE, size, k, "");
            let rest = at.build_int_sub(size, k, "");
            let b = at.build_select(
                ge.expect("positioned"),
                rest.expect("positioned"),
                ty.const_zero(),
                "cusafe.bound",
            );
            b.expect("positioned").into_int_value()
        })
    }

    /// `start - k` (wrapping), built once per window start and `k`, right after the
    /// start: the start an address is compared against when its last byte is (`k =
    /// len - 1`: an aligned access is compared as `addr - it`, `heap_verdict`), or when
    /// a constant offset of the address is taken off the start instead.
    fn start_less(&self, ir: &Ir<'ctx>, start: IntValue<'ctx>, k: u64) -> IntValue<'ctx> {
        if k == 0 {
            return start;
        }
        self.beside(ir, start, (Derived::StartLess, k), |at| {
            let k = start.get_type().const_int(k, false);
            let v = at.build_int_sub(start, k, "cusafe.start.less");
            v.expect("positioned")
        })
    }

    /// `addr` as `(q, c)`: the integer of `addr` less its constant byte offset `c` from
    /// its base (`base::decompose`: constant GEPs, and the constant of an index
    /// `sext (x +nsw c)`), rebuilt in `addr`'s space at the builder's position, so that
    /// `addr = q + c`; `None` when there is no such offset.
    fn constant_split(
        &self,
        ir: &Ir<'ctx>,
        addr: PointerValue<'ctx>,
    ) -> Option<(IntValue<'ctx>, i64)> {
        // Several terms are summed wide only under a sign extension, as codegen splits
        // `sext (a +nsw b +nsw c)` itself, so that the rebuilt `q` is the same
        // arithmetic as the access's own (a zero-extended sum codegen keeps narrow).
        let as_codegen = |parts: &Parts| {
            parts.base.gep.as_ref().is_none_or(|(_, idx)| {
                idx.iter()
                    .all(|i| i.terms.len() == 1 || matches!(i.ext, Widen::Sign(_)))
            })
        };
        match decompose(ir, addr, false) {
            Some(parts) if parts.off != 0 && as_codegen(&parts) => {
                let q = parts.base.build(ir, 0);
                let q = if q.get_type() == addr.get_type() {
                    q
                } else {
                    let cast = ir.b.build_address_space_cast(q, addr.get_type(), "");
                    cast.expect("positioned")
                };
                Some((ir.to_int(q), parts.off))
            }
            _ => None,
        }
    }

    /// What `make` builds from `v`, built once per key with the auxiliary builder right
    /// after `v`'s definition (an instruction), or at the entry (an argument).
    fn beside(
        &self,
        ir: &Ir<'ctx>,
        v: IntValue<'ctx>,
        (what, len): (Derived, u64),
        make: impl FnOnce(&Builder<'ctx>) -> IntValue<'ctx>,
    ) -> IntValue<'ctx> {
        let key = (v, what, len);
        if let Some(&b) = self.derived.borrow().get(&key) {
            return b;
        }
        let after = match v.as_instruction() {
            Some(def) => def.get_next_instruction(),
            None => {
                let bb = ir.b.get_insert_block().expect("positioned");
                let func = bb.get_parent().expect("a block of a function");
                let entry = func.get_first_basic_block().expect("a body");
                entry.get_first_instruction()
            }
        };
        self.aux
            .position_before(&after.expect("a value is defined before a terminator"));
        let b = make(&self.aux);
        self.derived.borrow_mut().insert(key, b);
        b
    }

    /// The root half of the heap check (docs/pass.md, "Per function"), at the builder's position: the
    /// window the root allows, as two values so that a hoisted root half keeps four
    /// registers live, not eight:
    /// * a tagged block (tag 1..=35): `start` = its payload start, `limit` = its header
    ///   (exact size; 0 for a freed block);
    /// * a poisoned or pseudo root (bits 47..63; never "in range", so its header is not
    ///   loaded, its base would fault): `start` = the root itself (the cold path reads
    ///   its bits), `limit` = 0, so every access goes out of line;
    /// * a foreign pointer: the foreign window (`pointer::FOREIGN_WINDOW`): every real
    ///   address but the null page, so only a null dereference (or a wild pointer with
    ///   high bits) fails; the host names those from the address.
    ///
    /// A kernel parameter with a launch-time window (`crate::launch`) takes it from its
    /// hidden parameters instead: the runtime worked out the same values at launch. A
    /// root that can only be a shared or constant address
    /// ([`crate::classify::never_tagged`]) takes the foreign window as constants.
    fn root_part(&self, ir: &Ir<'ctx>, root: PointerValue<'ctx>) -> RootPart<'ctx> {
        use IntPredicate::*;
        if let Some(w) = self
            .windows
            .get(&crate::classify::strip_pointer_casts(root))
        {
            return *w;
        }
        if crate::classify::never_tagged(root) {
            // A shared or constant address (through phis and selects): no tag, no
            // header; the foreign window, as the computation below would give.
            let (start, limit) = FOREIGN_WINDOW;
            return RootPart {
                start: ir.c64(start),
                limit: ir.c64(limit),
            };
        }
        let ri = ir.to_int(root);
        let t = ir.lshr(ri, ir.c64(TAG_SHIFT.into()));
        let in_range = ir.icmp(
            ULT,
            ir.sub(t, ir.c64(MIN_TAG.into())),
            ir.c64((MAX_TAG - MIN_TAG + 1).into()),
        );
        let block = crate::tile::locate(ir, ri, t);
        let base = block.base;
        // Slotted blocks (format::block): the header is the base's slot in the shared
        // header granule, the payload a granule in.
        let slotted = ir.icmp(UGE, t, ir.c64(FIRST_SLOTTED_CLASS.into()));
        let slot_bits = HEADER_BYTES.trailing_zeros();
        let slot = ir.and(
            ir.lshr(base, ir.c64((SLOT_SHIFT - slot_bits).into())),
            ir.c64((HEADER_SLOTS - 1) << slot_bits),
        );
        let pow2_at = ir.select(slotted, ir.or(base, slot), base);
        let pow2_start = ir.add(base, ir.select(slotted, ir.c64(GRANULE), ir.c64(PREFIX)));
        // Packed blocks (format::packed): the header right below the payload.
        let packed_at = ir.sub(block.payload, ir.c64(HEADER_BYTES));
        let at = ir.select(block.packed, packed_at, pow2_at);
        let block_start = ir.select(block.packed, block.payload, pow2_start);
        let no_hdr = self.no_header.const_to_int(ir.i64);
        let hdr_addr = ir.select(in_range, at, no_hdr);
        let hdr_ptr = ir.b.build_int_to_ptr(hdr_addr, ir.gptr, "cusafe.hdr");
        let hdr_ptr = hdr_ptr.expect("positioned");
        let size = ir.b.build_load(ir.i64, hdr_ptr, "cusafe.size");
        let size = size.expect("positioned").into_int_value();
        let load = size.as_instruction().expect("a load");
        load.set_alignment(8).expect("a load takes an alignment");
        let tagged = ir.icmp(UGE, ri, ir.c64(1 << PSEUDO_BIT));
        let (foreign_start, foreign_limit) = FOREIGN_WINDOW;
        let other_start = ir.select(tagged, ri, ir.c64(foreign_start));
        let other_limit = ir.select(tagged, ir.c64(0), ir.c64(foreign_limit));
        RootPart {
            start: ir.select(in_range, block_start, other_start),
            limit: ir.select(in_range, size, other_limit),
        }
    }

    /// The address half of the heap check: the range must fit in the root half's window.
    ///
    /// On a fast path (`hot`), `addr - start` is built as `q - (start - c)` where `addr`
    /// is `q + c` and `start` needs no instruction (a launch-time window's parameter, or
    /// a constant): the start less `c` is one more uniform value, and the address `q + c`
    /// is left to the access, which folds `c` into its own immediate offset. A cold
    /// block compares `addr` itself (a start less `c` for it would be built at the
    /// window, on the fast path).
    fn heap_verdict(
        &self,
        ir: &Ir<'ctx>,
        r: &Range<'ctx>,
        len: IntValue<'ctx>,
        p: RootPart<'ctx>,
        hot: bool,
    ) -> Verdict<'ctx> {
        let ai = ir.to_int(r.addr);
        let off = ir.sub(ai, p.start);
        let split = match p.start.as_instruction() {
            None if hot => self.constant_split(ir, r.addr),
            _ => None,
        };
        let (q, c) = split.unwrap_or((ai, 0));
        let inside = match r.len {
            // An access aligned to its power-of-two length (`launch::fits_aligned`,
            // docs/formats.md, "The check"): its last byte in the window, one compare
            // against the limit itself, no bound to build.
            // With the fold: `addr - (start - (n - 1)) = q - (start - (n - 1 + c))`.
            Len::Const(n) if r.last_byte => {
                let k = (n - 1).wrapping_add(c as u64);
                let last = ir.sub(q, self.start_less(ir, p.start, k));
                ir.icmp(IntPredicate::ULT, last, p.limit)
            }
            // With the fold: `addr - start = q - (start - c)`.
            _ => {
                let at = match c {
                    0 => off,
                    _ => ir.sub(q, self.start_less(ir, p.start, c as u64)),
                };
                self.fits(ir, r, at, p.limit, len)
            }
        };
        Verdict {
            inside,
            off,
            past: 0,
            root: p.start,
            size: p.limit,
            space: 0,
            object: String::new(),
        }
    }

    /// The static fast path: bounds of an object known at compile time, no header.
    fn object_verdict(
        &self,
        ir: &Ir<'ctx>,
        r: &Range<'ctx>,
        o: &Object,
        len: IntValue<'ctx>,
    ) -> Verdict<'ctx> {
        // Compare in the address space of the access.
        let root = if addr_space(r.root) == addr_space(r.addr) {
            r.root
        } else {
            let cast = ir.b.build_address_space_cast(r.root, r.addr.get_type(), "");
            cast.expect("positioned")
        };
        let bi = ir.to_int(root);
        let size = match o.size {
            ObjSize::Const(n) => ir.c64(n),
            ObjSize::DynamicShared => ir.int_cast(self.dynamic_smem_size(ir), ir.i64),
        };
        let off = crate::base::offset_from(ir, r.root, r.addr)
            .unwrap_or_else(|| ir.sub(ir.to_int(r.addr), bi));
        let inside = self.fits(ir, r, off, size, len);
        Verdict {
            inside,
            off,
            past: 0,
            root: bi,
            size,
            space: o.space,
            object: o.name.clone(),
        }
    }

    /// `%dynamic_smem_size`: the dynamic shared memory this launch was given.
    fn dynamic_smem_size(&self, ir: &Ir<'ctx>) -> IntValue<'ctx> {
        let asm = "mov.u32 $0, %dynamic_smem_size;";
        ir.asm(ir.i32, asm, "=r", &[], "cusafe.dynsmem")
    }
}

/// What a check computed: whether the access fits and what the cold call passes.
struct Verdict<'ctx> {
    /// Whether the access fits. A check branches on its negation, built right where it
    /// branches; a deferred check with a sink selects on it and its flush branches on
    /// the and of its members' (one compare each: with a negation beside it in the
    /// block, codegen made a second, inverted compare for the select); a predicated one
    /// branches on its negation instead (`Deferred::bad`).
    inside: IntValue<'ctx>,
    /// The access's address minus `root`, in bytes (i64). The cold call passes `root +
    /// off`, built in the cold block: the address itself is not kept live for the
    /// report (a shared array's generic address, which `cvta` makes, once held six
    /// 64-bit registers across hotspot's loop).
    off: IntValue<'ctx>,
    /// How many bytes past `root + off` the access starts (a check on a dominating
    /// check's offset, [`Checker::offset_verdict`]; else 0).
    past: u64,
    /// The window's start (heap) or the object's address, as i64.
    root: IntValue<'ctx>,
    /// The size the access was compared against (header word or object size).
    size: IntValue<'ctx>,
    space: u32,
    object: String,
}
