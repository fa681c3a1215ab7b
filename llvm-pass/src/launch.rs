//! Launch-time bounds (`cusafe_format::launch`): a kernel that uses a pointer parameter
//! gets two hidden `i64` parameters, the window `(start, limit)` the runtime's launch
//! hook works out from its block table, for each of its 8-byte parameters. Checks
//! rooted at a pointer parameter read its window from the parameter space instead of
//! decoding the pointer's tag and loading its block header in every thread.
//!
//! The marker global (`__cusafe_windows_<kernel>`) tells the runtime that the kernel
//! takes windows; a kernel without one is launched as it is.
//!
//! Index groups ([`add_index_groups`], at the end of the pipeline, on optimized IR): a
//! kernel whose blocks outside loops load through two or more windowed parameters at
//! one index (`dn[idx]`, `ds[idx]`, ... of srad_2) gets two more hidden `i64`
//! parameters per group, `lo` and `span`, which the runtime works out at launch
//! (`cusafe_format::launch::index_bounds`), and the group's marker globals. The planner
//! (`elim/index.rs`) then checks such loads with one compare of the index,
//! `x - lo <u span` ([`IndexSlot`]). Loads only: one branch before a block's stores
//! instead of one per store cost srad_1 registers (32 -> 36) and srad 1% (interleaved
//! A/B on an H200, results/2026-11-27-h200-perf-19), where srad_2's five loads as one
//! group took srad from 1.264x to 1.213x of plain.

use crate::collect::{Len, Target};
use crate::ffi::{cusafe_add_i64_params, cusafe_param_bytes, cusafe_param_is_byval};
use crate::ir::{addr_space, opcode, space, Ir, AS_GENERIC, AS_GLOBAL};
use cusafe_format::launch::{
    index_member_symbol, index_symbol, layout_symbol, IndexGroup, Layout, MAX_INDEX_GROUPS,
};
use inkwell::module::Linkage;
use inkwell::values::{AsValueRef, BasicValue, FunctionValue, GlobalValue, IntValue, PointerValue};
use llvm_sys::LLVMOpcode;
use std::collections::HashMap;

/// LLVM's `CallingConv::PTX_Kernel`.
const PTX_KERNEL_CC: u32 = 71;

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

/// An address `getelementptr T, p, x` with one index `x` into kernel parameter `p`, for
/// an access of `size(T)` bytes: what an index group's member is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Indexed<'ctx> {
    /// The parameter.
    pub param: PointerValue<'ctx>,
    /// The index (sign-extended to 64 bits by the address arithmetic).
    pub x: IntValue<'ctx>,
    /// `size(T)`, the bytes per index step and the access's length.
    pub scale: u64,
}

/// `addr` as an [`Indexed`] address for an access of `len` bytes, if it is one.
pub fn indexed<'ctx>(ir: &Ir, addr: PointerValue<'ctx>, len: u64) -> Option<Indexed<'ctx>> {
    let gep = addr.as_instruction()?;
    if opcode(gep) != Some(LLVMOpcode::LLVMGetElementPtr) || crate::sys::num_operands(gep) != 2 {
        return None;
    }
    let base = crate::sys::operand(gep, 0)?.into_pointer_value();
    let param = crate::classify::strip_pointer_casts(base);
    crate::sys::param_parent(param)?;
    let x = crate::sys::operand(gep, 1)?;
    let elem = crate::sys::gep_source_type(gep);
    let scale = ir.layout().get_abi_size(&elem);
    (x.is_int_value() && scale == len && len > 0).then(|| Indexed {
        param,
        x: x.into_int_value(),
        scale,
    })
}

/// The launch-time bounds of one index group of a kernel: the group's element size,
/// members and hidden parameters.
#[derive(Clone, Debug)]
pub struct IndexSlot<'ctx> {
    /// Bytes per index step (and per member access).
    pub scale: u64,
    /// The members' parameters, in parameter order.
    pub members: Vec<PointerValue<'ctx>>,
    /// The least index every member allows (i64).
    pub lo: IntValue<'ctx>,
    /// How many indices from `lo` on every member allows (i64; 0: none).
    pub span: IntValue<'ctx>,
}

/// The index groups of the marked kernels (`add_index_groups`), all kernels together.
pub type IndexSlots<'ctx> = Vec<IndexSlot<'ctx>>;

