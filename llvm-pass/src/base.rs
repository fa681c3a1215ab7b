//! Splits an address into a base (rebuildable from values that exist) and a constant
//! byte offset, so that neighbouring accesses (`a[i-1]`, `a[i]`, `a[i+1]`; the copies of
//! an unrolled loop body) can be recognised as one base with different offsets.
//!
//! Constant-index GEPs on top are folded into the offset; in the innermost GEP with
//! variable indices, a constant array index becomes 0 plus `C * stride`, and an index
//! that is a sum of terms and a constant becomes the terms plus `C * stride`: any `add`
//! in a 64-bit index, `add nsw` under a `sext` (or in a narrower index, which the GEP
//! sign-extends), `add nuw` under a `zext`, and `x | C` with disjoint bits, nested
//! (`sext ((i - 1) * n + (j + 1))` is the terms `(i - 1) * n` and `j` plus 1). The
//! terms are rebuilt extended, then added in the index type, which cannot wrap where
//! the original did not.
//!
//! One index per address may also split where wrapping is not ruled out: a plain
//! `add x, C` under a `sext` (`sext (x + 1)` where the optimizer dropped `nsw`, as in
//! conv3d's `A[sext(row + k + dk)]`). The split then *assumes* that `x + C` does not
//! wrap ([`Assumed`]); whoever uses it must check that at run time
//! ([`Guard::wraps`]) and fall back to the real address when it does.

use crate::classify::{gep_offset, strip_pointer_casts};
use crate::ir::{int_operand, opcode, operand, Ir};
use inkwell::types::{BasicTypeEnum, IntType};
use inkwell::values::{AsValueRef, BasicValueEnum, InstructionValue, IntValue, PointerValue};
use llvm_sys::LLVMOpcode;

/// How the terms of an [`Index`] reach the GEP's index type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Widen<'ctx> {
    /// Used as they are.
    Keep,
    /// `sext x to ty`.
    Sign(IntType<'ctx>),
    /// `zext x to ty`.
    Zero(IntType<'ctx>),
}

/// One index of the base GEP, as it must be rebuilt: the sum of its terms, each
/// extended by `ext` (a single term for most indices; `sext (a + (b + 1))` with no-wrap
/// adds becomes the terms `a`, `b`, so that its neighbours `sext (a + b)` and
/// `sext (a + (b - 1))` share the base).
#[derive(Clone, Debug, Eq)]
pub struct Index<'ctx> {
    /// Existing values, in the order the index's additions name them (operand 0 first,
    /// so that a rebuilt sum is the same from one run of the pass to the next).
    pub terms: Vec<IntValue<'ctx>>,
    /// How each term is widened before the sum.
    pub ext: Widen<'ctx>,
}

/// Two indices are the same when they widen the same terms the same way, in whatever
/// order their additions name them (`a + b` and `b + a`).
impl PartialEq for Index<'_> {
    fn eq(&self, other: &Self) -> bool {
        // By handle: a key inkwell values do not have; only equality depends on it, so
        // the address order, which changes from run to run, reaches no output.
        let sorted = |i: &Self| {
            let mut t: Vec<usize> = i.terms.iter().map(|v| v.as_value_ref() as usize).collect();
            t.sort_unstable();
            t
        };
        self.ext == other.ext
            && self.terms.len() == other.terms.len()
            && sorted(self) == sorted(other)
    }
}

impl<'ctx> Index<'ctx> {
    fn value(v: IntValue<'ctx>) -> Index<'ctx> {
        Index {
            terms: vec![v],
            ext: Widen::Keep,
        }
    }

    /// Builds the index at the builder's position.
    fn build(&self, ir: &Ir<'ctx>) -> IntValue<'ctx> {
        let widen = |v: IntValue<'ctx>| {
            let w = match self.ext {
                Widen::Keep => return v,
                Widen::Sign(t) => ir.b.build_int_s_extend(v, t, ""),
                Widen::Zero(t) => ir.b.build_int_z_extend(v, t, ""),
            };
            w.expect("positioned")
        };
        let mut terms = self.terms.iter().map(|&v| widen(v));
        let first = terms.next().expect("an index has a term");
        terms.fold(first, |sum, t| ir.add(sum, t))
    }
}

/// A base pointer: `ptr` itself, or `gep ty, ptr, indices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Base<'ctx> {
    /// The pointer operand.
    pub ptr: PointerValue<'ctx>,
    /// Source element type and indices of the GEP, if any.
    pub gep: Option<(BasicTypeEnum<'ctx>, Vec<Index<'ctx>>)>,
}

