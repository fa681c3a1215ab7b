//! The plan check elimination hands the emitter (`check.rs`): per range what to do, and
//! the groups, batches, loop checks and hoisted verdicts that say how. Types only: the
//! planner (`elim`) and its steps build it, `check.rs` and `shape.rs` turn it into IR.

use crate::base::{Base, Guard};
use crate::collect::{Access, Range};
use crate::remat::Remat;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, InstructionValue, IntValue, PointerValue};
use std::collections::{HashMap, HashSet};

/// One range of one access: `accesses[access].ranges[range]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RangeId {
    /// Index into the accesses.
    pub access: usize,
    /// Index into that access's ranges.
    pub range: usize,
}

impl RangeId {
    /// The ranges of `accesses[access]`, each with its id.
    pub fn all<'a, 'ctx>(
        access: usize,
        acc: &'a Access<'ctx>,
    ) -> impl Iterator<Item = (RangeId, &'a Range<'ctx>)> {
        acc.ranges
            .iter()
            .enumerate()
            .map(move |(range, r)| (RangeId { access, range }, r))
    }

    /// The range this names.
    pub fn of<'a, 'ctx>(self, accesses: &'a [Access<'ctx>]) -> &'a Range<'ctx> {
        &accesses[self.access].ranges[self.range]
    }

    /// The access whose range this is.
    pub fn inst<'ctx>(self, accesses: &[Access<'ctx>]) -> InstructionValue<'ctx> {
        accesses[self.access].inst
    }
}

/// Where the root half of a heap check is computed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Anchor<'ctx> {
    /// The root (as collected).
    pub root: PointerValue<'ctx>,
    /// Built right before this instruction: a preheader's terminator or the first
    /// access that checks this root.
    pub before: InstructionValue<'ctx>,
    /// Whether `before` is a loop preheader's terminator.
    pub hoisted: bool,
}

/// What to do with one range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckPlan<'ctx> {
    /// Check it; heap checks take their root half from the anchor.
    Check(Option<Anchor<'ctx>>),
    /// Check the union of a group of neighbouring ranges here (the group's first).
    Leader(Option<Anchor<'ctx>>, usize),
    /// A later member of a group: its leader's check covers it.
    Member,
    /// A dominating check already covers it.
    Covered,
    /// One of the checks of a batch (`plan.batches[..]`), emitted with the batch's first.
    Batched(usize),
}

impl<'ctx> CheckPlan<'ctx> {
    /// The anchor a `Check` or `Leader` plan takes its root half from.
    pub fn anchor(self) -> Option<Anchor<'ctx>> {
        match self {
            CheckPlan::Check(a) | CheckPlan::Leader(a, _) => a,
            _ => None,
        }
    }
}

