//! Rebuilding an address earlier in its block: the cold path of a group whose union
//! assumed an index does not wrap ([`crate::base::Assumed`]) checks each member at its
//! real address, which the program computes only after the group's check. [`Remat`]
//! clones the pure arithmetic that address needs to where the check is.

use crate::dom::Cfg;
use crate::ir::{callee, opcode, operand, Ir};
use inkwell::values::{BasicValue, BasicValueEnum, InstructionValue};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// Most instructions cloned for one address.
const MAX_CLONES: usize = 16;

/// Instructions that compute a value and nothing else, and cannot trap: free to run
/// earlier in their block, or twice.
pub fn pure_value(v: InstructionValue) -> bool {
    use LLVMOpcode::*;
    match opcode(v) {
        Some(
            LLVMAdd | LLVMSub | LLVMMul | LLVMShl | LLVMLShr | LLVMAShr | LLVMAnd | LLVMOr
            | LLVMXor | LLVMGetElementPtr | LLVMTrunc | LLVMZExt | LLVMSExt | LLVMPtrToInt
            | LLVMIntToPtr | LLVMBitCast | LLVMAddrSpaceCast | LLVMICmp | LLVMSelect,
        ) => true,
        // Thread and block indices, integer minima and maxima.
        Some(LLVMCall) => callee(v).is_some_and(|f| {
            let name = crate::ir::name(f);
            name.starts_with("llvm.nvvm.read.ptx.sreg.")
                || ["llvm.smin.", "llvm.smax.", "llvm.umin.", "llvm.umax."]
                    .iter()
                    .any(|p| name.starts_with(p))
        }),
        _ => false,
    }
}

/// The operands of instruction `v` that are values (a call's callee is not).
pub(crate) fn value_operands<'ctx>(
    v: InstructionValue<'ctx>,
) -> impl Iterator<Item = BasicValueEnum<'ctx>> {
    let n = v.get_num_operands();
    let n = if opcode(v) == Some(LLVMOpcode::LLVMCall) {
        n - 1
    } else {
        n
    };
    (0..n).map(move |o| operand(v, o).expect("a pure instruction's operands are values"))
}

/// How to build an address before an earlier instruction of its block.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Remat<'ctx> {
    /// The address.
    addr: BasicValueEnum<'ctx>,
    /// The instructions to clone, operands first (empty when `addr` is available).
    clones: Vec<InstructionValue<'ctx>>,
}

impl<'ctx> Remat<'ctx> {
    /// How to build `addr` right before `at`: instructions that do not dominate `at`
    /// are cloned, which takes them to be pure ([`pure_value`]) and in `at`'s block;
    /// `None` otherwise (or past [`MAX_CLONES`]).
    pub fn plan(
        cfg: &Cfg,
        addr: BasicValueEnum<'ctx>,
        at: InstructionValue<'ctx>,
    ) -> Option<Remat<'ctx>> {
        fn walk<'ctx>(
            cfg: &Cfg,
            v: BasicValueEnum<'ctx>,
            at: InstructionValue<'ctx>,
            out: &mut Vec<InstructionValue<'ctx>>,
        ) -> bool {
            let Some(i) = v.as_instruction_value() else {
                return true;
            };
            if out.contains(&i) || cfg.dominates(i, at) {
                return true;
            }
            let ok = out.len() < MAX_CLONES
                && i.get_parent() == at.get_parent()
                && pure_value(i)
                && value_operands(i).all(|o| walk(cfg, o, at, out));
            if ok {
                out.push(i);
            }
            ok
        }
        let mut clones = Vec::new();
        walk(cfg, addr, at, &mut clones).then_some(Remat { addr, clones })
    }

    /// The values the rebuilt address is made of (each must be available where it is
    /// built).
    pub fn leaves(&self) -> Vec<BasicValueEnum<'ctx>> {
        if self.clones.is_empty() {
            return vec![self.addr];
        }
        let cloned = |o: BasicValueEnum| {
            o.as_instruction_value()
                .is_some_and(|i| self.clones.contains(&i))
        };
        let mut out: Vec<BasicValueEnum> = Vec::new();
        for &c in &self.clones {
            for o in value_operands(c) {
                if !cloned(o) && !out.contains(&o) {
                    out.push(o);
                }
            }
        }
        out
    }

    /// The same plan with its values passed through `f` (recover-mode phis): the address
    /// itself when nothing is cloned; cloned instructions read their operands when
    /// built, through `build`'s own `f`.
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Remat<'ctx> {
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
    pub fn build(
        &self,
        ir: &Ir<'ctx>,
        f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>,
    ) -> BasicValueEnum<'ctx> {
        let mut made: HashMap<InstructionValue, BasicValueEnum> = HashMap::new();
        let made_or = |made: &HashMap<_, _>, v: BasicValueEnum<'ctx>| {
            let copy = v.as_instruction_value().and_then(|i| made.get(&i)).copied();
            copy.unwrap_or_else(|| f(v))
        };
        for &c in &self.clones {
            let copy = c.explicit_clone();
            for (o, v) in value_operands(c).enumerate() {
                let v = made_or(&made, v);
                assert!(
                    copy.set_operand(o as u32, v),
                    "a clone has its original's operands"
                );
            }
            ir.b.insert_instruction(&copy, None);
            let value = crate::sys::value(copy).expect("a pure instruction has a value");
            made.insert(c, value);
        }
        made_or(&made, self.addr)
    }
}
