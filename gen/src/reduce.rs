//! Delta reduction over the program's representation (not its text): every candidate
//! is a valid program, so each test costs one build and run, never a syntax error.
//!
//! Steps, repeated until none makes progress: drop host steps; drop chunks of every
//! statement list (halving chunk sizes, as ddmin); replace a branch, loop or guard by
//! its body; replace an expression by `0` or by one of its operands; drop kernels no
//! launch uses. A candidate is tested only when it keeps the rules of
//! [`crate::validate`], and kept when `interesting` says the failure is still there.

use crate::ast::*;

/// Reduces `prog` while `interesting` holds (it must hold for `prog` itself); returns
/// the smallest program found and how many candidates were tested.
pub fn reduce(prog: &Program, mut interesting: impl FnMut(&Program) -> bool) -> (Program, usize) {
    let mut best = prog.clone();
    let mut tests = 0usize;
    let mut try_it = |cand: Program, best: &mut Program| {
        // Only programs that keep the rules are tried: a reduced failure must still
        // be a program free of undefined behaviour.
        if crate::validate::validate(&cand).is_err() {
            return false;
        }
        tests += 1;
        if interesting(&cand) {
            *best = cand;
            true
        } else {
            false
        }
    };
    loop {
        let mut progress = false;
        // Host steps, one at a time from the end.
        let mut i = best.host.len();
        while i > 0 {
            i -= 1;
            if i < best.host.len() {
                let mut c = best.clone();
                c.host.remove(i);
                progress |= try_it(c, &mut best);
            }
        }
        // Statement lists: chunks, halving.
        let mut list = 0;
        while list < lists(&best).len() {
            let len = list_at(&mut best.clone(), &lists(&best)[list]).len();
            let mut chunk = len.max(1);
            while chunk >= 1 {
                let mut start = 0;
                while start < list_at(&mut best.clone(), &lists(&best)[list]).len() {
                    let mut c = best.clone();
                    let path = lists(&best)[list].clone();
                    let l = list_at(&mut c, &path);
                    let end = (start + chunk).min(l.len());
                    l.drain(start..end);
                    if !try_it(c, &mut best) {
                        start += chunk;
                    } else {
                        progress = true;
                    }
                    if list >= lists(&best).len() {
                        break;
                    }
                }
                if list >= lists(&best).len() {
                    break;
                }
                chunk /= 2;
            }
            list += 1;
        }
        // Compound statements by their bodies.
        let mut s = 0;
        while s < stmts(&best).len() {
            let path = stmts(&best)[s].clone();
            for which in 0..2 {
                let mut c = best.clone();
                if unwrap(&mut c, &path, which) && try_it(c, &mut best) {
                    progress = true;
                    break;
                }
            }
            s += 1;
        }
        // Expressions by 0 or an operand.
        let mut e = 0;
        while e < count_exprs(&best) {
            for choice in 0..3 {
                let mut c = best.clone();
                if simplify_expr(&mut c, e, choice) && c != best && try_it(c, &mut best) {
                    progress = true;
                    break;
                }
            }
            e += 1;
        }
        // Kernels no launch uses.
        let mut k = best.kernels.len();
        while k > 1 {
            k -= 1;
            if !best
                .host
                .iter()
                .any(|op| matches!(op, HostOp::Launch { kernel, .. } if *kernel == k))
            {
                let mut c = best.clone();
                remove_kernel(&mut c, k);
                progress |= try_it(c, &mut best);
            }
        }
        if !progress {
            return (best, tests);
        }
    }
}

/// Where a statement list is: the kernel, then (statement index, which child list)
/// steps down from its body.
type ListPath = (usize, Vec<(usize, usize)>);

fn lists(p: &Program) -> Vec<ListPath> {
    let mut out = Vec::new();
    for (k, kernel) in p.kernels.iter().enumerate() {
        collect_lists(&kernel.body, &mut vec![], k, &mut out);
    }
    out
}

fn collect_lists(body: &[Stmt], path: &mut Vec<(usize, usize)>, k: usize, out: &mut Vec<ListPath>) {
    out.push((k, path.clone()));
    for (i, s) in body.iter().enumerate() {
        for (which, child) in children(s).into_iter().enumerate() {
            path.push((i, which));
            collect_lists(child, path, k, out);
            path.pop();
        }
    }
}

fn children(s: &Stmt) -> Vec<&Vec<Stmt>> {
    match s {
        Stmt::If { then, els, .. } => vec![then, els],
        Stmt::Loop { body, .. } | Stmt::Guard { body, .. } => vec![body],
        _ => vec![],
    }
}

fn child_mut(s: &mut Stmt, which: usize) -> &mut Vec<Stmt> {
    match s {
        Stmt::If { then, els, .. } => {
            if which == 0 {
                then
            } else {
                els
            }
        }
        Stmt::Loop { body, .. } | Stmt::Guard { body, .. } => body,
        _ => unreachable!("paths only lead through compound statements"),
    }
}

fn list_at<'a>(p: &'a mut Program, path: &ListPath) -> &'a mut Vec<Stmt> {
    let mut l = &mut p.kernels[path.0].body;
    for &(i, which) in &path.1 {
        l = child_mut(&mut l[i], which);
    }
    l
}

/// Every statement as (its list, its index).
fn stmts(p: &Program) -> Vec<(ListPath, usize)> {
    let mut out = Vec::new();
    for path in lists(p) {
        let len = list_at(&mut p.clone(), &path).len();
        for i in 0..len {
            out.push((path.clone(), i));
        }
    }
    out
}

