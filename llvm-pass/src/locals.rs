//! Local arrays whose address escapes their function: re-laid-out as
//! blocks with an in-band header, their escaping pointer tagged as a pseudo-pointer
//! carrying the frame's stack epoch (`format::pseudo`). The checks of other functions
//! then see the object's exact bounds, and pointers that outlive the frame fail their
//! epoch check.
//!
//! Per function with such arrays:
//! * prologue (after the entry block's allocas): slot = hardware thread slot;
//!   `d = ++depth[slot]`; `g = ++gen[slot][d % 16]`; each object's header = its size;
//!   its tagged pointer = payload | tag bits (class, d, g) — every former use of the
//!   array sees the tagged pointer (accesses strip it: see `strip`);
//! * before every `ret`: `depth[slot] = d - 1`.
//!
//! Kernels of a module with such functions reset their slot's depth to 0 on entry, so
//! state left by an earlier launch (or a trap) does not leak into this one.

use crate::arith::is_safe_use;
use crate::classify::merged_object;
use crate::ir::{callee, instructions, mark_nocheck, opcode, uses, Ir, NONAME};
use cusafe_format::pseudo::{
    local_class, tag_bits, DEPTH_MASK, DEPTH_SHIFT, GEN_MASK, GEN_SHIFT, LOCAL_PREFIX, OUT_OF_SCOPE,
};
use cusafe_format::rtpage::{
    EPOCH_DEPTH_OFFSET, EPOCH_GENS_PER_SLOT, EPOCH_GEN_OFFSET, RTPAGE_ADDR,
};
use inkwell::types::AsTypeRef;
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::LLVMABISizeOfType;
use llvm_sys::LLVMOpcode;
use std::ffi::CString;

/// Whether a pointer derived from `alloca` leaves the function's view through a use of
/// `v`. Calls to functions without a body (printf's vprintf, external functions) are
/// not escapes: nothing checks inside them, and their arguments are stripped anyway.
/// Phis and selects that merge pointers into this alloca only are not either (their
/// accesses get object checks, `classify::merged_object`) unless the merged pointer
/// escapes; `seen` stops at phis already followed.
fn escapes(
    v: LLVMValueRef,
    alloca: LLVMValueRef,
    seen: &mut std::collections::HashSet<LLVMValueRef>,
) -> bool {
    uses(v).into_iter().any(|(user, idx)| match opcode(user) {
        Some(
            LLVMOpcode::LLVMGetElementPtr | LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast,
        ) if idx == 0 => escapes(user, alloca, seen),
        Some(LLVMOpcode::LLVMPHI) | Some(LLVMOpcode::LLVMSelect)
            if merged_object(user) == Some(alloca) =>
        {
            seen.insert(user) && escapes(user, alloca, seen)
        }
        Some(LLVMOpcode::LLVMCall)
            if callee(user).is_some_and(|f| unsafe { LLVMIsDeclaration(f) != 0 }) =>
        {
            false
        }
        _ => !is_safe_use(user, idx),
    })
}

/// The allocas of `f` to re-lay-out, with their payload sizes and classes.
fn escaping_allocas(ir: &Ir, f: LLVMValueRef) -> Vec<(LLVMValueRef, u64, u32)> {
    let mut out = Vec::new();
    unsafe {
        let entry = LLVMGetEntryBasicBlock(f);
        let mut i = LLVMGetFirstInstruction(entry);
        while !i.is_null() {
            if !LLVMIsAAllocaInst(i).is_null() && escapes(i, i, &mut Default::default()) {
                let count = LLVMGetOperand(i, 0);
                if !LLVMIsAConstantInt(count).is_null() {
                    let size = LLVMConstIntGetZExtValue(count)
                        * LLVMABISizeOfType(ir.td(), LLVMGetAllocatedType(i));
                    if let Some(t) = local_class(size) {
                        out.push((i, size, t));
                    }
                }
            }
            i = LLVMGetNextInstruction(i);
        }
    }
    out
}

fn sreg(ir: &Ir, name: &str) -> LLVMValueRef {
    unsafe {
        let cname = CString::new(name).expect("no NUL");
        let ty = LLVMFunctionType(ir.i32.as_type_ref(), std::ptr::null_mut(), 0, 0);
        let mut f = LLVMGetNamedFunction(ir.raw_module(), cname.as_ptr());
        if f.is_null() {
            f = LLVMAddFunction(ir.raw_module(), cname.as_ptr(), ty);
        }
        LLVMBuildCall2(ir.raw_builder(), ty, f, std::ptr::null_mut(), 0, NONAME)
    }
}

