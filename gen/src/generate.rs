//! Builds a random [`Program`] from a seed: the shape first (geometry, buffers,
//! functions, kernels' roles), then each kernel's statements, keeping track of what is
//! in scope and whether control flow is still uniform (barriers, warp operations).

use crate::ast::*;
use crate::rng::Choices;

/// How big the generated programs get.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Kernels per program (at least 1).
    pub kernels: u32,
    /// Top-level statements per kernel.
    pub statements: u32,
    /// Nesting depth of loops and branches.
    pub depth: u32,
    /// Expression depth.
    pub expr_depth: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            kernels: 3,
            statements: 12,
            depth: 3,
            expr_depth: 3,
        }
    }
}

/// Generates the program of `seed`.
pub fn program(seed: u64, limits: &Limits) -> Program {
    let mut r = Choices::new(seed);
    let grid = r.range(1, 4);
    let block = r.pick(&[32, 64, 128, 256]);
    let threads = grid * block;
    // One region of the accumulator per atomic operation: mixed operations on one
    // word would make its final value depend on the order.
    let mut buffers = vec![Buffer {
        len: ACC_REGIONS * just_past_power(&mut r, 2, 4),
        elem: Elem::Word,
        own: 0,
        accumulator: true,
    }];
    for _ in 0..r.range(2, 5) {
        let elem = if r.chance(20) { Elem::Rec } else { Elem::Word };
        let own = r.range(1, 3);
        let need = threads * own;
        let len = match r.below(3) {
            0 => need,
            1 => need + r.range(1, 3),
            _ => need.next_power_of_two() + r.range(1, 3),
        };
        buffers.push(Buffer {
            len,
            elem,
            own,
            accumulator: false,
        });
    }
    let table_len = if r.chance(60) {
        just_past_power(&mut r, 3, 9)
    } else {
        0
    };
    let mut funcs = Vec::new();
    for _ in 0..r.below(4) {
        let kind = match r.below(3) {
            0 => FuncKind::Pure {
                body: func_expr(&mut r, 3, true),
            },
            1 => FuncKind::Recursive {
                base: func_expr(&mut r, 2, true),
                step: func_expr(&mut r, 2, false),
            },
            _ => FuncKind::FillLocal {
                body: func_expr(&mut r, 2, false),
            },
        };
        let noinline = !matches!(kind, FuncKind::Pure { .. }) || r.chance(50);
        funcs.push(Func { noinline, kind });
    }
    let mut prog = Program {
        seed,
        grid,
        block,
        buffers,
        table_len,
        funcs,
        kernels: Vec::new(),
        host: Vec::new(),
    };
    for _ in 0..r.range(1, limits.kernels.max(1)) {
        let kernel = kernel(&mut r, &prog, limits);
        prog.kernels.push(kernel);
    }
    prog.host = host(&mut r, &prog);
    prog
}

/// Regions of the accumulator buffer (one per [`AtomicOp`]).
pub const ACC_REGIONS: u32 = 6;

/// `2^k + d` for `k` in `lo..=hi` and `d` in 0..=3: sizes just past powers of two.
fn just_past_power(r: &mut Choices, lo: u32, hi: u32) -> u32 {
    (1 << r.range(lo, hi)) + r.below(4)
}

fn host(r: &mut Choices, prog: &Program) -> Vec<HostOp> {
    let mut ops = Vec::new();
    let data: Vec<usize> = (1..prog.buffers.len()).collect();
    for (k, _) in prog.kernels.iter().enumerate() {
        if r.chance(30) {
            let buf = r.pick(&data);
            ops.push(HostOp::Memset {
                buf,
                byte: r.word() as u8,
            });
        }
        if r.chance(30) {
            let dst = r.pick(&data);
            let src = r.pick(&data);
            if dst != src {
                let bytes = prog.buffers[dst]
                    .len
                    .saturating_mul(prog.buffers[dst].elem.bytes())
                    .min(prog.buffers[src].len * prog.buffers[src].elem.bytes());
                ops.push(HostOp::Copy {
                    dst,
                    src,
                    bytes: r.range(1, bytes),
                });
            }
        }
        for _ in 0..r.range(1, 2) {
            ops.push(HostOp::Launch {
                kernel: k,
                trips: [r.below(64), r.below(64), r.below(64)],
            });
        }
    }
    ops
}

