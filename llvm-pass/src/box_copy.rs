//! Copies of a kernel for blocks of a bounded shape (`CUSAFE_PASS_BOX_COPY`, on with
//! check elimination; not in coverage builds).
//!
//! Many `__shared__` accesses are in bounds for the blocks a program launches but not
//! for every block CUDA allows: srad's `tile[ty + 1][tx + 2]` of a `[18][18]` tile holds
//! for 16x16 blocks, and value intervals (`intervals.rs`) must assume `threadIdx.x` up
//! to 1023. So before a kernel is instrumented, the accesses of objects of known size
//! that intervals cannot prove are tried again under candidate block shapes (powers of
//! two, at most 1024 threads and at least 16, along the dimensions those accesses read),
//! and one is chosen ([`choose`]: it must save a check in a loop or at least
//! [`MIN_SAVED_OUTSIDE_LOOPS`] outside loops, keep array indices inside their rows about
//! as well as the best shape, then have the most threads).
//! If one qualifies, the kernel's body is copied (shim `cusafe_clone_body`) and a new
//! entry block tests `blockDim` against the shape: blocks that fit run the copy, whose
//! `threadIdx`/`blockDim` reads carry `!range` metadata for the shape, so the ordinary
//! planner (intervals and ScalarEvolution read it) proves those accesses there; every
//! other block runs the original, checked as before. Both copies share the entry's
//! static allocas and the kernel's parameters; one shape per kernel.
//!
//! The test is uniform (one per kernel launch, the same in every thread), and what it
//! selects was proven for every thread of such a block, so no access the program makes
//! goes unchecked where it could leave its object. The cost is code size: the kernel's
//! body is there twice.

use crate::collect::{Range, Target};
use crate::dom::Cfg;
use crate::elim::in_bounds;
use crate::ffi::cusafe_clone_body;
use crate::intervals::Intervals;
use crate::ir::{callee, name, operand, Ir};
use crate::loops::LoopAnalyses;
use inkwell::basic_block::BasicBlock;
use inkwell::values::InstructionOpcode;
use inkwell::values::{AsValueRef, BasicValue, BasicValueEnum, FunctionValue, InstructionValue};
use inkwell::IntPredicate;
use std::collections::HashSet;

/// Kernels with more instructions are not copied (the copy doubles the code ptxas
/// compiles).
const MAX_INSTRUCTIONS: usize = 20_000;
/// The fewest checks a copy must save outside loops when it saves none in a loop: the
/// copy's test of `blockDim` runs in every thread and waits for `blockDim` before
/// anything else starts, a saved check outside loops runs once per thread, and a
/// check one shared access needs usually shares its branch with another check.
/// hotspot's copy proved its two tile stores, whose compare had joined the branch of
/// the global loads' check: the copy ran 5 instructions more per warp on its fast
/// path (the test) to save 3, and those drew about 2,000 of the kernel's 23,300 stall
/// samples (Nsight Compute, H200).
const MIN_SAVED_OUTSIDE_LOOPS: usize = 4;
/// The fewest threads a candidate shape has: smaller blocks are rare, and a shape that
/// only they fit would leave the launches a program makes on the checked copy.
const MIN_THREADS: u32 = 16;
/// The most threads of a block (CUDA's limit), and the most along z.
const MAX_THREADS: u32 = 1024;
const MAX_Z: u32 = 64;
/// Operands followed back from an address looking for `threadIdx`/`blockDim` reads.
const MAX_WALK: usize = 256;
/// The special registers, by dimension.
const TID: [&str; 3] = [
    "llvm.nvvm.read.ptx.sreg.tid.x",
    "llvm.nvvm.read.ptx.sreg.tid.y",
    "llvm.nvvm.read.ptx.sreg.tid.z",
];
const NTID: [&str; 3] = [
    "llvm.nvvm.read.ptx.sreg.ntid.x",
    "llvm.nvvm.read.ptx.sreg.ntid.y",
    "llvm.nvvm.read.ptx.sreg.ntid.z",
];

/// The most threads a block has along x, y and z (`None`: what CUDA allows).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Shape(pub [Option<u32>; 3]);

impl Shape {
    /// The values `v` takes in blocks of this shape when it reads `threadIdx` or
    /// `blockDim` along a bounded dimension: `[lo, hi]`.
    pub fn range_of(&self, v: BasicValueEnum) -> Option<(u32, u32)> {
        let (d, is_tid) = sreg(v.as_instruction_value()?)?;
        let b = self.0[d]?;
        Some(if is_tid { (0, b - 1) } else { (1, b) })
    }