/// `((smid & 255) * 64 + (warpid & 63)) * 32 + laneid`, as device-rt computes it.
fn slot(ir: &Ir) -> LLVMValueRef {
    let z = |v| ir.int_cast(v, ir.i64.as_type_ref());
    let sm = ir.and(z(sreg(ir, "llvm.nvvm.read.ptx.sreg.smid")), ir.c64(255));
    let warp = ir.and(z(sreg(ir, "llvm.nvvm.read.ptx.sreg.warpid")), ir.c64(63));
    let lane = z(sreg(ir, "llvm.nvvm.read.ptx.sreg.laneid"));
    ir.add(ir.shl(ir.add(ir.shl(sm, ir.c64(6)), warp), ir.c64(5)), lane)
}

fn byte_ptr(ir: &Ir, base: u64, index: LLVMValueRef) -> LLVMValueRef {
    unsafe {
        LLVMBuildIntToPtr(
            ir.raw_builder(),
            ir.add(ir.c64(base), index),
            ir.gptr.as_type_ref(),
            NONAME,
        )
    }
}

/// Marks a memory instruction of the epoch bookkeeping so that no check is put on it.
fn nocheck(ir: &Ir, inst: LLVMValueRef) -> LLVMValueRef {
    mark_nocheck(ir, inst);
    inst
}

/// `++*p` on an epoch byte; returns the new value.
fn bump(ir: &Ir, p: LLVMValueRef) -> LLVMValueRef {
    unsafe {
        let v = ir.add(
            nocheck(
                ir,
                LLVMBuildLoad2(ir.raw_builder(), ir.i8.as_type_ref(), p, NONAME),
            ),
            LLVMConstInt(ir.i8.as_type_ref(), 1, 0),
        );
        nocheck(ir, LLVMBuildStore(ir.raw_builder(), v, p));
        v
    }
}

fn first_non_alloca(entry: LLVMBasicBlockRef) -> LLVMValueRef {
    unsafe {
        let mut i = LLVMGetFirstInstruction(entry);
        while !LLVMIsAAllocaInst(i).is_null() {
            i = LLVMGetNextInstruction(i);
        }
        i
    }
}

/// What [`instrument`] did to a function.
#[derive(Debug, Default, Clone, Copy)]
pub struct Relaid {
    /// Local arrays re-laid-out and tagged.
    pub objects: usize,
    /// Scope marks (header stores at lifetime starts and ends) emitted.
    pub scope_marks: usize,
}