/// How the members of a group lie.
#[derive(Debug)]
pub enum Shape<'ctx> {
    /// Constant byte offsets from one base (a member's value is its offset); the union
    /// is `[base + lo, base + hi)`.
    Offsets {
        /// The common base.
        base: Base<'ctx>,
        /// The union's start, in bytes from the base.
        lo: i64,
        /// The union's end.
        hi: i64,
        /// What must hold for the offsets to be the members' real ones, when some were
        /// split under an assumption ([`crate::base::Assumed`]): the union's check
        /// fails when it does not (the cold path then looks at the real addresses).
        guard: Option<Guard<'ctx>>,
    },
    /// Multiples of one run-time stride (a member's value is its multiple; `stride`).
    Strided(Stride<'ctx>),
    /// Bases at run-time indices (`hull`); every member has its exact address.
    Hull(Hull<'ctx>),
    /// Members through different kernel parameters at one index (`index`), checked as
    /// `x - lo <u span` on the launch's bounds; every member has its exact address.
    Index(IndexShape<'ctx>),
}

/// An index group's check (`index`): the index and the launch's bounds of its members.
#[derive(Clone, Copy, Debug)]
pub struct IndexShape<'ctx> {
    /// The members' index (the GEPs' own, sign-extended to i64 at the check).
    pub x: IntValue<'ctx>,
    /// The least index every member allows (a hidden kernel parameter, i64).
    pub lo: IntValue<'ctx>,
    /// How many indices from `lo` on every member allows (a hidden kernel parameter).
    pub span: IntValue<'ctx>,
}

impl<'ctx> Shape<'ctx> {
    /// Values the group's addresses are built from (each must be available where the
    /// group's check is built).
    pub fn leaves(&self) -> Vec<BasicValueEnum<'ctx>> {
        match self {
            Shape::Offsets { base, guard, .. } => {
                let mut out = base.leaves();
                out.extend(guard.map(|g| BasicValueEnum::from(g.x)));
                out
            }
            Shape::Strided(s) => s.leaves().to_vec(),
            Shape::Hull(h) => h.leaves(),
            Shape::Index(ix) => vec![ix.x.into()],
        }
    }

    /// The same shape with every value passed through `f` (e.g. recover-mode phis).
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Shape<'ctx> {
        match self {
            Shape::Offsets {
                base,
                lo,
                hi,
                guard,
            } => Shape::Offsets {
                guard: guard.map(|g| g.map(&f)),
                base: base.map(f),
                lo: *lo,
                hi: *hi,
            },
            Shape::Strided(s) => Shape::Strided(s.map(f)),
            Shape::Hull(h) => Shape::Hull(h.map(f)),
            Shape::Index(ix) => Shape::Index(IndexShape {
                x: f(ix.x.into()).into_int_value(),
                ..*ix
            }),
        }
    }
}

/// The shape of a strided group (`stride`): members at `ptr + m * stride + off`, `m`
/// from `lo` to `hi`, each `len` bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stride<'ctx> {
    /// The pointer the members share.
    pub ptr: PointerValue<'ctx>,
    /// The run-time stride (i64, extended from 32 bits or fewer).
    pub stride: IntValue<'ctx>,
    /// Constant bytes on top of every member.
    pub off: i64,
    /// Bytes each member touches.
    pub len: u64,
    /// The least multiple.
    pub lo: i64,
    /// The greatest multiple.
    pub hi: i64,
}

impl<'ctx> Stride<'ctx> {
    /// Values the group's addresses are built from.
    pub fn leaves(&self) -> [BasicValueEnum<'ctx>; 2] {
        [self.ptr.into(), self.stride.into()]
    }

    /// The same group with its values passed through `f`.
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Stride<'ctx> {
        Stride {
            ptr: f(self.ptr.into()).into_pointer_value(),
            stride: f(self.stride.into()).into_int_value(),
            ..*self
        }
    }
}

/// Where an index hull's members lie (`hull`): rows `gep elem, ptr, sext x_r`, each
/// member between `lo` and `hi` bytes around its row.
#[derive(Clone, Debug)]
pub struct Hull<'ctx> {
    /// The pointer the members' bases index.
    pub ptr: PointerValue<'ctx>,
    /// The bases' GEP source element type.
    pub elem: BasicTypeEnum<'ctx>,
    /// The distinct indices `x_r`, each rebuilt at the check.
    pub xs: Vec<Remat<'ctx>>,
    /// Least byte offset of a member around its base.
    pub lo: i64,
    /// Greatest end of a member around its base.
    pub hi: i64,
    /// The least and greatest constants some member's split assumed do not wrap when
    /// added to its index (`None`: no member assumed anything).
    pub wrap: Option<(i64, i64)>,
}

impl<'ctx> Hull<'ctx> {
    /// The same hull with its values passed through `f` (the phis that replace checked
    /// loads' uses).
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Hull<'ctx> {
        Hull {
            ptr: f(self.ptr.into()).into_pointer_value(),
            xs: self.xs.iter().map(|r| r.map(&f)).collect(),
            ..self.clone()
        }
    }

    /// Values the hull's check is built from.
    pub fn leaves(&self) -> Vec<BasicValueEnum<'ctx>> {
        let mut out = vec![self.ptr.into()];
        out.extend(self.xs.iter().flat_map(Remat::leaves));
        out
    }
}

