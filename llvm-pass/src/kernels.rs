//! Which functions are kernels: those listed as `"kernel"` in `!nvvm.annotations`.

use crate::ir::Ir;
use crate::sys::{md_node_operands, md_string};
use inkwell::values::{AsValueRef, FunctionValue};
use llvm_sys::prelude::*;

/// The kernels of the module of `ir`.
pub fn kernels(ir: &Ir) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    for node in ir.module().get_global_metadata("nvvm.annotations") {
        if node.get_node_size().unwrap_or(0) < 2 {
            continue;
        }
        let ops = md_node_operands(node.as_value_ref());
        if md_string(ops[1]).as_deref() != Some(b"kernel") {
            continue;
        }
        if let Some(f) = unsafe { FunctionValue::new(ops[0]) } {
            out.push(f.as_value_ref());
        }
    }
    out
}