    /// Threads in a block of this shape (unbounded dimensions count 1).
    fn threads(&self) -> u32 {
        self.0.iter().map(|b| b.unwrap_or(1)).product()
    }

    /// How far from square it is: the spread of the bounded dimensions' log2.
    fn spread(&self) -> u32 {
        let logs = self.0.iter().flatten().map(|b| b.trailing_zeros());
        logs.clone().max().unwrap_or(0) - logs.min().unwrap_or(0)
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        let dims: Vec<String> = self
            .0
            .iter()
            .zip(["x", "y", "z"])
            .filter_map(|(b, d)| b.map(|b| format!("{d} <= {b}")))
            .collect();
        write!(f, "blockDim {}", dims.join(", "))
    }
}

/// A kernel that got a copy.
#[derive(Clone, Copy, Debug)]
pub struct Copied {
    /// The shape the copy runs for.
    pub shape: Shape,
    /// Accesses the shape proves in bounds that the checked copy checks.
    pub proven: usize,
}

/// Which dimension `i` reads and whether it is `threadIdx` (else `blockDim`), when it is
/// a call of one of those special registers.
fn sreg(i: InstructionValue) -> Option<(usize, bool)> {
    if i.get_opcode() != InstructionOpcode::Call {
        return None;
    }
    let n = name(callee(i)?);
    if let Some(d) = TID.iter().position(|t| *t == n) {
        return Some((d, true));
    }
    NTID.iter().position(|t| *t == n).map(|d| (d, false))
}

/// Gives kernel `f` a copy for the block shape [`choose`] picks among those that prove
/// some of its unproven accesses of known objects in bounds (see the module doc);
/// `None` when none qualifies, `f` accesses no known object, or `f` is too large.
pub fn copy<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>) -> Option<Copied> {
    let insts = crate::ir::instructions(f);
    if insts.len() > MAX_INSTRUCTIONS {
        return None;
    }
    let found = crate::collect::collect(ir, &insts);
    // Most kernels touch no `__shared__`, local or `__device__` object: no analyses then.
    let objects = found.accesses.iter().flat_map(|a| &a.ranges);
    if !objects
        .into_iter()
        .any(|r| matches!(r.target, Target::Object(_)))
    {
        return None;
    }
    let (shape, proven) = {
        let cfg = Cfg::of(f);
        let scev = LoopAnalyses::new(f);
        let any = Intervals::new(&cfg, &scev, ir.layout());
        let open: Vec<(InstructionValue, &Range)> = found
            .accesses
            .iter()
            .flat_map(|a| a.ranges.iter().map(move |r| (a.inst, r)))
            .filter(|(_, r)| matches!(r.target, Target::Object(_)))
            .filter(|&(i, r)| !in_bounds(&any, i, r))
            .collect();
        let dims = dims_read(&open);
        let scores: Vec<Score> = shapes(dims)
            .into_iter()
            .map(|shape| {
                let within = Intervals::within(&cfg, &scev, ir.layout(), shape);
                let proven: Vec<_> = open
                    .iter()
                    .filter(|&&(i, r)| in_bounds(&within, i, r))
                    .collect();
                let rows = proven
                    .iter()
                    .filter(|&&&(i, r)| within.rows_fit(i, r.addr, r.root))
                    .count();
                // What a copy saves: the proven accesses whose checks would run at the
                // access, not once per loop (gemm's tile loads: checked once per tile
                // anyway, and the copy only gave ptxas another chance to lay the loop
                // out worse, 4% slower on an H200).
                let saved: Vec<_> = proven
                    .iter()
                    .filter(|&&&(i, r)| !scev.has_range(i, r))
                    .collect();
                let in_loop = saved.iter().any(|&&&(i, _)| {
                    cfg.block_of(i)
                        .is_some_and(|b| cfg.loops_of(b).next().is_some())
                });
                Score {
                    proven: proven.len(),
                    rows,
                    saved: saved.len(),
                    in_loop,
                    shape,
                }
            })
            .collect();
        let best = choose(&scores)?;
        (best.shape, best.proven)
    };
    add_copy(ir, f, shape);
    Some(Copied { shape, proven })
}

