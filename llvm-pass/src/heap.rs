//! The device heap: every call of `malloc` in device code becomes a call of device-rt's
//! [`MALLOC_FN`] and every call of `free` one of [`FREE_FN`] with a check site, so that
//! in-kernel allocations (`new` and `delete` of clang's CUDA headers call the two) are
//! tagged blocks of the arena (`cusafe_format::devheap`) with exact bounds and the
//! usual checks, and a bad `free` is reported at its line.
//!
//! A module that allocates gets the marker [`MARKER_SYMBOL`], by which the runtime
//! learns at a kernel's first launch that the arena must be mapped.

use crate::ir::{callee, instructions, name, Ir};
use crate::sites::Sites;
use cusafe_format::devheap::MARKER_SYMBOL;
use llvm_sys::core::*;
use llvm_sys::debuginfo::{LLVMInstructionGetDebugLoc, LLVMInstructionSetDebugLoc};
use llvm_sys::prelude::*;

/// device-rt's `malloc`: an arena block, or the real `malloc`'s when the arena cannot
/// serve the size.
pub const MALLOC_FN: &str = "__cusafe_malloc";
/// device-rt's `free`: checks the pointer (double and invalid frees are reported at the
/// site), then queues the block or calls the real `free`.
pub const FREE_FN: &str = "__cusafe_free";

/// What [`instrument`] rewrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// Calls of `malloc`.
    pub mallocs: usize,
    /// Calls of `free`.
    pub frees: usize,
}

/// Sends the calls of `malloc` and `free` in `functions` to device-rt; marks the module
/// when it allocates.
pub fn instrument(ir: &Ir, functions: &[LLVMValueRef], sites: &mut Sites) -> Rewritten {
    let mut done = Rewritten::default();
    let malloc_fn = declare(ir, MALLOC_FN, ir.ptr, &mut [ir.i64]);
    let void = unsafe { LLVMVoidTypeInContext(ir.ctx) };
    let free_fn = declare(ir, FREE_FN, void, &mut [ir.ptr, ir.ptr]);
    for &f in functions {
        for inst in instructions(f) {
            if unsafe { LLVMIsACallInst(inst) }.is_null() {
                continue;
            }
            let Some(target) = callee(inst) else {
                continue;
            };
            let (to, site) = match name(target).as_str() {
                "malloc" => (malloc_fn, None),
                "free" => {
                    let text = sites.text(ir, f, inst, "");
                    (free_fn, Some(sites.site(ir, 0, text)))
                }
                _ => continue,
            };
            if unsafe { LLVMGetNumArgOperands(inst) } != 1 {
                continue;
            }
            unsafe {
                ir.at(inst);
                let mut args = vec![LLVMGetOperand(inst, 0)];
                args.extend(site);
                let call = LLVMBuildCall2(
                    ir.b,
                    to.1,
                    to.0,
                    args.as_mut_ptr(),
                    args.len() as u32,
                    crate::ir::NONAME,
                );
                let loc = LLVMInstructionGetDebugLoc(inst);
                if !loc.is_null() {
                    LLVMInstructionSetDebugLoc(call, loc);
                }
                if site.is_none() {
                    let old = name(inst);
                    LLVMSetValueName2(inst, crate::ir::NONAME, 0);
                    LLVMSetValueName2(call, old.as_ptr().cast(), old.len());
                    LLVMReplaceAllUsesWith(inst, call);
                    done.mallocs += 1;
                } else {
                    done.frees += 1;
                }
                LLVMInstructionEraseFromParent(inst);
            }
        }
    }
    for (f, _) in [malloc_fn, free_fn] {
        if unsafe { LLVMGetFirstUse(f) }.is_null() {
            unsafe { LLVMDeleteFunction(f) };
        }
    }
    if done.mallocs > 0 {
        ir.mark(MARKER_SYMBOL);
    }
    done
}

/// The function `name` of type `ret (params)` and that type.
fn declare(
    ir: &Ir,
    name: &str,
    ret: LLVMTypeRef,
    params: &mut [LLVMTypeRef],
) -> (LLVMValueRef, LLVMTypeRef) {
    let ty = unsafe { LLVMFunctionType(ret, params.as_mut_ptr(), params.len() as u32, 0) };
    (ir.declare(name, ty), ty)
}
