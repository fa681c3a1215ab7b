//! Where instrumented device code finds the runtime page (`format::rtpage`): the
//! per-module constant [`RTPAGE_SYMBOL`], one `u64` in the constant address space,
//! initialised to [`RTPAGE_ADDR`]. Module globals are per context, so the runtime can
//! give each device its own page: the first device keeps the initialiser, and before a
//! kernel's first launch on another device the runtime writes that device's page
//! address into the kernel's module there (`cuModuleGetGlobal` + a copy).
//!
//! The definition is `weak` (modules linked together with `-fgpu-rdc` share one; a
//! `weak` initialiser is not definitive, so LLVM never folds a load of it) and
//! `externally_initialized` (clang's form of a `__constant__` variable: the host writes
//! it), in address space 4, so PTX has
//! `.weak .const .align 8 .u64 __cusafe_rtpage = 79164837199872;` and the loads are
//! `ld.const.u64`. The pass loads it once per function that needs it, at the entry
//! (after the allocas), with `!invariant.load` (the runtime writes it before a launch,
//! never during one); device-rt declares it (`extern const`, by the generated header's
//! `CUSAFE_RTPAGE_SYMBOL`) and reads it in its own functions (`device-rt/cusafe_rt.c`
//! says how). [`finish`] runs after device-rt is linked: it leaves the definition in
//! modules that read it and nowhere else.

use crate::ir::{mark_nocheck, opcode, operand, space, Ir, AS_CONST};
use cusafe_format::rtpage::{RTPAGE_ADDR, RTPAGE_SYMBOL};
use inkwell::basic_block::BasicBlock;
use inkwell::module::Linkage;
use inkwell::values::{BasicValue, FunctionValue, GlobalValue, InstructionValue, IntValue};
use llvm_sys::LLVMOpcode;

/// Name of the load of [`RTPAGE_SYMBOL`] at a function's entry.
const LOAD_NAME: &str = "cusafe.rtpage";

/// The module's [`RTPAGE_SYMBOL`], defined as the runtime expects it (created if the
/// module has none; a declaration, device-rt's, becomes the definition).
fn global<'ctx>(ir: &Ir<'ctx>) -> GlobalValue<'ctx> {
    let g = ir.module().get_global(RTPAGE_SYMBOL).unwrap_or_else(|| {
        ir.module()
            .add_global(ir.i64, Some(space(AS_CONST)), RTPAGE_SYMBOL)
    });
    if g.is_declaration() {
        g.set_initializer(&ir.c64(RTPAGE_ADDR));
    }
    g.set_constant(false);
    g.set_externally_initialized(true);
    g.set_linkage(Linkage::WeakAny);
    g.set_alignment(8);
    g
}

/// The first instruction of `entry` after its allocas.
fn first_non_alloca(entry: BasicBlock) -> InstructionValue {
    let mut i = entry.get_first_instruction();
    while let Some(a) = i.filter(|&a| opcode(a) == Some(LLVMOpcode::LLVMAlloca)) {
        i = a.get_next_instruction();
    }
    i.expect("a block ends in a terminator")
}

/// The runtime page's base address (`i64`) in function `f`: the load of
/// [`RTPAGE_SYMBOL`] in `f`'s entry block, made on first use before the entry's first
/// instruction that is no alloca and shared by everything of the pass in `f` (coverage,
/// epochs). Code that uses it at the entry goes right after it ([`at_entry`]). Moves
/// the builder.
pub fn base<'ctx>(ir: &Ir<'ctx>, f: FunctionValue<'ctx>) -> IntValue<'ctx> {
    let entry = f.get_first_basic_block().expect("a defined function");
    if let Some(v) = existing(ir, entry) {
        return v;
    }
    let g = global(ir);
    ir.at(first_non_alloca(entry));
    let load =
        ir.b.build_load(ir.i64, g.as_pointer_value(), LOAD_NAME)
            .expect("positioned");
    let inst = load.as_instruction_value().expect("a load");
    inst.set_alignment(8).expect("a load takes an alignment");
    let invariant = ir.ctx.get_kind_id("invariant.load");
    inst.set_metadata(ir.ctx.metadata_node(&[]), invariant)
        .expect("an empty node is a node");
    mark_nocheck(ir, inst);
    load.into_int_value()
}

/// [`base`]'s load in block `entry`, if it has one.
fn existing<'ctx>(ir: &Ir<'ctx>, entry: BasicBlock<'ctx>) -> Option<IntValue<'ctx>> {
    let g = ir.module().get_global(RTPAGE_SYMBOL)?.as_pointer_value();
    entry
        .get_instructions()
        .filter(|&i| opcode(i) == Some(LLVMOpcode::LLVMLoad))
        .find(|&i| operand(i, 0).is_some_and(|p| p == g))
        .and_then(crate::sys::value)
        .map(|v| v.into_int_value())
}

/// [`base`] in `f` and the instruction after its load: where code that uses the base
/// at the entry goes (after the load, before what the pass put at the entry earlier).
pub fn at_entry<'ctx>(
    ir: &Ir<'ctx>,
    f: FunctionValue<'ctx>,
) -> (IntValue<'ctx>, InstructionValue<'ctx>) {
    let v = base(ir, f);
    let load = v.as_instruction_value().expect("a load");
    (
        v,
        load.get_next_instruction()
            .expect("a load is no terminator"),
    )
}

/// After device-rt is linked: the module keeps [`RTPAGE_SYMBOL`] defined (weak,
/// initialised, see the module comment) when anything reads it, and loses it when
/// nothing does (device-rt's entries that read it were all deleted, or it was never
/// made): only modules that read the runtime page carry it.
pub fn finish(ir: &Ir) {
    let Some(g) = ir.module().get_global(RTPAGE_SYMBOL) else {
        return;
    };
    let ptr = g.as_pointer_value();
    if crate::sys::is_used(ptr) {
        global(ir);
    } else {
        // Dead constant expressions (casts in deleted device-rt functions) may still
        // name it: they get undef instead.
        ptr.replace_all_uses_with(ptr.get_type().get_undef());
        unsafe { g.delete() };
    }
}
