//! Sunk tile stores (docs/pass.md, "Lifted checks"): before the accesses are collected,
//! the `__shared__` stores of a triangle whose run block makes one load
//! (`crate::lift`) move down the join block to its first call (a barrier) or its end,
//! under the triangle's condition, when the join loads global memory before that point
//! and nothing there can touch the stored bytes.
//!
//! nw's tile starts `if (tx == 0) temp[0][0] = matrix[index_nw];`, then loads the 16
//! rows of its reference tile and two halos, then `__syncthreads()`. The plain build's
//! ptxas issues the guarded load, then all the others, and stores to `__shared__` after
//! them: one memory latency. In the checked build a branch (a flush, a group's check)
//! separates the triangle from the loads after it, ptxas moves no store across it, and
//! the store waits for its load there: two memory latencies in a row. With the store
//! sunk, the triangle holds the load alone, which the planner lifts and ptxas
//! predicates, and every load is in flight before the first store waits (docs/pass.md
//! has what it measured).
//!
//! When the loaded value feeds only the block itself and nothing before the point can
//! write global memory (only `__shared__` or local stores), the whole run block moves,
//! load and all: nw's corner load then joins the halo loads at the barrier, one flush
//! for all of them, as the source line moved by hand did. The load's check moves with
//! it: where it fails, an access the program makes anyway is reported, after those
//! before the point rather than before them.
//!
//! A store moves only when it stays inside its object wherever it runs (it has no
//! check, so no report changes its place in program order), and past an access only
//! when their bytes cannot meet: a different object,
//! global memory (a kernel's pointer parameters point there, as LLVM's NVPTX backend
//! assumes), or the same `__shared__` object at offsets that value intervals keep
//! apart. Anything else that touches memory stops the scan (a call that is not pure
//! arithmetic, an atomic access, a fence): the store lands right before it. A moved store keeps
//! its metadata and location; its value and address come through phis of the join.

use crate::classify::pointer_root;
use crate::dom::Cfg;
use crate::intervals::Intervals;
use crate::ir::{Ir, AS_GLOBAL, AS_LOCAL, AS_SHARED};
use crate::lift::{load_block, predecessors, triangle, LoadBlock, Triangle};
use crate::loops::LoopAnalyses;
use crate::remat::pure_value;
use crate::sys::{
    addr_space, branch_condition, global_variable, operand, param_parent, poison, uses,
};
use inkwell::basic_block::BasicBlock;
use inkwell::targets::TargetData;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{
    BasicValue, BasicValueEnum, FunctionValue, InstructionOpcode, InstructionValue, PointerValue,
};

/// One triangle's stores and where they go.
struct Sink<'ctx> {
    triangle: Triangle<'ctx>,
    /// The branch heading the triangle.
    branch: InstructionValue<'ctx>,
    /// The stores, in program order.
    stores: Vec<InstructionValue<'ctx>>,
    /// The instruction of the join they go right before.
    before: InstructionValue<'ctx>,
    /// Whether the whole run block goes there, its load included.
    whole: bool,
}

/// Sinks the tile stores of the triangles of `f` (a kernel when `kernel`) as the module
/// doc says.
pub fn sink_tile_stores<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>, kernel: bool) {
    let preds = predecessors(f);
    let found: Vec<(Triangle, InstructionValue, LoadBlock)> = f
        .get_basic_blocks()
        .into_iter()
        .filter_map(|bb| bb.get_terminator())
        .filter_map(|branch| {
            let t = triangle(branch, &preds)?;
            let block = load_block(&t)?;
            (!block.stores.is_empty()).then_some((t, branch, block))
        })
        .collect();
    if found.is_empty() {
        return;
    }
    // Decided on the unchanged function, then applied.
    let sinks: Vec<Sink> = {
        let cfg = Cfg::of(f);
        let scev = LoopAnalyses::new(f);
        let intervals = Intervals::new(&cfg, &scev, ir.layout());
        found
            .into_iter()
            .filter_map(|(triangle, branch, block)| {
                let stores = block.stores;
                let point = sink_point(&intervals, ir.layout(), &triangle, &stores, kernel)?;
                let whole = kernel
                    && !point.global_stores
                    && reads_global(block.load, kernel)
                    && used_inside(triangle.then);
                Some(Sink {
                    triangle,
                    branch,
                    stores,
                    before: point.before,
                    whole,
                })
            })
            .collect()
    };
    for s in &sinks {
        apply(ir, s);
    }
}

