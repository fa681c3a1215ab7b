//! The pointer-arithmetic rule (`format::pointer`): a GEP result that escapes the view of the
//! checks (stored, passed, returned, merged in a phi/select, cast to an integer) gets
//! the poison bit when it lies outside the block of its root. Results used only as the
//! address of checked accesses, by further GEPs or by comparisons need no rule: those
//! accesses are checked against the root's block directly (see `classify`).

use crate::classify::{decide, Decision};
use crate::ir::{callee, is_intrinsic, opcode, uses, Ir};
use cusafe_format::block::class_shift;
use cusafe_format::pointer::{MAX_TAG, MIN_TAG, POISON_MASK, TAG_MASK, TAG_SHIFT};
use inkwell::values::{AsValueRef, InstructionValue, IntValue, PointerValue};
use llvm_sys::prelude::*;
use llvm_sys::{LLVMIntPredicate, LLVMOpcode};

/// A GEP whose result escapes, with the uses that must see the poisoned value.
pub struct Escape {
    gep: LLVMValueRef,
    root: LLVMValueRef,
    uses: Vec<(LLVMValueRef, u32)>,
}

/// Whether operand `idx` of `user` may see the raw (unpoisoned) pointer.
pub fn is_safe_use(user: LLVMValueRef, idx: u32) -> bool {
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
pub fn collect(ir: &Ir, insts: &[LLVMValueRef]) -> Vec<Escape> {
    let mut out = Vec::new();
    for &g in insts {
        if opcode(g) != Some(LLVMOpcode::LLVMGetElementPtr) {
            continue;
        }
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
pub fn instrument(ir: &Ir, e: &Escape) {
    let gep = unsafe { InstructionValue::new(e.gep) };
    let next = gep.get_next_instruction().expect("a GEP is no terminator");
    ir.at(next.as_value_ref());
    let ri = ir.to_int(e.root);
    let gi = ir.to_int(e.gep);
    let t = ir.and(ir.lshr(ri, ir.c64(TAG_SHIFT.into())), ir.c64(TAG_MASK));
    let in_range = ir.icmp(
        LLVMIntPredicate::LLVMIntULT,
        ir.sub(t, ir.c64(MIN_TAG.into())),
        ir.c64((MAX_TAG - MIN_TAG + 1).into()),
    );
    // Shift amount t + 3, kept below 64 for foreign tags (their result is unused).
    let shift = ir.and(ir.add(t, ir.c64(class_shift(0).into())), ir.c64(63));
    let moved = ir.and(ir.xor(ri, gi), ir.c64(!POISON_MASK));
    let left = ir.icmp(
        LLVMIntPredicate::LLVMIntNE,
        ir.lshr(moved, shift),
        ir.c64(0),
    );
    let zero = ir.c64(0);
    let root_poisoned = ir.icmp(LLVMIntPredicate::LLVMIntSLT, ri, zero);
    let want = ir.or(ir.and(in_range, left), root_poisoned);
    let has = ir.icmp(LLVMIntPredicate::LLVMIntSLT, gi, zero);
    let not_has = ir.b.build_not(unsafe { IntValue::new(has) }, "");
    let add = ir.and(want, not_has.expect("positioned").as_value_ref());
    let delta = ir.select(add, ir.c64(POISON_MASK), zero);
    let poisoned = unsafe {
        ir.b.build_gep(
            ir.i8,
            PointerValue::new(e.gep),
            &[IntValue::new(delta)],
            "cusafe.arith",
        )
    }
    .expect("positioned");
    for &(user, i) in &e.uses {
        let user = unsafe { InstructionValue::new(user) };
        assert!(user.set_operand(i, poisoned), "a use's operand exists");
    }
}
