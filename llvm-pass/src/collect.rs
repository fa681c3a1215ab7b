//! Collects the interesting memory operands of a function before anything changes
//! (the AddressSanitizer way): every load, store, atomicrmw, cmpxchg and
//! llvm.memcpy/memmove/memset, with the ranges each touches.

use crate::classify::{decide, Decision, Object};
use crate::ir::{callee, is_intrinsic, name, opcode, operand, Ir};
use cusafe_format::launch::START_ALIGN;
use cusafe_format::report::{ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE};
use inkwell::values::{CallSiteValue, FunctionValue, InstructionValue, IntValue, PointerValue};
use llvm_sys::LLVMOpcode;

/// Length of a checked range.
#[derive(Clone, Copy, Debug)]
pub enum Len<'ctx> {
    /// Known at compile time (loads, stores, atomics).
    Const(u64),
    /// Computed at run time (memory intrinsics), an integer value.
    Value(IntValue<'ctx>),
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
pub struct Range<'ctx> {
    /// Start address.
    pub addr: PointerValue<'ctx>,
    /// Root pointer (names the block or object).
    pub root: PointerValue<'ctx>,
    /// What the root is.
    pub target: Target,
    /// Bytes touched.
    pub len: Len<'ctx>,
    /// `format::report::ACCESS_*` flags.
    pub flags: u32,
    /// Which operand of the instruction the address is (stripped before the access).
    pub operand: u32,
    /// Whether the check may compare the range's last byte alone (`check.rs`,
    /// `launch::fits_aligned`): a load or store whose IR alignment is at least its
    /// power-of-two length, up to `launch::START_ALIGN`, outside any loop (see
    /// [`Found::keep_last_byte`]); never a range made from several accesses (unions,
    /// whole loops).
    pub last_byte: bool,
}

/// An instruction to instrument and the ranges it touches.
#[derive(Debug)]
pub struct Access<'ctx> {
    /// The memory instruction.
    pub inst: InstructionValue<'ctx>,
    /// Ranges to check before it runs.
    pub ranges: Vec<Range<'ctx>>,
}

/// What collection found in one function, checked or not.
#[derive(Debug, Default)]
pub struct Found<'ctx> {
    /// Accesses to check.
    pub accesses: Vec<Access<'ctx>>,
    /// Accesses proven in bounds of a known object at compile time (no check).
    pub proven: u32,
    /// Accesses with nothing to check against (constant addresses, objects of unknown size).
    pub unknown: u32,
    /// Memory-touching intrinsic calls the pass does not understand (left unchecked).
    pub unknown_intrinsics: u32,
}

fn is_mem_intrinsic(f: FunctionValue) -> Option<bool> {
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
fn is_harmless_intrinsic(f: FunctionValue) -> bool {
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

fn takes_pointer(call: InstructionValue) -> bool {
    let args = CallSiteValue::try_from(call)
        .expect("a call")
        .count_arguments();
    (0..args).any(|i| operand(call, i).is_some_and(|a| crate::ir::addr_space(a).is_some()))
}

/// Bytes a store of operand `i` of `inst` (a first-class value) writes.
fn operand_size<'ctx>(ir: &Ir<'ctx>, inst: InstructionValue<'ctx>, i: u32) -> u64 {
    let v = operand(inst, i).expect("a stored value");
    ir.store_size(&v.get_type())
}

impl<'ctx> Found<'ctx> {
    /// Keeps the last-byte compare ([`Range::last_byte`]) only for accesses `in_loop`
    /// says are outside every loop. In a loop, the bound the other form needs is built
    /// once outside it, and on an H200 the last-byte form ran slower there (gemm's tile
    /// loads 1.098x -> 1.143x; srad, conv2d and the other straight-line kernels gained:
    /// results/2026-11-27-h200-perf-17).
    pub fn keep_last_byte(&mut self, in_loop: impl Fn(InstructionValue<'ctx>) -> bool) {
        for a in &mut self.accesses {
            if in_loop(a.inst) {
                a.ranges.iter_mut().for_each(|r| r.last_byte = false);
            }
        }
    }

    fn add(
        &mut self,
        ir: &Ir<'ctx>,
        ranges: &mut Vec<Range<'ctx>>,
        inst: InstructionValue<'ctx>,
        op: u32,
        len: Len<'ctx>,
        flags: u32,
    ) {
        let addr = operand(inst, op).expect("an address").into_pointer_value();
        let known = match len {
            Len::Const(n) => Some(n),
            Len::Value(v) => v.get_zero_extended_constant(),
        };
        let (root, target) = match decide(ir, addr, known) {
            Decision::Heap { root } => (root, Target::Heap),
            Decision::Object { root, object } => (root, Target::Object(object)),
            Decision::Proven => return self.proven += 1,
            Decision::Unknown => return self.unknown += 1,
        };
        // Loads and stores state their alignment (`LLVMGetAlignment`; 0: none).
        let align = match opcode(inst) {
            Some(LLVMOpcode::LLVMLoad | LLVMOpcode::LLVMStore) => inst.get_alignment().unwrap_or(0),
            _ => 0,
        };
        let last_byte = matches!(len, Len::Const(n) if n.is_power_of_two()
            && n <= u64::from(align).min(START_ALIGN));
        ranges.push(Range {
            addr,
            root,
            target,
            len,
            flags,
            operand: op,
            last_byte,
        });
    }

    fn visit(&mut self, ir: &Ir<'ctx>, inst: InstructionValue<'ctx>) {
        if crate::ir::is_nocheck(ir, inst) {
            return;
        }
        let mut ranges = Vec::new();
        match opcode(inst) {
            Some(LLVMOpcode::LLVMLoad) => {
                let len = ir.store_size(&inst.get_type());
                self.add(ir, &mut ranges, inst, 0, Len::Const(len), 0);
            }
            Some(LLVMOpcode::LLVMStore) => {
                let len = operand_size(ir, inst, 0);
                self.add(ir, &mut ranges, inst, 1, Len::Const(len), ACCESS_WRITE);
            }
            Some(LLVMOpcode::LLVMAtomicRMW | LLVMOpcode::LLVMAtomicCmpXchg) => {
                let len = operand_size(ir, inst, 1);
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
                        let len = operand(inst, 2).expect("a length").into_int_value();
                        let len = Len::Value(len);
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
pub fn collect<'ctx>(ir: &Ir<'ctx>, insts: &[InstructionValue<'ctx>]) -> Found<'ctx> {
    let mut found = Found::default();
    for &i in insts {
        found.visit(ir, i);
    }
    found
}
