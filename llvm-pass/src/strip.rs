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
    BasicValueEnum, CallSiteValue, FunctionValue, InstructionOpcode, InstructionValue, PointerValue,
};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// `p` with bits 47..63 cleared, as `inttoptr(ptrtoint(p) & REAL_MASK)` at the builder.
fn masked<'ctx>(ir: &Ir<'ctx>, p: PointerValue<'ctx>) -> PointerValue<'ctx> {
    let bits = ir.and(ir.to_int(p), ir.c64(REAL_MASK));
    let r = ir.b.build_int_to_ptr(bits, p.get_type(), "cusafe.strip");
    r.expect("positioned")
}

/// Points operand `idx` of instruction `inst` at `v`.
fn set_operand<'ctx>(inst: InstructionValue<'ctx>, idx: u32, v: PointerValue<'ctx>) {
    let set = inst.set_operand(idx, v);
    debug_assert!(set, "an operand of the instruction");
}

/// Stripped roots of one function, made on first use.
#[derive(Default)]
pub struct Roots<'ctx> {
    stripped: HashMap<PointerValue<'ctx>, PointerValue<'ctx>>,
}

impl<'ctx> Roots<'ctx> {
    /// `root` minus its tag bits, as `gep i8, root, -(root & ~REAL_MASK)` placed right
    /// after `root` is defined (so it dominates every use of `root`).
    fn of(
        &mut self,
        ir: &Ir<'ctx>,
        func: FunctionValue<'ctx>,
        root: PointerValue<'ctx>,
    ) -> PointerValue<'ctx> {
        if let Some(&s) = self.stripped.get(&root) {
            return s;
        }
        let at = if func
            .get_param_iter()
            .any(|p| p == BasicValueEnum::from(root))
        {
            let entry = func.get_first_basic_block().expect("a body");
            entry.get_first_instruction().expect("a terminator")
        } else {
            let def = root.as_instruction().expect("a root that is no argument");
            let mut i = def.get_next_instruction();
            while let Some(phi) = i.filter(|i| i.get_opcode() == InstructionOpcode::Phi) {
                i = phi.get_next_instruction();
            }
            i.expect("a terminator follows")
        };
        ir.at(at);
        let tags = ir.and(ir.to_int(root), ir.c64(!REAL_MASK));
        let idx = ir.sub(ir.c64(0), tags);
        let s = unsafe { ir.b.build_gep(ir.i8, root, &[idx], "cusafe.strip") };
        let s = s.expect("positioned");
        self.stripped.insert(root, s);
        s
    }

    /// Rebuilds `addr` (derived from `root` by GEPs and casts) on the stripped root,
    /// inserting the copies before `before`.
    fn rebuild(
        &mut self,
        ir: &Ir<'ctx>,
        func: FunctionValue<'ctx>,
        addr: PointerValue<'ctx>,
        root: PointerValue<'ctx>,
        before: InstructionValue<'ctx>,
    ) -> PointerValue<'ctx> {
        if addr == root {
            return self.of(ir, func, root);
        }
        let inner = operand(addr, 0).expect("a GEP's or cast's pointer");
        let base = self.rebuild(ir, func, inner.into_pointer_value(), root, before);
        let Some(def) = addr.as_instruction() else {
            // A constant expression cannot sit on a non-constant root; keep the mask.
            ir.at(before);
            return masked(ir, addr);
        };
        let copy = def.explicit_clone();
        set_operand(copy, 0, base);
        ir.at(before);
        ir.b.insert_instruction(&copy, None);
        crate::sys::value(copy)
            .expect("a pointer")
            .into_pointer_value()
    }

    /// Points operand `idx` of `inst` (an address derived from `root`) at the rebuilt,
    /// stripped address.
    pub fn strip_access(
        &mut self,
        ir: &Ir<'ctx>,
        func: FunctionValue<'ctx>,
        inst: InstructionValue<'ctx>,
        idx: u32,
        root: PointerValue<'ctx>,
    ) {
        let addr = operand(inst, idx).expect("an address").into_pointer_value();
        debug_assert_eq!(root_of(addr.into()), BasicValueEnum::from(root));
        let s = self.rebuild(ir, func, addr, root, inst);
        set_operand(inst, idx, s);
    }
}

/// Replaces operand `idx` of `inst` with its masked value (inserted before `inst`).
fn strip_operand<'ctx>(ir: &Ir<'ctx>, inst: InstructionValue<'ctx>, idx: u32) {
    let Some(BasicValueEnum::PointerValue(p)) = operand(inst, idx) else {
        return;
    };
    if matches!(addr_space(p), Some(AS_GENERIC | AS_GLOBAL)) {
        ir.at(inst);
        let m = masked(ir, p);
        set_operand(inst, idx, m);
    }
}

fn is_mem_intrinsic(f: FunctionValue) -> bool {
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
fn leaves_instrumented_code(i: InstructionValue) -> bool {
    let is_declaration = |c: FunctionValue| c.as_global_value().is_declaration();
    calls_inline_asm(i)
        || callee(i).is_some_and(|c| {
            (is_intrinsic(c) && !is_mem_intrinsic(c)) || (!is_intrinsic(c) && is_declaration(c))
        })
}

/// The number of arguments of call `i`.
fn arg_count(i: InstructionValue) -> u32 {
    CallSiteValue::try_from(i)
        .expect("a call")
        .count_arguments()
}

/// Strips pointer operands that leave instrumented code in function `f`: arguments of
/// calls that leave it, and pointers stored into buffers handed to such calls (printf's
/// argument buffer holds the `%s` and `%p` pointers vprintf will read).
pub fn strip_exits<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>) {
    let insts = instructions(f);
    let mut handed_out = Vec::new();
    for &i in &insts {
        if opcode(i) == Some(LLVMOpcode::LLVMCall) && leaves_instrumented_code(i) {
            for a in 0..arg_count(i) {
                let root = operand(i, a).map(root_of);
                if let Some(root) = root.filter(|&r| opcode(r) == Some(LLVMOpcode::LLVMAlloca)) {
                    handed_out.push(root);
                }
            }
        }
    }
    for &i in &insts {
        let handed = || {
            operand(i, 1)
                .map(root_of)
                .is_some_and(|r| handed_out.contains(&r))
        };
        if opcode(i) == Some(LLVMOpcode::LLVMStore) && handed() {
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
                if operand(i, 0).and_then(addr_space) == Some(AS_GENERIC)
                    && !matches!(addr_space(i), Some(AS_GENERIC | AS_GLOBAL)) =>
            {
                strip_operand(ir, i, 0)
            }
            _ => {}
        }
    }
}
