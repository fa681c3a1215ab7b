//! The pointer-arithmetic rule (`format::pointer`): a GEP result that escapes the view of the
//! checks (stored, passed, returned, merged in a phi/select, cast to an integer) gets
//! the poison bit when it lies outside the block of its root. Results used only as the
//! address of checked accesses, by further GEPs or by comparisons need no rule: those
//! accesses are checked against the root's block directly (see `classify`).

use crate::classify::{decide, op_of, root_of, Decision};
use crate::ir::{callee, is_intrinsic, opcode, uses, Ir, AS_CONST, AS_SHARED};
use cusafe_format::pointer::{MAX_TAG, MIN_TAG, POISON_MASK, TAG_MASK, TAG_SHIFT};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValueEnum, InstructionValue, IntValue, PointerValue};
use inkwell::IntPredicate;
use llvm_sys::LLVMOpcode;
use std::collections::{HashMap, HashSet};

/// A GEP whose result escapes, with the uses that must see the poisoned value.
pub struct Escape<'ctx> {
    gep: PointerValue<'ctx>,
    root: PointerValue<'ctx>,
    uses: Vec<(InstructionValue<'ctx>, u32)>,
}

/// Whether operand `idx` of `user` may see the raw (unpoisoned) pointer.
pub fn is_safe_use(user: InstructionValue, idx: u32) -> bool {
    match opcode(user) {
        Some(LLVMOpcode::LLVMLoad) | Some(LLVMOpcode::LLVMICmp) => true,
        Some(LLVMOpcode::LLVMStore) => idx == 1,
        Some(LLVMOpcode::LLVMAtomicRMW) | Some(LLVMOpcode::LLVMAtomicCmpXchg) => idx == 0,
        Some(LLVMOpcode::LLVMGetElementPtr) => idx == 0,
        Some(LLVMOpcode::LLVMAddrSpaceCast) => {
            uses(user).into_iter().all(|(u, i)| is_safe_use(u, i))
        }
        // Intrinsics: memory intrinsics are checked against the root; the others do not
        // turn the pointer into something the program can dereference later.
        Some(LLVMOpcode::LLVMCall) => callee(user).is_some_and(is_intrinsic),
        _ => false,
    }
}

/// Whether `root` can only be a shared or constant address seen through the generic
/// space: it is one (after casts and GEPs), or a phi or select of such values and of
/// itself (a pointer stepping through a `__shared__` array). Such a pointer never
/// carries a tag (escaping `__shared__` arrays became pseudo-pointers before the rule
/// runs), so the rule could never poison through it.
fn never_tagged(root: PointerValue) -> bool {
    let mut seen = HashSet::new();
    let mut work: Vec<BasicValueEnum> = vec![root.into()];
    while let Some(v) = work.pop() {
        let v = root_of(v);
        if !seen.insert(v) {
            continue;
        }
        if seen.len() > 64 {
            return false;
        }
        if matches!(crate::sys::addr_space(v), Some(AS_SHARED | AS_CONST)) {
            continue;
        }
        let incoming = match op_of(v) {
            Some(LLVMOpcode::LLVMPHI) => 0..crate::sys::num_operands(v),
            Some(LLVMOpcode::LLVMSelect) => 1..3,
            _ => return false,
        };
        work.extend(incoming.filter_map(|i| crate::sys::operand(v, i)));
    }
    true
}

/// Finds the GEPs of a function that need the rule.
pub fn collect<'ctx>(ir: &Ir, insts: &[InstructionValue<'ctx>]) -> Vec<Escape<'ctx>> {
    let mut out = Vec::new();
    for &g in insts {
        if opcode(g) != Some(LLVMOpcode::LLVMGetElementPtr) {
            continue;
        }
        // A vector GEP gives no pointer: it is left alone.
        let Some(BasicValueEnum::PointerValue(g)) = crate::sys::value(g) else {
            continue;
        };
        let Decision::Heap { root } = decide(ir, g, None) else {
            continue;
        };
        if never_tagged(root) {
            continue;
        }
        let bad: Vec<_> = uses(g)
            .into_iter()
            .filter(|&(u, i)| !is_safe_use(u, i))
            .collect();
        if !bad.is_empty() {
            out.push(Escape {
                gep: g,
                root,
                uses: bad,
            });
        }
    }
    out
}

