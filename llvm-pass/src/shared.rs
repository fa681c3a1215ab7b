//! `__shared__` arrays whose address escapes the function that names them (passed to a
//! function with a body, stored, returned): the escaping pointer becomes a shared
//! pseudo-pointer (`format::pseudo::shared_tag_bits`: pseudo bit, space bit, the
//! object's index in the class field), so the callee's checks — which see only a
//! pointer — go out of line, where device-rt bounds it by the object's start and size.
//! Accesses in the function that names the array keep their static check (no tag).
//!
//! Shared memory needs no header: the pass defines `__cusafe_shared_start(i32)` and
//! `__cusafe_shared_size(i32)` (a switch over the indices) in every module, and
//! device-rt calls them. At most [`MAX_SHARED_OBJECTS`] arrays per module are tagged;
//! the rest stay untagged (unchecked in callees, as before), which the stats say.

use crate::classify::root_of;
use crate::ir::{addr_space, callee, instructions, opcode, operand, Ir, AS_GENERIC, AS_SHARED};
use crate::sys::global_variable;
use cusafe_format::pseudo::{shared_tag_bits, MAX_SHARED_OBJECTS};
use inkwell::values::{
    BasicValueEnum, CallSiteValue, FunctionValue, GlobalValue, InstructionValue, IntValue,
};
use llvm_sys::LLVMOpcode;

/// Names of the per-module bounds functions device-rt calls.
pub const START_FN: &str = "__cusafe_shared_start";
/// See [`START_FN`].
pub const SIZE_FN: &str = "__cusafe_shared_size";

/// The statically sized `__shared__` array `v` is, with its size.
fn shared_array<'ctx>(ir: &Ir, v: BasicValueEnum<'ctx>) -> Option<(GlobalValue<'ctx>, u64)> {
    let g = global_variable(v).filter(|_| addr_space(v) == Some(AS_SHARED))?;
    let size = ir.layout().get_abi_size(&g.get_value_type());
    (size > 0).then_some((g, size))
}

/// Operands through which a pointer leaves the function: arguments of calls to
/// functions with a body, the value of a store, the value returned.
fn escaping_operands(i: InstructionValue) -> Vec<u32> {
    let has_body = |f: FunctionValue| !f.as_global_value().is_declaration();
    match opcode(i) {
        Some(LLVMOpcode::LLVMCall) if callee(i).is_some_and(has_body) => {
            let call = CallSiteValue::try_from(i).expect("a call");
            (0..call.count_arguments()).collect()
        }
        Some(LLVMOpcode::LLVMStore) => vec![0],
        Some(LLVMOpcode::LLVMRet) if i.get_num_operands() == 1 => vec![0],
        _ => Vec::new(),
    }
}

/// Tags the escaping generic pointers to `__shared__` arrays in `functions` and defines
/// the bounds functions; returns how many arrays got an index.
pub fn instrument<'ctx>(ir: &Ir<'ctx>, functions: &[FunctionValue<'ctx>]) -> usize {
    let mut objects: Vec<(GlobalValue, u64)> = Vec::new();
    for &f in functions {
        for i in instructions(f) {
            for op in escaping_operands(i) {
                // Only generic pointers can carry the tag bits.
                let Some(BasicValueEnum::PointerValue(v)) = operand(i, op) else {
                    continue;
                };
                if addr_space(v) != Some(AS_GENERIC) {
                    continue;
                }
                let Some((root, size)) = shared_array(ir, root_of(v.into())) else {
                    continue;
                };
                let index = match objects.iter().position(|&(g, _)| g == root) {
                    Some(k) => k,
                    None if objects.len() < MAX_SHARED_OBJECTS as usize => {
                        objects.push((root, size));
                        objects.len() - 1
                    }
                    None => continue,
                };
                ir.at(i);
                let bits = ir.c64(shared_tag_bits(index as u32));
                let tagged = ir.or(ir.to_int(v), bits);
                let p = ir.b.build_int_to_ptr(tagged, v.get_type(), "cusafe.shared");
                let set = i.set_operand(op, p.expect("positioned"));
                debug_assert!(set, "an operand of the instruction");
            }
        }
    }
    define_bounds(ir, &objects);
    objects.len()
}

/// Defines `START_FN(i32) -> i64` (generic address) and `SIZE_FN(i32) -> i64`.
fn define_bounds<'ctx>(ir: &Ir<'ctx>, objects: &[(GlobalValue<'ctx>, u64)]) {
    let start_of = |g: GlobalValue<'ctx>| {
        let g = g.as_pointer_value();
        g.const_address_space_cast(ir.ptr).const_to_int(ir.i64)
    };
    define_switch(
        ir,
        START_FN,
        objects.iter().map(|&(g, _)| start_of(g)).collect(),
    );
    define_switch(
        ir,
        SIZE_FN,
        objects
            .iter()
            .map(|&(_, s)| ir.i64.const_int(s, false))
            .collect(),
    );
}

/// `i64 name(i32 k)`: `values[k]`, 0 for any other `k`.
fn define_switch<'ctx>(ir: &Ir<'ctx>, name: &str, values: Vec<IntValue<'ctx>>) {
    let f = ir.module().get_function(name).unwrap_or_else(|| {
        let ty = ir.i64.fn_type(&[ir.i32.into()], false);
        ir.module().add_function(name, ty, None)
    });
    // External until device-rt's declaration has linked against it (devrt.rs then
    // makes it internal).
    let entry = ir.ctx.append_basic_block(f, "entry");
    let other = ir.ctx.append_basic_block(f, "other");
    ir.b.position_at_end(other);
    ir.b.build_return(Some(&ir.i64.const_int(0, false)))
        .expect("positioned");
    let cases: Vec<_> = values
        .into_iter()
        .enumerate()
        .map(|(k, v)| {
            let bb = ir.ctx.append_basic_block(f, "object");
            ir.b.position_at_end(bb);
            ir.b.build_return(Some(&v)).expect("positioned");
            (ir.i32.const_int(k as u64, false), bb)
        })
        .collect();
    ir.b.position_at_end(entry);
    let k = f.get_nth_param(0).expect("one parameter").into_int_value();
    ir.b.build_switch(k, other, &cases).expect("positioned");
}
