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
use crate::sys::calls_inline_asm;
use cusafe_format::pseudo::REAL_MASK;
use inkwell::values::{
    AsValueRef, BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue,
    IntValue, PointerValue,
};
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// `p` with bits 47..63 cleared, as `inttoptr(ptrtoint(p) & REAL_MASK)` at the builder.
fn masked(ir: &Ir, p: LLVMValueRef) -> LLVMValueRef {
    let bits = unsafe { IntValue::new(ir.and(ir.to_int(p), ir.c64(REAL_MASK))) };
    let ty = unsafe { PointerValue::new(p) }.get_type();
    let r = ir.b.build_int_to_ptr(bits, ty, "cusafe.strip");
    r.expect("positioned").as_value_ref()
}

/// Points operand `idx` of instruction `inst` at `v`.
fn set_operand(inst: LLVMValueRef, idx: u32, v: LLVMValueRef) {
    let inst = unsafe { InstructionValue::new(inst) };
    let set = inst.set_operand(idx, unsafe { BasicValueEnum::new(v) });
    debug_assert!(set, "an operand of the instruction");
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
        let f = unsafe { FunctionValue::new(func) }.expect("a function");
        let at = if f.get_param_iter().any(|p| p.as_value_ref() == root) {
            let entry = f.get_first_basic_block().expect("a body");
            entry.get_first_instruction().expect("a terminator")
        } else {
            let mut i = unsafe { InstructionValue::new(root) }.get_next_instruction();
            while let Some(phi) = i.filter(|i| i.get_opcode() == InstructionOpcode::Phi) {
                i = phi.get_next_instruction();
            }
            i.expect("a terminator follows")
        };
        ir.at(at.as_value_ref());
        let tags = ir.and(ir.to_int(root), ir.c64(!REAL_MASK));
        let idx = unsafe { IntValue::new(ir.sub(ir.c64(0), tags)) };
        let ptr = unsafe { PointerValue::new(root) };
        let s = unsafe { ir.b.build_gep(ir.i8, ptr, &[idx], "cusafe.strip") };
        let s = s.expect("positioned").as_value_ref();
        self.stripped.insert(root, s);
        s
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
        if opcode(addr).is_none() {
            // A constant expression cannot sit on a non-constant root; keep the mask.
            ir.at(before);
            return masked(ir, addr);
        }
        let copy = unsafe { InstructionValue::new(addr) }.explicit_clone();
        set_operand(copy.as_value_ref(), 0, base);
        ir.at(before);
        ir.b.insert_instruction(&copy, None);
        copy.as_value_ref()
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
        set_operand(inst, idx, s);
    }
}

/// Replaces operand `idx` of `inst` with its masked value (inserted before `inst`).
fn strip_operand(ir: &Ir, inst: LLVMValueRef, idx: u32) {
    let p = operand(inst, idx);
    if matches!(addr_space(p), Some(AS_GENERIC | AS_GLOBAL)) {
        ir.at(inst);
        let m = masked(ir, p);
        set_operand(inst, idx, m);
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
    let is_declaration = |c: LLVMValueRef| {
        let c = unsafe { FunctionValue::new(c) }.expect("a callee is a function");
        c.as_global_value().is_declaration()
    };
    calls_inline_asm(i)
        || callee(i).is_some_and(|c| {
            (is_intrinsic(c) && !is_mem_intrinsic(c)) || (!is_intrinsic(c) && is_declaration(c))
        })
}

/// The number of arguments of call `i`.
fn arg_count(i: LLVMValueRef) -> u32 {
    unsafe { CallSiteValue::new(i) }.count_arguments()
}

/// Strips pointer operands that leave instrumented code in function `f`: arguments of
/// calls that leave it, and pointers stored into buffers handed to such calls (printf's
/// argument buffer holds the `%s` and `%p` pointers vprintf will read).
pub fn strip_exits(ir: &Ir, f: LLVMValueRef) {
    let insts = instructions(f);
    let mut handed_out = Vec::new();
    for &i in &insts {
        if opcode(i) == Some(LLVMOpcode::LLVMCall) && leaves_instrumented_code(i) {
            for a in 0..arg_count(i) {
                let root = root_of(operand(i, a));
                if opcode(root) == Some(LLVMOpcode::LLVMAlloca) {
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
                for a in 0..arg_count(i) {
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
