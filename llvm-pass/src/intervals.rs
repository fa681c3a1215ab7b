//! Value intervals at an access: the static fast path for addresses that are not constant.
//!
//! An access of a known object is proven in bounds when the byte offset of its address
//! from the object, over every value its indices can take *at that access*, stays in
//! `[0, size - len]`. An index's interval comes from
//! - ScalarEvolution (through the shim): loop induction variables bounded by their trip
//!   counts, range metadata and attributes (`threadIdx.x` is below 1024);
//! - the arithmetic that computes it (`add`, `sub`, `mul`, shifts, extensions, masks),
//!   in exact integers: a step whose result could leave its type's signed values gives
//!   up (its type's full interval) instead of wrapping;
//! - the branch conditions on the edges every path to the access takes
//!   ([`Cfg::dominating_edges`]): `if (tx <= m)` bounds `tx` by `m`'s interval, and for
//!   `m - tx` (constants added on either side peeled off) the relation itself bounds the
//!   difference: `tx <= m` makes `m - tx >= 0`, which intervals alone cannot see.
//!
//! nw's anti-diagonal sweep `temp[m - tx + 1][tx + 1]` under `if (tx <= m)`, `m < 16`,
//! is such an access. Every interval is an over-approximation of the values the program
//! computes there, so a proven access is one the program makes in bounds.

use crate::box_copy::Shape;
use crate::classify::{const_int, op_of};
use crate::dom::Cfg;
use crate::ir::{callee, operand};
use crate::loops::LoopAnalyses;
use inkwell::targets::TargetData;
use inkwell::types::{AnyType, AnyTypeEnum};
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, InstructionValue, PhiValue, PointerValue,
};
use llvm_sys::{LLVMIntPredicate, LLVMOpcode};
use std::collections::HashMap;

/// How deep the arithmetic behind one index is followed.
const MAX_DEPTH: u32 = 12;

/// A closed interval of integers (the signed reading of a value's bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    /// Least value.
    pub lo: i128,
    /// Greatest value.
    pub hi: i128,
}

impl Interval {
    /// The single value `v`.
    pub fn point(v: i128) -> Interval {
        Interval { lo: v, hi: v }
    }

    /// Every signed value of `bits` bits.
    pub fn full(bits: u32) -> Interval {
        Interval {
            lo: -(1i128 << (bits - 1)),
            hi: (1i128 << (bits - 1)) - 1,
        }
    }

    /// Sum of any member of `self` and any of `o`.
    pub fn add(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo + o.lo,
            hi: self.hi + o.hi,
        }
    }

    /// Difference of any member of `self` and any of `o`.
    pub fn sub(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo - o.hi,
            hi: self.hi - o.lo,
        }
    }

    /// Product of any member of `self` and any of `o` (operands under 2^64 in size).
    pub fn mul(self, o: Interval) -> Interval {
        let c = [
            self.lo * o.lo,
            self.lo * o.hi,
            self.hi * o.lo,
            self.hi * o.hi,
        ];
        Interval {
            lo: *c.iter().min().expect("four corners"),
            hi: *c.iter().max().expect("four corners"),
        }
    }

    /// The members of both (`self` when they do not meet: both are over-approximations
    /// of one value, so an empty meet means unreachable code, where anything holds).
    pub fn meet(self, o: Interval) -> Interval {
        let m = Interval {
            lo: self.lo.max(o.lo),
            hi: self.hi.min(o.hi),
        };
        if m.lo <= m.hi {
            m
        } else {
            self
        }
    }

    /// Every member of one or the other (and those between).
    pub fn join(self, o: Interval) -> Interval {
        Interval {
            lo: self.lo.min(o.lo),
            hi: self.hi.max(o.hi),
        }
    }

    /// Whether every member is a signed value of `bits` bits.
    pub fn fits(self, bits: u32) -> bool {
        let f = Interval::full(bits);
        f.lo <= self.lo && self.hi <= f.hi
    }

    /// `self` when it fits `bits` bits, else the full interval (the operation might wrap).
    fn or_full(self, bits: u32) -> Interval {
        if self.fits(bits) {
            self
        } else {
            Interval::full(bits)
        }
    }

    /// The values of `zext` from `bits` bits of a value in `self`.
    fn zext(self, bits: u32) -> Interval {
        let wrap = 1i128 << bits;
        match (self.lo >= 0, self.hi >= 0) {
            (true, _) => self,
            (false, false) => Interval {
                lo: self.lo + wrap,
                hi: self.hi + wrap,
            },
            (false, true) => Interval {
                lo: 0,
                hi: wrap - 1,
            },
        }
    }

    fn nonneg(self) -> bool {
        self.lo >= 0
    }
}