impl<'ctx> Base<'ctx> {
    /// Values the base is built from (each must be available where it is rebuilt).
    pub fn leaves(&self) -> Vec<BasicValueEnum<'ctx>> {
        let mut out = vec![self.ptr.into()];
        if let Some((_, idx)) = &self.gep {
            let terms = idx.iter().flat_map(|i| i.terms.iter());
            out.extend(terms.map(|&t| BasicValueEnum::from(t)));
        }
        out
    }

    /// The same base with every value passed through `f` (e.g. recover-mode phis).
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Base<'ctx> {
        let idx = |i: &Index<'ctx>| Index {
            terms: i
                .terms
                .iter()
                .map(|&v| f(v.into()).into_int_value())
                .collect(),
            ext: i.ext,
        };
        Base {
            ptr: f(self.ptr.into()).into_pointer_value(),
            gep: self
                .gep
                .as_ref()
                .map(|(ty, ix)| (*ty, ix.iter().map(idx).collect())),
        }
    }

    /// Builds the base at the builder's position, plus `off` bytes.
    pub fn build(&self, ir: &Ir<'ctx>, off: i64) -> PointerValue<'ctx> {
        let mut p = self.ptr;
        // Safety (of `build_gep`): the indices are the original GEP's, rebuilt, on its
        // own source type.
        if let Some((ty, idx)) = &self.gep {
            let vals: Vec<IntValue> = idx.iter().map(|i| i.build(ir)).collect();
            p = unsafe { ir.b.build_gep(*ty, p, &vals, "") }.expect("positioned");
        }
        if off != 0 {
            p = ir.byte_gep(p, ir.i64.const_int(off as u64, false));
        }
        p
    }
}

/// Most terms an index is split into (more stay one term).
const MAX_TERMS: usize = 3;

/// A split that assumed the signed addition `x + c` (in `x`'s type) does not wrap: the
/// index `sext (x + c)` was taken for `sext x + c`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Assumed<'ctx> {
    /// The addition's variable operand.
    pub x: IntValue<'ctx>,
    /// Its constant.
    pub c: i64,
}

/// The run-time check behind the [`Assumed`] splits of a group: `x + c` must not wrap
/// for any `c` from `lo` to `hi` (`lo <= 0 <= hi`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Guard<'ctx> {
    /// The value the splits share.
    pub x: IntValue<'ctx>,
    /// The least constant, or 0.
    pub lo: i64,
    /// The greatest constant, or 0.
    pub hi: i64,
}

