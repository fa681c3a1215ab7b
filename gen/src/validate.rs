//! The rules that keep a program free of undefined behaviour and deterministic,
//! checked on the representation: what the generator, EMI and the reducer must
//! preserve (the property tests run it on thousands of seeds).

use crate::ast::*;

/// Checks `p`; the error names the first broken rule and where.
pub fn validate(p: &Program) -> Result<(), String> {
    if p.block % 32 != 0 || p.block == 0 || p.grid == 0 {
        return Err(format!(
            "geometry {}x{}: blocks must be whole warps",
            p.grid, p.block
        ));
    }
    let threads = p.threads();
    for (i, b) in p.buffers.iter().enumerate() {
        if b.len == 0 {
            return Err(format!("buffer {i} is empty"));
        }
        if !b.accumulator && b.len < threads * b.own {
            return Err(format!(
                "buffer {i}: {} elements cannot hold {threads} threads x {} own slots",
                b.len, b.own
            ));
        }
    }
    for (k, kernel) in p.kernels.iter().enumerate() {
        let at = |what: String| format!("kernel {k}: {what}");
        for &o in &kernel.outputs {
            if kernel.inputs.contains(&o) {
                return Err(at(format!("buffer {o} is both read and written")));
            }
            if p.buffers.get(o).is_none_or(|b| b.accumulator || b.own == 0) {
                return Err(at(format!("buffer {o} cannot be an output")));
            }
        }
        if kernel.outputs.is_empty() {
            return Err(at("no output".into()));
        }
        let mut cx = Cx {
            p,
            k: kernel,
            loops: Vec::new(),
        };
        cx.block(&kernel.body, true, true).map_err(at)?;
    }
    for op in &p.host {
        match op {
            HostOp::Launch { kernel, .. } if *kernel >= p.kernels.len() => {
                return Err(format!("launch of missing kernel {kernel}"))
            }
            HostOp::Memset { buf, .. } if *buf >= p.buffers.len() => {
                return Err(format!("memset of missing buffer {buf}"))
            }
            HostOp::Copy { dst, src, bytes } => {
                let size = |b: usize| p.buffers.get(b).map_or(0, |b| b.len * b.elem.bytes());
                if *bytes > size(*dst) || *bytes > size(*src) {
                    return Err(format!(
                        "copy of {bytes} bytes from {src} to {dst} overflows"
                    ));
                }
            }
            _ => {}
        }
    }
    Ok(())
}

struct Cx<'a> {
    p: &'a Program,
    k: &'a Kernel,
    loops: Vec<u32>,
}

