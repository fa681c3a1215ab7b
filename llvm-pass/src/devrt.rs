//! Links the device runtime (device-rt/cusafe_rt.c, compiled to NVPTX bitcode at build
//! time and embedded here) into an instrumented module, inlines its `__cusafe_fail` into
//! the cold blocks that call it and drops what the module does not use.

use crate::check::{FAIL_FN, SLOW_FN, TRAP_FN, TRAP_SLOT};
use crate::heap::{FREE_FN, MALLOC_FN};
use crate::ir::{uses, Ir};
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

/// The runtime's entry points, callers before callees.
const ENTRIES: [&str; 8] = [
    MALLOC_FN,
    FREE_FN,
    FAIL_FN,
    TRAP_FN,
    SLOW_FN,
    "__cusafe_report",
    START_FN,
    SIZE_FN,
];

/// Links the runtime into `ir.raw_module()`, makes its entry points internal, inlines every
/// call of [`FAIL_FN`] (unless `inline_cold` is off: the IR tests read the cold calls'
/// arguments) and deletes the entry points nothing calls.
pub fn link(ir: &Ir, inline_cold: bool) -> Result<(), String> {
    unsafe {
        let buf = LLVMCreateMemoryBufferWithMemoryRange(
            RUNTIME_BC.as_ptr() as *const _,
            RUNTIME_BC.len(),
            c"cusafe_rt.bc".as_ptr(),
            0,
        );
        let mut rt: LLVMModuleRef = std::ptr::null_mut();
        let failed = LLVMParseBitcodeInContext2(ir.raw_ctx(), buf, &mut rt);
        LLVMDisposeMemoryBuffer(buf);
        if failed != 0 {
            return Err("cannot parse the embedded device runtime bitcode".into());
        }
        // Use the instrumented module's target description.
        LLVMSetDataLayout(rt, LLVMGetDataLayoutStr(ir.raw_module()));
        LLVMSetTarget(rt, LLVMGetTarget(ir.raw_module()));
        if LLVMLinkModules2(ir.raw_module(), rt) != 0 {
            return Err("linking the device runtime failed".into());
        }
        for entry in ENTRIES {
            let f = function(ir, entry);
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
        // Collected first: inlining removes the calls.
        let inlined: Vec<LLVMValueRef> = if inline_cold {
            uses(function(ir, FAIL_FN))
                .into_iter()
                .map(|(call, _)| call)
                .collect()
        } else {
            Vec::new()
        };
        for call in inlined {
            if !ir.inline_call(call) {
                return Err(format!("LLVM could not inline {FAIL_FN}"));
            }
        }
        // A trap slot no cold path loads would keep the trap entry alive.
        let slot = LLVMGetNamedGlobal(ir.raw_module(), TRAP_SLOT.as_ptr());
        if !slot.is_null() && LLVMGetFirstUse(slot).is_null() {
            LLVMDeleteGlobal(slot);
        }
        for entry in ENTRIES {
            let f = function(ir, entry);
            if LLVMGetFirstUse(f).is_null() {
                LLVMDeleteFunction(f);
            }
        }
    }
    Ok(())
}

fn function(ir: &Ir, name: &str) -> LLVMValueRef {
    let name = CString::new(name).expect("no NUL");
    unsafe { LLVMGetNamedFunction(ir.raw_module(), name.as_ptr()) }
}
