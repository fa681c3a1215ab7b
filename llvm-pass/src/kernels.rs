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

/// Whether kernel `k` has no `!nvvm.annotations` entry but its `"kernel"` one (no launch
/// bounds, no `grid_constant` parameter, ...).
pub fn kernel_annotation_only(ir: &Ir, k: FunctionValue) -> bool {
    ir.module()
        .get_global_metadata("nvvm.annotations")
        .into_iter()
        .filter_map(annotation)
        .all(|(f, kind)| f != Some(k) || kind.as_deref() == Some(b"kernel"))
}