/// The minimum and maximum intrinsics: name prefix, whether it is a maximum, whether
/// it compares signed.
const MIN_MAX: [(&str, bool, bool); 4] = [
    ("llvm.smin.", false, true),
    ("llvm.smax.", true, true),
    ("llvm.umin.", false, false),
    ("llvm.umax.", true, false),
];

/// A branch condition known to hold: `a pred b`.
#[derive(Clone, Copy)]
struct Fact<'ctx> {
    pred: LLVMIntPredicate,
    a: BasicValueEnum<'ctx>,
    b: BasicValueEnum<'ctx>,
}

/// The predicate that holds when `icmp p` is false.
fn inverse(p: LLVMIntPredicate) -> LLVMIntPredicate {
    use LLVMIntPredicate::*;
    match p {
        LLVMIntEQ => LLVMIntNE,
        LLVMIntNE => LLVMIntEQ,
        LLVMIntUGT => LLVMIntULE,
        LLVMIntUGE => LLVMIntULT,
        LLVMIntULT => LLVMIntUGE,
        LLVMIntULE => LLVMIntUGT,
        LLVMIntSGT => LLVMIntSLE,
        LLVMIntSGE => LLVMIntSLT,
        LLVMIntSLT => LLVMIntSGE,
        LLVMIntSLE => LLVMIntSGT,
    }
}

/// `a p b` as `b p' a`.
fn swapped(p: LLVMIntPredicate) -> LLVMIntPredicate {
    use LLVMIntPredicate::*;
    match p {
        LLVMIntUGT => LLVMIntULT,
        LLVMIntUGE => LLVMIntULE,
        LLVMIntULT => LLVMIntUGT,
        LLVMIntULE => LLVMIntUGE,
        LLVMIntSGT => LLVMIntSLT,
        LLVMIntSGE => LLVMIntSLE,
        LLVMIntSLT => LLVMIntSGT,
        LLVMIntSLE => LLVMIntSGE,
        same => same,
    }
}

/// Stands for "no bound" on one side of an interval (far outside any 64-bit value, and
/// far from overflowing when added to one).
const FAR: i128 = i128::MAX / 4;

/// The unsigned predicates as their signed twins (the others as they are): the two
/// orders agree on non-negative values.
fn signed(p: LLVMIntPredicate) -> LLVMIntPredicate {
    use LLVMIntPredicate::*;
    match p {
        LLVMIntUGT => LLVMIntSGT,
        LLVMIntUGE => LLVMIntSGE,
        LLVMIntULT => LLVMIntSLT,
        LLVMIntULE => LLVMIntSLE,
        other => other,
    }
}

