//! Launch-time bounds (`cusafe_format::launch`): each kernel gets two hidden `i64`
//! parameters per pointer parameter it uses, the window `(start, limit)` the runtime's
//! launch hook works out from its block table. Checks rooted at such a parameter read
//! the window from the parameter space instead of decoding the pointer's tag and
//! loading its block header in every thread.
//!
//! The layout global (`__cusafe_layout_<kernel>`) tells the runtime which parameters
//! get a window; a kernel the runtime finds no layout for is launched as it is, so
//! every kernel this pass rewrites gets one.

use std::collections::HashMap;

use cusafe_format::launch::{layout_symbol, Layout};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMLinkage, LLVMTypeKind};

use crate::check::RootPart;
use crate::ir::{Ir, AS_GENERIC, AS_GLOBAL};

extern "C" {
    fn cusafe_param_bytes(f: LLVMValueRef, i: u32) -> u64;
    fn cusafe_param_is_byval(f: LLVMValueRef, i: u32) -> bool;
    fn cusafe_add_i64_params(f: LLVMValueRef, n: u32) -> LLVMValueRef;
}

/// Kernel parameter space every GPU takes (the 32 KiB of newer drivers is opt-in): a
/// kernel whose parameters and windows would not fit keeps decoding its pointers.
const PARAM_SPACE: u64 = 4096;

/// Whether launch-time bounds are on: with check elimination (`CUSAFE_PASS_OPT`), unless
/// `CUSAFE_PASS_LAUNCH_BOUNDS=0`.
pub fn enabled() -> bool {
    crate::elim::enabled() && std::env::var_os("CUSAFE_PASS_LAUNCH_BOUNDS").is_none_or(|v| v != "0")
}

/// The windows of the rewritten kernels' pointer parameters, by parameter.
pub type Windows = HashMap<LLVMValueRef, RootPart>;

/// Rewrites every kernel of the module that uses a pointer parameter to take its
/// windows, and emits its layout global. Run before anything else holds the kernels:
/// each rewritten kernel is a new function.
pub fn add_windows(ir: &Ir, kernels: &[LLVMValueRef]) -> Windows {
    let mut windows = Windows::new();
    for &k in kernels {
        let n = unsafe { LLVMCountParams(k) };
        let pointers: Vec<u32> = (0..n).filter(|&i| is_checked_pointer(k, i)).collect();
        let bytes: u64 = (0..n)
            .map(|i| unsafe { cusafe_param_bytes(k, i) }.next_multiple_of(8))
            .sum();
        if pointers.is_empty() || bytes + 16 * pointers.len() as u64 > PARAM_SPACE {
            continue;
        }
        let name = crate::ir::name(k);
        let f = unsafe { cusafe_add_i64_params(k, 2 * pointers.len() as u32) };
        for (j, &i) in pointers.iter().enumerate() {
            let (start, limit) = unsafe {
                (
                    LLVMGetParam(f, n + 2 * j as u32),
                    LLVMGetParam(f, n + 2 * j as u32 + 1),
                )
            };
            set_name(start, &format!("cusafe.start.{i}"));
            set_name(limit, &format!("cusafe.limit.{i}"));
            windows.insert(unsafe { LLVMGetParam(f, i) }, RootPart::new(start, limit));
        }
        emit_layout(
            ir,
            &name,
            &Layout {
                params: n,
                pointers,
            },
        );
    }
    windows
}

/// A parameter whose window the kernel gets: a global or generic pointer the kernel
/// uses, not an aggregate passed by value.
fn is_checked_pointer(f: LLVMValueRef, i: u32) -> bool {
    unsafe {
        let p = LLVMGetParam(f, i);
        let ty = LLVMTypeOf(p);
        LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind
            && matches!(LLVMGetPointerAddressSpace(ty), AS_GENERIC | AS_GLOBAL)
            && !cusafe_param_is_byval(f, i)
            && !LLVMGetFirstUse(p).is_null()
    }
}

fn set_name(v: LLVMValueRef, name: &str) {
    unsafe { LLVMSetValueName2(v, name.as_ptr().cast(), name.len()) };
}

/// The kernel's layout global: a visible `.global` array of `u32` the runtime reads
/// with `cuModuleGetGlobal`.
fn emit_layout(ir: &Ir, kernel: &str, layout: &Layout) {
    let words: Vec<u32> = layout.to_words();
    unsafe {
        let mut vals: Vec<LLVMValueRef> = words.iter().map(|&w| ir.c32(w)).collect();
        let init = LLVMConstArray2(ir.i32, vals.as_mut_ptr(), vals.len() as u64);
        let name = std::ffi::CString::new(layout_symbol(kernel)).expect("no NUL in a symbol");
        let g = LLVMAddGlobalInAddressSpace(ir.module, LLVMTypeOf(init), name.as_ptr(), AS_GLOBAL);
        LLVMSetInitializer(g, init);
        LLVMSetGlobalConstant(g, 1);
        LLVMSetLinkage(g, LLVMLinkage::LLVMExternalLinkage);
        LLVMSetAlignment(g, 4);
    }
}