/// Re-lays-out the escaping local arrays of `f`.
pub fn instrument(ir: &Ir, f: LLVMValueRef) -> Relaid {
    let objects = escaping_allocas(ir, f);
    if objects.is_empty() {
        return Relaid::default();
    }
    let markers: Vec<_> = objects
        .iter()
        .map(|&(old, _, _)| lifetime_markers(old))
        .collect();
    unsafe {
        let at = first_non_alloca(LLVMGetEntryBasicBlock(f));
        ir.at(at);
        let slot = slot(ir);
        let depth_ptr = byte_ptr(ir, RTPAGE_ADDR + EPOCH_DEPTH_OFFSET, slot);
        let d = bump(ir, depth_ptr);
        let d64 = ir.int_cast(d, ir.i64.as_type_ref());
        let gen_index = ir.add(
            ir.shl(slot, ir.c64(EPOCH_GENS_PER_SLOT.trailing_zeros().into())),
            ir.and(d64, ir.c64(EPOCH_GENS_PER_SLOT - 1)),
        );
        let gen_ptr = byte_ptr(ir, RTPAGE_ADDR + EPOCH_GEN_OFFSET, gen_index);
        let g = bump(ir, gen_ptr);
        let g64 = ir.int_cast(g, ir.i64.as_type_ref());
        // Epoch bits (d, g) of the tag; the pseudo bit and class are or-ed in per object.
        let depth_bits = ir.shl(ir.and(d64, ir.c64(DEPTH_MASK)), ir.c64(DEPTH_SHIFT.into()));
        let gen_bits = ir.shl(ir.and(g64, ir.c64(GEN_MASK)), ir.c64(GEN_SHIFT.into()));
        let epoch_bits = ir.or(depth_bits, gen_bits);
        let mut dead_markers = Vec::new();
        let tagged_name = CString::new(crate::classify::TAGGED_LOCAL).expect("no NUL");
        for (&(old, size, t), marks) in objects.iter().zip(markers) {
            let block = 1u64 << (t + 3);
            ir.at(old);
            let ty = LLVMArrayType2(ir.i8.as_type_ref(), LOCAL_PREFIX + size + 1);
            let new = LLVMBuildAlloca(ir.raw_builder(), ty, c"cusafe.local".as_ptr());
            LLVMSetAlignment(new, block as u32);
            ir.at(at);
            store_header(ir, new, size);
            // Scopes: the header says "out of scope" between lifetime.end and the next
            // lifetime.start (use after scope); the markers themselves must name an
            // alloca, which the new block is not, so they go (at the end: `at` may be one).
            for &(marker, starts) in &marks {
                ir.at(marker);
                store_header(ir, new, if starts { size } else { size | OUT_OF_SCOPE });
            }
            dead_markers.extend(marks.into_iter().map(|(m, _)| m));
            ir.at(at);
            let payload = ir.add(ir.to_int(new), ir.c64(LOCAL_PREFIX));
            let tagged = ir.or(ir.or(payload, ir.c64(tag_bits(t, 0, 0))), epoch_bits);
            let ptr = LLVMBuildIntToPtr(
                ir.raw_builder(),
                tagged,
                LLVMTypeOf(old),
                tagged_name.as_ptr(),
            );
            LLVMReplaceAllUsesWith(old, ptr);
            LLVMInstructionEraseFromParent(old);
        }
        // Epilogue: restore the depth on every return.
        ir.at(at);
        let restore = ir.sub(d, LLVMConstInt(ir.i8.as_type_ref(), 1, 0));
        for i in instructions(f) {
            if opcode(i) == Some(LLVMOpcode::LLVMRet) {
                ir.at(i);
                nocheck(ir, LLVMBuildStore(ir.raw_builder(), restore, depth_ptr));
            }
        }
        let scope_marks = dead_markers.len();
        for m in dead_markers {
            LLVMInstructionEraseFromParent(m);
        }
        Relaid {
            objects: objects.len(),
            scope_marks,
        }
    }
}

/// Writes a local object's header word (its size, maybe with `OUT_OF_SCOPE`).
fn store_header(ir: &Ir, block: LLVMValueRef, word: u64) {
    unsafe {
        let hdr = nocheck(ir, LLVMBuildStore(ir.raw_builder(), ir.c64(word), block));
        LLVMSetAlignment(hdr, 8);
    }
}

/// The `llvm.lifetime.start` (true) and `llvm.lifetime.end` (false) calls on `alloca`.
fn lifetime_markers(alloca: LLVMValueRef) -> Vec<(LLVMValueRef, bool)> {
    let mut found = Vec::new();
    let mut work = vec![alloca];
    while let Some(v) = work.pop() {
        for (user, _) in uses(v) {
            match opcode(user) {
                Some(LLVMOpcode::LLVMCall) => {
                    let name = callee(user).map(crate::ir::name).unwrap_or_default();
                    if name.starts_with("llvm.lifetime.start") {
                        found.push((user, true));
                    } else if name.starts_with("llvm.lifetime.end") {
                        found.push((user, false));
                    }
                }
                Some(
                    LLVMOpcode::LLVMGetElementPtr
                    | LLVMOpcode::LLVMBitCast
                    | LLVMOpcode::LLVMAddrSpaceCast,
                ) => work.push(user),
                _ => {}
            }
        }
    }
    found
}

/// Resets the epoch depth of the running thread's slot at the entry of `kernel`.
pub fn reset_depth_at_entry(ir: &Ir, kernel: LLVMValueRef) {
    unsafe {
        ir.at(first_non_alloca(LLVMGetEntryBasicBlock(kernel)));
        let depth_ptr = byte_ptr(ir, RTPAGE_ADDR + EPOCH_DEPTH_OFFSET, slot(ir));
        nocheck(
            ir,
            LLVMBuildStore(
                ir.raw_builder(),
                LLVMConstInt(ir.i8.as_type_ref(), 0, 0),
                depth_ptr,
            ),
        );
    }
}
