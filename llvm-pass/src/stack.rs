//! Whether the driver can size the module's stack: a call cycle or a call through a
//! pointer among its functions means it cannot, and the module gets the marker of
//! `cusafe_format::stack` so that the runtime raises the stack limit for it.

use std::collections::HashMap;

use crate::ir::{callee, instructions, is_intrinsic};
use crate::sys::calls_inline_asm;
use inkwell::values::{FunctionValue, InstructionOpcode};

/// Whether `functions` (the module's defined functions) recurse, directly or through
/// others, or call through a pointer.
pub fn dynamic(functions: &[FunctionValue]) -> bool {
    let index: HashMap<FunctionValue, usize> =
        functions.iter().enumerate().map(|(i, &f)| (f, i)).collect();
    let mut calls = vec![Vec::new(); functions.len()];
    for (i, &f) in functions.iter().enumerate() {
        for inst in instructions(f) {
            if inst.get_opcode() != InstructionOpcode::Call {
                continue;
            }
            match callee(inst) {
                Some(g) if is_intrinsic(g) => {}
                Some(g) => calls[i].extend(index.get(&g).copied()),
                None if !calls_inline_asm(inst) => return true,
                None => {}
            }
        }
    }
    has_cycle(&calls)
}

/// Whether the directed graph `edges` (successors per node) has a cycle: an iterative
/// depth-first search that meets a node still on its path.
fn has_cycle(edges: &[Vec<usize>]) -> bool {
    #[derive(Clone, Copy, PartialEq)]
    enum Seen {
        No,
        OnPath,
        Done,
    }
    let mut seen = vec![Seen::No; edges.len()];
    for start in 0..edges.len() {
        if seen[start] != Seen::No {
            continue;
        }
        let mut path = vec![(start, 0)];
        seen[start] = Seen::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&to) = edges[node].get(*next) {
                *next += 1;
                match seen[to] {
                    Seen::OnPath => return true,
                    Seen::No => {
                        seen[to] = Seen::OnPath;
                        path.push((to, 0));
                    }
                    Seen::Done => {}
                }
            } else {
                seen[node] = Seen::Done;
                path.pop();
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::has_cycle;

    #[test]
    fn cycles_are_found_and_dags_are_not() {
        assert!(!has_cycle(&[]));
        assert!(!has_cycle(&[vec![1, 2], vec![2], vec![]]));
        assert!(has_cycle(&[vec![0]]));
        assert!(has_cycle(&[vec![1], vec![2], vec![1]]));
        assert!(!has_cycle(&[vec![1], vec![], vec![1, 0]]));
    }
}
