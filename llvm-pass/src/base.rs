//! Splits an address into a base (rebuildable from values that exist) and a constant
//! byte offset, so that neighbouring accesses (`a[i-1]`, `a[i]`, `a[i+1]`; the copies of
//! an unrolled loop body) can be recognised as one base with different offsets.
//!
//! Constant-index GEPs on top are folded into the offset; in the innermost GEP with
//! variable indices, a constant array index becomes 0 plus `C * stride`, and an index
//! `x + C` (`add`, `or disjoint`, and `sext`/`zext` of an `add nsw`/`add nuw` or a
//! disjoint `or`) becomes `x` plus `C * stride`.

use crate::classify::{const_int, gep_offset};
use crate::ir::{opcode, operand, Ir};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::LLVMABISizeOfType;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

/// One index of the base GEP, as it must be rebuilt.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Index {
    /// An existing value.
    Value(LLVMValueRef),
    /// `sext x to ty`.
    SExt(LLVMValueRef, LLVMTypeRef),
    /// `zext x to ty`.
    ZExt(LLVMValueRef, LLVMTypeRef),
}

impl Index {
    /// The value the index is computed from.
    pub fn leaf(self) -> LLVMValueRef {
        match self {
            Index::Value(v) | Index::SExt(v, _) | Index::ZExt(v, _) => v,
        }
    }
}

/// A base pointer: `ptr` itself, or `gep ty, ptr, indices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base {
    /// The pointer operand.
    pub ptr: LLVMValueRef,
    /// Source element type and indices of the GEP, if any.
    pub gep: Option<(LLVMTypeRef, Vec<Index>)>,
}

impl Base {
    /// Values the base is built from (each must be available where it is rebuilt).
    pub fn leaves(&self) -> Vec<LLVMValueRef> {
        let mut out = vec![self.ptr];
        if let Some((_, idx)) = &self.gep {
            out.extend(idx.iter().map(|i| i.leaf()));
        }
        out
    }

    /// The same base with every value passed through `f` (e.g. recover-mode phis).
    pub fn map(&self, f: impl Fn(LLVMValueRef) -> LLVMValueRef) -> Base {
        let idx = |i: &Index| match *i {
            Index::Value(v) => Index::Value(f(v)),
            Index::SExt(v, t) => Index::SExt(f(v), t),
            Index::ZExt(v, t) => Index::ZExt(f(v), t),
        };
        Base {
            ptr: f(self.ptr),
            gep: self
                .gep
                .as_ref()
                .map(|(ty, ix)| (*ty, ix.iter().map(idx).collect())),
        }
    }

    /// Builds the base at the builder's position, plus `off` bytes.
    pub fn build(&self, ir: &Ir, off: i64) -> LLVMValueRef {
        unsafe {
            let mut p = self.ptr;
            if let Some((ty, idx)) = &self.gep {
                let mut vals: Vec<LLVMValueRef> = idx
                    .iter()
                    .map(|i| match *i {
                        Index::Value(v) => v,
                        Index::SExt(v, t) => LLVMBuildSExt(ir.b, v, t, crate::ir::NONAME),
                        Index::ZExt(v, t) => LLVMBuildZExt(ir.b, v, t, crate::ir::NONAME),
                    })
                    .collect();
                p = LLVMBuildGEP2(
                    ir.b,
                    *ty,
                    p,
                    vals.as_mut_ptr(),
                    vals.len() as u32,
                    crate::ir::NONAME,
                );
            }
            if off != 0 {
                let mut c = [ir.c64(off as u64)];
                p = LLVMBuildGEP2(ir.b, ir.i8, p, c.as_mut_ptr(), 1, crate::ir::NONAME);
            }
            p
        }
    }
}