/// Replaces a compound statement by one of its bodies (`which`: then/else of an `if`;
/// 0 for a loop, whose variable becomes 0, or a guard). False if not compound.
fn unwrap(p: &mut Program, at: &(ListPath, usize), which: usize) -> bool {
    let list = list_at(p, &at.0);
    let body = match &list[at.1] {
        Stmt::If { then, els, .. } => {
            if which == 0 {
                then.clone()
            } else {
                els.clone()
            }
        }
        Stmt::Loop { var, body, .. } if which == 0 => {
            let mut body = body.clone();
            let v = *var;
            for s in &mut body {
                visit_stmt_exprs(s, &mut |e| replace_loop_var(e, v));
            }
            body
        }
        Stmt::Guard { body, .. } if which == 0 => body.clone(),
        _ => return false,
    };
    list.splice(at.1..at.1 + 1, body);
    true
}

fn replace_loop_var(e: &mut Expr, v: u32) {
    if *e == Expr::LoopVar(v) {
        *e = Expr::Const(0);
    }
    for c in expr_children(e) {
        replace_loop_var(c, v);
    }
}

fn expr_children(e: &mut Expr) -> Vec<&mut Expr> {
    match e {
        Expr::Bin(_, a, b) => vec![a, b],
        Expr::Select(c, a, b) => vec![c, a, b],
        Expr::Load { index, .. } => vec![index],
        Expr::Table(i) | Expr::Local(i) | Expr::ArgLoad(i) => vec![i],
        Expr::Call { args, .. } => {
            let (a, b) = &mut **args;
            vec![a, b]
        }
        _ => vec![],
    }
}

/// Calls `f` on each expression a statement holds directly (and, through nested
/// statements, on theirs).
fn visit_stmt_exprs(s: &mut Stmt, f: &mut dyn FnMut(&mut Expr)) {
    match s {
        Stmt::Set { value, .. } | Stmt::Store { value, .. } => f(value),
        Stmt::LocalStore { index, value } | Stmt::Atomic { index, value, .. } => {
            f(index);
            f(value);
        }
        Stmt::If { cond, then, els } => {
            f(cond);
            for s in then.iter_mut().chain(els.iter_mut()) {
                visit_stmt_exprs(s, f);
            }
        }
        Stmt::Loop { body, .. } | Stmt::Guard { body, .. } => {
            for s in body {
                visit_stmt_exprs(s, f);
            }
        }
        Stmt::SharedRound { values, index, .. } => {
            for v in values {
                f(v);
            }
            f(index);
        }
        Stmt::SharedAtomic { value, .. } | Stmt::Warp { value, .. } => f(value),
        Stmt::Walk { from, to, .. } => {
            f(from);
            f(to);
        }
        Stmt::RoundTrip { index, .. }
        | Stmt::Vector { index, .. }
        | Stmt::DeviceHeap { index, .. } => f(index),
        Stmt::FillLocal { value, .. } => f(value),
        Stmt::Plant(_) => {}
    }
}

/// Visits every expression node of the kernels, outer before inner.
fn visit_all(p: &mut Program, f: &mut dyn FnMut(&mut Expr) -> bool) {
    fn walk(e: &mut Expr, f: &mut dyn FnMut(&mut Expr) -> bool) {
        if f(e) {
            for c in expr_children(e) {
                walk(c, f);
            }
        }
    }
    for k in &mut p.kernels {
        for s in &mut k.body {
            visit_stmt_exprs(s, &mut |e| walk(e, f));
        }
    }
}

fn count_exprs(p: &Program) -> usize {
    let mut n = 0;
    visit_all(&mut p.clone(), &mut |_| {
        n += 1;
        true
    });
    n
}

/// Replaces expression node `target` (in [`visit_all`] order) by 0 (`choice` 0) or
/// its first or second operand; false when that operand does not exist.
fn simplify_expr(p: &mut Program, target: usize, choice: usize) -> bool {
    let mut n = 0;
    let mut done = false;
    visit_all(p, &mut |e| {
        if done {
            return false;
        }
        if n == target {
            done = true;
            let replacement = match choice {
                0 => Some(Expr::Const(0)),
                c => expr_children(e)
                    .into_iter()
                    .nth(c - 1)
                    .filter(|x| !matches!(x, Expr::Arg(_)))
                    .map(|x| x.clone()),
            };
            match replacement {
                Some(r) if *e != r => *e = r,
                _ => done = false,
            }
            n += 1;
            return false;
        }
        n += 1;
        true
    });
    done
}

fn remove_kernel(p: &mut Program, k: usize) {
    p.kernels.remove(k);
    for op in &mut p.host {
        if let HostOp::Launch { kernel, .. } = op {
            if *kernel > k {
                *kernel -= 1;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::generate::{program, Limits};

    fn has_atomic(body: &[Stmt]) -> bool {
        body.iter().any(|s| match s {
            Stmt::Atomic { .. } => true,
            other => children(other).into_iter().any(|c| has_atomic(c)),
        })
    }

    fn size(p: &Program) -> usize {
        crate::emit::file(std::slice::from_ref(p)).text.len()
    }

    #[test]
    fn reduces_to_the_one_interesting_statement() {
        let limits = Limits::default();
        let seed = (0..200u64)
            .find(|&s| {
                program(s, &limits)
                    .kernels
                    .iter()
                    .any(|k| has_atomic(&k.body))
            })
            .expect("some seed has an atomic");
        let p = program(seed, &limits);
        let (small, tests) = reduce(&p, |c| c.kernels.iter().any(|k| has_atomic(&k.body)));
        assert!(small.kernels.iter().any(|k| has_atomic(&k.body)));
        let stmts: usize = small.kernels.iter().map(|k| k.body.len()).sum();
        assert_eq!(stmts, 1, "{small:#?}");
        assert!(small.host.is_empty());
        assert!(size(&small) < size(&p));
        assert!(tests > 0);
    }
}
