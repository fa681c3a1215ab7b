//! The pointer-arithmetic rule (`format::pointer`): a GEP result that escapes the view of the
//! checks (stored, passed, returned, merged in a phi/select, cast to an integer) gets
//! the poison bit when it lies outside the block of its root. Results used only as the
//! address of checked accesses, by further GEPs or by comparisons need no rule: those
//! accesses are checked against the root's block directly (see `classify`).

use crate::classify::{decide, Decision};
use crate::ir::{callee, is_intrinsic, opcode, uses, Ir};
use cusafe_format::pointer::{MAX_TAG, MIN_TAG, POISON_MASK, TAG_MASK, TAG_SHIFT};
use inkwell::values::{BasicValueEnum, InstructionValue, PointerValue};
use inkwell::IntPredicate;
use llvm_sys::LLVMOpcode;

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

/// Applies the rule to one escaping GEP: emits the XOR test after it and points its
/// escaping uses at `gep i8, g, (poison ? 1 << 63 : 0)`.
pub fn instrument<'ctx>(ir: &Ir<'ctx>, e: &Escape<'ctx>) {
    use IntPredicate::*;
    let gep = e.gep.as_instruction().expect("a GEP instruction");
    let next = gep.get_next_instruction().expect("a GEP is no terminator");
    ir.at(next);
    let ri = ir.to_int(e.root);
    let gi = ir.to_int(e.gep);
    let t = ir.and(ir.lshr(ri, ir.c64(TAG_SHIFT.into())), ir.c64(TAG_MASK));
    let in_range = ir.icmp(
        ULT,
        ir.sub(t, ir.c64(MIN_TAG.into())),
        ir.c64((MAX_TAG - MIN_TAG + 1).into()),
    );
    // Leaving the root's power-of-two block or packed tile (for foreign tags the
    // verdict is unused).
    let (lo, len) = crate::tile::locate(ir, ri, t).tile(ir);
    let moved = ir.sub(ir.and(gi, ir.c64(!POISON_MASK)), lo);
    let left = ir.icmp(UGE, moved, len);
    let zero = ir.c64(0);
    let root_poisoned = ir.icmp(SLT, ri, zero);
    let want = ir.or(ir.and(in_range, left), root_poisoned);
    let has = ir.icmp(SLT, gi, zero);
    let add = ir.and(want, ir.not(has));
    let delta = ir.select(add, ir.c64(POISON_MASK), zero);
    let poisoned = unsafe { ir.b.build_gep(ir.i8, e.gep, &[delta], "cusafe.arith") };
    let poisoned = poisoned.expect("positioned");
    for &(user, i) in &e.uses {
        assert!(user.set_operand(i, poisoned), "a use's operand exists");
    }
}
