//! EMI variants (equivalence modulo inputs): the base program with code added under
//! conditions on the `ctl` array (`ctl[j] == j`, unknown to the compiler). Dead
//! guards (`ctl[a] < ctl[b]` with `a > b`) hold random statements and hazards (bad
//! accesses with literal indices) that never run; live guards (`a < b`) wrap existing
//! statements. A variant must print exactly what its base prints, and a dead hazard
//! must never be reported: a hoisted or merged check may not report an access the
//! program does not make.

use crate::ast::*;
use crate::generate::{self, Limits};
use crate::rng::Choices;

/// Which EMI variant.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Emi {
    /// Dead code under always-false guards.
    Dead,
    /// Existing statements under always-true guards.
    Live,
}

/// The `ctl` entries guards compare (the host fills 64).
const CTL: u32 = 64;

/// The variant of `base` chosen by `seed`.
pub fn variant(base: &Program, emi: Emi, seed: u64, limits: &Limits) -> Program {
    let mut r = Choices::new(seed ^ 0x0065_6d69);
    let mut p = base.clone();
    for k in 0..p.kernels.len() {
        let mut body = std::mem::take(&mut p.kernels[k].body);
        match emi {
            Emi::Dead => inject_dead(&p, k, &mut body, &mut r, limits),
            Emi::Live => guard_live(&mut body, &mut r),
        }
        p.kernels[k].body = body;
    }
    p
}

fn guard_pair(r: &mut Choices, live: bool) -> (u32, u32) {
    let a = r.below(CTL - 1);
    let b = r.range(a + 1, CTL - 1);
    if live {
        (a, b)
    } else {
        (b, a)
    }
}

fn inject_dead(p: &Program, k: usize, body: &mut Vec<Stmt>, r: &mut Choices, limits: &Limits) {
    for s in body.iter_mut() {
        match s {
            Stmt::If { then, els, .. } => {
                inject_dead(p, k, then, r, limits);
                inject_dead(p, k, els, r, limits);
            }
            Stmt::Loop { body, .. } | Stmt::Guard { body, .. } => {
                inject_dead(p, k, body, r, limits)
            }
            _ => {}
        }
    }
    for _ in 0..r.range(1, 2) {
        let (a, b) = guard_pair(r, false);
        let n = r.range(1, 3);
        let mut dead = generate::statements(p, k, r, n, limits);
        if r.chance(60) {
            dead.insert(0, Stmt::Plant(hazard(p, k, r)));
        }
        let at = r.below(body.len() as u32 + 1) as usize;
        body.insert(at, Stmt::Guard { a, b, body: dead });
    }
}

/// A bad access with a literal index, for dead code: it must never be reported.
fn hazard(p: &Program, k: usize, r: &mut Choices) -> Plant {
    let kernel = &p.kernels[k];
    let mut spaces = vec![Space::Heap];
    if p.table_len > 0 {
        spaces.push(Space::Global);
    }
    if kernel.shared_per_thread > 0 {
        spaces.push(Space::Shared);
    }
    if kernel.dynamic_per_thread > 0 {
        spaces.push(Space::Dynamic);
    }
    if kernel.local_len > 0 {
        spaces.push(Space::Local);
    }
    let space = r.pick(&spaces);
    let buf = r.range(1, p.buffers.len() as u32 - 1) as usize;
    let len = match space {
        Space::Heap => p.buffers[buf].len,
        Space::Global => p.table_len,
        Space::Shared => kernel.shared_per_thread * p.block,
        Space::Dynamic => kernel.dynamic_per_thread * p.block,
        _ => kernel.local_len,
    };
    Plant {
        space,
        fault: Fault::OffByOne,
        write: r.chance(50),
        thread: r.below(p.grid * p.block),
        buf,
        index: i64::from(len) + i64::from(r.below(3)) * 1000,
    }
}

fn guard_live(body: &mut [Stmt], r: &mut Choices) {
    for s in body.iter_mut() {
        match s {
            Stmt::If { then, els, .. } => {
                guard_live(then, r);
                guard_live(els, r);
            }
            Stmt::Loop { body, .. } | Stmt::Guard { body, .. } => guard_live(body, r),
            _ => {}
        }
        if r.chance(30) {
            let (a, b) = guard_pair(r, true);
            let inner = std::mem::replace(
                s,
                Stmt::Set {
                    var: 0,
                    value: Expr::Var(0),
                },
            );
            *s = Stmt::Guard {
                a,
                b,
                body: vec![inner],
            };
        }
    }
}
