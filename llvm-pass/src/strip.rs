//! Tags never reach memory or uninstrumented code: bits 47..63 (pseudo-pointer tags and
//! the poison bit) are masked off before every checked access, and before pointers go
//! to functions without a body (vprintf, external device functions), to intrinsics
//! other than the memory intrinsics, to inline asm, and through casts into the shared,
//! constant or local address spaces.
//!
//! For accesses, each root is stripped once, right after its definition, and the
//! access's GEP chain is rebuilt on the stripped root: accesses that share a root keep
//! constant offsets from one base, which the backend's vectorizer and address folding
//! need. (`llvm.ptrmask` would be the natural tool, but LLVM 19's NVPTX backend crashes
//! on it in SeparateConstOffsetFromGEP.)

use crate::classify::root_of;
use crate::ir::{
    addr_space, callee, instructions, is_intrinsic, name, opcode, operand, Ir, AS_GENERIC,
    AS_GLOBAL,
};
use cusafe_format::pseudo::REAL_MASK;
use inkwell::types::AsTypeRef;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// `p` with bits 47..63 cleared, as `inttoptr(ptrtoint(p) & REAL_MASK)` at the builder.
fn masked(ir: &Ir, p: LLVMValueRef) -> LLVMValueRef {
    unsafe {
        let bits = ir.and(ir.to_int(p), ir.c64(REAL_MASK));
        LLVMBuildIntToPtr(
            ir.raw_builder(),
            bits,
            LLVMTypeOf(p),
            c"cusafe.strip".as_ptr(),
        )
    }
}

/// Stripped roots of one function, made on first use.
#[derive(Default)]
pub struct Roots {
    stripped: HashMap<LLVMValueRef, LLVMValueRef>,
}

impl Roots {
    /// `root` minus its tag bits, as `gep i8, root, -(root & ~REAL_MASK)` placed right
    /// after `root` is defined (so it dominates every use of `root`).
    fn of(&mut self, ir: &Ir, func: LLVMValueRef, root: LLVMValueRef) -> LLVMValueRef {
        if let Some(&s) = self.stripped.get(&root) {
            return s;
        }
        unsafe {
            let at = if !LLVMIsAArgument(root).is_null() {
                LLVMGetFirstInstruction(LLVMGetEntryBasicBlock(func))
            } else {
                let mut i = LLVMGetNextInstruction(root);
                while !LLVMIsAPHINode(i).is_null() {
                    i = LLVMGetNextInstruction(i);
                }
                i
            };
            ir.at(at);
            let tags = ir.and(ir.to_int(root), ir.c64(!REAL_MASK));
            let mut idx = [ir.sub(ir.c64(0), tags)];
            let s = LLVMBuildGEP2(
                ir.raw_builder(),
                ir.i8.as_type_ref(),
                root,
                idx.as_mut_ptr(),
                1,
                c"cusafe.strip".as_ptr(),
            );
            self.stripped.insert(root, s);
            s
        }
    }

    /// Rebuilds `addr` (derived from `root` by GEPs and casts) on the stripped root,
    /// inserting the copies before `before`.
    fn rebuild(
        &mut self,
        ir: &Ir,
        func: LLVMValueRef,
        addr: LLVMValueRef,
        root: LLVMValueRef,
        before: LLVMValueRef,
    ) -> LLVMValueRef {
        if addr == root {
            return self.of(ir, func, root);
        }
        let base = self.rebuild(ir, func, operand(addr, 0), root, before);
        unsafe {
            if LLVMIsAInstruction(addr).is_null() {
                // A constant expression cannot sit on a non-constant root; keep the mask.
                ir.at(before);
                return masked(ir, addr);
            }
            let copy = LLVMInstructionClone(addr);
            LLVMSetOperand(copy, 0, base);
            ir.at(before);
            LLVMInsertIntoBuilder(ir.raw_builder(), copy);
            copy
        }
    }

    /// Points operand `idx` of `inst` (an address derived from `root`) at the rebuilt,
    /// stripped address.
    pub fn strip_access(
        &mut self,
        ir: &Ir,
        func: LLVMValueRef,
        inst: LLVMValueRef,
        idx: u32,
        root: LLVMValueRef,
    ) {
        let addr = operand(inst, idx);
        debug_assert_eq!(root_of(addr), root);
        let s = self.rebuild(ir, func, addr, root, inst);
        unsafe { LLVMSetOperand(inst, idx, s) };
    }
}

/// Replaces operand `idx` of `inst` with its masked value (inserted before `inst`).
fn strip_operand(ir: &Ir, inst: LLVMValueRef, idx: u32) {
    let p = operand(inst, idx);
    if matches!(addr_space(p), Some(AS_GENERIC | AS_GLOBAL)) {
        ir.at(inst);
        let m = masked(ir, p);
        unsafe { LLVMSetOperand(inst, idx, m) };
    }
}

fn is_mem_intrinsic(f: LLVMValueRef) -> bool {
    let n = name(f);
    [
        "llvm.memcpy",
        "llvm.memmove",
        "llvm.memset",
        "llvm.lifetime.",
        "llvm.dbg.",
    ]
    .iter()
    .any(|p| n.starts_with(p))
}

/// Whether call `i` leaves instrumented code (inline asm, a function without a body, an
/// intrinsic other than the memory intrinsics).
fn leaves_instrumented_code(i: LLVMValueRef) -> bool {
    unsafe {
        !LLVMIsAInlineAsm(LLVMGetCalledValue(i)).is_null()
            || callee(i).is_some_and(|c| {
                (is_intrinsic(c) && !is_mem_intrinsic(c))
                    || (!is_intrinsic(c) && LLVMIsDeclaration(c) != 0)
            })
    }
}

/// Strips pointer operands that leave instrumented code in function `f`: arguments of
/// calls that leave it, and pointers stored into buffers handed to such calls (printf's
/// argument buffer holds the `%s` and `%p` pointers vprintf will read).
pub fn strip_exits(ir: &Ir, f: LLVMValueRef) {
    let insts = instructions(f);
    let mut handed_out = Vec::new();
    for &i in &insts {
        if opcode(i) == Some(LLVMOpcode::LLVMCall) && leaves_instrumented_code(i) {
            for a in 0..unsafe { LLVMGetNumArgOperands(i) } {
                let root = root_of(operand(i, a));
                if unsafe { !LLVMIsAAllocaInst(root).is_null() } {
                    handed_out.push(root);
                }
            }
        }
    }
    for &i in &insts {
        if opcode(i) == Some(LLVMOpcode::LLVMStore) && handed_out.contains(&root_of(operand(i, 1)))
        {
            strip_operand(ir, i, 0);
        }
    }
    for i in insts {
        match opcode(i) {
            Some(LLVMOpcode::LLVMCall) if leaves_instrumented_code(i) => {
                for a in 0..unsafe { LLVMGetNumArgOperands(i) } {
                    strip_operand(ir, i, a);
                }
            }
            // Into shared, constant or local space: those accesses are not heap-checked,
            // so no rebuilt chain strips them. (Casts to global are left alone: accesses
            // through them rebuild the chain from the root, keeping its bounds.)
            Some(LLVMOpcode::LLVMAddrSpaceCast)
                if addr_space(operand(i, 0)) == Some(AS_GENERIC)
                    && !matches!(addr_space(i), Some(AS_GENERIC | AS_GLOBAL)) =>
            {
                strip_operand(ir, i, 0)
            }
            _ => {}
        }
    }
}