/// What is in scope while one kernel's statements are generated.
struct Scope<'a> {
    prog: &'a Program,
    limits: &'a Limits,
    word_inputs: Vec<usize>,
    inputs: Vec<usize>,
    outputs: Vec<usize>,
    vars: u32,
    local_len: u32,
    shared: u32,
    dynamic: u32,
    loop_vars: Vec<u32>,
    next_loop_var: u32,
}

fn kernel(r: &mut Choices, prog: &Program, limits: &Limits) -> Kernel {
    let mut data: Vec<usize> = (1..prog.buffers.len()).collect();
    // Shuffle, then the first one or two write and the rest read.
    for i in (1..data.len()).rev() {
        let j = r.below(i as u32 + 1) as usize;
        data.swap(i, j);
    }
    let n_out = if data.len() > 2 && r.chance(40) { 2 } else { 1 };
    let outputs = data[..n_out].to_vec();
    let inputs = data[n_out..].to_vec();
    let mut k = Kernel {
        inputs,
        outputs,
        vars: r.range(2, 5),
        local_len: if r.chance(60) { r.range(4, 40) } else { 0 },
        shared_per_thread: if r.chance(50) { r.range(1, 2) } else { 0 },
        dynamic_per_thread: if r.chance(35) { r.range(1, 2) } else { 0 },
        body: Vec::new(),
    };
    let n = r.range(limits.statements / 2, limits.statements).max(1);
    k.body = Scope::of(prog, &k, limits, 0).block(r, n, 0, true);
    k
}

/// `n` random statements that could go at the top level of kernel `k` of `prog`
/// (they use no loop variable of an enclosing loop; their own loops count from 1000).
pub fn statements(prog: &Program, k: usize, r: &mut Choices, n: u32, limits: &Limits) -> Vec<Stmt> {
    Scope::of(prog, &prog.kernels[k], limits, 1000).block(r, n, 1, false)
}

impl<'a> Scope<'a> {
    fn of(prog: &'a Program, k: &Kernel, limits: &'a Limits, first_loop_var: u32) -> Self {
        Scope {
            prog,
            limits,
            word_inputs: k
                .inputs
                .iter()
                .copied()
                .filter(|&b| prog.buffers[b].elem == Elem::Word)
                .collect(),
            inputs: k.inputs.clone(),
            outputs: k.outputs.clone(),
            vars: k.vars,
            local_len: k.local_len,
            shared: k.shared_per_thread,
            dynamic: k.dynamic_per_thread,
            loop_vars: Vec::new(),
            next_loop_var: first_loop_var,
        }
    }

    /// `n` statements at nesting `depth`; `uniform`: every thread of the block gets
    /// here together.
    fn block(&mut self, r: &mut Choices, n: u32, depth: u32, uniform: bool) -> Vec<Stmt> {
        (0..n).map(|_| self.stmt(r, depth, uniform)).collect()
    }

    fn var(&self, r: &mut Choices) -> u32 {
        r.below(self.vars)
    }

