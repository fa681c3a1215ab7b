//! Collects the interesting memory operands of a function before anything changes
//! (the AddressSanitizer way): every load, store, atomicrmw, cmpxchg and
//! llvm.memcpy/memmove/memset, with the ranges each touches.

use crate::classify::{decide, Decision, Object};
use crate::ir::{callee, is_intrinsic, name, opcode, operand, Ir};
use cusafe_format::report::{ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{BasicValueEnum, CallSiteValue, InstructionValue, IntValue};
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;

/// Length of a checked range.
#[derive(Clone, Copy, Debug)]
pub enum Len {
    /// Known at compile time (loads, stores, atomics).
    Const(u64),
    /// Computed at run time (memory intrinsics), an integer value.
    Value(LLVMValueRef),
}

/// What a range is checked against.
#[derive(Clone, Debug)]
pub enum Target {
    /// The heap block the root's tag names (run time).
    Heap,
    /// A statically known object starting at the root.
    Object(Object),
}

/// One address range an instruction touches, to be checked against its root.
#[derive(Clone, Debug)]
pub struct Range {
    /// Start address.
    pub addr: LLVMValueRef,
    /// Root pointer (names the block or object).
    pub root: LLVMValueRef,
    /// What the root is.
    pub target: Target,
    /// Bytes touched.
    pub len: Len,
    /// `format::report::ACCESS_*` flags.
    pub flags: u32,
    /// Which operand of the instruction the address is (stripped before the access).
    pub operand: u32,
}

/// An instruction to instrument and the ranges it touches.
#[derive(Debug)]
pub struct Access {
    /// The memory instruction.
    pub inst: LLVMValueRef,
    /// Ranges to check before it runs.
    pub ranges: Vec<Range>,
}

/// What collection found in one function, checked or not.
#[derive(Debug, Default)]
pub struct Found {
    /// Accesses to check.
    pub accesses: Vec<Access>,
    /// Accesses proven in bounds of a known object at compile time (no check).
    pub proven: u32,
    /// Accesses with nothing to check against (constant addresses, objects of unknown size).
    pub unknown: u32,
    /// Memory-touching intrinsic calls the pass does not understand (left unchecked).
    pub unknown_intrinsics: u32,
}

fn is_mem_intrinsic(f: LLVMValueRef) -> Option<bool> {
    let n = name(f);
    if n.starts_with("llvm.memcpy") || n.starts_with("llvm.memmove") {
        Some(true)
    } else if n.starts_with("llvm.memset") {
        Some(false)
    } else {
        None
    }
}

/// Intrinsics that take pointers but touch no memory the program could overflow.
fn is_harmless_intrinsic(f: LLVMValueRef) -> bool {
    let n = name(f);
    [
        "llvm.lifetime.",
        "llvm.dbg.",
        "llvm.assume",
        "llvm.prefetch",
        "llvm.invariant.",
        "llvm.experimental.noalias",
        "llvm.nvvm.read.ptx.sreg",
        "llvm.nvvm.isspacep",
        "llvm.ptrmask",
        "llvm.nvvm.barrier",
        "llvm.nvvm.membar",
        "llvm.nvvm.fence",
    ]
    .iter()
    .any(|p| n.starts_with(p))
}

fn takes_pointer(call: LLVMValueRef) -> bool {
    let args = unsafe { CallSiteValue::new(call) }.count_arguments();
    (0..args).any(|i| crate::ir::addr_space(operand(call, i)).is_some())
}

/// The type of first-class value `v`.
fn type_of<'ctx>(v: LLVMValueRef) -> BasicTypeEnum<'ctx> {
    unsafe { BasicValueEnum::new(v) }.get_type()
}

impl Found {
    fn add(
        &mut self,
        ir: &Ir,
        ranges: &mut Vec<Range>,
        inst: LLVMValueRef,
        op: u32,
        len: Len,
        flags: u32,
    ) {
        let addr = operand(inst, op);
        let known = match len {
            Len::Const(n) => Some(n),
            Len::Value(v) => unsafe { IntValue::new(v) }.get_zero_extended_constant(),
        };
        let (root, target) = match decide(ir, addr, known) {
            Decision::Heap { root } => (root, Target::Heap),
            Decision::Object { root, object } => (root, Target::Object(object)),
            Decision::Proven => return self.proven += 1,
            Decision::Unknown => return self.unknown += 1,
        };
        ranges.push(Range {
            addr,
            root,
            target,
            len,
            flags,
            operand: op,
        });
    }

    fn visit(&mut self, ir: &Ir, inst: LLVMValueRef) {
        if crate::ir::is_nocheck(ir, inst) {
            return;
        }
        let mut ranges = Vec::new();
        match opcode(inst) {
            Some(LLVMOpcode::LLVMLoad) => {
                let ty = unsafe { InstructionValue::new(inst) }.get_type();
                let len = ir.store_size(&ty);
                self.add(ir, &mut ranges, inst, 0, Len::Const(len), 0);
            }
            Some(LLVMOpcode::LLVMStore) => {
                let len = ir.store_size(&type_of(operand(inst, 0)));
                self.add(ir, &mut ranges, inst, 1, Len::Const(len), ACCESS_WRITE);
            }
            Some(LLVMOpcode::LLVMAtomicRMW | LLVMOpcode::LLVMAtomicCmpXchg) => {
                let len = ir.store_size(&type_of(operand(inst, 1)));
                self.add(
                    ir,
                    &mut ranges,
                    inst,
                    0,
                    Len::Const(len),
                    ACCESS_WRITE | ACCESS_ATOMIC,
                );
            }
            Some(LLVMOpcode::LLVMCall) => {
                let Some(f) = callee(inst) else { return };
                if !is_intrinsic(f) {
                    return;
                }
                match is_mem_intrinsic(f) {
                    Some(copies) => {
                        let len = Len::Value(operand(inst, 2));
                        self.add(ir, &mut ranges, inst, 0, len, ACCESS_RANGE | ACCESS_WRITE);
                        if copies {
                            self.add(ir, &mut ranges, inst, 1, len, ACCESS_RANGE);
                        }
                    }
                    None if !is_harmless_intrinsic(f) && takes_pointer(inst) => {
                        self.unknown_intrinsics += 1
                    }
                    None => {}
                }
            }
            _ => return,
        }
        if !ranges.is_empty() {
            self.accesses.push(Access { inst, ranges });
        }
    }
}

/// Collects the accesses of function `f`.
pub fn collect(ir: &Ir, insts: &[LLVMValueRef]) -> Found {
    let mut found = Found::default();
    for &i in insts {
        found.visit(ir, i);
    }
    found
}