/// Neighbouring ranges checked as one.
#[derive(Debug)]
pub struct Group<'ctx> {
    /// Where the members lie.
    pub shape: Shape<'ctx>,
    /// Members with their value in the shape, in program order.
    pub members: Vec<(RangeId, i64)>,
    /// For a guarded shape, how to build each member's real address before the group's
    /// first access (its cold path checks those); empty otherwise.
    pub exact: Vec<Remat<'ctx>>,
}

impl<'ctx> Group<'ctx> {
    /// Values the group's check and cold path are built from (each must be available
    /// where the check is).
    pub fn leaves(&self) -> Vec<BasicValueEnum<'ctx>> {
        let mut out = self.shape.leaves();
        out.extend(self.exact.iter().flat_map(Remat::leaves));
        out
    }
}

/// The check of the range an access covers over all trips of its loop.
#[derive(Debug)]
pub struct LoopCheck<'ctx> {
    /// The access (index into the accesses): its site names the report.
    pub access: usize,
    /// The whole range: from the lowest address, a run-time length, `ACCESS_RANGE` set.
    pub range: Range<'ctx>,
    /// Emitted right before this instruction (the loop preheader's terminator).
    pub at: InstructionValue<'ctx>,
}

/// One check of a batch: a range and its plan before batching (a `Check` or a
/// neighbouring group's `Leader`).
#[derive(Clone, Copy, Debug)]
pub struct Unit<'ctx> {
    /// The range.
    pub id: RangeId,
    /// Its plan before batching.
    pub plan: CheckPlan<'ctx>,
}

/// Checks of one block that share one branch (`batch`).
#[derive(Debug)]
pub struct Batch<'ctx> {
    /// The checks, in program order.
    pub units: Vec<Unit<'ctx>>,
}

/// The plan for a function: per access (in the order given), per range.
#[derive(Debug, Default)]
pub struct Plan<'ctx> {
    /// Indices into the accesses, in the order to instrument them (dominators first).
    pub order: Vec<usize>,
    /// `plans[access][range]`.
    pub plans: Vec<Vec<CheckPlan<'ctx>>>,
    /// Ranges not checked (recurring).
    pub removed: u32,
    /// Ranges proven in bounds by value intervals (not checked).
    pub proven: u32,
    /// Heap checks whose root half is in a loop preheader.
    pub hoisted: u32,
    /// Heap checks reusing a dominating check's root half (header load) in place.
    pub shared: u32,
    /// Groups of neighbouring ranges.
    pub groups: Vec<Group<'ctx>>,
    /// Ranges covered by a group's check (members after the first).
    pub merged: u32,
    /// Of those, ranges covered by an index group's compare (`index`).
    pub indexed: u32,
    /// Ranges checked once for their whole loop, in its preheader.
    pub loop_checks: Vec<LoopCheck<'ctx>>,
    /// Checks of one block sharing one branch (`batch`).
    pub batches: Vec<Batch<'ctx>>,
    /// Branches saved by batches (checks after each batch's first).
    pub batched: u32,
    /// Where the verdicts of loop-invariant checks are built (a preheader's
    /// terminator), by the range that emits them: a batch's first unit, or a check or
    /// group leader of its own.
    pub verdicts_at: HashMap<RangeId, InstructionValue<'ctx>>,
    /// Checks whose branch is deferred (`defer`): their access goes to a sink when the
    /// verdict fails, and a later flush branches to the report.
    pub deferred: HashSet<RangeId>,
    /// Where the deferred checks branch, in program order.
    pub flushes: Vec<Flush<'ctx>>,
    /// Ranges with no check of their own that a pending deferred check covers (same
    /// root and address): each goes to a sink on that check's verdict too, so it never
    /// reaches the real address before the flush (`defer`). By the covered range.
    pub riders: HashMap<RangeId, RangeId>,
    /// The deferred checks whose access (and its riders') is skipped where the verdict
    /// failed, behind a branch around it that ptxas turns into a predicated load or
    /// store; the others' go to a sink. The members of flushes with two or more
    /// members (`CUSAFE_PASS_PREDICATE`, `defer::predicated`).
    pub predicated: HashSet<RangeId>,
    /// Deferred checks of loads under a branch, built at that branch (`lift`): by the
    /// load's range. Always predicated.
    pub lifted: HashMap<RangeId, Lifted<'ctx>>,
    /// Checks that compare a dominating check's offset instead of their own (`offset`):
    /// by the range, the dominating range and how many bytes past its address the
    /// range starts.
    pub offsets: HashMap<RangeId, (RangeId, u64)>,
}

