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
//!
//! The load block may also store the loaded value to `__shared__` memory, with the pure
//! arithmetic of the store's address: a stencil's halo loads,
//! `if (ty == 0) tile[0][tx + 1] = j[...]`, which ptxas predicates, load and store, in
//! the plain build. The planner lifts such a block only when the stores need no check
//! of their own. Where the check fails the block is skipped, store included; the flush
//! reports before anything else can see the difference (before the next barrier or
//! other call, before any access whose check branches, and a later deferred check
//! reports after it, in program order).

use crate::classify::never_tagged;
use crate::ir::{Ir, AS_GENERIC, AS_GLOBAL};
use crate::remat::pure_value;
use crate::sys::{addr_space, operand, successors};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValue, FunctionValue, InstructionOpcode, InstructionValue};
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

/// Whether `inst` is a `kind` (load or store) that is neither volatile nor atomic.
fn plain(inst: InstructionValue, kind: InstructionOpcode) -> bool {
    inst.get_opcode() == kind
        && !inst.get_volatile().unwrap_or(true)
        && inst
            .get_atomic_ordering()
            .is_ok_and(|o| o == inkwell::AtomicOrdering::NotAtomic)
}

/// Whether `inst` is a [`plain`] load from the global or generic space.
fn plain_memory_load(inst: InstructionValue) -> bool {
    plain(inst, InstructionOpcode::Load)
        && operand(inst, 0).is_some_and(|a| matches!(addr_space(a), Some(AS_GLOBAL | AS_GENERIC)))
}

/// Whether `inst` is a [`plain`] store of `value` to `__shared__` memory (in the shared
/// space, or a generic pointer that can only be a shared address, [`never_tagged`]).
fn tile_store(inst: InstructionValue, value: InstructionValue) -> bool {
    plain(inst, InstructionOpcode::Store)
        && operand(inst, 0).and_then(|v| v.as_instruction_value()) == Some(value)
        && operand(inst, 1).is_some_and(|a| never_tagged(a.into_pointer_value()))
}

/// A triangle's load block cut at its load: the load, the instructions before it and
/// the stores after it.
pub struct LoadBlock<'ctx> {
    /// The load.
    pub load: InstructionValue<'ctx>,
    /// The pure arithmetic before it.
    pub before: Vec<InstructionValue<'ctx>>,
    /// Its stores to `__shared__` memory.
    pub stores: Vec<InstructionValue<'ctx>>,
}

/// The one load of triangle `t`'s run block, when the instructions before it are pure
/// arithmetic ([`pure_value`], at most [`MAX_MOVED`]) and after it come only stores of
/// the loaded value to `__shared__` memory ([`tile_store`]) and pure arithmetic that
/// does not use it, then the block's branch.
pub fn load_block<'ctx>(t: &Triangle<'ctx>) -> Option<LoadBlock<'ctx>> {
    let mut insts = t.then.get_instructions();
    let mut before = Vec::new();
    let load = loop {
        let inst = insts.next()?;
        if plain_memory_load(inst) {
            break inst;
        }
        if !pure_value(inst) || before.len() == MAX_MOVED {
            return None;
        }
        before.push(inst);
    };
    let mut stores = Vec::new();
    for inst in insts.take_while(|i| !i.is_terminator()) {
        let uses_load =
            crate::remat::value_operands(inst).any(|v| v.as_instruction_value() == Some(load));
        if tile_store(inst, load) {
            stores.push(inst);
        } else if uses_load || !pure_value(inst) {
            return None;
        }
    }
    Some(LoadBlock {
        load,
        before,
        stores,
    })
}

/// Moves the pure arithmetic before the load of every triangle of `f` whose run block
/// makes one load (and at most stores its value to `__shared__` memory, [`load_block`])
/// to the end of the triangle's head (see the module doc): the load block is left with
/// the load, those stores and their addresses, and its branch.
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
        let Some(block) = load_block(&t) else {
            continue;
        };
        // In order, before the head's branch: their operands dominate the run block,
        // whose only way in is that branch, or come before them there.
        for inst in block.before {
            inst.remove_from_basic_block();
            ir.at(branch);
            ir.b.insert_instruction(&inst, None);
        }
    }
}

/// The load of triangle `t` and its stores to `__shared__` memory, when nothing comes
/// before the load in its run block (the shape [`speculate`] leaves) and after it only
/// those stores and the pure arithmetic of their addresses.
pub fn lone_load<'ctx>(
    t: &Triangle<'ctx>,
) -> Option<(InstructionValue<'ctx>, Vec<InstructionValue<'ctx>>)> {
    load_block(t).and_then(|b| b.before.is_empty().then_some((b.load, b.stores)))
}