impl Cx<'_> {
    fn block(&mut self, body: &[Stmt], uniform: bool, live: bool) -> Result<(), String> {
        body.iter().try_for_each(|s| self.stmt(s, uniform, live))
    }

    fn var(&self, v: u32) -> Result<(), String> {
        if v < self.k.vars {
            Ok(())
        } else {
            Err(format!("v{v} is not declared"))
        }
    }

    fn stmt(&mut self, s: &Stmt, uniform: bool, live: bool) -> Result<(), String> {
        // Barriers and warp operations need every thread: uniform control flow, or
        // code that never runs.
        let needs_uniform = matches!(
            s,
            Stmt::SharedRound { .. } | Stmt::SharedAtomic { .. } | Stmt::Warp { .. }
        );
        if needs_uniform && live && !uniform {
            return Err(format!("{s:?} in divergent code"));
        }
        match s {
            Stmt::Set { var, value } => {
                self.var(*var)?;
                self.expr(value)
            }
            Stmt::Store {
                buf, slot, value, ..
            } => {
                if !self.k.outputs.contains(buf) || *slot >= self.p.buffers[*buf].own {
                    return Err(format!("store to b{buf} slot {slot} is not this thread's"));
                }
                self.expr(value)
            }
            Stmt::LocalStore { index, value } => {
                self.need(self.k.local_len > 0, "loc")?;
                self.expr(index)?;
                self.expr(value)
            }
            Stmt::Atomic {
                buf, index, value, ..
            } => {
                if !self.p.buffers.get(*buf).is_some_and(|b| b.accumulator) {
                    return Err(format!("atomic on b{buf}, which is not the accumulator"));
                }
                self.expr(index)?;
                self.expr(value)
            }
            Stmt::If { cond, then, els } => {
                self.expr(cond)?;
                self.block(then, false, live)?;
                self.block(els, false, live)
            }
            Stmt::Loop {
                var,
                param,
                modulus,
                body,
            } => {
                if *param > 2 || *modulus == 0 {
                    return Err(format!("loop i{var}: bad trip count"));
                }
                self.loops.push(*var);
                let r = self.block(body, uniform, live);
                self.loops.pop();
                r
            }
            Stmt::SharedRound {
                dynamic,
                values,
                var,
                index,
            } => {
                let per = if *dynamic {
                    self.k.dynamic_per_thread
                } else {
                    self.k.shared_per_thread
                };
                if values.len() as u32 != per || per == 0 {
                    return Err("a shared round must write every element once".into());
                }
                self.var(*var)?;
                values.iter().try_for_each(|v| self.expr(v))?;
                self.expr(index)
            }
            Stmt::SharedAtomic { value, var, .. } | Stmt::Warp { value, var, .. } => {
                self.var(*var)?;
                self.expr(value)
            }
            Stmt::Walk { var, buf, from, to } => {
                self.var(*var)?;
                self.word_input(*buf)?;
                self.expr(from)?;
                self.expr(to)
            }
            Stmt::RoundTrip {
                var, buf, index, ..
            } => {
                self.var(*var)?;
                self.word_input(*buf)?;
                self.expr(index)
            }
            Stmt::Vector {
                var,
                buf,
                index,
                width,
            } => {
                self.var(*var)?;
                self.word_input(*buf)?;
                if self.p.buffers[*buf].len < *width {
                    return Err(format!("b{buf} is shorter than one vector"));
                }
                self.expr(index)
            }
            Stmt::FillLocal { func, value } => {
                self.need(self.k.local_len > 0, "loc")?;
                if !matches!(
                    self.p.funcs.get(*func).map(|f| &f.kind),
                    Some(FuncKind::FillLocal { .. })
                ) {
                    return Err(format!("f{func} does not fill a local array"));
                }
                self.expr(value)
            }
            Stmt::DeviceHeap {
                var, len, index, ..
            } => {
                self.var(*var)?;
                self.need(*len > 0, "a non-empty heap block")?;
                self.expr(index)
            }
            Stmt::Guard { a, b, body } => {
                self.need(
                    *a < 64 && *b < 64 && a != b,
                    "guard indices below 64, distinct",
                )?;
                self.block(body, uniform, live && a < b)
            }
            Stmt::Plant(_) => Ok(()),
        }
    }

    fn need(&self, ok: bool, what: &str) -> Result<(), String> {
        if ok {
            Ok(())
        } else {
            Err(format!("needs {what}"))
        }
    }

    fn word_input(&self, b: usize) -> Result<(), String> {
        match self.p.buffers.get(b) {
            Some(buf) if self.k.inputs.contains(&b) && buf.elem == Elem::Word => Ok(()),
            _ => Err(format!("b{b} is not a word buffer this kernel reads")),
        }
    }

    fn expr(&self, e: &Expr) -> Result<(), String> {
        match e {
            Expr::Var(v) => self.var(*v),
            Expr::LoopVar(v) => self.need(self.loops.contains(v), "an enclosing loop"),
            Expr::Arg(_) | Expr::ArgLoad(_) => Err("a function argument in a kernel".into()),
            Expr::Bin(_, a, b) => {
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Select(c, a, b) => {
                self.expr(c)?;
                self.expr(a)?;
                self.expr(b)
            }
            Expr::Load { buf, index, .. } => {
                if !self.k.inputs.contains(buf) {
                    return Err(format!(
                        "load from b{buf}, which this kernel does not only read"
                    ));
                }
                self.expr(index)
            }
            Expr::Table(i) => {
                self.need(self.p.table_len > 0, "the table")?;
                self.expr(i)
            }
            Expr::Local(i) => {
                self.need(self.k.local_len > 0, "loc")?;
                self.expr(i)
            }
            Expr::Call { func, args, buf } => {
                match self.p.funcs.get(*func).map(|f| &f.kind) {
                    Some(FuncKind::Pure { .. } | FuncKind::Recursive { .. }) => {}
                    _ => return Err(format!("call of f{func}, which returns no value")),
                }
                self.word_input(*buf)?;
                self.expr(&args.0)?;
                self.expr(&args.1)
            }
            Expr::Const(_) | Expr::Tid | Expr::Gid | Expr::Bid | Expr::Param(_) => Ok(()),
        }
    }
}
