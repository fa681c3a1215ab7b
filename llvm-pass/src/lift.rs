//! Lifted checks (docs/pass.md, "Lifted checks"): the check of a load that one side of
//! an `if` makes is built at the `if`'s branch, which then goes to the load only where
//! the check held.
//!
//! A tiled kernel loads its tiles through bounds tests, `As[ty][tx] = (i < n && k < m) ?
//! A[i * m + k] : 0`, which the optimizer leaves as *triangles*: a head block branches
//! either to a block that makes the one load or straight to the join, where a phi picks
//! the load's value or the other. ptxas turns each triangle into a predicated load and
//! issues a tile's loads back to back. A check with its own branch inside the triangle
//! stops that: every load then waits for the one before it (gemm's two tile loads, one
//! memory latency each per tile, 1.10x on an H100).
//!
//! Two steps make the checked triangle look like the plain one:
//! * before the accesses are collected, [`speculate`] moves the pure arithmetic of each
//!   triangle's load block (the address) to the end of its head, so the address is there
//!   before the branch (LLVM's own speculation leaves it where it is);
//! * the planner (`elim::defer`) defers the load's check and builds its verdict at the
//!   head's branch, and the emitter (`check.rs`) makes the branch go to the load only
//!   where the old condition held and the verdict did. The failed verdict, and-ed with
//!   the old condition, joins the block's pending deferred checks, which flow on into
//!   the join (no flush between the triangle and the next), and the flush's cold path
//!   reports the load at its own line when it would have run and failed.
//!
//! The verdict is built from the speculated address, which may be poison where the
//! program would not load (an `nsw` index that wraps off the taken side): every value a
//! branch or report reads is a `select` on the old condition, never the bare verdict.

use crate::ir::{Ir, AS_GENERIC, AS_GLOBAL};
use crate::remat::pure_value;
use crate::sys::{addr_space, operand, successors};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{FunctionValue, InstructionOpcode, InstructionValue};
use std::collections::HashMap;

/// The most pure instructions moved out of one load block.
const MAX_MOVED: usize = 16;

/// What a conditional branch heads when it runs one block or skips it: `head: br c, then,
/// join` (or `br c, join, then`), `then: ...; br join`, `then` entered from the head only.
#[derive(Clone, Copy, Debug)]
pub struct Triangle<'ctx> {
    /// The block one side runs.
    pub then: BasicBlock<'ctx>,
    /// Where the two sides meet.
    pub join: BasicBlock<'ctx>,
    /// Whether `then` runs where the branch's condition holds.
    pub on_true: bool,
}

/// How many branches lead into each block of `f`.
pub fn predecessors<'ctx>(f: FunctionValue<'ctx>) -> HashMap<BasicBlock<'ctx>, usize> {
    let mut out = HashMap::new();
    for bb in f.get_basic_blocks() {
        if let Some(term) = bb.get_terminator() {
            for s in successors(term) {
                *out.entry(s).or_insert(0) += 1;
            }
        }
    }
    out
}

/// The triangle whose head ends in `branch`, if it heads one (`preds` from
/// [`predecessors`]): the run block has this branch as its only way in and goes on
/// unconditionally to the other successor, the join, which only the two enter.
pub fn triangle<'ctx>(
    branch: InstructionValue<'ctx>,
    preds: &HashMap<BasicBlock<'ctx>, usize>,
) -> Option<Triangle<'ctx>> {
    if branch.get_opcode() != InstructionOpcode::Br {
        return None;
    }
    let head = branch.get_parent()?;
    // A conditional branch has two successors, true first.
    let succ = successors(branch);
    let [t, f] = succ.as_slice() else {
        return None;
    };
    let count = |b: &BasicBlock<'ctx>| preds.get(b).copied().unwrap_or(0);
    [(*t, *f, true), (*f, *t, false)]
        .into_iter()
        .find(|&(then, join, _)| {
            let goes_on = then.get_terminator().is_some_and(|term| {
                term.get_opcode() == InstructionOpcode::Br && successors(term) == [join]
            });
            then != join
                && then != head
                && join != head
                && count(&then) == 1
                && count(&join) == 2
                && goes_on
        })
        .map(|(then, join, on_true)| Triangle {
            then,
            join,
            on_true,
        })
}

/// Whether `inst` is a load from the global or generic space that is neither volatile
/// nor atomic.
fn plain_memory_load(inst: InstructionValue) -> bool {
    inst.get_opcode() == InstructionOpcode::Load
        && !inst.get_volatile().unwrap_or(true)
        && inst
            .get_atomic_ordering()
            .is_ok_and(|o| o == inkwell::AtomicOrdering::NotAtomic)
        && operand(inst, 0).is_some_and(|a| matches!(addr_space(a), Some(AS_GLOBAL | AS_GENERIC)))
}

/// The one load of triangle `t`'s run block and the instructions before it, when those
/// are pure arithmetic ([`pure_value`], at most [`MAX_MOVED`]) and only the block's
/// branch comes after the load.
fn only_load<'ctx>(
    t: &Triangle<'ctx>,
) -> Option<(InstructionValue<'ctx>, Vec<InstructionValue<'ctx>>)> {
    let mut pure = Vec::new();
    for inst in t.then.get_instructions() {
        if plain_memory_load(inst) {
            let last = inst
                .get_next_instruction()
                .is_some_and(|n| n.is_terminator());
            return last.then_some((inst, pure));
        }
        if !pure_value(inst) || pure.len() == MAX_MOVED {
            return None;
        }
        pure.push(inst);
    }
    None
}

/// Moves the pure arithmetic of every triangle of `f` whose run block makes one load
/// and computes nothing else to the end of the triangle's head (see the module doc):
/// the load block is left with the load and its branch.
pub fn speculate<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>) {
    let preds = predecessors(f);
    let heads: Vec<InstructionValue<'ctx>> = f
        .get_basic_blocks()
        .into_iter()
        .filter_map(|bb| bb.get_terminator())
        .collect();
    for branch in heads {
        let Some(t) = triangle(branch, &preds) else {
            continue;
        };
        let Some((_, pure)) = only_load(&t) else {
            continue;
        };
        // In order, before the head's branch: their operands dominate the run block,
        // whose only way in is that branch, or come before them there.
        for inst in pure {
            inst.remove_from_basic_block();
            ir.at(branch);
            ir.b.insert_instruction(&inst, None);
        }
    }
}

/// The load of triangle `t` when its run block holds nothing else but its branch (the
/// shape [`speculate`] leaves).
pub fn lone_load<'ctx>(t: &Triangle<'ctx>) -> Option<InstructionValue<'ctx>> {
    only_load(t).and_then(|(load, pure)| pure.is_empty().then_some(load))
}