/// What `v pred w`, `w` in `o`, says about `v`, known to be in `r` (to be met with `r`).
fn side(pred: LLVMIntPredicate, r: Interval, o: Interval) -> Interval {
    use LLVMIntPredicate::*;
    let iv = |lo: i128, hi: i128| Interval { lo, hi };
    match pred {
        LLVMIntEQ => o,
        LLVMIntNE if o.lo == o.hi && r.lo == o.lo => iv(r.lo + 1, FAR),
        LLVMIntNE if o.lo == o.hi && r.hi == o.lo => iv(-FAR, r.hi - 1),
        LLVMIntSLT => iv(-FAR, o.hi - 1),
        LLVMIntSLE => iv(-FAR, o.hi),
        LLVMIntSGT => iv(o.lo + 1, FAR),
        LLVMIntSGE => iv(o.lo, FAR),
        // Unsigned: below a non-negative bound is non-negative too; above one says
        // something only of a value known to be non-negative.
        LLVMIntULT if o.nonneg() => iv(0, o.hi - 1),
        LLVMIntULE if o.nonneg() => iv(0, o.hi),
        LLVMIntUGT if o.nonneg() && r.nonneg() => iv(o.lo + 1, FAR),
        LLVMIntUGE if o.nonneg() && r.nonneg() => iv(o.lo, FAR),
        _ => iv(-FAR, FAR),
    }
}

/// How many phis of constants in a row are followed back to their predecessor's facts.
const MAX_PHI_DEPTH: u32 = 2;

/// How deep `and`/`or` trees of conditions are followed.
const MAX_CONDITION_DEPTH: u32 = 6;

/// Adds the facts that condition `c` being `holds` gives: an `icmp`; both sides of an
/// `and` (or `select a, b, false`) that holds, or of an `or` (`select a, true, b`)
/// that does not.
fn facts_of<'ctx>(c: BasicValueEnum<'ctx>, holds: bool, out: &mut Vec<Fact<'ctx>>, depth: u32) {
    if depth > MAX_CONDITION_DEPTH {
        return;
    }
    let both = |out: &mut Vec<Fact<'ctx>>, a, b| {
        facts_of(a, holds, out, depth + 1);
        facts_of(b, holds, out, depth + 1);
    };
    let is = |v, want: bool| const_int(v).is_some_and(|x| (x != 0) == want);
    match op_of(c) {
        Some(LLVMOpcode::LLVMICmp) => {
            // No icmp constant expressions since LLVM 19: `c` is an instruction.
            let p = c
                .as_instruction_value()
                .and_then(|i| i.get_icmp_predicate())
                .expect("an icmp")
                .into();
            out.push(Fact {
                pred: if holds { p } else { inverse(p) },
                a: op(c, 0),
                b: op(c, 1),
            });
        }
        Some(LLVMOpcode::LLVMAnd) if holds => both(out, op(c, 0), op(c, 1)),
        Some(LLVMOpcode::LLVMOr) if !holds => both(out, op(c, 0), op(c, 1)),
        Some(LLVMOpcode::LLVMSelect) if holds && is(op(c, 2), false) => {
            both(out, op(c, 0), op(c, 1))
        }
        Some(LLVMOpcode::LLVMSelect) if !holds && is(op(c, 1), true) => {
            both(out, op(c, 0), op(c, 2))
        }
        _ => {}
    }
}

/// Operand `i` of `v`, a value (of an operator, a GEP, a compare, a call).
fn op<'ctx>(v: impl AsValueRef, i: u32) -> BasicValueEnum<'ctx> {
    operand(v, i).expect("a value operand")
}

/// Bit width of an integer value, `None` for anything else.
fn int_bits(v: BasicValueEnum) -> Option<u32> {
    match v {
        BasicValueEnum::IntValue(i) => Some(i.get_type().get_bit_width()),
        _ => None,
    }
    .filter(|&b| (1..=64).contains(&b))
}

/// Whether the `or` instruction `v` is disjoint (no `or` constant expressions since
/// LLVM 18: an `or` is an instruction).
fn disjoint(v: BasicValueEnum) -> bool {
    let or = v.as_instruction_value().expect("an or instruction");
    or.get_disjoint_flag().expect("an or")
}

/// Intervals of one function's values (see the module doc).
pub struct Intervals<'a, 'ctx> {
    cfg: &'a Cfg<'ctx>,
    scev: &'a LoopAnalyses,
    td: &'a TargetData,
    /// A block shape to assume (`box_copy` weighing its copy), else CUDA's limits.
    shape: Option<Shape>,
}

