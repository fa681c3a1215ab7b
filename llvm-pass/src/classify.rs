//! The one place that decides what gets checked.
//!
//! An access is checked against the block of its *root*: the pointer its address was
//! derived from by a chain of GEPs and address-space casts. Checking against the root
//! rather than the address catches non-linear overflows that jump straight into another
//! live block without any per-GEP instrumentation. Roots that cannot be cusafe blocks
//! (allocas, globals, constants, shared/local/constant address spaces) are skipped here;
//! local and shared objects get their own rules elsewhere.

use crate::ir::{addr_space, opcode, operand, AS_GENERIC, AS_GLOBAL};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

/// What to do with an access or an arithmetic result.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Check against the block of `root` at run time.
    Check {
        /// Pointer the address was derived from.
        root: LLVMValueRef,
    },
    /// The object is known statically and is not a cusafe heap block (alloca, global,
    /// constant, shared/local/constant memory): no heap check.
    Static,
}

/// Strips GEPs and casts (instructions and constant expressions) down to the root.
pub fn root_of(mut v: LLVMValueRef) -> LLVMValueRef {
    loop {
        let op = opcode(v).or_else(|| unsafe {
            (!LLVMIsAConstantExpr(v).is_null()).then(|| LLVMGetConstOpcode(v))
        });
        match op {
            Some(LLVMOpcode::LLVMGetElementPtr)
            | Some(LLVMOpcode::LLVMAddrSpaceCast)
            | Some(LLVMOpcode::LLVMBitCast) => v = operand(v, 0),
            _ => return v,
        }
    }
}

fn heap_space(v: LLVMValueRef) -> bool {
    matches!(addr_space(v), Some(AS_GENERIC) | Some(AS_GLOBAL))
}

/// Decides how an access through `addr` (or a pointer computed as `addr`) is checked.
pub fn decide(addr: LLVMValueRef) -> Decision {
    if !heap_space(addr) {
        return Decision::Static;
    }
    let root = root_of(addr);
    let statically_known =
        unsafe { !LLVMIsAAllocaInst(root).is_null() || !LLVMIsAConstant(root).is_null() };
    if statically_known || !heap_space(root) {
        Decision::Static
    } else {
        Decision::Check { root }
    }
}
