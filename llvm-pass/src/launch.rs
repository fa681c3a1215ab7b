//! Launch-time bounds (`cusafe_format::launch`): a kernel that uses a pointer parameter
//! gets two hidden `i64` parameters, the window `(start, limit)` the runtime's launch
//! hook works out from its block table, for each of its 8-byte parameters. Checks
//! rooted at a pointer parameter read its window from the parameter space instead of
//! decoding the pointer's tag and loading its block header in every thread.
//!
//! The marker global (`__cusafe_windows_<kernel>`) tells the runtime that the kernel
//! takes windows; a kernel without one is launched as it is.

use crate::ffi::{cusafe_add_i64_params, cusafe_param_bytes, cusafe_param_is_byval};
use inkwell::types::AsTypeRef;
use std::collections::HashMap;

use cusafe_format::launch::{layout_symbol, Layout};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::{LLVMLinkage, LLVMTypeKind};

use crate::ir::{Ir, AS_GENERIC, AS_GLOBAL};

/// Kernel parameter space every GPU takes (the 32 KiB of newer drivers is opt-in): a
/// kernel whose parameters and windows would not fit keeps decoding its pointers.
const PARAM_SPACE: u64 = 4096;

/// The root half of a heap check: everything that depends on the root alone, the window
/// `[start, start + limit)` an access through it must lie in (built by `check.rs`'s
/// `Checker::root_part`, or read from a kernel's hidden parameters: [`Windows`]).
#[derive(Clone, Copy)]
pub struct RootPart {
    /// The window's start (i64).
    pub start: LLVMValueRef,
    /// The window's size in bytes (i64).
    pub limit: LLVMValueRef,
}

/// The windows of the rewritten kernels' pointer parameters, by parameter.
pub type Windows = HashMap<LLVMValueRef, RootPart>;

/// Rewrites every kernel of the module that uses a pointer parameter and has no marker
/// yet to take its windows, and emits its marker; returns how many it rewrote. Each
/// rewritten kernel is a new function: run before anything holds the kernels.
pub fn add_windows(ir: &Ir, kernels: &[LLVMValueRef]) -> usize {
    let mut rewritten = 0;
    for &k in kernels {
        let name = crate::ir::name(k);
        if !marker(ir, &name).is_null() {
            continue;
        }
        let n = unsafe { LLVMCountParams(k) };
        let sizes: Vec<u64> = (0..n)
            .map(|i| unsafe { cusafe_param_bytes(k, i) })
            .collect();
        let layout = Layout::of_sources(&sizes);
        let uses_pointer = (0..n).any(|i| is_checked_pointer(k, i));
        let bytes: u64 = sizes.iter().map(|b| b.next_multiple_of(8)).sum();
        if !uses_pointer || bytes + 16 * layout.windows.len() as u64 > PARAM_SPACE {
            continue;
        }
        let f = unsafe { cusafe_add_i64_params(k, 2 * layout.windows.len() as u32) };
        for (j, &i) in layout.windows.iter().enumerate() {
            let (start, limit) = hidden(f, n, j);
            set_name(start, &format!("cusafe.start.{i}"));
            set_name(limit, &format!("cusafe.limit.{i}"));
        }
        emit_marker(ir, &name, &layout);
        rewritten += 1;
    }
    rewritten
}

/// The windows of the marked kernels' pointer parameters (the marker's length is the
/// source parameter count; the windows follow in order of the 8-byte parameters).
pub fn windows(ir: &Ir, kernels: &[LLVMValueRef]) -> Windows {
    let mut windows = Windows::new();
    for &k in kernels {
        let g = marker(ir, &crate::ir::name(k));
        if g.is_null() {
            continue;
        }
        let n = unsafe { LLVMGetArrayLength2(LLVMGlobalGetValueType(g)) } as u32;
        let sizes: Vec<u64> = (0..n)
            .map(|i| unsafe { cusafe_param_bytes(k, i) })
            .collect();
        for (j, &i) in Layout::of_sources(&sizes).windows.iter().enumerate() {
            if is_checked_pointer(k, i) {
                let (start, limit) = hidden(k, n, j);
                windows.insert(unsafe { LLVMGetParam(k, i) }, RootPart { start, limit });
            }
        }
    }
    windows
}

/// The marker global of the kernel named `kernel`, or null.
fn marker(ir: &Ir, kernel: &str) -> LLVMValueRef {
    let name = std::ffi::CString::new(layout_symbol(kernel)).expect("no NUL in a symbol");
    unsafe { LLVMGetNamedGlobal(ir.raw_module(), name.as_ptr()) }
}

/// The hidden `(start, limit)` parameters of window `j` of kernel `f` with `n` source
/// parameters.
fn hidden(f: LLVMValueRef, n: u32, j: usize) -> (LLVMValueRef, LLVMValueRef) {
    unsafe {
        (
            LLVMGetParam(f, n + 2 * j as u32),
            LLVMGetParam(f, n + 2 * j as u32 + 1),
        )
    }
}

/// A parameter whose window the checks use: a global or generic pointer the kernel
/// uses, not an aggregate passed by value (8 bytes: it has a window).
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

/// The kernel's marker: a visible `.global` byte array, one byte per source parameter
/// (1: it has a window), which the runtime finds with `cuModuleGetGlobal`.
fn emit_marker(ir: &Ir, kernel: &str, layout: &Layout) {
    unsafe {
        let mut vals: Vec<LLVMValueRef> = layout
            .marker()
            .iter()
            .map(|&b| LLVMConstInt(ir.i8.as_type_ref(), b.into(), 0))
            .collect();
        let init = LLVMConstArray2(ir.i8.as_type_ref(), vals.as_mut_ptr(), vals.len() as u64);
        let name = std::ffi::CString::new(layout_symbol(kernel)).expect("no NUL in a symbol");
        let g = LLVMAddGlobalInAddressSpace(
            ir.raw_module(),
            LLVMTypeOf(init),
            name.as_ptr(),
            AS_GLOBAL,
        );
        LLVMSetInitializer(g, init);
        LLVMSetGlobalConstant(g, 1);
        LLVMSetLinkage(g, LLVMLinkage::LLVMExternalLinkage);
    }
}
