//! Which functions are kernels: those listed as `"kernel"` in `!nvvm.annotations`.

use llvm_sys::core::*;
use llvm_sys::prelude::*;

/// The kernels of module `m`.
pub fn kernels(m: LLVMModuleRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    unsafe {
        let name = c"nvvm.annotations";
        let n = LLVMGetNamedMetadataNumOperands(m, name.as_ptr());
        let mut nodes = vec![std::ptr::null_mut(); n as usize];
        LLVMGetNamedMetadataOperands(m, name.as_ptr(), nodes.as_mut_ptr());
        for node in nodes {
            if LLVMGetMDNodeNumOperands(node) < 2 {
                continue;
            }
            let mut ops = vec![std::ptr::null_mut(); LLVMGetMDNodeNumOperands(node) as usize];
            LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
            let mut len = 0u32;
            let key = LLVMGetMDString(ops[1], &mut len);
            let is_kernel = !key.is_null()
                && std::slice::from_raw_parts(key as *const u8, len as usize) == b"kernel";
            if is_kernel && !ops[0].is_null() && !LLVMIsAFunction(ops[0]).is_null() {
                out.push(ops[0]);
            }
        }
    }
    out
}
