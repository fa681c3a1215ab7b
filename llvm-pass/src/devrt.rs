//! Links the device runtime (device-rt/cusafe_rt.c, compiled to NVPTX bitcode at build
//! time and embedded here) into an instrumented module.

use crate::check::SLOW_FN;
use crate::ir::Ir;
use crate::shared::{SIZE_FN, START_FN};
use llvm_sys::bit_reader::LLVMParseBitcodeInContext2;
use llvm_sys::core::*;
use llvm_sys::linker::LLVMLinkModules2;
use llvm_sys::prelude::*;
use llvm_sys::LLVMLinkage;
use std::ffi::CString;

static RUNTIME_BC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cusafe_rt.bc"));

/// Attributes of the runtime's own compile that must not override the module's target.
const FOREIGN_ATTRS: [&str; 2] = ["target-cpu", "target-features"];

/// Links the runtime into `ir.module` and makes its entry points internal.
pub fn link(ir: &Ir) -> Result<(), String> {
    unsafe {
        let buf = LLVMCreateMemoryBufferWithMemoryRange(
            RUNTIME_BC.as_ptr() as *const _,
            RUNTIME_BC.len(),
            c"cusafe_rt.bc".as_ptr(),
            0,
        );
        let mut rt: LLVMModuleRef = std::ptr::null_mut();
        let failed = LLVMParseBitcodeInContext2(ir.ctx, buf, &mut rt);
        LLVMDisposeMemoryBuffer(buf);
        if failed != 0 {
            return Err("cannot parse the embedded device runtime bitcode".into());
        }
        // Use the instrumented module's target description.
        LLVMSetDataLayout(rt, LLVMGetDataLayoutStr(ir.module));
        LLVMSetTarget(rt, LLVMGetTarget(ir.module));
        if LLVMLinkModules2(ir.module, rt) != 0 {
            return Err("linking the device runtime failed".into());
        }
        for entry in [SLOW_FN, "__cusafe_report", START_FN, SIZE_FN] {
            let name = CString::new(entry).expect("no NUL");
            let f = LLVMGetNamedFunction(ir.module, name.as_ptr());
            if f.is_null() {
                return Err(format!("device runtime lacks {entry}"));
            }
            LLVMSetLinkage(f, LLVMLinkage::LLVMInternalLinkage);
            for a in FOREIGN_ATTRS {
                LLVMRemoveStringAttributeAtIndex(
                    f,
                    llvm_sys::LLVMAttributeFunctionIndex,
                    a.as_ptr() as *const _,
                    a.len() as u32,
                );
            }
        }
    }
    Ok(())
}