/// Where a lifted check (`lift`) is built: right before the conditional branch whose one
/// side makes its load; the branch then goes to the load only where the check held.
#[derive(Clone, Copy, Debug)]
pub struct Lifted<'ctx> {
    /// The branch.
    pub branch: InstructionValue<'ctx>,
    /// Whether the load's side is the one where the branch's condition holds.
    pub on_true: bool,
}

/// One branch for deferred checks (`defer`): the or of their verdicts, taken right
/// before `before` (the next call that may stop the thread, the next check that
/// branches, or the block's terminator); its cold path reports the first member that
/// failed, in program order.
#[derive(Debug, Clone)]
pub struct Flush<'ctx> {
    /// The instruction the branch goes before.
    pub before: InstructionValue<'ctx>,
    /// Whether `before` is an access whose own checks are emitted with it (the flush
    /// then goes before them).
    pub at_access: bool,
    /// The deferred checks, in program order.
    pub members: Vec<RangeId>,
}

impl<'ctx> Plan<'ctx> {
    /// The plan of range `id`.
    pub fn of(&self, id: RangeId) -> CheckPlan<'ctx> {
        self.plans[id.access][id.range]
    }

    /// The checks range `id` emits at its own access, each a batch: a batch's first range
    /// emits the whole batch, a single check or a neighbouring group's leader is its own;
    /// `None` for a range that emits nothing there (a group member, a covered range, a
    /// batch's later unit).
    pub fn emitted_at(&self, id: RangeId) -> Option<Vec<Unit<'ctx>>> {
        match self.of(id) {
            CheckPlan::Batched(b) => {
                let units = &self.batches[b].units;
                (units[0].id == id).then(|| units.clone())
            }
            p @ (CheckPlan::Check(_) | CheckPlan::Leader(..)) => Some(vec![Unit { id, plan: p }]),
            CheckPlan::Member | CheckPlan::Covered => None,
        }
    }

    /// Sets the plan of range `id`.
    pub fn set(&mut self, id: RangeId, p: CheckPlan<'ctx>) {
        self.plans[id.access][id.range] = p;
    }

    /// Records a group (two or more members, in program order; `exact` as in
    /// [`Group`]): its first member's check becomes the group's (`Leader`), the others
    /// are covered (`Member`).
    pub fn add_group(
        &mut self,
        shape: Shape<'ctx>,
        members: Vec<(RangeId, i64)>,
        exact: Vec<Remat<'ctx>>,
    ) {
        let id = self.groups.len();
        for (n, &(m, _)) in members.iter().enumerate() {
            let p = match (n, self.of(m)) {
                (0, CheckPlan::Check(a) | CheckPlan::Leader(a, _)) => CheckPlan::Leader(a, id),
                _ => CheckPlan::Member,
            };
            self.set(m, p);
        }
        self.merged += members.len() as u32 - 1;
        self.groups.push(Group {
            shape,
            members,
            exact,
        });
    }

    /// Forgets the root half the check of range `id` (at `inst`) used, when that check
    /// goes away: the hoisted and shared counts drop with it.
    pub fn drop_anchor(&mut self, id: RangeId, inst: InstructionValue<'ctx>) {
        if let CheckPlan::Check(Some(a)) | CheckPlan::Leader(Some(a), _) = self.of(id) {
            if a.hoisted {
                self.hoisted -= 1;
            } else if a.before != inst {
                self.shared -= 1;
            }
        }
    }
}
