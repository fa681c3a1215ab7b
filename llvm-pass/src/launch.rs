//! Launch-time bounds (`cusafe_format::launch`): a kernel that uses a pointer parameter
//! gets two hidden `i64` parameters, the window `(start, limit)` the runtime's launch
//! hook works out from its block table, for each of its 8-byte parameters. Checks
//! rooted at a pointer parameter read its window from the parameter space instead of
//! decoding the pointer's tag and loading its block header in every thread.
//!
//! The marker global (`__cusafe_windows_<kernel>`) tells the runtime that the kernel
//! takes windows; a kernel without one is launched as it is.

use crate::ffi::{cusafe_add_i64_params, cusafe_param_bytes, cusafe_param_is_byval};
use crate::ir::{addr_space, space, Ir, AS_GENERIC, AS_GLOBAL};
use cusafe_format::launch::{layout_symbol, Layout};
use inkwell::module::Linkage;
use inkwell::values::{AsValueRef, BasicValue, FunctionValue, GlobalValue, IntValue, PointerValue};
use std::collections::HashMap;

/// Kernel parameter space every GPU takes (the 32 KiB of newer drivers is opt-in): a
/// kernel whose parameters and windows would not fit keeps decoding its pointers.
const PARAM_SPACE: u64 = 4096;

/// The root half of a heap check: everything that depends on the root alone, the window
/// `[start, start + limit)` an access through it must lie in (built by `check.rs`'s
/// `Checker::root_part`, or read from a kernel's hidden parameters: [`Windows`]).
#[derive(Clone, Copy)]
pub struct RootPart<'ctx> {
    /// The window's start (i64).
    pub start: IntValue<'ctx>,
    /// The window's size in bytes (i64).
    pub limit: IntValue<'ctx>,
}

/// The windows of the rewritten kernels' pointer parameters, by parameter.
pub type Windows<'ctx> = HashMap<PointerValue<'ctx>, RootPart<'ctx>>;

/// Rewrites every kernel of the module that uses a pointer parameter and has no marker
/// yet to take its windows, and emits its marker; returns how many it rewrote. Each
/// rewritten kernel is a new function: run before anything holds the kernels.
pub fn add_windows(ir: &Ir, kernels: &[FunctionValue]) -> usize {
    let mut rewritten = 0;
    for &k in kernels {
        let name = crate::ir::name(k);
        if marker(ir, &name).is_some() {
            continue;
        }
        let n = k.count_params();
        let sizes = param_sizes(k, n);
        let layout = Layout::of_sources(&sizes);
        let uses_pointer = (0..n).any(|i| is_checked_pointer(k, i));
        let bytes: u64 = sizes.iter().map(|b| b.next_multiple_of(8)).sum();
        if !uses_pointer || bytes + 16 * layout.windows.len() as u64 > PARAM_SPACE {
            continue;
        }
        let added = 2 * layout.windows.len() as u32;
        let f = unsafe { cusafe_add_i64_params(k.as_value_ref(), added) };
        let f = unsafe { FunctionValue::new(f) }.expect("the rewritten kernel");
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
pub fn windows<'ctx>(ir: &Ir<'ctx>, kernels: &[FunctionValue<'ctx>]) -> Windows<'ctx> {
    let mut windows = Windows::new();
    for &k in kernels {
        let Some(g) = marker(ir, &crate::ir::name(k)) else {
            continue;
        };
        let n = g.get_value_type().into_array_type().len();
        let sizes = param_sizes(k, n);
        for (j, &i) in Layout::of_sources(&sizes).windows.iter().enumerate() {
            if is_checked_pointer(k, i) {
                let (start, limit) = hidden(k, n, j);
                let p = param(k, i).into_pointer_value();
                windows.insert(p, RootPart { start, limit });
            }
        }
    }
    windows
}

/// Bytes each of the first `n` parameters of kernel `f` takes in the parameter space.
fn param_sizes(f: FunctionValue, n: u32) -> Vec<u64> {
    (0..n)
        .map(|i| unsafe { cusafe_param_bytes(f.as_value_ref(), i) })
        .collect()
}

/// The marker global of the kernel named `kernel`, if it has one.
fn marker<'ctx>(ir: &Ir<'ctx>, kernel: &str) -> Option<GlobalValue<'ctx>> {
    let name = layout_symbol(kernel);
    assert!(!name.contains('\0'), "no NUL in a symbol");
    ir.module().get_global(&name)
}

/// Parameter `i` of function `f`.
fn param(f: FunctionValue, i: u32) -> inkwell::values::BasicValueEnum {
    f.get_nth_param(i).expect("a parameter")
}

/// The hidden `(start, limit)` parameters of window `j` of kernel `f` with `n` source
/// parameters.
fn hidden(f: FunctionValue, n: u32, j: usize) -> (IntValue, IntValue) {
    let at = |k: u32| param(f, n + 2 * j as u32 + k).into_int_value();
    (at(0), at(1))
}

/// A parameter whose window the checks use: a global or generic pointer the kernel
/// uses, not an aggregate passed by value (8 bytes: it has a window).
fn is_checked_pointer(f: FunctionValue, i: u32) -> bool {
    let p = param(f, i);
    matches!(addr_space(p), Some(AS_GENERIC | AS_GLOBAL))
        && !unsafe { cusafe_param_is_byval(f.as_value_ref(), i) }
        && p.get_first_use().is_some()
}

fn set_name(v: IntValue, name: &str) {
    assert!(!name.contains('\0'), "no NUL in a name");
    v.set_name(name);
}

/// The kernel's marker: a visible `.global` byte array, one byte per source parameter
/// (1: it has a window), which the runtime finds with `cuModuleGetGlobal`.
fn emit_marker(ir: &Ir, kernel: &str, layout: &Layout) {
    let vals: Vec<_> = layout
        .marker()
        .iter()
        .map(|&b| ir.i8.const_int(b.into(), false))
        .collect();
    let init = ir.i8.const_array(&vals);
    let name = layout_symbol(kernel);
    assert!(!name.contains('\0'), "no NUL in a symbol");
    let g = ir
        .module()
        .add_global(init.get_type(), Some(space(AS_GLOBAL)), &name);
    g.set_initializer(&init);
    g.set_constant(true);
    g.set_linkage(Linkage::External);
}
