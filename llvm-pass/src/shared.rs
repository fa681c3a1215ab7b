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
use cusafe_format::pseudo::{shared_tag_bits, MAX_SHARED_OBJECTS};
use inkwell::types::AsTypeRef;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::LLVMABISizeOfType;
use llvm_sys::LLVMOpcode;
use std::ffi::CString;

/// Names of the per-module bounds functions device-rt calls.
pub const START_FN: &str = "__cusafe_shared_start";
/// See [`START_FN`].
pub const SIZE_FN: &str = "__cusafe_shared_size";

/// The statically sized `__shared__` array `v` is, with its size.
fn shared_array(ir: &Ir, v: LLVMValueRef) -> Option<u64> {
    unsafe {
        if LLVMIsAGlobalVariable(v).is_null() || addr_space(v) != Some(AS_SHARED) {
            return None;
        }
        let size = LLVMABISizeOfType(ir.td(), LLVMGlobalGetValueType(v));
        (size > 0).then_some(size)
    }
}

/// Operands through which a pointer leaves the function: arguments of calls to
/// functions with a body, the value of a store, the value returned.
fn escaping_operands(i: LLVMValueRef) -> Vec<u32> {
    unsafe {
        match opcode(i) {
            Some(LLVMOpcode::LLVMCall) if callee(i).is_some_and(|f| LLVMIsDeclaration(f) == 0) => {
                (0..LLVMGetNumArgOperands(i) as u32).collect()
            }
            Some(LLVMOpcode::LLVMStore) => vec![0],
            Some(LLVMOpcode::LLVMRet) if LLVMGetNumOperands(i) == 1 => vec![0],
            _ => Vec::new(),
        }
    }
}

/// Tags the escaping generic pointers to `__shared__` arrays in `functions` and defines
/// the bounds functions; returns how many arrays got an index.
pub fn instrument(ir: &Ir, functions: &[LLVMValueRef]) -> usize {
    let mut objects: Vec<(LLVMValueRef, u64)> = Vec::new();
    for &f in functions {
        for i in instructions(f) {
            for op in escaping_operands(i) {
                let v = operand(i, op);
                if addr_space(v) != Some(AS_GENERIC) {
                    continue; // only generic pointers can carry the tag bits
                }
                let root = root_of(v);
                let Some(size) = shared_array(ir, root) else {
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
                unsafe {
                    ir.at(i);
                    let bits = ir.c64(shared_tag_bits(index as u32));
                    let tagged = ir.or(ir.to_int(v), bits);
                    let p = LLVMBuildIntToPtr(
                        ir.raw_builder(),
                        tagged,
                        LLVMTypeOf(v),
                        c"cusafe.shared".as_ptr(),
                    );
                    LLVMSetOperand(i, op, p);
                }
            }
        }
    }
    define_bounds(ir, &objects);
    objects.len()
}

/// Defines `START_FN(i32) -> i64` (generic address) and `SIZE_FN(i32) -> i64`.
fn define_bounds(ir: &Ir, objects: &[(LLVMValueRef, u64)]) {
    let start_of = |g: LLVMValueRef| unsafe {
        LLVMConstPtrToInt(
            LLVMConstAddrSpaceCast(g, ir.ptr.as_type_ref()),
            ir.i64.as_type_ref(),
        )
    };
    define_switch(
        ir,
        START_FN,
        objects.iter().map(|&(g, _)| start_of(g)).collect(),
    );
    define_switch(
        ir,
        SIZE_FN,
        objects.iter().map(|&(_, s)| ir.c64(s)).collect(),
    );
}

/// `i64 name(i32 k)`: `values[k]`, 0 for any other `k`.
fn define_switch(ir: &Ir, name: &str, values: Vec<LLVMValueRef>) {
    unsafe {
        let mut params = [ir.i32.as_type_ref()];
        let ty = LLVMFunctionType(ir.i64.as_type_ref(), params.as_mut_ptr(), 1, 0);
        let cname = CString::new(name).expect("no NUL");
        let mut f = LLVMGetNamedFunction(ir.raw_module(), cname.as_ptr());
        if f.is_null() {
            f = LLVMAddFunction(ir.raw_module(), cname.as_ptr(), ty);
        }
        // External until device-rt's declaration has linked against it (devrt.rs then
        // makes it internal).
        let entry = LLVMAppendBasicBlockInContext(ir.raw_ctx(), f, c"entry".as_ptr());
        let other = LLVMAppendBasicBlockInContext(ir.raw_ctx(), f, c"other".as_ptr());
        ir.at_end(other);
        LLVMBuildRet(ir.raw_builder(), ir.c64(0));
        ir.at_end(entry);
        let sw = LLVMBuildSwitch(
            ir.raw_builder(),
            LLVMGetParam(f, 0),
            other,
            values.len() as u32,
        );
        for (k, v) in values.into_iter().enumerate() {
            let bb = LLVMAppendBasicBlockInContext(ir.raw_ctx(), f, c"object".as_ptr());
            LLVMAddCase(sw, ir.c32(k as u32), bb);
            ir.at_end(bb);
            LLVMBuildRet(ir.raw_builder(), v);
        }
    }
}
