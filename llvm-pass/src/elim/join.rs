//! What lets checks of one block become one (neighbouring groups, strided groups, index
//! hulls, batches): the same kind of target, no call that may stop the thread between
//! them, and what the joint check is built from available at the first.

use crate::collect::Target;
use crate::dom::Cfg;
use crate::ir::{callee, is_intrinsic, opcode};
use inkwell::values::{BasicValue, BasicValueEnum, FunctionValue, InstructionValue};
use llvm_sys::LLVMOpcode;

/// Whether two ranges check against the same kind of thing (the heap, or one object).
pub fn same_target(a: &Target, b: &Target) -> bool {
    match (a, b) {
        (Target::Heap, Target::Heap) => true,
        (Target::Object(x), Target::Object(y)) => x == y,
        _ => false,
    }
}

/// Whether a call of `f` may not return: anything but an intrinsic, or a trap.
pub fn may_stop(f: FunctionValue) -> bool {
    !is_intrinsic(f) || crate::ir::name(f).contains("trap")
}

/// Whether `i` is a call that may not return (anything but an intrinsic, or a trap).
pub fn stops(i: InstructionValue) -> bool {
    opcode(i) == Some(LLVMOpcode::LLVMCall) && callee(i).is_none_or(may_stop)
}

/// Whether a call that may not return ([`stops`]) lies strictly between `from` and `to`
/// (same block, `from` first).
pub fn call_between(from: InstructionValue, to: InstructionValue) -> bool {
    let mut next = from.get_next_instruction();
    while let Some(i) = next.filter(|&i| i != to) {
        if stops(i) {
            return true;
        }
        next = i.get_next_instruction();
    }
    false
}

/// Whether `v` is available right before `leader`: a constant or argument, or an
/// instruction that dominates it.
pub fn available<'ctx>(
    cfg: &Cfg<'ctx>,
    v: BasicValueEnum<'ctx>,
    leader: InstructionValue<'ctx>,
) -> bool {
    v.as_instruction_value()
        .is_none_or(|i| cfg.dominates(i, leader))
}

/// Whether `inst` can join a group of its block led by `leader`: every value of
/// `leaves` (what the group's check is built from) is available at the leader, and no
/// call that may stop the thread lies between the two (so the block runs from the
/// leader's access to this one and a reported member is an access the program makes).
pub fn can_join<'ctx>(
    cfg: &Cfg<'ctx>,
    leader: InstructionValue<'ctx>,
    leaves: &[BasicValueEnum<'ctx>],
    inst: InstructionValue<'ctx>,
) -> bool {
    let available = leaves.iter().all(|&v| available(cfg, v, leader));
    available && !call_between(leader, inst)
}