impl<'ctx> Guard<'ctx> {
    /// The guard of no assumption yet on `x` (`lo = hi = 0`).
    pub fn new(x: IntValue<'ctx>) -> Guard<'ctx> {
        Guard { x, lo: 0, hi: 0 }
    }

    /// The guard widened to take `a` too, or `None` when `a` assumes something of
    /// another value or the constants span half the type or more.
    pub fn with(&self, a: Assumed<'ctx>) -> Option<Guard<'ctx>> {
        let g = Guard {
            lo: self.lo.min(a.c),
            hi: self.hi.max(a.c),
            ..*self
        };
        let bits = self.x.get_type().get_bit_width();
        (a.x == self.x && bits < 64 && (g.hi - g.lo) < 1 << (bits - 1)).then_some(g)
    }

    /// The same guard with its value passed through `f`.
    pub fn map(&self, f: impl Fn(BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx>) -> Guard<'ctx> {
        Guard {
            x: f(self.x.into()).into_int_value(),
            ..*self
        }
    }

    /// Builds, at the builder's position, "some `x + c` wraps": with `n` the width of
    /// `x`, no `c` in `lo..=hi` wraps iff `MIN - lo <= x <= MAX - hi` (signed), one
    /// unsigned compare `x + (2^(n-1) + lo) <=u 2^n - 1 - (hi - lo)`.
    pub fn wraps(&self, ir: &Ir<'ctx>) -> IntValue<'ctx> {
        let ty = self.x.get_type();
        let (k, bound) = guard_constants(ty.get_bit_width(), self.lo, self.hi);
        let shifted = ir.add(self.x, ty.const_int(k, false));
        ir.icmp(
            inkwell::IntPredicate::UGT,
            shifted,
            ty.const_int(bound, false),
        )
    }
}

/// The constants of [`Guard::wraps`] for `bits`-bit values: `(2^(bits-1) + lo) mod
/// 2^bits` and `2^bits - 1 - (hi - lo)` (`lo <= 0 <= hi`, `hi - lo < 2^(bits-1)`).
fn guard_constants(bits: u32, lo: i64, hi: i64) -> (u64, u64) {
    let mask = (1u64 << bits) - 1;
    let k = (1u64 << (bits - 1)).wrapping_add(lo as u64) & mask;
    (k, mask - (hi - lo) as u64)
}

/// How an addition must be flagged to be split under an extension.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Wrap {
    /// A 64-bit index used as it is: any `add` (it wraps like the address does).
    Any,
    /// Under `sext` (or a narrower index, which the GEP sign-extends): `add nsw`.
    Signed,
    /// Under `zext`: `add nuw` with constants >= 0.
    Unsigned,
}

/// Splits `v` into terms plus a constant: `add` (flagged as `wrap` requires) and
/// `x | C` with disjoint bits and C >= 0 (`x + C` with no carry, which commutes with
/// either extension), recursively. Returns the constant; `None` when a constant sum
/// overflows or there would be more than [`MAX_TERMS`] terms.
fn split_terms<'ctx>(
    v: IntValue<'ctx>,
    wrap: Wrap,
    terms: &mut Vec<IntValue<'ctx>>,
) -> Option<i64> {
    if let Some(c) = v.get_sign_extended_constant() {
        return (wrap != Wrap::Unsigned || c >= 0).then_some(c);
    }
    let inst = |v: IntValue<'ctx>| v.as_instruction().expect("an instruction");
    let splits = match opcode(v) {
        Some(LLVMOpcode::LLVMAdd) => match wrap {
            Wrap::Any => true,
            Wrap::Signed => nsw(inst(v)),
            Wrap::Unsigned => inst(v).get_no_unsigned_wrap_flag().expect("an add"),
        },
        Some(LLVMOpcode::LLVMOr) => {
            inst(v).get_disjoint_flag().expect("an or")
                && int_operand(v, 1)
                    .get_sign_extended_constant()
                    .is_some_and(|c| c >= 0)
        }
        _ => false,
    };
    if !splits {
        if terms.len() == MAX_TERMS {
            return None;
        }
        terms.push(v);
        return Some(0);
    }
    let a = split_terms(int_operand(v, 0), wrap, terms)?;
    let b = split_terms(int_operand(v, 1), wrap, terms)?;
    a.checked_add(b)
}

/// Whether `add` instruction `v` has the `nsw` flag.
fn nsw(v: InstructionValue) -> bool {
    v.get_no_signed_wrap_flag().expect("an add")
}

/// An index as (terms, C) with the terms in a canonical order, or `None` for an index
/// used as it is that does not split (the GEP then keeps it as it is). With `assume`, a
/// signed index whose outermost addition is a plain `add x, C` splits as `x` plus `C`
/// and says so (the third value).
fn split_add(v: IntValue, assume: bool) -> Option<(Index, i64, Option<Assumed>)> {
    // A widened index is split inside the extension, so that `sext i` and
    // `sext (i + 1)` share a base.
    let ty = v.get_type();
    let (inner, wrap, ext) = match opcode(v) {
        Some(LLVMOpcode::LLVMSExt) => (int_operand(v, 0), Wrap::Signed, Widen::Sign(ty)),
        Some(LLVMOpcode::LLVMZExt) => (int_operand(v, 0), Wrap::Unsigned, Widen::Zero(ty)),
        // GEP arithmetic is in pointer width; a narrower index is sign-extended
        // first, so it splits like a `sext` (and is rebuilt as one).
        _ if ty.get_bit_width() == 64 => (v, Wrap::Any, Widen::Keep),
        _ => (v, Wrap::Signed, Widen::Sign(ty.get_context().i64_type())),
    };
    let plain_add = assume
        && wrap == Wrap::Signed
        && opcode(inner) == Some(LLVMOpcode::LLVMAdd)
        && !nsw(inner.as_instruction().expect("an add"));
    let assumed = plain_add
        .then(|| int_operand(inner, 1).get_sign_extended_constant())
        .flatten()
        .map(|c| Assumed {
            x: int_operand(inner, 0),
            c,
        });
    let (inner, c0) = match assumed {
        Some(a) => (a.x, a.c),
        None => (inner, 0),
    };
    let mut split = Vec::new();
    let (terms, c) = match split_terms(inner, wrap, &mut split) {
        Some(c) if !split.is_empty() => (split, c.checked_add(c0)?),
        // Too many terms (or all constant, which GEP folding leaves rare): one term.
        _ => (vec![inner], c0),
    };
    if ext == Widen::Keep && terms == [v] {
        return None;
    }
    Some((Index { terms, ext }, c, assumed))
}

/// `addr` without its constant-offset GEPs on top, and their byte offset, or `None`
/// when the sum overflows.
pub fn strip_constant_geps<'ctx>(
    ir: &Ir,
    addr: PointerValue<'ctx>,
) -> Option<(PointerValue<'ctx>, i64)> {
    let mut off = 0i64;
    let mut v = addr;
    while opcode(v) == Some(LLVMOpcode::LLVMGetElementPtr) {
        let Some(o) = gep_offset(ir, v.into()) else {
            break;
        };
        off = off.checked_add(o)?;
        v = pointer_operand(v);
    }
    Some((v, off))
}

/// The pointer operand of GEP `gep` (a scalar GEP's: a pointer).
fn pointer_operand(gep: PointerValue) -> PointerValue {
    operand(gep, 0)
        .expect("a GEP's pointer")
        .into_pointer_value()
}