/// The intervals at one access: its facts, what was worked out so far in this round, and
/// what the round before found (every entry a sound over-approximation there).
struct At<'ctx> {
    facts: Vec<Fact<'ctx>>,
    memo: HashMap<BasicValueEnum<'ctx>, Interval>,
    prior: HashMap<BasicValueEnum<'ctx>, Interval>,
}

/// How many times the offset is worked out, each round starting from the last one's
/// intervals: a value reached while one it depends on was still being worked out (a
/// cycle through facts: `tx >= lo` bounds `lo` by `tx` and `tx` by `lo`) gets that
/// value's finished interval the next time.
const ROUNDS: usize = 2;

impl<'a, 'ctx> Intervals<'a, 'ctx> {
    /// Intervals over `cfg`'s function, with `scev` built on it before any change.
    pub fn new(
        cfg: &'a Cfg<'ctx>,
        scev: &'a LoopAnalyses,
        td: &'a TargetData,
    ) -> Intervals<'a, 'ctx> {
        Intervals {
            cfg,
            scev,
            td,
            shape: None,
        }
    }

    /// As [`Intervals::new`], for blocks of at most `shape` threads: `threadIdx` and
    /// `blockDim` take only the values such blocks give them.
    pub fn within(
        cfg: &'a Cfg<'ctx>,
        scev: &'a LoopAnalyses,
        td: &'a TargetData,
        shape: Shape,
    ) -> Intervals<'a, 'ctx> {
        Intervals {
            shape: Some(shape),
            ..Intervals::new(cfg, scev, td)
        }
    }

    /// The byte offsets of `addr` from `root` (which it is derived from by GEPs and
    /// casts) that instruction `at` can see; `None` when some step is not a GEP or cast.
    pub fn offset(
        &self,
        at: InstructionValue<'ctx>,
        addr: PointerValue<'ctx>,
        root: PointerValue<'ctx>,
    ) -> Option<Interval> {
        let mut here = self.at(at)?;
        let mut off = None;
        for _ in 0..ROUNDS {
            off = Some(self.offset_once(&mut here, addr, root)?);
            here.prior = std::mem::take(&mut here.memo);
        }
        off
    }