/// Where a triangle's stores can go ([`sink_point`]).
struct Point<'ctx> {
    /// The instruction of the join they go right before.
    before: InstructionValue<'ctx>,
    /// Whether a store before it may write global memory.
    global_stores: bool,
}

/// Where in `t`'s join the `stores` can go: the first instruction that may touch memory
/// other than a load or store, or the join's end, when at least one global or generic
/// load comes before it and no access before it can meet a store's bytes.
fn sink_point<'ctx>(
    intervals: &Intervals<'_, 'ctx>,
    td: &TargetData,
    t: &Triangle<'ctx>,
    stores: &[InstructionValue<'ctx>],
    kernel: bool,
) -> Option<Point<'ctx>> {
    // A moved store reports nothing: each must be in bounds wherever it runs, so no
    // report changes its place in program order.
    if !stores.iter().all(|&s| inside(intervals, td, s)) {
        return None;
    }
    let mut loads = 0;
    let mut global_stores = false;
    let mut next = t.join.get_first_instruction();
    while let Some(inst) = next {
        next = inst.get_next_instruction();
        match inst.get_opcode() {
            InstructionOpcode::Phi => continue,
            InstructionOpcode::Load | InstructionOpcode::Store if !atomic(inst) => {
                let ptr = pointer_operand(inst)?;
                if !stores
                    .iter()
                    .all(|&s| apart(intervals, td, s, inst, ptr, kernel))
                {
                    return None;
                }
                let private = matches!(addr_space(ptr), Some(AS_SHARED | AS_LOCAL))
                    || matches!(addr_space(pointer_root(ptr)), Some(AS_SHARED | AS_LOCAL));
                match inst.get_opcode() {
                    InstructionOpcode::Load if !private => loads += 1,
                    InstructionOpcode::Store if !private => global_stores = true,
                    _ => {}
                }
            }
            _ if inst.is_terminator() || touches_memory(inst) => {
                return (loads > 0).then_some(Point {
                    before: inst,
                    global_stores,
                });
            }
            _ => {}
        }
    }
    None
}

/// Whether tile store `store` stays inside its `__shared__` object (a global variable
/// of known size) for every value its address can take.
fn inside<'ctx>(
    intervals: &Intervals<'_, 'ctx>,
    td: &TargetData,
    store: InstructionValue<'ctx>,
) -> bool {
    let Some(target) = pointer_operand(store) else {
        return false;
    };
    let object = pointer_root(target);
    let (Some(g), Some(bytes)) = (global_variable(object), access_bytes(store, td)) else {
        return false;
    };
    let Ok(ty) = BasicTypeEnum::try_from(g.get_value_type()) else {
        return false;
    };
    let size = i128::from(td.get_store_size(&ty));
    intervals
        .offset(store, target, object)
        .is_some_and(|o| o.lo >= 0 && o.hi + i128::from(bytes) <= size)
}

/// Whether `load` reads global memory: a global address, or in a kernel one from a
/// pointer parameter (which points there, as LLVM's NVPTX backend assumes).
fn reads_global(load: InstructionValue, kernel: bool) -> bool {
    pointer_operand(load).is_some_and(|ptr| {
        let root = pointer_root(ptr);
        matches!(addr_space(ptr), Some(AS_GLOBAL))
            || matches!(addr_space(root), Some(AS_GLOBAL))
            || (kernel && param_parent(root).is_some())
    })
}

/// Whether every value block `bb` defines is used in `bb` only (nothing outside reads
/// what the block computes: it can move as a whole).
fn used_inside(bb: BasicBlock) -> bool {
    bb.get_instructions().all(|inst| {
        uses(inst)
            .iter()
            .all(|(user, _)| user.get_parent() == Some(bb))
    })
}

/// Whether load or store `inst` is atomic (it orders other accesses: the scan stops).
fn atomic(inst: InstructionValue) -> bool {
    inst.get_atomic_ordering()
        .is_ok_and(|o| o != inkwell::AtomicOrdering::NotAtomic)
}

/// Whether `inst` (not a plain load or store) may read or write memory.
fn touches_memory(inst: InstructionValue) -> bool {
    match inst.get_opcode() {
        InstructionOpcode::Call => !pure_value(inst),
        InstructionOpcode::Load | InstructionOpcode::Store => true,
        InstructionOpcode::AtomicRMW
        | InstructionOpcode::AtomicCmpXchg
        | InstructionOpcode::Fence
        | InstructionOpcode::Invoke
        | InstructionOpcode::VAArg => true,
        _ => false,
    }
}

