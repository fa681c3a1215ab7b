//! Dominators and natural loops of a function's CFG, computed once on the IR as it
//! was before instrumentation (the C API has no dominator tree). Splitting blocks and
//! adding check diamonds later keeps every dominance relation between the original
//! instructions, so the answers stay valid while the pass instruments.
//!
//! Dominators: Cooper, Harvey and Kennedy's iterative algorithm over reverse post order.
//! Loops: one per header with its back edges' sources (latches), body, exiting blocks
//! and preheader (the unique outside predecessor, if it branches only to the header).

use crate::ir::opcode;
use inkwell::basic_block::BasicBlock;
use inkwell::values::{FunctionValue, InstructionValue};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// A natural loop (one per header: loops sharing a header are one).
#[derive(Debug, Clone)]
pub struct Loop {
    /// Blocks of the loop (indices), header included.
    pub body: Vec<bool>,
    /// Blocks with a successor outside the loop, and blocks with a back edge.
    pub must_pass: Vec<usize>,
    /// The preheader, if the loop has one.
    pub preheader: Option<usize>,
}

/// Blocks, dominators and loops of one function.
#[derive(Debug)]
pub struct Cfg<'ctx> {
    /// Blocks reachable from the entry, in reverse post order (entry first).
    pub blocks: Vec<BasicBlock<'ctx>>,
    index: HashMap<BasicBlock<'ctx>, usize>,
    idom: Vec<usize>,
    preds: Vec<Vec<usize>>,
    /// Position of each original instruction in its block.
    position: HashMap<InstructionValue<'ctx>, usize>,
    /// Natural loops, innermost (smallest) first.
    pub loops: Vec<Loop>,
}

fn successors(bb: BasicBlock) -> Vec<BasicBlock> {
    bb.get_terminator()
        .map_or_else(Vec::new, crate::sys::successors)
}