/// An address split by [`decompose`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Parts<'ctx> {
    /// The base.
    pub base: Base<'ctx>,
    /// Bytes from the base.
    pub off: i64,
    /// What the split assumed, if it took a plain `add` apart (only with `assume`).
    pub assumed: Option<Assumed<'ctx>>,
}

/// The base and byte offset of `addr` (with `assume`, possibly under an [`Assumed`]
/// split of one index), or `None` when a step overflows.
pub fn decompose<'ctx>(ir: &Ir, addr: PointerValue<'ctx>, assume: bool) -> Option<Parts<'ctx>> {
    let (v, mut off) = strip_constant_geps(ir, addr)?;
    if opcode(v) != Some(LLVMOpcode::LLVMGetElementPtr) {
        let base = Base { ptr: v, gep: None };
        return Some(Parts {
            base,
            off,
            assumed: None,
        });
    }
    let mut assumed = None;
    let gep = v.as_instruction().expect("a GEP instruction");
    let src = gep.get_gep_source_element_type().expect("a GEP");
    let mut ty = src;
    let mut idx = Vec::new();
    for i in 1..gep.get_num_operands() {
        let op = int_operand(gep, i);
        let const_op = op.get_sign_extended_constant();
        // Stride of this index: the whole source type for the first, then the
        // element type one level down (struct fields take constant indices).
        let stride = if i == 1 {
            Some(ir.layout().get_abi_size(&ty) as i64)
        } else if let BasicTypeEnum::StructType(st) = ty {
            let field = st.get_field_type_at_index(const_op? as u32);
            ty = field.expect("a GEP's struct index names a field");
            None
        } else {
            ty = match ty {
                BasicTypeEnum::ArrayType(a) => a.get_element_type(),
                BasicTypeEnum::VectorType(v) => v.get_element_type(),
                _ => panic!("a GEP steps into arrays, vectors and structs only"),
            };
            Some(ir.layout().get_abi_size(&ty) as i64)
        };
        let split = stride
            .filter(|_| const_op.is_none())
            .and_then(|_| split_add(op, assume && assumed.is_none()));
        match (stride, const_op, split) {
            // Constant array indices fold into the offset (`t[ty][3]` and `t[ty][5]`
            // share a base).
            (Some(s), Some(c), _) => {
                off = off.checked_add(c.checked_mul(s)?)?;
                idx.push(Index::value(op.get_type().const_zero()));
            }
            (Some(s), None, Some((x, c, a))) => {
                off = off.checked_add(c.checked_mul(s)?)?;
                idx.push(x);
                assumed = assumed.or(a);
            }
            _ => idx.push(Index::value(op)),
        }
    }
    let base = Base {
        ptr: pointer_operand(v),
        gep: Some((src, idx)),
    };
    Some(Parts { base, off, assumed })
}

/// `addr - root` in bytes as arithmetic on `addr`'s GEP indices, when `addr` is `root`
/// (up to casts) plus GEPs: `ptrtoint (gep ty, null, indices) + C`, which the backend
/// computes from the indices alone (no cast of the object's address into the access's
/// space, no 64-bit subtraction), and hoists or shares with the access's own address
/// arithmetic. `None` when `addr` is not built on `root` that way.
pub fn offset_from<'ctx>(
    ir: &Ir<'ctx>,
    root: PointerValue<'ctx>,
    addr: PointerValue<'ctx>,
) -> Option<IntValue<'ctx>> {
    let Parts { base, off, .. } = decompose(ir, addr, false)?;
    if strip_pointer_casts(base.ptr) != strip_pointer_casts(root) {
        return None;
    }
    let at_zero = Base {
        ptr: base.ptr.get_type().const_null(),
        gep: base.gep,
    };
    Some(ir.to_int(at_zero.build(ir, off)))
}

#[cfg(test)]
mod tests {
    use super::guard_constants;

    /// The guard's one compare, `(x + k) mod 2^8 >u bound`, says "some `x + c` wraps"
    /// exactly, for every 8-bit `x` and every `lo..=hi` it is built for (`Guard::with`
    /// allows `lo <= 0 <= hi`, `hi - lo < 128`). `x + c` grows with `c`, so some `c`
    /// wraps iff one of the ends does.
    #[test]
    fn guard_is_exact_on_8_bits() {
        for lo in -127i64..=0 {
            for hi in 0i64..=(127 + lo) {
                let (k, bound) = guard_constants(8, lo, hi);
                for x in -128i64..=127 {
                    let fails = ((x as u64).wrapping_add(k) & 0xff) > bound;
                    let wraps = x + lo < -128 || x + hi > 127;
                    assert_eq!(fails, wraps, "x {x}, lo {lo}, hi {hi}");
                }
            }
        }
    }
}