/// Gives every kernel with windows whose blocks outside loops load through two or more
/// windowed parameters at one index its index groups (see the module doc): two hidden
/// `i64` parameters each, after the windows, and their marker globals. Returns how many
/// kernels it rewrote; each rewritten kernel is a new function (run before anything
/// holds the kernels). Kernels that already have groups are left alone.
pub fn add_index_groups<'ctx>(ir: &Ir<'ctx>, kernels: &[FunctionValue<'ctx>]) -> usize {
    let mut rewritten = 0;
    for &k in kernels {
        let name = crate::ir::name(k);
        let Some(g) = marker(ir, &name) else {
            continue;
        };
        // A kernel replaced this late keeps only what its calling convention says
        // (below): one with launch bounds or other annotations keeps its function.
        let late_safe = crate::kernels::kernel_annotation_only(ir, k);
        if ir.module().get_global(&index_symbol(&name, 0)).is_some() || !late_safe {
            continue;
        }
        let n = g.get_value_type().into_array_type().len();
        let layout = Layout::of_sources(&param_sizes(k, n));
        let mut groups = find_groups(ir, k, &layout);
        let used: u64 = param_sizes(k, k.count_params())
            .iter()
            .map(|b| b.next_multiple_of(8))
            .sum();
        let room = PARAM_SPACE.saturating_sub(used) / 16;
        groups.truncate(room.min(MAX_INDEX_GROUPS as u64) as usize);
        if groups.is_empty() {
            continue;
        }
        let total = k.count_params();
        let added = 2 * groups.len() as u32;
        let f = unsafe { cusafe_add_i64_params(k.as_value_ref(), added) };
        let f = unsafe { FunctionValue::new(f) }.expect("the rewritten kernel");
        // NVPTX caches `!nvvm.annotations` by function address and never forgets a
        // freed function's entry: by now functions have been freed (inlined, dead),
        // and the new kernel may sit at such an address, where the cache says "no
        // annotation" and the backend would emit a `.func` (seen: lu's copy_kernel,
        // which cudart then could not launch, "named symbol not found"). With no
        // annotation found, the backend falls back on the calling convention.
        f.set_call_conventions(PTX_KERNEL_CC);
        for j in 0..groups.len() as u32 {
            let at = |i: u32| param(f, total + 2 * j + i).into_int_value();
            set_name(at(0), &format!("cusafe.index.lo.{j}"));
            set_name(at(1), &format!("cusafe.index.span.{j}"));
        }
        for (j, grp) in groups.iter().enumerate() {
            emit_bytes(ir, &index_symbol(&name, j), grp.scale);
            for (m, &p) in grp.members.iter().enumerate() {
                emit_bytes(ir, &index_member_symbol(&name, j, m), u64::from(p) + 1);
            }
        }
        rewritten += 1;
    }
    rewritten
}

/// The index groups kernel `k` (windows `layout`) would use: per block outside loops,
/// the windowed parameters its checked loads reach at one index and element size,
/// where two or more; each distinct group once, in the order first found.
fn find_groups<'ctx>(ir: &Ir<'ctx>, k: FunctionValue<'ctx>, layout: &Layout) -> Vec<IndexGroup> {
    let cfg = crate::dom::Cfg::of(k);
    let found = crate::collect::collect(ir, &crate::ir::instructions(k));
    let windowed: HashMap<PointerValue, u32> = layout
        .windows
        .iter()
        .filter(|&&i| is_checked_pointer(k, i))
        .map(|&i| (param(k, i).into_pointer_value(), i))
        .collect();
    // By (block, index, element size): the parameters, ascending.
    let mut at: Vec<((usize, IntValue, u64), Vec<u32>)> = Vec::new();
    for acc in found.accesses.iter().filter(|a| crate::elim::index_load(a)) {
        let Some(b) = cfg.block_of(acc.inst) else {
            continue;
        };
        if cfg.loops_of(b).next().is_some() {
            continue;
        }
        for r in &acc.ranges {
            let (Target::Heap, Len::Const(len)) = (&r.target, r.len) else {
                continue;
            };
            let Some(ix) = indexed(ir, r.addr, len) else {
                continue;
            };
            let Some(&p) = windowed.get(&ix.param) else {
                continue;
            };
            let key = (b, ix.x, ix.scale);
            match at.iter_mut().find(|(k, _)| *k == key) {
                Some((_, ps)) => {
                    if let Err(pos) = ps.binary_search(&p) {
                        ps.insert(pos, p);
                    }
                }
                None => at.push((key, vec![p])),
            }
        }
    }
    let mut groups: Vec<IndexGroup> = Vec::new();
    for ((_, _, scale), members) in at {
        let g = IndexGroup { scale, members };
        if g.members.len() >= 2 && !groups.contains(&g) {
            groups.push(g);
        }
    }
    groups
}

/// The index groups of the marked kernels, read back from their marker globals and
/// hidden parameters.
pub fn index_slots<'ctx>(ir: &Ir<'ctx>, kernels: &[FunctionValue<'ctx>]) -> IndexSlots<'ctx> {
    let mut slots = IndexSlots::new();
    for &k in kernels {
        let name = crate::ir::name(k);
        let Some(g) = marker(ir, &name) else {
            continue;
        };
        let n = g.get_value_type().into_array_type().len();
        let windows = Layout::of_sources(&param_sizes(k, n)).windows.len() as u32;
        let size = |symbol: &str| {
            let g = ir.module().get_global(symbol)?;
            Some(u64::from(g.get_value_type().into_array_type().len()))
        };
        let mut j = 0;
        while let Some(scale) = size(&index_symbol(&name, j)) {
            let members = (0..)
                .map_while(|m| size(&index_member_symbol(&name, j, m)))
                .map(|b| param(k, b as u32 - 1).into_pointer_value())
                .collect();
            let hidden = |i: u32| param(k, n + 2 * windows + 2 * j as u32 + i).into_int_value();
            slots.push(IndexSlot {
                scale,
                members,
                lo: hidden(0),
                span: hidden(1),
            });
            j += 1;
        }
    }
    slots
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
    emit_global(ir, &layout_symbol(kernel), &vals);
}

/// A marker global of `bytes` zero bytes named `name` (an index group's: its size is
/// what the runtime reads).
fn emit_bytes(ir: &Ir, name: &str, bytes: u64) {
    let vals = vec![ir.i8.const_zero(); bytes as usize];
    emit_global(ir, name, &vals);
}

/// A visible constant `.global` byte array named `name` holding `vals`.
fn emit_global<'ctx>(ir: &Ir<'ctx>, name: &str, vals: &[IntValue<'ctx>]) {
    let init = ir.i8.const_array(vals);
    assert!(!name.contains('\0'), "no NUL in a symbol");
    let g = ir
        .module()
        .add_global(init.get_type(), Some(space(AS_GLOBAL)), name);
    g.set_initializer(&init);
    g.set_constant(true);
    g.set_linkage(Linkage::External);
}