/// `x + C` as (x, C), when the addition cannot wrap in the way the index is used.
fn split_add(v: LLVMValueRef) -> Option<(Index, i64)> {
    unsafe {
        let plain = |v: LLVMValueRef| -> Option<(LLVMValueRef, i64)> {
            match opcode(v)? {
                LLVMOpcode::LLVMAdd => Some((operand(v, 0), const_int(operand(v, 1))?)),
                LLVMOpcode::LLVMOr if LLVMGetIsDisjoint(v) != 0 => {
                    Some((operand(v, 0), const_int(operand(v, 1))?))
                }
                _ => None,
            }
        };
        // `x | C` with disjoint bits and C >= 0 is `x + C` with no carry: it commutes
        // with either extension.
        let disjoint_or = |v: LLVMValueRef| {
            opcode(v) == Some(LLVMOpcode::LLVMOr)
                && LLVMGetIsDisjoint(v) != 0
                && const_int(operand(v, 1)).is_some_and(|c| c >= 0)
        };
        match opcode(v)? {
            // A widened index is keyed by what was widened, so that `sext i` and
            // `sext (i + 1)` share a base.
            LLVMOpcode::LLVMSExt => {
                let inner = operand(v, 0);
                let no_wrap = (opcode(inner) == Some(LLVMOpcode::LLVMAdd)
                    && LLVMGetNSW(inner) != 0)
                    || disjoint_or(inner);
                let split = no_wrap.then(|| plain(inner)).flatten();
                let (x, c) = split.unwrap_or((inner, 0));
                Some((Index::SExt(x, LLVMTypeOf(v)), c))
            }
            LLVMOpcode::LLVMZExt => {
                let inner = operand(v, 0);
                let no_wrap = (opcode(inner) == Some(LLVMOpcode::LLVMAdd)
                    && LLVMGetNUW(inner) != 0
                    && const_int(operand(inner, 1)).is_some_and(|c| c >= 0))
                    || disjoint_or(inner);
                let split = no_wrap.then(|| plain(inner)).flatten();
                let (x, c) = split.unwrap_or((inner, 0));
                Some((Index::ZExt(x, LLVMTypeOf(v)), c))
            }
            _ => plain(v).map(|(x, c)| (Index::Value(x), c)),
        }
    }
}

/// The base and byte offset of `addr`, or `None` when a step overflows.
pub fn decompose(ir: &Ir, addr: LLVMValueRef) -> Option<(Base, i64)> {
    let mut off = 0i64;
    let mut v = addr;
    while opcode(v) == Some(LLVMOpcode::LLVMGetElementPtr) {
        match gep_offset(ir, v) {
            Some(o) => {
                off = off.checked_add(o)?;
                v = operand(v, 0);
            }
            None => break,
        }
    }
    if opcode(v) != Some(LLVMOpcode::LLVMGetElementPtr) {
        return Some((Base { ptr: v, gep: None }, off));
    }
    unsafe {
        let src = LLVMGetGEPSourceElementType(v);
        let n = LLVMGetNumOperands(v) as u32;
        let mut ty = src;
        let mut idx = Vec::new();
        for i in 1..n {
            let op = operand(v, i);
            // Stride of this index: the whole source type for the first, then the
            // element type one level down (struct fields take constant indices).
            let stride = if i == 1 {
                Some(LLVMABISizeOfType(ir.td(), ty) as i64)
            } else if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMStructTypeKind {
                ty = LLVMStructGetTypeAtIndex(ty, const_int(op)? as u32);
                None
            } else {
                ty = LLVMGetElementType(ty);
                Some(LLVMABISizeOfType(ir.td(), ty) as i64)
            };
            match (stride, const_int(op), split_add(op)) {
                // Constant array indices fold into the offset (`t[ty][3]` and `t[ty][5]`
                // share a base).
                (Some(s), Some(c), _) => {
                    off = off.checked_add(c.checked_mul(s)?)?;
                    idx.push(Index::Value(LLVMConstNull(LLVMTypeOf(op))));
                }
                (Some(s), None, Some((x, c))) => {
                    off = off.checked_add(c.checked_mul(s)?)?;
                    idx.push(x);
                }
                _ => idx.push(Index::Value(op)),
            }
        }
        Some((
            Base {
                ptr: operand(v, 0),
                gep: Some((src, idx)),
            },
            off,
        ))
    }
}