    /// The facts at instruction `at`, nothing worked out yet; `None` when its block is
    /// unreachable.
    fn at(&self, at: InstructionValue<'ctx>) -> Option<At<'ctx>> {
        let b = self.cfg.block_index(at.get_parent()?)?;
        let mut facts = Vec::new();
        self.facts_into(b, &mut facts, 0);
        Some(At {
            facts,
            memo: HashMap::new(),
            prior: HashMap::new(),
        })
    }

    /// Whether every index into an array dimension on the way from `root` to `addr`
    /// (`a[i][j]`'s `j` of a row of 18) stays inside that dimension, over the values it
    /// can take at `at`: the shape the program was written for keeps its rows, where a
    /// flat offset may run from one row into the next and still fit the object
    /// (`box_copy` prefers such shapes). `false` when some step is not a GEP or cast.
    pub fn rows_fit(
        &self,
        at: InstructionValue<'ctx>,
        addr: PointerValue<'ctx>,
        root: PointerValue<'ctx>,
    ) -> bool {
        let Some(mut here) = self.at(at) else {
            return false;
        };
        let mut p = BasicValueEnum::from(addr);
        while p != BasicValueEnum::from(root) {
            match op_of(p) {
                Some(LLVMOpcode::LLVMGetElementPtr) => {
                    let mut ty = crate::sys::gep_source_type(p).as_any_type_enum();
                    for i in 2..crate::sys::num_operands(p) {
                        let idx = op(p, i);
                        ty = match ty {
                            AnyTypeEnum::ArrayType(a) => {
                                let len = i128::from(a.len());
                                let r = self.value(&mut here, idx, 0);
                                if r.lo < 0 || r.hi >= len {
                                    return false;
                                }
                                a.get_element_type().as_any_type_enum()
                            }
                            AnyTypeEnum::StructType(st) => {
                                let Some(field) = const_int(idx) else {
                                    return false;
                                };
                                match st.get_field_type_at_index(field as u32) {
                                    Some(t) => t.as_any_type_enum(),
                                    None => return false,
                                }
                            }
                            _ => break,
                        };
                    }
                }
                Some(LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast) => {}
                _ => return false,
            }
            p = op(p, 0);
        }
        true
    }

    /// The facts of the branch edges every path to block `b` takes
    /// ([`Cfg::dominating_edges`]); and where such a branch tests a phi of constants that
    /// has the edge's value from one predecessor only (hotspot's `computed`, true only
    /// from the block where the stencil's range tests held), the facts of the way into
    /// that predecessor and of its edge to the phi.
    ///
    /// Sound when that edge is not a loop's back edge (the phi's block does not dominate
    /// the predecessor): every value the predecessor's facts name is defined in a block
    /// that dominates it, and so (the phi's block not dominating that block) any path
    /// from that block to the access passes the phi's block again. So the last time the
    /// phi was entered, from that predecessor, every such value already had the value it
    /// has at the access.
    fn facts_into(&self, b: usize, out: &mut Vec<Fact<'ctx>>, depth: u32) {
        for (branch, taken) in self.cfg.dominating_edges(b) {
            let c = op(branch, 0);
            facts_of(c, taken, out, 0);
            if depth >= MAX_PHI_DEPTH {
                continue;
            }
            let Some((f, t)) = self.sole_source(c, taken) else {
                continue;
            };
            if self.cfg.block_dominates(t, f) {
                continue;
            }
            if let Some((term, to_true)) = self.cfg.branch_edge(f, t) {
                facts_of(op(term, 0), to_true, out, 0);
            }
            self.facts_into(f, out, depth + 1);
        }
    }

    /// For a condition `c` that is a phi whose incoming values are all constants and
    /// equal `holds` from one predecessor only: that predecessor's and the phi's block
    /// indices.
    fn sole_source(&self, c: BasicValueEnum<'ctx>, holds: bool) -> Option<(usize, usize)> {
        if op_of(c) != Some(LLVMOpcode::LLVMPHI) {
            return None;
        }
        let inst = c.as_instruction_value()?;
        let phi = PhiValue::try_from(inst).ok()?;
        let mut from = None;
        for k in 0..phi.count_incoming() {
            let (v, blk) = phi.get_incoming(k)?;
            match const_int(v) {
                Some(x) if (x != 0) == holds => {
                    if from.is_some_and(|f| f != blk) {
                        return None;
                    }
                    from = Some(blk);
                }
                Some(_) => {}
                None => return None,
            }
        }
        let block = |bb| self.cfg.block_index(bb);
        Some((block(from?)?, block(inst.get_parent()?)?))
    }

    /// One round of [`Intervals::offset`].
    fn offset_once(
        &self,
        here: &mut At<'ctx>,
        addr: PointerValue<'ctx>,
        root: PointerValue<'ctx>,
    ) -> Option<Interval> {
        let mut off = Interval::point(0);
        let mut p = BasicValueEnum::from(addr);
        while p != BasicValueEnum::from(root) {
            match op_of(p)? {
                LLVMOpcode::LLVMGetElementPtr => off = off.add(self.gep(here, p)?),
                LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast => {}
                _ => return None,
            }
            p = op(p, 0);
        }
        Some(off)
    }

    /// The byte offsets one GEP adds.
    fn gep(&self, here: &mut At<'ctx>, gep: BasicValueEnum<'ctx>) -> Option<Interval> {
        let mut ty = crate::sys::gep_source_type(gep).as_any_type_enum();
        let n = crate::sys::num_operands(gep);
        let mut off = Interval::point(0);
        for i in 1..n {
            let idx = op(gep, i);
            if i > 1 {
                if let AnyTypeEnum::StructType(st) = ty {
                    let field = const_int(idx)? as u32;
                    let at = self.td.offset_of_element(&st, field)?;
                    off = off.add(Interval::point(at as i128));
                    ty = st.get_field_type_at_index(field)?.as_any_type_enum();
                    continue;
                }
                ty = match ty {
                    AnyTypeEnum::ArrayType(a) => a.get_element_type().as_any_type_enum(),
                    AnyTypeEnum::VectorType(v) => v.get_element_type().as_any_type_enum(),
                    _ => return None,
                };
            }
            int_bits(idx)?;
            let stride = Interval::point(self.td.get_abi_size(&ty) as i128);
            off = off.add(self.value(here, idx, 0).mul(stride));
        }
        Some(off)
    }

    /// The values integer `v` can hold at the access.
    fn value(&self, here: &mut At<'ctx>, v: BasicValueEnum<'ctx>, depth: u32) -> Interval {
        let Some(bits) = int_bits(v) else {
            return Interval::full(64);
        };
        if let Some(c) = const_int(v) {
            return Interval::point(c as i128);
        }
        if let Some(&known) = here.memo.get(&v) {
            return known;
        }
        let mut r = here.prior.get(&v).copied().unwrap_or(Interval::full(bits));
        if let Some((lo, hi)) = self.scev.signed_range(v) {
            r = r.meet(Interval {
                lo: lo as i128,
                hi: hi as i128,
            });
        }
        if let Some((lo, hi)) = self.shape.and_then(|s| s.range_of(v)) {
            r = r.meet(Interval {
                lo: lo.into(),
                hi: hi.into(),
            });
        }
        // While `v` is being worked out, what is known so far stands for it (a cycle
        // through facts or phis ends there).
        here.memo.insert(v, r);
        if depth < MAX_DEPTH {
            r = r.meet(self.computed(here, v, bits, depth + 1));
            here.memo.insert(v, r);
            for n in 0..here.facts.len() {
                let f = here.facts[n];
                if f.a == v {
                    r = r.meet(self.bounded(here, r, f.pred, f.b, depth + 1));
                } else if f.b == v {
                    r = r.meet(self.bounded(here, r, swapped(f.pred), f.a, depth + 1));
                }
                here.memo.insert(v, r);
            }
        }
        r
    }

    /// What `v pred other` says about `v`, now known to be in `r`.
    fn bounded(
        &self,
        here: &mut At<'ctx>,
        r: Interval,
        pred: LLVMIntPredicate,
        other: BasicValueEnum<'ctx>,
        depth: u32,
    ) -> Interval {
        let o = self.value(here, other, depth);
        side(pred, r, o)
    }

    /// The values the instruction behind `v` computes from its operands' values.
    fn computed(
        &self,
        here: &mut At<'ctx>,
        v: BasicValueEnum<'ctx>,
        bits: u32,
        depth: u32,
    ) -> Interval {
        let full = Interval::full(bits);
        let Some(opcode) = op_of(v) else { return full };
        let mut arg = |i: u32| self.value(here, op(v, i), depth);
        let shift =
            |v: BasicValueEnum| const_int(op(v, 1)).filter(|&k| (0..bits as i64 - 1).contains(&k));
        match opcode {
            LLVMOpcode::LLVMAdd => arg(0).add(arg(1)).or_full(bits),
            LLVMOpcode::LLVMOr if disjoint(v) => {
                let (a, b) = (arg(0), arg(1));
                if a.nonneg() && b.nonneg() {
                    a.add(b).or_full(bits)
                } else {
                    full
                }
            }
            LLVMOpcode::LLVMSub => self.difference(here, v, depth).or_full(bits),
            LLVMOpcode::LLVMMul => arg(0).mul(arg(1)).or_full(bits),
            LLVMOpcode::LLVMShl => match shift(v) {
                Some(k) => arg(0).mul(Interval::point(1 << k)).or_full(bits),
                None => full,
            },
            LLVMOpcode::LLVMLShr | LLVMOpcode::LLVMAShr => match (shift(v), arg(0)) {
                (Some(k), a) if a.nonneg() => Interval {
                    lo: a.lo >> k,
                    hi: a.hi >> k,
                },
                _ => full,
            },
            LLVMOpcode::LLVMAnd => {
                let (a, b) = (arg(0), arg(1));
                match (a.nonneg(), b.nonneg()) {
                    (true, true) => Interval {
                        lo: 0,
                        hi: a.hi.min(b.hi),
                    },
                    (true, false) => Interval { lo: 0, hi: a.hi },
                    (false, true) => Interval { lo: 0, hi: b.hi },
                    _ => full,
                }
            }
            LLVMOpcode::LLVMSExt => arg(0),
            LLVMOpcode::LLVMZExt => {
                let from = int_bits(op(v, 0)).unwrap_or(64);
                arg(0).zext(from)
            }
            LLVMOpcode::LLVMTrunc => arg(0).or_full(bits),
            LLVMOpcode::LLVMSelect => arg(1).join(arg(2)),
            LLVMOpcode::LLVMCall => {
                let call = v.as_instruction_value().expect("a call instruction");
                let name = callee(call).map(crate::ir::name).unwrap_or_default();
                let Some(signed) = MIN_MAX.iter().find(|m| name.starts_with(m.0)) else {
                    return full;
                };
                let (a, b) = (arg(0), arg(1));
                let lo = if signed.1 {
                    a.lo.max(b.lo)
                } else {
                    a.lo.min(b.lo)
                };
                let hi = if signed.1 {
                    a.hi.max(b.hi)
                } else {
                    a.hi.min(b.hi)
                };
                // Unsigned: the same, when neither may be negative (a huge unsigned value).
                if signed.2 || (a.nonneg() && b.nonneg()) {
                    Interval { lo, hi }
                } else {
                    full
                }
            }
            _ => full,
        }
    }

    /// `a - b`, also bounded by a fact between `a` and `b` (constants added to either
    /// side of the difference and of the fact peeled off): `x <= y` makes `x - y <= 0`,
    /// and `x <= y + 1` makes it `<= 1`, whatever their intervals.
    fn difference(&self, here: &mut At<'ctx>, v: BasicValueEnum<'ctx>, depth: u32) -> Interval {
        let (a, b) = (op(v, 0), op(v, 1));
        let plain = self.value(here, a, depth).sub(self.value(here, b, depth));
        let (Some((x, cx)), Some((y, cy))) = (self.peel(here, a, depth), self.peel(here, b, depth))
        else {
            return plain;
        };
        let (xr, yr) = (self.value(here, x, depth), self.value(here, y, depth));
        let mut d = xr.sub(yr);
        for n in 0..here.facts.len() {
            let f = here.facts[n];
            // The fact's sides peeled too (an unrolled loop's `m + 1` is `m | 1`):
            // `fx + fcx pred fy + fcy`, so `fx - fy pred fcy - fcx`.
            let (Some((fx, fcx)), Some((fy, fcy))) =
                (self.peel(here, f.a, depth), self.peel(here, f.b, depth))
            else {
                continue;
            };
            let (pred, k) = if (fx, fy) == (x, y) {
                (f.pred, fcy - fcx)
            } else if (fx, fy) == (y, x) {
                // `y - x pred k` is `x - y swapped(pred) -k`.
                (swapped(f.pred), fcx - fcy)
            } else {
                continue;
            };
            // In the signed order, which the unsigned one is for non-negative sides.
            let nonneg =
                self.value(here, f.a, depth).nonneg() && self.value(here, f.b, depth).nonneg();
            let pred = if nonneg { signed(pred) } else { pred };
            if signed(pred) == pred {
                d = d.meet(side(pred, d, Interval::point(k)));
            }
        }
        plain.meet(d.add(Interval::point(cx - cy)))
    }

    /// `v` as `x + c` exactly (no wrap in `v`'s type), `c` a constant: through an
    /// `add` or disjoint `or` of a constant, else `v` itself plus 0.
    fn peel(
        &self,
        here: &mut At<'ctx>,
        v: BasicValueEnum<'ctx>,
        depth: u32,
    ) -> Option<(BasicValueEnum<'ctx>, i128)> {
        let bits = int_bits(v)?;
        let is_add = match op_of(v) {
            Some(LLVMOpcode::LLVMAdd) => true,
            Some(LLVMOpcode::LLVMOr) => disjoint(v),
            _ => false,
        };
        if let Some(c) = is_add.then(|| const_int(op(v, 1))).flatten() {
            let x = op(v, 0);
            let xr = self.value(here, x, depth);
            let exact = xr.add(Interval::point(c as i128)).fits(bits)
                && (op_of(v) == Some(LLVMOpcode::LLVMAdd) || (xr.nonneg() && c >= 0));
            if exact {
                return Some((x, c as i128));
            }
        }
        Some((v, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::Interval;

    /// Every interval of 8-bit signed values with ends on a grid (both ends included).
    fn intervals() -> Vec<Interval> {
        let ends: Vec<i128> = (-128..=127).step_by(9).chain([-1, 0, 1, 127]).collect();
        let mut out = Vec::new();
        for &lo in &ends {
            for &hi in ends.iter().filter(|&&h| h >= lo) {
                out.push(Interval { lo, hi });
            }
        }
        out
    }

    fn members(r: Interval) -> impl Iterator<Item = i128> {
        let step = ((r.hi - r.lo) / 5).max(1) as usize;
        (r.lo..=r.hi).step_by(step).chain([r.hi])
    }

    /// A wrapping 8-bit operation.
    type Op8 = fn(i8, i8) -> i8;

    fn contains(r: Interval, v: i128) -> bool {
        r.lo <= v && v <= r.hi
    }

    /// The 8-bit operations, as the machine does them (wrapping), land in the interval
    /// the analysis gives: `or_full` gives up exactly where the exact result may wrap.
    #[test]
    fn eight_bit_arithmetic_is_over_approximated() {
        let all = intervals();
        for &a in &all {
            for &b in all.iter().step_by(7) {
                let ops: [(Interval, Op8); 3] = [
                    (a.add(b).or_full(8), i8::wrapping_add),
                    (a.sub(b).or_full(8), i8::wrapping_sub),
                    (a.mul(b).or_full(8), i8::wrapping_mul),
                ];
                for x in members(a) {
                    for y in members(b) {
                        for (r, op) in &ops {
                            let v = op(x as i8, y as i8) as i128;
                            assert!(contains(*r, v), "{a:?} {b:?}: {x} {y} -> {v} not in {r:?}");
                        }
                    }
                }
            }
            // zext to 16 bits of an 8-bit value: its unsigned reading.
            for x in members(a) {
                assert!(contains(a.zext(8), (x as i8) as u8 as i128));
            }
        }
    }

    /// A meet of two over-approximations of one value keeps the value; disjoint ones
    /// (unreachable code) keep the first.
    #[test]
    fn meet_keeps_common_members() {
        let a = Interval { lo: -3, hi: 10 };
        assert_eq!(
            a.meet(Interval { lo: 5, hi: 20 }),
            Interval { lo: 5, hi: 10 }
        );
        assert_eq!(a.meet(Interval { lo: 11, hi: 20 }), a);
        assert_eq!(a.join(Interval::point(-7)), Interval { lo: -7, hi: 10 });
        assert!(Interval::full(8).fits(8) && !Interval { lo: 0, hi: 128 }.fits(8));
    }
}
