//! Local arrays whose address escapes their function: re-laid-out as
//! blocks with an in-band header, their escaping pointer tagged as a pseudo-pointer
//! carrying the frame's stack epoch (`format::pseudo`). The checks of other functions
//! then see the object's exact bounds, and pointers that outlive the frame fail their
//! epoch check.
//!
//! Per function with such arrays:
//! * prologue (after the entry block's allocas and the load of the runtime page's
//!   address, `rtpage::base`, the function's one load of it): slot = hardware thread
//!   slot; `d = ++depth[slot]`; `g = ++gen[slot][d % 16]` (bytes at constant offsets
//!   from the page); each object's header = its size; its tagged pointer = payload |
//!   tag bits (class, d, g) — every former use of the array sees the tagged pointer
//!   (accesses strip it: see `strip`);
//! * before every `ret`: `depth[slot] = d - 1`.
//!
//! Kernels of a module with such functions reset their slot's depth to 0 on entry, so
//! state left by an earlier launch (or a trap) does not leak into this one.

use crate::arith::is_safe_use;
use crate::classify::merged_object;
use crate::ir::{callee, instructions, mark_nocheck, opcode, uses, Ir};
use cusafe_format::pseudo::{
    local_class, tag_bits, DEPTH_MASK, DEPTH_SHIFT, GEN_MASK, GEN_SHIFT, LOCAL_PREFIX, OUT_OF_SCOPE,
};
use cusafe_format::rtpage::{EPOCH_DEPTH_OFFSET, EPOCH_GENS_PER_SLOT, EPOCH_GEN_OFFSET};
use inkwell::basic_block::BasicBlock;
use inkwell::values::{BasicValue, FunctionValue, InstructionValue, IntValue, PointerValue};
use llvm_sys::LLVMOpcode;
use std::collections::HashSet;

/// Whether a pointer derived from `alloca` leaves the function's view through a use of
/// `v`. Calls to functions without a body (printf's vprintf, external functions) are
/// not escapes: nothing checks inside them, and their arguments are stripped anyway.
/// Phis and selects that merge pointers into this alloca only are not either (their
/// accesses get object checks, `classify::merged_object`) unless the merged pointer
/// escapes; `seen` stops at phis already followed.
fn escapes<'ctx>(
    v: InstructionValue<'ctx>,
    alloca: PointerValue<'ctx>,
    seen: &mut HashSet<InstructionValue<'ctx>>,
) -> bool {
    uses(v).into_iter().any(|(user, idx)| match opcode(user) {
        Some(
            LLVMOpcode::LLVMGetElementPtr | LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast,
        ) if idx == 0 => escapes(user, alloca, seen),
        Some(LLVMOpcode::LLVMPHI) | Some(LLVMOpcode::LLVMSelect)
            if crate::sys::value(user).and_then(merged_object) == Some(alloca) =>
        {
            seen.insert(user) && escapes(user, alloca, seen)
        }
        Some(LLVMOpcode::LLVMCall) if callee(user).is_some_and(is_declaration) => false,
        _ => !is_safe_use(user, idx),
    })
}

/// Whether function `f` has no body.
fn is_declaration(f: FunctionValue) -> bool {
    f.as_global_value().is_declaration()
}

/// The entry block of function `f`.
fn entry(f: FunctionValue) -> BasicBlock {
    f.get_first_basic_block().expect("a defined function")
}

/// An alloca instruction as the pointer it makes.
fn alloca_pointer(i: InstructionValue) -> PointerValue {
    crate::sys::value(i)
        .expect("an alloca's pointer")
        .into_pointer_value()
}

/// The allocas of `f` to re-lay-out, with their payload sizes and classes.
fn escaping_allocas<'ctx>(
    ir: &Ir,
    f: FunctionValue<'ctx>,
) -> Vec<(InstructionValue<'ctx>, u64, u32)> {
    let mut out = Vec::new();
    for i in entry(f).get_instructions() {
        if opcode(i) != Some(LLVMOpcode::LLVMAlloca)
            || !escapes(i, alloca_pointer(i), &mut Default::default())
        {
            continue;
        }
        let Some(count) = crate::ir::int_operand(i, 0).get_zero_extended_constant() else {
            continue;
        };
        let ty = i.get_allocated_type().expect("an alloca");
        let size = count * ir.layout().get_abi_size(&ty);
        if let Some(t) = local_class(size) {
            out.push((i, size, t));
        }
    }
    out
}

/// `((smid & 255) * 64 + (warpid & 63)) * 32 + laneid`, as device-rt computes it.
fn slot<'ctx>(ir: &Ir<'ctx>) -> IntValue<'ctx> {
    let z = |v| ir.int_cast(v, ir.i64);
    let sm = ir.and(z(ir.sreg("llvm.nvvm.read.ptx.sreg.smid")), ir.c64(255));
    let warp = ir.and(z(ir.sreg("llvm.nvvm.read.ptx.sreg.warpid")), ir.c64(63));
    let lane = z(ir.sreg("llvm.nvvm.read.ptx.sreg.laneid"));
    ir.add(ir.shl(ir.add(ir.shl(sm, ir.c64(6)), warp), ir.c64(5)), lane)
}