    fn stmt(&mut self, r: &mut Choices, depth: u32, uniform: bool) -> Stmt {
        let nested = depth < self.limits.depth;
        let fill_funcs: Vec<usize> = self.funcs_of(|k| matches!(k, FuncKind::FillLocal { .. }));
        let weights = [
            30,                                     // set
            14,                                     // store
            if self.local_len > 0 { 6 } else { 0 }, // local store
            6,                                      // atomic
            if nested { 8 } else { 0 },             // if
            if nested { 8 } else { 0 },             // loop
            if uniform && (self.shared + self.dynamic) > 0 {
                6
            } else {
                0
            }, // shared round
            if uniform { 3 } else { 0 },            // shared atomic
            if uniform { 5 } else { 0 },            // warp
            if self.word_inputs.is_empty() { 0 } else { 4 }, // walk
            if self.word_inputs.is_empty() { 0 } else { 3 }, // round trip
            if self.vector_inputs().is_empty() {
                0
            } else {
                4
            }, // vector
            if self.local_len > 0 && !fill_funcs.is_empty() {
                3
            } else {
                0
            }, // fill local
            2,                                      // device heap
        ];
        let ed = self.limits.expr_depth;
        match r.weighted(&weights) {
            0 => Stmt::Set {
                var: self.var(r),
                value: self.expr(r, ed),
            },
            1 => {
                let buf = r.pick(&self.outputs);
                Stmt::Store {
                    buf,
                    slot: r.below(self.prog.buffers[buf].own),
                    field: field(r),
                    value: self.expr(r, ed),
                }
            }
            2 => Stmt::LocalStore {
                index: self.expr(r, 2),
                value: self.expr(r, ed),
            },
            3 => Stmt::Atomic {
                op: atomic_op(r),
                buf: 0,
                index: self.expr(r, 2),
                value: self.expr(r, ed),
            },
            4 => {
                let n = r.range(1, 4);
                let m = r.range(0, 3);
                Stmt::If {
                    cond: self.expr(r, 2),
                    then: self.block(r, n, depth + 1, false),
                    els: self.block(r, m, depth + 1, false),
                }
            }
            5 => {
                let var = self.next_loop_var;
                self.next_loop_var += 1;
                self.loop_vars.push(var);
                let n = r.range(1, 4);
                let body = self.block(r, n, depth + 1, uniform);
                self.loop_vars.pop();
                Stmt::Loop {
                    var,
                    param: r.below(3) as u8,
                    modulus: r.range(1, 6),
                    body,
                }
            }
            6 => {
                let dynamic = if self.shared == 0 {
                    true
                } else if self.dynamic == 0 {
                    false
                } else {
                    r.chance(50)
                };
                let per = if dynamic { self.dynamic } else { self.shared };
                Stmt::SharedRound {
                    dynamic,
                    values: (0..per).map(|_| self.expr(r, ed)).collect(),
                    var: self.var(r),
                    index: self.expr(r, 2),
                }
            }
            7 => Stmt::SharedAtomic {
                op: atomic_op(r),
                init: r.word(),
                value: self.expr(r, ed),
                var: self.var(r),
            },
            8 => {
                let op = match r.below(6) {
                    0 => WarpOp::Shfl(r.below(32)),
                    1 => WarpOp::ShflXor(1 << r.below(5)),
                    2 => WarpOp::ShflDown(r.range(1, 16)),
                    3 => WarpOp::Ballot,
                    4 => WarpOp::Any,
                    _ => WarpOp::All,
                };
                Stmt::Warp {
                    op,
                    var: self.var(r),
                    value: self.expr(r, ed),
                }
            }
            9 => Stmt::Walk {
                var: self.var(r),
                buf: r.pick(&self.word_inputs),
                from: self.expr(r, 2),
                to: self.expr(r, 2),
            },
            10 => Stmt::RoundTrip {
                var: self.var(r),
                buf: r.pick(&self.word_inputs),
                index: self.expr(r, 2),
                delta: r.pick(&[4, 64, 4096, 1 << 20, 1 << 30]),
            },
            11 => {
                let buf = r.pick(&self.vector_inputs());
                Stmt::Vector {
                    var: self.var(r),
                    buf,
                    index: self.expr(r, 2),
                    width: r.pick(&[2, 4]),
                }
            }
            12 => Stmt::FillLocal {
                func: r.pick(&fill_funcs),
                value: self.expr(r, 2),
            },
            _ => Stmt::DeviceHeap {
                var: self.var(r),
                len: r.range(1, 32),
                index: self.expr(r, 2),
            },
        }
    }

    fn vector_inputs(&self) -> Vec<usize> {
        self.word_inputs
            .iter()
            .copied()
            .filter(|&b| self.prog.buffers[b].len >= 4)
            .collect()
    }

