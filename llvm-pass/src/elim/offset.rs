//! Checks off a dominating check's offset (trap-mode builds): a range `B` at a constant
//! `k >= 0` bytes past a range `A` of the same root and base, where `A`'s own check
//! branches right at `A`'s access and that access dominates `B`'s, is checked as
//! `off_A <u bound(size, len_B + k)` on `A`'s `off_A = addr_A - start` instead of
//! building `addr_B - start`. bptree's level step
//! `keys[t] <= k && keys[t + 1] > k ? indices[t] : -1`: the conditional `keys[t + 1]`
//! and `indices[t]` are checked on `keys[t]`'s offset, one 64-bit compare against a
//! bound built once per window, instead of an add, a subtraction and the compare.
//!
//! Sound because `A`'s check passed wherever `B` runs: in a trap-mode build a failing
//! check stops the thread at its branch, and that branch is right before `A`'s access,
//! which dominates `B`'s. So `off_A <u size` and `off_A + k` does not wrap (a window is
//! far below 2^63 bytes), and `off_A + k + len_B <= size` iff
//! `off_A <u bound(size, len_B + k)`: the compare fails exactly when `B` does not fit,
//! and the cold path reports `B` at its own address. The emitter takes the offset only
//! when `B`'s root half is `A`'s very values (`check.rs`); otherwise `B` is checked as
//! usual. Only a `B` inside a loop takes an offset (see `form`).

use super::plan::{CheckPlan, Plan, RangeId};
use crate::base::{decompose, strip_constant_geps, Parts};
use crate::collect::{Access, Len, Target};
use crate::dom::Cfg;
use crate::ir::Ir;

/// The most bytes `B` may lie past `A` (far below any window's distance to 2^64).
const MAX_PAST: i64 = 1 << 30;

/// A check whose offset later checks may use: its range, base and byte offset.
struct Source<'ctx> {
    id: RangeId,
    base: crate::base::Base<'ctx>,
    off: i64,
}

/// `r`'s address as a base and a byte offset, with the constant GEPs under the base's
/// GEP taken into the offset too (`indices[t]` is `gep [257 x i32], (gep i8, nd,
/// 1028), 0, t` beside `keys[t]`'s `gep [257 x i32], nd, 0, t`). Only compared, never
/// rebuilt: the two addresses differ by the offsets' difference either way.
fn split<'ctx>(ir: &Ir, r: &crate::collect::Range<'ctx>) -> Option<Parts<'ctx>> {
    let mut parts = decompose(ir, r.addr, false)?;
    if parts.base.gep.is_some() {
        let (ptr, under) = strip_constant_geps(ir, parts.base.ptr)?;
        parts.base.ptr = ptr;
        parts.off = parts.off.checked_add(under)?;
    }
    Some(parts)
}

/// Records in `plan.offsets` the checks that can take a dominating check's offset (see
/// the module doc). Run last, once deferred, lifted and loop-invariant verdicts are
/// known: `A` must branch at its access, `B` be built at its own.
pub fn form<'ctx>(ir: &Ir, cfg: &Cfg<'ctx>, accesses: &[Access<'ctx>], plan: &mut Plan<'ctx>) {
    let plain = |plan: &Plan, id: RangeId| {
        matches!(plan.of(id), CheckPlan::Check(_))
            && !plan.verdicts_at.contains_key(&id)
            && !plan.lifted.contains_key(&id)
    };
    let mut sources: Vec<Source> = Vec::new();
    for &i in &plan.order.clone() {
        for (id, r) in RangeId::all(i, &accesses[i]) {
            if !plain(plan, id) || !matches!(r.target, Target::Heap) {
                continue;
            }
            let Len::Const(len) = r.len else { continue };
            let Some(parts) = split(ir, r) else { continue };
            let inst = accesses[i].inst;
            // Only inside a loop: outside one the compare saves two instructions once,
            // and keeping `A`'s offset live changed lavamd's hot loop's schedule
            // (113 -> 118 instructions, 0.996x -> 1.025x on an H200).
            let in_loop = cfg
                .block_of(inst)
                .is_some_and(|b| cfg.loops_of(b).next().is_some());
            let from = sources.iter().filter(|_| in_loop).find_map(|s| {
                let a = s.id.of(accesses);
                let k = parts.off - s.off;
                let dominates = s.id.access != i && cfg.dominates(s.id.inst(accesses), inst);
                (dominates
                    && a.root == r.root
                    && s.base == parts.base
                    && (0..MAX_PAST).contains(&k))
                .then_some((s.id, k as u64))
            });
            if let Some((a, k)) = from.filter(|_| len > 0) {
                plan.offsets.insert(id, (a, k));
            } else if !plan.deferred.contains(&id) {
                sources.push(Source {
                    id,
                    base: parts.base,
                    off: parts.off,
                });
            }
        }
    }
}
