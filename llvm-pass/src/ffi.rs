//! The C++ shim's functions (`shim/plugin.cpp`), declared in one place: what the pass
//! needs from LLVM that its C API does not offer. Each says what the C API lacks; the
//! shim's comments say how it is done. Everything else the pass does goes through the
//! C API from Rust.

use std::ffi::{c_char, c_void};

use llvm_sys::prelude::*;

/// `llvm::PassPluginLibraryInfo`, as laid out by LLVM 19.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_callbacks: *const c_void,
}

/// One function's loop analyses (dominators, loops, scalar evolution), owned by the
/// shim: made by [`cusafe_loop_ranges_new`], freed by [`cusafe_loop_ranges_free`].
pub type LoopAnalysesRef = *mut c_void;

extern "C" {
    /// The plugin's registration (the new pass manager's callbacks are C++ only).
    pub fn cusafe_plugin_info() -> PassPluginLibraryInfo;

    /// Splits the block before `before` and inserts `if (cond) { new block }` with the
    /// branch weighted as very unlikely (the cold path); returns the new block's
    /// terminator. The C API has neither `SplitBlockAndInsertIfThen` nor branch weights.
    pub fn cusafe_split_if_then(cond: LLVMValueRef, before: LLVMValueRef) -> LLVMValueRef;

    /// As [`cusafe_split_if_then`], with no branch weights (coverage's warp-leader store).
    pub fn cusafe_split_if(cond: LLVMValueRef, before: LLVMValueRef) -> LLVMValueRef;

    /// Splits every critical edge of `f` (edge coverage); returns how many. The C API
    /// has no `SplitAllCriticalEdges`.
    pub fn cusafe_split_critical_edges(f: LLVMValueRef) -> u32;

    /// Splits the block of `before` so that a new block starts with it; returns that
    /// block. The C API has no `splitBasicBlock`.
    pub fn cusafe_split_before(before: LLVMValueRef) -> LLVMBasicBlockRef;

    /// Inlines the call `call`; returns whether it did. The C API has no inliner.
    pub fn cusafe_inline_call(call: LLVMValueRef) -> bool;

    /// Gives every loop of `f` a preheader (loop-simplify form). The C API has no loop
    /// analyses.
    pub fn cusafe_simplify_loops(f: LLVMValueRef);

    /// Copies the whole body of `f`: a new first block, with no terminator, takes the
    /// old entry block's static allocas (both copies share them); the copies follow the
    /// originals. Returns the copy of the old entry block. The C API cannot clone blocks.
    pub fn cusafe_clone_body(f: LLVMValueRef) -> LLVMBasicBlockRef;

    /// Bytes kernel parameter `i` of `f` takes in the parameter space (its byval
    /// type's size for an aggregate passed by value). The C API gives no byval type.
    pub fn cusafe_param_bytes(f: LLVMValueRef, i: u32) -> u64;

    /// Whether kernel parameter `i` of `f` is an aggregate passed by value.
    pub fn cusafe_param_is_byval(f: LLVMValueRef, i: u32) -> bool;

    /// Replaces `f` with a function that takes `n` more i64 parameters, body,
    /// attributes and metadata moved; returns it. The C API cannot move a body between
    /// functions.
    pub fn cusafe_add_i64_params(f: LLVMValueRef, n: u32) -> LLVMValueRef;

    /// Builds `f`'s loop analyses. The C API has no ScalarEvolution.
    pub fn cusafe_loop_ranges_new(f: LLVMValueRef) -> LoopAnalysesRef;

    /// Frees what [`cusafe_loop_ranges_new`] built.
    pub fn cusafe_loop_ranges_free(s: LoopAnalysesRef);

    /// The bytes access `inst` of `[ptr - below, ptr + len)` from `root` covers over
    /// every trip of its loop, expanded in the preheader: the lowest address in `*lo`,
    /// the length in `*span`, the preheader's terminator in `*at`; false when the loop
    /// or the address does not allow it. With `expand` false nothing is built (or
    /// written): only whether it would be.
    #[allow(clippy::too_many_arguments)]
    pub fn cusafe_loop_range(
        s: LoopAnalysesRef,
        inst: LLVMValueRef,
        ptr: LLVMValueRef,
        root: LLVMValueRef,
        below: u64,
        len: u64,
        lo: *mut LLVMValueRef,
        span: *mut LLVMValueRef,
        at: *mut LLVMValueRef,
        expand: bool,
    ) -> bool;

    /// The signed range ScalarEvolution knows for integer `v`, in `*lo..=*hi`; false
    /// when it knows nothing.
    pub fn cusafe_signed_range(
        s: LoopAnalysesRef,
        v: LLVMValueRef,
        lo: *mut i64,
        hi: *mut i64,
    ) -> bool;
}