/// The root-side half of the rule, built once per root right after its definition
/// (at the entry for an argument, after the phis for a phi), so that a loop's escaping
/// GEPs of a root defined outside it pay only the compare.
#[derive(Clone, Copy)]
struct RootSide<'ctx> {
    /// Whether the root has a cusafe tag (`i1`).
    in_range: IntValue<'ctx>,
    /// Whether the root is poisoned already (`i1`).
    poisoned: IntValue<'ctx>,
    /// The root's block or tile: start and length.
    lo: IntValue<'ctx>,
    len: IntValue<'ctx>,
}

/// Applies the rule to every escaping GEP of a function: emits the test after each and
/// points its escaping uses at `gep i8, g, (poison ? 1 << 63 : 0)`.
pub fn instrument<'ctx>(ir: &Ir<'ctx>, escapes: &[Escape<'ctx>]) {
    let mut sides: HashMap<PointerValue<'ctx>, RootSide<'ctx>> = HashMap::new();
    for e in escapes {
        let side = *sides.entry(e.root).or_insert_with(|| root_side(ir, e));
        instrument_one(ir, e, &side);
    }
}

/// Builds the root side of `e`'s rule after its root's definition.
fn root_side<'ctx>(ir: &Ir<'ctx>, e: &Escape<'ctx>) -> RootSide<'ctx> {
    use IntPredicate::*;
    let gep = e.gep.as_instruction().expect("a GEP instruction");
    let at = match e.root.as_instruction() {
        Some(def) if opcode(def) == Some(LLVMOpcode::LLVMPHI) => {
            first_non_phi(def.get_parent().expect("a phi in a block"))
        }
        Some(def) => def
            .get_next_instruction()
            .expect("a pointer is no terminator"),
        None => {
            let func = gep.get_parent().and_then(|bb| bb.get_parent());
            let entry = func.and_then(|f| f.get_first_basic_block());
            first_non_phi(entry.expect("a function with a body"))
        }
    };
    ir.at(at);
    let ri = ir.to_int(e.root);
    let t = ir.and(ir.lshr(ri, ir.c64(TAG_SHIFT.into())), ir.c64(TAG_MASK));
    let in_range = ir.icmp(
        ULT,
        ir.sub(t, ir.c64(MIN_TAG.into())),
        ir.c64((MAX_TAG - MIN_TAG + 1).into()),
    );
    // Leaving the root's power-of-two block or packed tile (for foreign tags the
    // verdict is unused).
    let (lo, len) = crate::tile::locate(ir, ri, t).tile(ir);
    RootSide {
        in_range,
        poisoned: ir.icmp(SLT, ri, ir.c64(0)),
        lo,
        len,
    }
}

/// The first instruction of `bb` that is no phi.
fn first_non_phi(bb: BasicBlock) -> InstructionValue {
    let mut i = bb.get_first_instruction();
    while let Some(phi) = i.filter(|&i| opcode(i) == Some(LLVMOpcode::LLVMPHI)) {
        i = phi.get_next_instruction();
    }
    i.expect("a block ends in a terminator")
}

/// The GEP side of the rule for one escaping GEP.
fn instrument_one<'ctx>(ir: &Ir<'ctx>, e: &Escape<'ctx>, side: &RootSide<'ctx>) {
    use IntPredicate::*;
    let gep = e.gep.as_instruction().expect("a GEP instruction");
    let next = gep.get_next_instruction().expect("a GEP is no terminator");
    ir.at(next);
    let gi = ir.to_int(e.gep);
    let moved = ir.sub(ir.and(gi, ir.c64(!POISON_MASK)), side.lo);
    let left = ir.icmp(UGE, moved, side.len);
    let zero = ir.c64(0);
    let want = ir.or(ir.and(side.in_range, left), side.poisoned);
    let has = ir.icmp(SLT, gi, zero);
    let add = ir.and(want, ir.not(has));
    let delta = ir.select(add, ir.c64(POISON_MASK), zero);
    let poisoned = unsafe { ir.b.build_gep(ir.i8, e.gep, &[delta], "cusafe.arith") };
    let poisoned = poisoned.expect("positioned");
    for &(user, i) in &e.uses {
        assert!(user.set_operand(i, poisoned), "a use's operand exists");
    }
}