/// What a candidate shape proves.
#[derive(Clone, Copy, Debug)]
struct Score {
    /// Accesses it proves in bounds.
    proven: usize,
    /// Of those, the ones whose every array index stays in its dimension
    /// ([`Intervals::rows_fit`]).
    rows: usize,
    /// Of the proven ones, those not checked once per loop in a preheader anyway.
    saved: usize,
    /// Whether one of the saved ones is in a loop (its check would run every trip).
    in_loop: bool,
    shape: Shape,
}

impl Score {
    /// Whether a copy for this shape saves more than its `blockDim` test costs: a check
    /// in a loop, or at least [`MIN_SAVED_OUTSIDE_LOOPS`] checks outside loops.
    fn worth_it(&self) -> bool {
        self.saved > 0 && (self.in_loop || self.saved >= MIN_SAVED_OUTSIDE_LOOPS)
    }
}

/// The shape to copy for, `None` if no shape saves enough checks ([`Score::worth_it`]). A smaller
/// block proves at least as much as a larger one, and the pass does not know what the
/// program launches, so the shapes that keep rows in at least 3/4 as many accesses as
/// the best one does qualify (srad's `[18][18]` tile proves as much for 128x8 blocks as
/// for 16x16, but only 16x16 keeps `tx + 2` inside a row; pathfinder's 256-thread block
/// proves 7 accesses, 128 threads one more), and of those the one with the most threads
/// wins, then the squarer, then the one proving more.
fn choose(scores: &[Score]) -> Option<Score> {
    let best_rows = scores.iter().map(|s| s.rows).max()?;
    scores
        .iter()
        .filter(|s| s.worth_it() && s.rows * 4 >= best_rows * 3)
        .max_by_key(|s| {
            (
                s.shape.threads(),
                std::cmp::Reverse(s.shape.spread()),
                s.proven,
                s.rows,
            )
        })
        .copied()
}

/// Which dimensions of `threadIdx`/`blockDim` the addresses of `ranges` are computed
/// from (following operands, phis included, up to [`MAX_WALK`] values).
fn dims_read(ranges: &[(InstructionValue, &Range)]) -> [bool; 3] {
    let mut dims = [false; 3];
    let mut seen = HashSet::new();
    let mut work: Vec<InstructionValue> = ranges
        .iter()
        .filter_map(|(_, r)| r.addr.as_instruction())
        .collect();
    while let Some(i) = work.pop() {
        if seen.len() >= MAX_WALK || !seen.insert(i) {
            continue;
        }
        if let Some((d, _)) = sreg(i) {
            dims[d] = true;
            continue;
        }
        for k in 0..i.get_num_operands() {
            work.extend(operand(i, k).and_then(|o| o.as_instruction_value()));
        }
    }
    dims
}

/// The candidate shapes over dimensions `dims`: powers of two, at least
/// [`MIN_THREADS`] and at most [`MAX_THREADS`] threads, z at most [`MAX_Z`].
fn shapes(dims: [bool; 3]) -> Vec<Shape> {
    let mut out = vec![Shape::default()];
    for (d, &used) in dims.iter().enumerate() {
        if !used {
            continue;
        }
        let top = if d == 2 { MAX_Z } else { MAX_THREADS };
        out = out
            .iter()
            .flat_map(|s| {
                (0..=top.trailing_zeros()).map(move |k| {
                    let mut t = *s;
                    t.0[d] = Some(1 << k);
                    t
                })
            })
            .filter(|s| s.threads() <= MAX_THREADS)
            .collect();
    }
    out.retain(|s| s != &Shape::default() && s.threads() >= MIN_THREADS);
    out
}