/// The address a load or store accesses.
fn pointer_operand(inst: InstructionValue) -> Option<PointerValue> {
    let k = u32::from(inst.get_opcode() == InstructionOpcode::Store);
    operand(inst, k).map(|v| v.into_pointer_value())
}

/// How many bytes a load or store accesses.
fn access_bytes(inst: InstructionValue, td: &TargetData) -> Option<u64> {
    let ty: BasicTypeEnum = match inst.get_opcode() {
        InstructionOpcode::Store => operand(inst, 0)?.get_type(),
        _ => inst.get_type().try_into().ok()?,
    };
    Some(td.get_store_size(&ty))
}

/// Whether the bytes tile store `store` writes cannot meet those `access` (at `ptr`)
/// reads or writes (see the module doc).
fn apart<'ctx>(
    intervals: &Intervals<'_, 'ctx>,
    td: &TargetData,
    store: InstructionValue<'ctx>,
    access: InstructionValue<'ctx>,
    ptr: PointerValue<'ctx>,
    kernel: bool,
) -> bool {
    let Some(target) = pointer_operand(store) else {
        return false;
    };
    let object = pointer_root(target);
    let root = pointer_root(ptr);
    if root != object {
        let other_object = global_variable(root).is_some();
        let global = matches!(addr_space(ptr), Some(AS_GLOBAL | AS_LOCAL))
            || matches!(addr_space(root), Some(AS_GLOBAL | AS_LOCAL));
        return other_object || global || (kernel && param_parent(root).is_some());
    }
    let (Some(a), Some(b)) = (access_bytes(store, td), access_bytes(access, td)) else {
        return false;
    };
    let (Some(s), Some(o)) = (
        intervals.offset(store, target, object),
        intervals.offset(access, ptr, root),
    ) else {
        return false;
    };
    s.lo >= o.hi + i128::from(b) || o.lo >= s.hi + i128::from(a)
}

/// Moves `s`'s stores (or its whole run block) to its point, under the triangle's
/// condition.
fn apply<'ctx>(ir: &Ir<'ctx>, s: &Sink<'ctx>) {
    let Some(head) = s.branch.get_parent() else {
        return;
    };
    let t = &s.triangle;
    // What moves, in order, with new operands (none when the whole run block moves:
    // nothing outside it reads its values, so the old triangle is left empty).
    let moved: Vec<(InstructionValue, Vec<BasicValueEnum>)> = if s.whole {
        t.then
            .get_instructions()
            .take_while(|i| !i.is_terminator())
            .map(|inst| (inst, Vec::new()))
            .collect()
    } else {
        // Values of the run block the stores use reach the join through phis (poison
        // from the head, where no store runs and nothing reads them).
        let mut phis: Vec<(BasicValueEnum<'ctx>, BasicValueEnum<'ctx>)> = Vec::new();
        let mut through_phi = |v: BasicValueEnum<'ctx>| -> BasicValueEnum<'ctx> {
            let defined_in_run_block = v
                .as_instruction_value()
                .is_some_and(|i| i.get_parent() == Some(t.then));
            if !defined_in_run_block {
                return v;
            }
            if let Some(&(_, phi)) = phis.iter().find(|(of, _)| *of == v) {
                return phi;
            }
            let first = t.join.get_first_instruction().expect("a join has a branch");
            ir.at(first);
            let phi = ir.b.build_phi(v.get_type(), "").expect("positioned");
            let none = poison(v.get_type());
            phi.add_incoming(&[(&v, t.then), (&none, head)]);
            phis.push((v, phi.as_basic_value()));
            phi.as_basic_value()
        };
        s.stores
            .iter()
            .map(|&st| {
                let ops = (0..2)
                    .map(|k| through_phi(operand(st, k).expect("a store's operands")))
                    .collect();
                (st, ops)
            })
            .collect()
    };
    ir.at(s.before);
    let cond = branch_condition(s.branch);
    let cond = if t.on_true { cond } else { ir.not(cond) };
    let term = ir.split_if(cond, s.before);
    for (inst, ops) in &moved {
        inst.remove_from_basic_block();
        ir.at(term);
        ir.b.insert_instruction(inst, None);
        for (k, v) in ops.iter().enumerate() {
            inst.set_operand(k as u32, *v);
        }
    }
}
