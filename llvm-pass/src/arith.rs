//! The pointer-arithmetic rule (`format::pointer`): a GEP result that escapes the view of the
//! checks (stored, passed, returned, merged in a phi/select, cast to an integer) gets
//! the poison bit when it lies outside the block of its root. Results used only as the
//! address of checked accesses, by further GEPs or by comparisons need no rule: those
//! accesses are checked against the root's block directly (see `classify`).

use crate::classify::{decide, never_tagged, pointer_root, Decision};
use crate::ir::{callee, first_non_phi, is_intrinsic, opcode, uses, Ir};
use cusafe_format::pointer::{MAX_TAG, MIN_TAG, POISON_MASK, TAG_MASK, TAG_SHIFT};
use inkwell::types::IntType;
use inkwell::values::{
    BasicValueEnum, FunctionValue, InstructionValue, IntValue, PhiValue, PointerValue,
};
use inkwell::IntPredicate;
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

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
/// (at the entry for an argument), so that a loop's escaping GEPs of a root defined
/// outside it pay only the compare. A phi's comes from its incoming values' roots
/// through phis of the same shape (`phi_side`).
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
    let mut sides = HashMap::new();
    for e in escapes {
        let gep = e.gep.as_instruction().expect("a GEP instruction");
        let func = gep.get_parent().and_then(|bb| bb.get_parent());
        let side = side_of(ir, func.expect("a GEP in a function"), e.root, &mut sides);
        instrument_one(ir, e, &side);
    }
}

/// The root side of `root` in `func`, built on first use.
fn side_of<'ctx>(
    ir: &Ir<'ctx>,
    func: FunctionValue<'ctx>,
    root: PointerValue<'ctx>,
    sides: &mut HashMap<PointerValue<'ctx>, RootSide<'ctx>>,
) -> RootSide<'ctx> {
    if let Some(&side) = sides.get(&root) {
        return side;
    }
    if let Some(phi) = root
        .as_instruction()
        .and_then(|i| PhiValue::try_from(i).ok())
    {
        return phi_side(ir, func, root, phi, sides);
    }
    let at = match root.as_instruction() {
        Some(def) => def
            .get_next_instruction()
            .expect("a pointer is no terminator"),
        None => first_non_phi(
            func.get_first_basic_block()
                .expect("a function with a body"),
            false,
        ),
    };
    ir.at(at);
    let ri = ir.to_int(root);
    let side = computed(ir, ri);
    sides.insert(root, side);
    side
}

/// The root side of a pointer phi, without computing a block per trip: a phi's value is
/// one of its incoming values, each a GEP chain over some root `r` (or the phi itself)
/// that the rule keeps in `r`'s block or tile or poisons. So the phi's block or tile is
/// its incoming root's, carried by phis of the tag test and the tile (a root that can
/// only be a shared or constant address: never tagged); whether it is poisoned is
/// read from its own value.
fn phi_side<'ctx>(
    ir: &Ir<'ctx>,
    func: FunctionValue<'ctx>,
    root: PointerValue<'ctx>,
    phi: PhiValue<'ctx>,
    sides: &mut HashMap<PointerValue<'ctx>, RootSide<'ctx>>,
) -> RootSide<'ctx> {
    let bb = phi.as_instruction().get_parent().expect("a phi in a block");
    ir.at(first_non_phi(bb, false));
    let new_phi = |ty: IntType<'ctx>, name: &str| ir.b.build_phi(ty, name).expect("positioned");
    let in_range = new_phi(ir.ctx.bool_type(), "cusafe.tile.in");
    let lo = new_phi(ir.i64, "cusafe.tile.lo");
    let len = new_phi(ir.i64, "cusafe.tile.len");
    ir.at(first_non_phi(bb, false));
    let poisoned = ir.icmp(IntPredicate::SLT, ir.to_int(root), ir.c64(0));
    let side = RootSide {
        in_range: in_range.as_basic_value().into_int_value(),
        poisoned,
        lo: lo.as_basic_value().into_int_value(),
        len: len.as_basic_value().into_int_value(),
    };
    sides.insert(root, side);
    let untagged = RootSide {
        in_range: ir.ctx.bool_type().const_zero(),
        poisoned,
        lo: ir.c64(0),
        len: ir.c64(u64::MAX),
    };
    for i in 0..phi.count_incoming() {
        let (v, from) = phi.get_incoming(i).expect("an incoming value");
        let r = pointer_root(v.into_pointer_value());
        let s = if never_tagged(r) {
            untagged
        } else {
            side_of(ir, func, r, sides)
        };
        in_range.add_incoming(&[(&s.in_range, from)]);
        lo.add_incoming(&[(&s.lo, from)]);
        len.add_incoming(&[(&s.len, from)]);
    }
    side
}

/// The root side of the root `ri` (as an integer), at the builder's position.
fn computed<'ctx>(ir: &Ir<'ctx>, ri: IntValue<'ctx>) -> RootSide<'ctx> {
    use IntPredicate::*;
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