    fn funcs_of(&self, want: impl Fn(&FuncKind) -> bool) -> Vec<usize> {
        (0..self.prog.funcs.len())
            .filter(|&f| want(&self.prog.funcs[f].kind))
            .collect()
    }

    fn expr(&mut self, r: &mut Choices, depth: u32) -> Expr {
        let callable = self.funcs_of(|k| !matches!(k, FuncKind::FillLocal { .. }));
        if depth == 0 || r.chance(25) {
            return self.leaf(r);
        }
        let d = depth - 1;
        let weights = [
            40,
            6,
            if self.inputs.is_empty() { 0 } else { 14 },
            if self.prog.table_len > 0 { 5 } else { 0 },
            if self.local_len > 0 { 6 } else { 0 },
            if callable.is_empty() || self.word_inputs.is_empty() {
                0
            } else {
                4
            },
        ];
        match r.weighted(&weights) {
            0 => Expr::Bin(
                bin_op(r),
                Box::new(self.expr(r, d)),
                Box::new(self.expr(r, d)),
            ),
            1 => Expr::Select(
                Box::new(self.expr(r, d)),
                Box::new(self.expr(r, d)),
                Box::new(self.expr(r, d)),
            ),
            2 => Expr::Load {
                buf: r.pick(&self.inputs),
                index: Box::new(self.expr(r, d)),
                field: field(r),
            },
            3 => Expr::Table(Box::new(self.expr(r, d))),
            4 => Expr::Local(Box::new(self.expr(r, d))),
            _ => Expr::Call {
                func: r.pick(&callable),
                args: Box::new((self.expr(r, d), self.expr(r, d))),
                buf: r.pick(&self.word_inputs),
            },
        }
    }

    fn leaf(&mut self, r: &mut Choices) -> Expr {
        match r.below(8) {
            0 => Expr::Const(constant(r)),
            1 | 2 => Expr::Var(self.var(r)),
            3 if !self.loop_vars.is_empty() => Expr::LoopVar(r.pick(&self.loop_vars)),
            3 | 4 => Expr::Gid,
            5 => Expr::Tid,
            6 => Expr::Bid,
            _ => Expr::Param(r.below(3) as u8),
        }
    }
}

/// An expression over a function's two arguments and (with `loads`) its buffer.
fn func_expr(r: &mut Choices, depth: u32, loads: bool) -> Expr {
    if depth == 0 || r.chance(25) {
        return if r.chance(30) {
            Expr::Const(constant(r))
        } else {
            Expr::Arg(r.below(2))
        };
    }
    let d = depth - 1;
    match r.below(5) {
        0 if loads => Expr::ArgLoad(Box::new(func_expr(r, d, loads))),
        1 => Expr::Select(
            Box::new(func_expr(r, d, loads)),
            Box::new(func_expr(r, d, loads)),
            Box::new(func_expr(r, d, loads)),
        ),
        _ => Expr::Bin(
            bin_op(r),
            Box::new(func_expr(r, d, loads)),
            Box::new(func_expr(r, d, loads)),
        ),
    }
}

fn constant(r: &mut Choices) -> u32 {
    match r.below(4) {
        0 => r.below(16),
        1 => r.word(),
        2 => r.pick(&[0x7fff_ffff, 0x8000_0000, 0xffff_ffff, 0xffff, 0x1_0000]),
        _ => r.below(1024),
    }
}

fn bin_op(r: &mut Choices) -> BinOp {
    use BinOp::*;
    r.pick(&[
        Add, Add, Sub, Mul, Xor, Xor, And, Or, Shl, Shr, Div, Rem, Lt, Eq, SLt, Min, Max,
    ])
}

fn atomic_op(r: &mut Choices) -> AtomicOp {
    use AtomicOp::*;
    r.pick(&[Add, Add, Or, Xor, Min, Max, And])
}

fn field(r: &mut Choices) -> Field {
    r.pick(&[Field::A, Field::B, Field::C, Field::D])
}