impl<'ctx> Cfg<'ctx> {
    /// Analyses function `f`.
    pub fn of(f: FunctionValue<'ctx>) -> Cfg<'ctx> {
        let entry = f.get_first_basic_block().expect("a defined function");
        // Post order by an explicit stack (deep CFGs must not overflow the Rust stack).
        let mut post = Vec::new();
        let mut seen = std::collections::HashSet::new();
        let mut stack = vec![(entry, successors(entry), 0usize)];
        seen.insert(entry);
        while let Some((bb, succ, next)) = stack.last_mut() {
            if let Some(&s) = succ.get(*next) {
                *next += 1;
                if seen.insert(s) {
                    stack.push((s, successors(s), 0));
                }
            } else {
                post.push(*bb);
                stack.pop();
            }
        }
        let blocks: Vec<_> = post.into_iter().rev().collect();
        let index: HashMap<_, _> = blocks.iter().enumerate().map(|(i, &b)| (b, i)).collect();
        let succ: Vec<Vec<usize>> = blocks
            .iter()
            .map(|&b| {
                successors(b)
                    .iter()
                    .filter_map(|s| index.get(s).copied())
                    .collect()
            })
            .collect();
        let mut preds = vec![Vec::new(); blocks.len()];
        for (b, ss) in succ.iter().enumerate() {
            for &s in ss {
                preds[s].push(b);
            }
        }
        let idom = dominators(&preds);
        let mut position = HashMap::new();
        for &b in &blocks {
            for (n, i) in b.get_instructions().enumerate() {
                position.insert(i, n);
            }
        }
        let mut cfg = Cfg {
            blocks,
            index,
            idom,
            preds,
            position,
            loops: Vec::new(),
        };
        cfg.loops = cfg.find_loops(&succ);
        cfg
    }

    /// Index of block `bb`, if reachable.
    pub fn block_index(&self, bb: BasicBlock<'ctx>) -> Option<usize> {
        self.index.get(&bb).copied()
    }

    /// Index of the block of instruction `inst`, if reachable.
    pub fn block_of(&self, inst: InstructionValue<'ctx>) -> Option<usize> {
        self.block_index(inst.get_parent()?)
    }

    /// Whether block `a` dominates block `b` (indices).
    pub fn block_dominates(&self, a: usize, mut b: usize) -> bool {
        loop {
            if a == b {
                return true;
            }
            if b == 0 {
                return false;
            }
            b = self.idom[b];
        }
    }

    /// Whether original instruction `a` dominates original instruction `b` (`a` runs
    /// before `b` on every path to `b`); false for unknown or unreachable instructions.
    pub fn dominates(&self, a: InstructionValue<'ctx>, b: InstructionValue<'ctx>) -> bool {
        let (Some(ba), Some(bb)) = (self.block_of(a), self.block_of(b)) else {
            return false;
        };
        if ba == bb {
            return matches!((self.position.get(&a), self.position.get(&b)), (Some(x), Some(y)) if x < y);
        }
        self.block_dominates(ba, bb)
    }

    /// The branch edges every path to block `b` takes, nearest first: `(branch, taken)`
    /// for each block on `b`'s dominator chain (itself included) whose only predecessor
    /// ends in a two-way conditional branch, `taken` true when it is the branch's true
    /// successor. Whatever the branch's condition was on that edge holds in `b`.
    pub fn dominating_edges(&self, mut b: usize) -> Vec<(InstructionValue<'ctx>, bool)> {
        let mut edges = Vec::new();
        loop {
            if let [p] = self.preds[b][..] {
                edges.extend(self.branch_edge(p, b));
            }
            if b == 0 {
                return edges;
            }
            b = self.idom[b];
        }
    }

    /// The edge from block `p` to its successor `b` as `(branch, taken)` when `p` ends in
    /// a two-way conditional branch (`taken`: `b` is its true successor); `None` else.
    pub fn branch_edge(&self, p: usize, b: usize) -> Option<(InstructionValue<'ctx>, bool)> {
        let term = self.blocks[p]
            .get_terminator()
            .filter(|&t| opcode(t) == Some(LLVMOpcode::LLVMBr))?;
        let succ = crate::sys::successors(term);
        (term.is_conditional().expect("a branch") && succ[0] != succ[1])
            .then(|| (term, succ[0] == self.blocks[b]))
    }

    fn find_loops(&self, succ: &[Vec<usize>]) -> Vec<Loop> {
        let preds = &self.preds;
        let n = self.blocks.len();
        let mut loops = Vec::new();
        for h in 0..n {
            let latches: Vec<usize> = preds[h]
                .iter()
                .copied()
                .filter(|&p| self.block_dominates(h, p))
                .collect();
            if latches.is_empty() {
                continue;
            }
            let mut body = vec![false; n];
            body[h] = true;
            let mut work = latches.clone();
            while let Some(b) = work.pop() {
                if !body[b] {
                    body[b] = true;
                    work.extend(preds[b].iter().copied());
                }
            }
            let mut must_pass = latches;
            for b in (0..n).filter(|&b| body[b]) {
                if succ[b].iter().any(|&s| !body[s]) || self.leaves(b) {
                    must_pass.push(b);
                }
            }
            let outside: Vec<usize> = preds[h].iter().copied().filter(|&p| !body[p]).collect();
            let preheader = match outside[..] {
                [p] if succ[p] == [h] => Some(p),
                _ => None,
            };
            loops.push(Loop {
                body,
                must_pass,
                preheader,
            });
        }
        loops.sort_by_key(|l| l.body.iter().filter(|&&x| x).count());
        loops
    }

    /// Whether block `b` ends the function or the thread (ret, unreachable).
    fn leaves(&self, b: usize) -> bool {
        matches!(
            self.blocks[b].get_terminator().and_then(opcode),
            Some(LLVMOpcode::LLVMRet | LLVMOpcode::LLVMUnreachable)
        )
    }

    /// Loops containing block `b`, innermost first.
    pub fn loops_of(&self, b: usize) -> impl Iterator<Item = &Loop> {
        self.loops.iter().filter(move |l| l.body[b])
    }
}

/// Immediate dominators (entry = 0 is its own) for blocks in reverse post order.
fn dominators(preds: &[Vec<usize>]) -> Vec<usize> {
    const UNDEF: usize = usize::MAX;
    let n = preds.len();
    let mut idom = vec![UNDEF; n];
    if n == 0 {
        return idom;
    }
    idom[0] = 0;
    let mut changed = true;
    while changed {
        changed = false;
        for b in 1..n {
            let mut new = UNDEF;
            for &p in &preds[b] {
                if idom[p] == UNDEF {
                    continue;
                }
                new = if new == UNDEF {
                    p
                } else {
                    intersect(&idom, p, new)
                };
            }
            if new != idom[b] {
                idom[b] = new;
                changed = true;
            }
        }
    }
    idom
}

/// Nearest common dominator of `a` and `b` (RPO indices: dominators have smaller ones).
fn intersect(idom: &[usize], mut a: usize, mut b: usize) -> usize {
    while a != b {
        while a > b {
            a = idom[a];
        }
        while b > a {
            b = idom[b];
        }
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diamond_and_loop_dominators() {
        // 0 -> 1 -> {2, 3} -> 4 -> 1 (back edge), 4 -> 5
        let preds = vec![vec![], vec![0, 4], vec![1], vec![1], vec![2, 3], vec![4]];
        let idom = dominators(&preds);
        assert_eq!(idom, vec![0, 0, 1, 1, 1, 4]);
    }
}
