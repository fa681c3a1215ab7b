//! Rebuilding an address earlier in its block: the cold path of a group whose union
//! assumed an index does not wrap ([`crate::base::Assumed`]) checks each member at its
//! real address, which the program computes only after the group's check. [`Remat`]
//! clones the pure arithmetic that address needs to where the check is.

use crate::dom::Cfg;
use crate::ir::{callee, inst, opcode, operand, Ir};
use inkwell::values::{AsValueRef, BasicValueEnum};
use llvm_sys::prelude::*;
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// Most instructions cloned for one address.
const MAX_CLONES: usize = 16;

/// Instructions that compute a value and nothing else, and cannot trap: free to run
/// earlier in their block, or twice.
fn pure_value(v: LLVMValueRef) -> bool {
    use LLVMOpcode::*;
    match opcode(v) {
        Some(
            LLVMAdd | LLVMSub | LLVMMul | LLVMShl | LLVMLShr | LLVMAShr | LLVMAnd | LLVMOr
            | LLVMXor | LLVMGetElementPtr | LLVMTrunc | LLVMZExt | LLVMSExt | LLVMPtrToInt
            | LLVMIntToPtr | LLVMBitCast | LLVMAddrSpaceCast | LLVMICmp | LLVMSelect,
        ) => true,
        // Thread and block indices.
        Some(LLVMCall) => {
            callee(v).is_some_and(|f| crate::ir::name(f).starts_with("llvm.nvvm.read.ptx.sreg."))
        }
        _ => false,
    }
}

/// The operands of instruction `v` that are values (a call's callee is not).
fn value_operands(v: LLVMValueRef) -> impl Iterator<Item = LLVMValueRef> {
    let n = inst(v).get_num_operands();
    let n = if opcode(v) == Some(LLVMOpcode::LLVMCall) {
        n - 1
    } else {
        n
    };
    (0..n).map(move |o| operand(v, o))
}

/// How to build an address before an earlier instruction of its block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remat {
    /// The address.
    addr: LLVMValueRef,
    /// The instructions to clone, operands first (empty when `addr` is available).
    clones: Vec<LLVMValueRef>,
}

impl Remat {
    /// How to build `addr` right before `at`: instructions that do not dominate `at`
    /// are cloned, which takes them to be pure ([`pure_value`]) and in `at`'s block;
    /// `None` otherwise (or past [`MAX_CLONES`]).
    pub fn plan(cfg: &Cfg, addr: LLVMValueRef, at: LLVMValueRef) -> Option<Remat> {
        fn walk(cfg: &Cfg, v: LLVMValueRef, at: LLVMValueRef, out: &mut Vec<LLVMValueRef>) -> bool {
            if opcode(v).is_none() || out.contains(&v) || cfg.dominates(v, at) {
                return true;
            }
            let ok = out.len() < MAX_CLONES
                && inst(v).get_parent() == inst(at).get_parent()
                && pure_value(v)
                && value_operands(v).all(|o| walk(cfg, o, at, out));
            if ok {
                out.push(v);
            }
            ok
        }
        let mut clones = Vec::new();
        walk(cfg, addr, at, &mut clones).then_some(Remat { addr, clones })
    }

    /// The values the rebuilt address is made of (each must be available where it is
    /// built).
    pub fn leaves(&self) -> Vec<LLVMValueRef> {
        if self.clones.is_empty() {
            return vec![self.addr];
        }
        let mut out: Vec<LLVMValueRef> = Vec::new();
        for &c in &self.clones {
            for o in value_operands(c) {
                if !self.clones.contains(&o) && !out.contains(&o) {
                    out.push(o);
                }
            }
        }
        out
    }

    /// The same plan with its values passed through `f` (recover-mode phis): the address
    /// itself when nothing is cloned; cloned instructions read their operands when
    /// built, through `build`'s own `f`.
    pub fn map(&self, f: impl Fn(LLVMValueRef) -> LLVMValueRef) -> Remat {
        Remat {
            addr: if self.clones.is_empty() {
                f(self.addr)
            } else {
                self.addr
            },
            clones: self.clones.clone(),
        }
    }

    /// Builds the address at the builder's position, from leaves passed through `f`
    /// (recover-mode phis).
    pub fn build(&self, ir: &Ir, f: impl Fn(LLVMValueRef) -> LLVMValueRef) -> LLVMValueRef {
        let mut made: HashMap<LLVMValueRef, LLVMValueRef> = HashMap::new();
        for &c in &self.clones {
            let copy = inst(c).explicit_clone();
            for (o, v) in value_operands(c).enumerate() {
                let v = made.get(&v).copied().unwrap_or_else(|| f(v));
                let v = unsafe { BasicValueEnum::new(v) };
                assert!(
                    copy.set_operand(o as u32, v),
                    "a clone has its original's operands"
                );
            }
            ir.b.insert_instruction(&copy, None);
            made.insert(c, copy.as_value_ref());
        }
        made.get(&self.addr)
            .copied()
            .unwrap_or_else(|| f(self.addr))
    }
}