/// Copies `f`'s body and branches to the copy when the block fits `shape`, giving the
/// copy's `threadIdx`/`blockDim` reads the shape's ranges.
fn add_copy<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>, shape: Shape) {
    // SAFETY: `f` is a defined function of the module `ir` holds; the shim returns a
    // block of it.
    let copy = unsafe { BasicBlock::new(cusafe_clone_body(f.as_value_ref())) }
        .expect("the copy of the entry block");
    let head = f.get_first_basic_block().expect("the new entry block");
    let original = head.get_next_basic_block().expect("the old entry block");
    ir.at_end(head);
    // The test gets the location of the kernel's first located instruction (a builder
    // placed at a block's end keeps whatever location it had last, maybe another
    // function's, and code placed before the test later inherits it).
    let loc = original
        .get_instructions()
        .find_map(|i| i.get_debug_location());
    match loc {
        Some(l) => ir.b.set_current_debug_location(l),
        None => ir.b.unset_current_debug_location(),
    }
    let fits = (0..3)
        .filter_map(|d| {
            let b = shape.0[d]?;
            Some(ir.icmp(IntPredicate::ULE, ir.sreg(NTID[d]), ir.c32(b)))
        })
        .reduce(|a, b| ir.and(a, b))
        .expect("a shape bounds some dimension");
    ir.b.build_conditional_branch(fits, copy, original)
        .expect("positioned");
    let range = ir.ctx.get_kind_id("range");
    for bb in reachable(copy) {
        for i in bb.get_instructions() {
            let Some((d, is_tid)) = sreg(i) else { continue };
            let Some(b) = shape.0[d] else { continue };
            let (lo, hi) = if is_tid { (0, b) } else { (1, b + 1) };
            let node = ir
                .ctx
                .metadata_node(&[ir.c32(lo).into(), ir.c32(hi).into()]);
            i.set_metadata(node, range).expect("a range on a call");
        }
    }
}

/// The blocks reachable from `entry`.
fn reachable(entry: BasicBlock) -> Vec<BasicBlock> {
    let mut seen = vec![entry];
    let mut work = vec![entry];
    while let Some(bb) = work.pop() {
        let Some(t) = bb.get_terminator() else {
            continue;
        };
        for s in crate::sys::successors(t) {
            if !seen.contains(&s) {
                seen.push(s);
                work.push(s);
            }
        }
    }
    seen
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn candidate_shapes_cover_the_read_dimensions_only() {
        let xy = shapes([true, true, false]);
        assert!(xy.contains(&Shape([Some(16), Some(16), None])));
        assert!(xy.contains(&Shape([Some(1024), Some(1), None])));
        assert!(xy.iter().all(|s| s.0[2].is_none()));
        assert!(xy
            .iter()
            .all(|s| (MIN_THREADS..=MAX_THREADS).contains(&s.threads())));
        let z = shapes([false, false, true]);
        assert_eq!(z.len(), 3, "16, 32 and 64 along z: {z:?}");
        assert!(shapes([false; 3]).is_empty());
    }

    #[test]
    fn the_largest_shape_keeping_most_rows_wins() {
        let score = |proven, rows, x, y| Score {
            proven,
            rows,
            saved: proven,
            in_loop: false,
            shape: Shape([Some(x), Some(y), None]),
        };
        let pick = |s: &[Score]| choose(s).map(|b| (b.shape.0[0], b.shape.0[1]));
        // srad: 128x8 proves as much as 16x16 but keeps few rows.
        let srad = [score(8, 8, 16, 16), score(8, 2, 128, 8), score(8, 8, 8, 16)];
        assert_eq!(pick(&srad), Some((Some(16), Some(16))));
        // pathfinder: 256 threads keep 7 of the 8 rows 128 threads keep.
        let path = [
            score(8, 8, 128, 1),
            score(7, 7, 256, 1),
            score(0, 0, 512, 1),
        ];
        assert_eq!(pick(&path), Some((Some(256), Some(1))));
        // Of two alike, the squarer.
        let tie = [score(4, 4, 64, 4), score(4, 4, 16, 16)];
        assert_eq!(pick(&tie), Some((Some(16), Some(16))));
        // Nothing proven, no copy.
        assert_eq!(pick(&[score(0, 0, 16, 16)]), None);
    }

    #[test]
    fn a_copy_must_save_a_check_in_a_loop_or_several_outside() {
        let score = |saved, in_loop| Score {
            proven: saved,
            rows: saved,
            saved,
            in_loop,
            shape: Shape([Some(16), Some(16), None]),
        };
        // hotspot: two tile stores outside loops are not worth the blockDim test.
        assert!(choose(&[score(2, false)]).is_none());
        assert!(choose(&[score(MIN_SAVED_OUTSIDE_LOOPS - 1, false)]).is_none());
        assert!(choose(&[score(MIN_SAVED_OUTSIDE_LOOPS, false)]).is_some());
        // One check saved on every trip of a loop is.
        assert!(choose(&[score(1, true)]).is_some());
        assert!(choose(&[score(0, true)]).is_none());
    }
}
