//! Per-function instrumentation counts and the stats line (`CUSAFE_PASS_STATS=1`).

use crate::collect::{Access, Found, Target};
use crate::elim::plan::{CheckPlan, Plan};
use cusafe_format::report::{ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE};

/// What the pass did to one function.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Checked load ranges.
    pub loads: u32,
    /// Checked store ranges.
    pub stores: u32,
    /// Checked atomic ranges.
    pub atomics: u32,
    /// Checked memory-intrinsic ranges.
    pub ranges: u32,
    /// GEPs given the pointer-arithmetic rule.
    pub arith: u32,
    /// Of the checks, those against statically known objects (no header load).
    pub objects: u32,
    /// Accesses proven in bounds at compile time (no check).
    pub proven: u32,
    /// Accesses with nothing to check against (constant addresses, unknown sizes).
    pub unknown: u32,
    /// Pointer-taking intrinsics left unchecked.
    pub unknown_intrinsics: u32,
    /// Ranges left unchecked because a dominating check covers them (recurring).
    pub removed: u32,
    /// Heap checks whose header load moved to a loop preheader.
    pub hoisted: u32,
    /// Heap checks reusing a dominating check's header load in place.
    pub shared: u32,
    /// Ranges covered by a neighbouring group's one check.
    pub merged: u32,
    /// Of those, ranges covered by an index group's one compare (`elim::index`).
    pub indexed: u32,
    /// Ranges checked once per loop, in its preheader (counted in the checks, not in
    /// the loop).
    pub loop_ranges: u32,
    /// Checks sharing the branch of an earlier check in their block (batches).
    pub batched: u32,
    /// Branches whose verdicts are built in a loop preheader (loop-invariant inputs).
    pub invariant: u32,
    /// Checks whose branch is deferred to a flush later in their block (`elim::defer`).
    pub deferred: u32,
    /// Of those, checks of loads under a branch built at that branch (`lift`).
    pub lifted: u32,
    /// Checks comparing a dominating check's offset (`elim::offset`).
    pub offsets: u32,
    /// Device coverage points (blocks storing their edge's byte, `CUSAFE_PASS_COVERAGE`).
    pub coverage: u32,
}

impl Stats {
    /// Counts what collection found and what the plan kept (checks emitted exclude the
    /// ranges the plan removed).
    pub fn of(found: &Found, arith: usize, plan: &Plan) -> Stats {
        let mut s = Stats {
            arith: arith as u32,
            removed: plan.removed,
            hoisted: plan.hoisted,
            shared: plan.shared,
            merged: plan.merged,
            indexed: plan.indexed,
            loop_ranges: plan.loop_checks.len() as u32,
            batched: plan.batched,
            invariant: plan.verdicts_at.len() as u32,
            deferred: plan.deferred.len() as u32,
            lifted: plan.lifted.len() as u32,
            offsets: plan.offsets.len() as u32,
            proven: found.proven + plan.proven,
            unknown: found.unknown,
            unknown_intrinsics: found.unknown_intrinsics,
            ..Stats::default()
        };
        let kept = found
            .accesses
            .iter()
            .zip(&plan.plans)
            .flat_map(|(a, p): (&Access, _)| {
                a.ranges
                    .iter()
                    .zip(p)
                    .filter(|(_, p)| !matches!(p, CheckPlan::Covered | CheckPlan::Member))
                    .map(|(r, _)| r)
            });
        for r in kept {
            if let Target::Object(_) = r.target {
                s.objects += 1;
            }
            let slot = if r.flags & ACCESS_RANGE != 0 {
                &mut s.ranges
            } else if r.flags & ACCESS_ATOMIC != 0 {
                &mut s.atomics
            } else if r.flags & ACCESS_WRITE != 0 {
                &mut s.stores
            } else {
                &mut s.loads
            };
            *slot += 1;
        }
        s
    }

    /// Checks emitted.
    pub fn checks(&self) -> u32 {
        self.loads + self.stores + self.atomics + self.ranges + self.loop_ranges
    }

    /// The stats line for function `name` (`kind` is "kernel" or "device function").
    pub fn line(&self, kind: &str, name: &str) -> String {
        format!(
            "cusafe: {kind} {name}: {} checks ({} loads, {} stores, {} atomics, {} ranges; {} against known objects), {} arithmetic rules, {} proven in bounds, {} removed (dominated), {} merged (neighbouring), {} of them by index (one compare for several parameters), {} loop ranges (one check per loop, in the preheader), {} batched (sharing a branch), {} hoisted (loop header loads), {} header loads shared, {} unchecked (constant address or unknown size), {} intrinsic accesses unchecked, {} loop-invariant verdicts (built in a preheader), {} deferred (branch later in the block), {} of them lifted (checked at their if's branch), {} off a dominating check's offset, {} coverage points",
            self.checks(), self.loads, self.stores, self.atomics, self.ranges, self.objects, self.arith, self.proven, self.removed, self.merged, self.indexed, self.loop_ranges, self.batched, self.hoisted, self.shared, self.unknown, self.unknown_intrinsics, self.invariant, self.deferred, self.lifted, self.offsets, self.coverage
        )
    }
}