/// The global byte at `page + offset + index` (`page`: the runtime page's address,
/// `rtpage::base`). The constant is added last, so that it becomes the immediate of
/// the access's address (`[%rd+2097152]`), as cheap as the fixed address was.
fn byte_ptr<'ctx>(
    ir: &Ir<'ctx>,
    page: IntValue<'ctx>,
    offset: u64,
    index: IntValue<'ctx>,
) -> PointerValue<'ctx> {
    let addr = ir.add(ir.add(page, index), ir.c64(offset));
    let p = ir.b.build_int_to_ptr(addr, ir.gptr, "");
    p.expect("positioned")
}

/// Marks a memory instruction of the epoch bookkeeping so that no check is put on it.
fn nocheck<'ctx>(ir: &Ir<'ctx>, inst: InstructionValue<'ctx>) -> InstructionValue<'ctx> {
    mark_nocheck(ir, inst);
    inst
}

/// `*p = v` on an epoch byte or header word, never checked.
fn store<'ctx>(ir: &Ir<'ctx>, p: PointerValue<'ctx>, v: IntValue<'ctx>) -> InstructionValue<'ctx> {
    let st = ir.b.build_store(p, v);
    nocheck(ir, st.expect("positioned"))
}

/// `++*p` on an epoch byte; returns the new value.
fn bump<'ctx>(ir: &Ir<'ctx>, p: PointerValue<'ctx>) -> IntValue<'ctx> {
    let old = ir.b.build_load(ir.i8, p, "").expect("positioned");
    let load = old.as_instruction_value().expect("a load");
    nocheck(ir, load);
    let one = ir.i8.const_int(1, false);
    let v = ir.add(old.into_int_value(), one);
    store(ir, p, v);
    v
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
pub fn instrument<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>) -> Relaid {
    let objects = escaping_allocas(ir, f);
    if objects.is_empty() {
        return Relaid::default();
    }
    let markers: Vec<_> = objects
        .iter()
        .map(|&(old, _, _)| lifetime_markers(old))
        .collect();
    let (page, at) = crate::rtpage::at_entry(ir, f);
    ir.at(at);
    let slot = slot(ir);
    let depth_ptr = byte_ptr(ir, page, EPOCH_DEPTH_OFFSET, slot);
    let d = bump(ir, depth_ptr);
    let d64 = ir.int_cast(d, ir.i64);
    let gen_index = ir.add(
        ir.shl(slot, ir.c64(EPOCH_GENS_PER_SLOT.trailing_zeros().into())),
        ir.and(d64, ir.c64(EPOCH_GENS_PER_SLOT - 1)),
    );
    let gen_ptr = byte_ptr(ir, page, EPOCH_GEN_OFFSET, gen_index);
    let g = bump(ir, gen_ptr);
    let g64 = ir.int_cast(g, ir.i64);
    // Epoch bits (d, g) of the tag; the pseudo bit and class are or-ed in per object.
    let depth_bits = ir.shl(ir.and(d64, ir.c64(DEPTH_MASK)), ir.c64(DEPTH_SHIFT.into()));
    let gen_bits = ir.shl(ir.and(g64, ir.c64(GEN_MASK)), ir.c64(GEN_SHIFT.into()));
    let epoch_bits = ir.or(depth_bits, gen_bits);
    let mut dead_markers = Vec::new();
    for (&(old, size, t), marks) in objects.iter().zip(markers) {
        let block = 1u64 << (t + 3);
        ir.at(old);
        let len = u32::try_from(LOCAL_PREFIX + size + 1).expect("a local class's block fits u32");
        let new = ir.b.build_alloca(ir.i8.array_type(len), "cusafe.local");
        let new = new.expect("positioned");
        let alloca = new.as_instruction().expect("an alloca");
        alloca.set_alignment(block as u32).expect("a power of two");
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
        let ptr = alloca_pointer(old);
        let tagged =
            ir.b.build_int_to_ptr(tagged, ptr.get_type(), crate::classify::TAGGED_LOCAL);
        ptr.replace_all_uses_with(tagged.expect("positioned"));
        old.erase_from_basic_block();
    }
    // Epilogue: restore the depth on every return.
    ir.at(at);
    let restore = ir.sub(d, ir.i8.const_int(1, false));
    for i in instructions(f) {
        if opcode(i) == Some(LLVMOpcode::LLVMRet) {
            ir.at(i);
            store(ir, depth_ptr, restore);
        }
    }
    let scope_marks = dead_markers.len();
    for m in dead_markers {
        m.erase_from_basic_block();
    }
    Relaid {
        objects: objects.len(),
        scope_marks,
    }
}

/// Writes a local object's header word (its size, maybe with `OUT_OF_SCOPE`).
fn store_header<'ctx>(ir: &Ir<'ctx>, block: PointerValue<'ctx>, word: u64) {
    let hdr = store(ir, block, ir.c64(word));
    hdr.set_alignment(8).expect("a store takes an alignment");
}

/// The `llvm.lifetime.start` (true) and `llvm.lifetime.end` (false) calls on `alloca`.
fn lifetime_markers(alloca: InstructionValue) -> Vec<(InstructionValue, bool)> {
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
pub fn reset_depth_at_entry<'ctx>(ir: &Ir<'ctx>, kernel: FunctionValue<'ctx>) {
    let (page, at) = crate::rtpage::at_entry(ir, kernel);
    ir.at(at);
    let depth_ptr = byte_ptr(ir, page, EPOCH_DEPTH_OFFSET, slot(ir));
    let zero = ir.i8.const_int(0, false);
    store(ir, depth_ptr, zero);
}
