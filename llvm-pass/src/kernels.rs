//! Which functions are kernels: those listed as `"kernel"` in `!nvvm.annotations`.

use crate::ir::Ir;
use crate::sys::annotation;
use inkwell::values::FunctionValue;

/// The kernels of the module of `ir`.
pub fn kernels<'ctx>(ir: &Ir<'ctx>) -> Vec<FunctionValue<'ctx>> {
    let mut out = Vec::new();
    for node in ir.module().get_global_metadata("nvvm.annotations") {
        if let Some((Some(f), Some(kind))) = annotation(node) {
            if kind == b"kernel" {
                out.push(f);
            }
        }
    }
    out
}
