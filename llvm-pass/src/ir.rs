//! The module being instrumented, reached through inkwell: context, module, builder,
//! common types and the small IR helpers the instrumentation shares.
//!
//! Values cross the pass as inkwell values; raw handles appear only where `crate::sys`
//! and the shim (`crate::ffi`) call LLVM. Queries inkwell has no API for live in
//! `crate::sys` and are re-exported here.

use crate::ffi::{cusafe_inline_call, cusafe_split_before, cusafe_split_if, cusafe_split_if_then};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::intrinsics::Intrinsic;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::{
    AnyType, BasicMetadataTypeEnum, BasicTypeEnum, FunctionType, IntType, PointerType,
};
use inkwell::values::{
    AsValueRef, BasicMetadataValueEnum, BasicValue, BasicValueEnum, CallSiteValue, FunctionValue,
    InstructionOpcode, InstructionValue, IntValue, PointerValue, ValueKind,
};
use inkwell::{AddressSpace, IntPredicate};
use llvm_sys::prelude::*;
use std::mem::ManuallyDrop;

pub use crate::sys::{addr_space, callee, name, opcode, operand, uses};

/// Address space of global memory in NVPTX.
pub const AS_GLOBAL: u32 = 1;
/// The generic address space.
pub const AS_GENERIC: u32 = 0;
/// NVPTX shared address space (`__shared__`).
pub const AS_SHARED: u32 = 3;
/// NVPTX constant address space (`__constant__`, `ld.const`).
pub const AS_CONST: u32 = 4;
/// NVPTX local address space (a thread's stack).
pub const AS_LOCAL: u32 = 5;

/// The module being instrumented with the types and builder the pass needs.
pub struct Ir<'ctx> {
    /// The LLVM context of the module.
    pub ctx: ContextRef<'ctx>,
    /// The module, borrowed from LLVM: inkwell's `Module` disposes on drop, so never drop it.
    module: ManuallyDrop<Module<'ctx>>,
    /// One builder, repositioned for each insertion (the pass's own: disposed on drop).
    pub b: Builder<'ctx>,
    /// The module's data layout (owned by the module: never dropped).
    td: ManuallyDrop<TargetData>,
    /// `i8`.
    pub i8: IntType<'ctx>,
    /// `i32`.
    pub i32: IntType<'ctx>,
    /// `i64`.
    pub i64: IntType<'ctx>,
    /// `ptr` (generic).
    pub ptr: PointerType<'ctx>,
    /// `ptr addrspace(1)`.
    pub gptr: PointerType<'ctx>,
}

/// The inkwell address space `space`.
pub fn space(space: u32) -> AddressSpace {
    AddressSpace::from(u16::try_from(space).expect("address spaces the pass uses fit u16"))
}

/// Integer builder helpers of one shape: `fn NAME(a, b)` building `a OP b` at the
/// builder's position.
macro_rules! binary_ops {
    ($($(#[$doc:meta])* $name:ident => $build:ident;)*) => {$(
        $(#[$doc])*
        pub fn $name(&self, a: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
            let r = self.b.$build(a, b, "");
            r.expect("positioned")
        }
    )*};
}

impl<'ctx> Ir<'ctx> {
    /// Wraps `module` (borrowed: never disposed here).
    ///
    /// # Safety
    /// `module` must be a valid module that outlives the returned value.
    pub unsafe fn new(module: LLVMModuleRef) -> Ir<'ctx> {
        let module = ManuallyDrop::new(unsafe { Module::new(module) });
        let ctx = module.get_context();
        let td = ManuallyDrop::new(unsafe {
            TargetData::new(crate::sys::module_data_layout(module.as_mut_ptr()))
        });
        Ir {
            b: ctx.create_builder(),
            td,
            i8: ctx.i8_type(),
            i32: ctx.i32_type(),
            i64: ctx.i64_type(),
            ptr: ctx.ptr_type(space(AS_GENERIC)),
            gptr: ctx.ptr_type(space(AS_GLOBAL)),
            module,
            ctx,
        }
    }

    /// The module (inkwell).
    pub fn module(&self) -> &Module<'ctx> {
        &self.module
    }

    /// The module's data layout (inkwell).
    pub fn layout(&self) -> &TargetData {
        &self.td
    }

    /// Bytes written by a store of type `ty`.
    pub fn store_size(&self, ty: &dyn AnyType<'ctx>) -> u64 {
        self.td.get_store_size(ty)
    }

    /// An `i64` constant.
    pub fn c64(&self, v: u64) -> IntValue<'ctx> {
        self.i64.const_int(v, false)
    }

    /// An `i32` constant.
    pub fn c32(&self, v: u32) -> IntValue<'ctx> {
        self.i32.const_int(v.into(), false)
    }

    /// The module's function `name`, declared with type `ty` if it has none.
    pub fn declare(&self, name: &str, ty: FunctionType<'ctx>) -> FunctionValue<'ctx> {
        assert!(!name.contains('\0'), "no NUL in a function name");
        self.module
            .get_function(name)
            .unwrap_or_else(|| self.module.add_function(name, ty, None))
    }

    /// Gives the module the marker `symbol` (by which the runtime learns something of
    /// it at a kernel's first launch): a visible `.global` byte, weak so that modules
    /// linked together (`-fgpu-rdc`) share one.
    pub fn mark(&self, symbol: &str) {
        assert!(!symbol.contains('\0'), "no NUL in a marker's name");
        if self.module.get_global(symbol).is_some() {
            return;
        }
        let g = self
            .module
            .add_global(self.i8, Some(space(AS_GLOBAL)), symbol);
        g.set_initializer(&self.i8.const_int(1, false));
        g.set_constant(true);
        g.set_linkage(Linkage::WeakODR);
    }

    /// Positions the builder right before instruction `before`.
    pub fn at(&self, before: InstructionValue<'ctx>) {
        self.b.position_before(&before);
    }

    /// Positions the builder at the end of `bb`.
    pub fn at_end(&self, bb: BasicBlock<'ctx>) {
        self.b.position_at_end(bb);
    }

    /// `ptrtoint v to i64`.
    pub fn to_int(&self, v: PointerValue<'ctx>) -> IntValue<'ctx> {
        let r = self.b.build_ptr_to_int(v, self.i64, "");
        r.expect("positioned")
    }

    /// `a >> k` (logical).
    pub fn lshr(&self, a: IntValue<'ctx>, k: IntValue<'ctx>) -> IntValue<'ctx> {
        let r = self.b.build_right_shift(a, k, false, "");
        r.expect("positioned")
    }

    binary_ops! {
        /// `a << k`.
        shl => build_left_shift;
        /// `a & b`.
        and => build_and;
        /// `a | b`.
        or => build_or;
        /// `a ^ b`.
        xor => build_xor;
        /// `a + b`.
        add => build_int_add;
        /// `a - b`.
        sub => build_int_sub;
        /// `a * b`.
        mul => build_int_mul;
    }

    /// A call of the special-register reader `name` (`i32 name()`, e.g.
    /// `llvm.nvvm.read.ptx.sreg.laneid`).
    pub fn sreg(&self, name: &str) -> IntValue<'ctx> {
        let ty = self.i32.fn_type(&[], false);
        let f = self.declare(name, ty).as_global_value().as_pointer_value();
        int_result(
            self.b
                .build_indirect_call(ty, f, &[], "")
                .expect("positioned"),
        )
    }

    /// A call of intrinsic `name` (with the overload types `overloads`) at the builder:
    /// its result.
    pub fn intrinsic(
        &self,
        name: &str,
        overloads: &[BasicTypeEnum<'ctx>],
        args: &[BasicMetadataValueEnum<'ctx>],
    ) -> BasicValueEnum<'ctx> {
        let f = Intrinsic::find(name)
            .and_then(|i| i.get_declaration(self.module(), overloads))
            .unwrap_or_else(|| panic!("LLVM 19 knows {name}"));
        let call = self.b.build_call(f, args, "").expect("positioned");
        call.try_as_basic_value()
            .expect_basic("the intrinsic returns a value")
    }

    /// A call of pure inline PTX `asm` (AT&T dialect, no side effects) returning an
    /// integer of type `ty`, with `constraints` and the integer `args`, at the builder.
    pub fn asm(
        &self,
        ty: IntType<'ctx>,
        asm: &str,
        constraints: &str,
        args: &[IntValue<'ctx>],
        name: &str,
    ) -> IntValue<'ctx> {
        let params: Vec<BasicMetadataTypeEnum> = args.iter().map(|a| a.get_type().into()).collect();
        let fty = ty.fn_type(&params, false);
        let (side_effects, align_stack, can_throw) = (false, false, false);
        let f = self.ctx.create_inline_asm(
            fty,
            asm.to_string(),
            constraints.to_string(),
            side_effects,
            align_stack,
            Some(inkwell::InlineAsmDialect::ATT),
            can_throw,
        );
        let args: Vec<BasicMetadataValueEnum> = args.iter().map(|&a| a.into()).collect();
        let call = self.b.build_indirect_call(fty, f, &args, name);
        int_result(call.expect("positioned"))
    }

    /// `v` passed through an empty inline-asm move (`mov.b32` or `mov.b64`): the same
    /// value, which no IR or codegen pass can match with another computation of it. A
    /// cold path builds its copies of hot values from these, so that GVN's PRE in the
    /// NVPTX codegen pipeline does not make the hot path compute them before the branch
    /// and carry them into the join through phis (conv3d: 17 64-bit phis, 40 registers
    /// against 32). Constants, other widths and pointers are returned as they are.
    pub fn opaque(&self, v: BasicValueEnum<'ctx>) -> BasicValueEnum<'ctx> {
        let BasicValueEnum::IntValue(i) = v else {
            return v;
        };
        if i.is_const() {
            return v;
        }
        let (asm, constraints) = match i.get_type().get_bit_width() {
            32 => ("mov.b32 $0, $1;", "=r,r"),
            64 => ("mov.b64 $0, $1;", "=l,l"),
            _ => return v,
        };
        self.asm(i.get_type(), asm, constraints, &[i], "cusafe.cold")
            .into()
    }

    /// `!a` (all bits flipped).
    pub fn not(&self, a: IntValue<'ctx>) -> IntValue<'ctx> {
        let r = self.b.build_not(a, "");
        r.expect("positioned")
    }

    /// `icmp pred a, b`.
    pub fn icmp(&self, pred: IntPredicate, a: IntValue<'ctx>, b: IntValue<'ctx>) -> IntValue<'ctx> {
        let r = self.b.build_int_compare(pred, a, b, "");
        r.expect("positioned")
    }

    /// `select c, a, b` (integers).
    pub fn select(
        &self,
        c: IntValue<'ctx>,
        a: IntValue<'ctx>,
        b: IntValue<'ctx>,
    ) -> IntValue<'ctx> {
        let r = self.b.build_select(c, a, b, "");
        r.expect("positioned").into_int_value()
    }

    /// `zext/trunc v to ty` (integers).
    pub fn int_cast(&self, v: IntValue<'ctx>, ty: IntType<'ctx>) -> IntValue<'ctx> {
        let r = self.b.build_int_cast_sign_flag(v, ty, false, "");
        r.expect("positioned")
    }

    /// `gep i8, ptr, bytes`.
    pub fn byte_gep(&self, ptr: PointerValue<'ctx>, bytes: IntValue<'ctx>) -> PointerValue<'ctx> {
        // Safety: a byte GEP steps over bytes; it reads nothing.
        let r = unsafe { self.b.build_gep(self.i8, ptr, &[bytes], "") };
        r.expect("positioned")
    }

    /// Splits before `before` and guards a new block with `cond` (weighted unlikely).
    /// Returns the new block's terminator.
    pub fn split_if_then(
        &self,
        cond: IntValue<'ctx>,
        before: InstructionValue<'ctx>,
    ) -> InstructionValue<'ctx> {
        let term = unsafe { cusafe_split_if_then(cond.as_value_ref(), before.as_value_ref()) };
        unsafe { InstructionValue::new(term) }
    }

    /// As [`Ir::split_if_then`], with no branch weights; returns the new block's
    /// terminator.
    pub fn split_if(
        &self,
        cond: IntValue<'ctx>,
        before: InstructionValue<'ctx>,
    ) -> InstructionValue<'ctx> {
        let term = unsafe { cusafe_split_if(cond.as_value_ref(), before.as_value_ref()) };
        unsafe { InstructionValue::new(term) }
    }

    /// Splits so that a new block starts at `before`; returns that block.
    pub fn split_before(&self, before: InstructionValue<'ctx>) -> BasicBlock<'ctx> {
        let bb = unsafe { cusafe_split_before(before.as_value_ref()) };
        unsafe { BasicBlock::new(bb) }.expect("a block")
    }

    /// Inlines the call instruction `call`; returns whether LLVM's inliner did.
    pub fn inline_call(&self, call: InstructionValue<'ctx>) -> bool {
        unsafe { cusafe_inline_call(call.as_value_ref()) }
    }
}

const NOCHECK: &str = "cusafe.nocheck";

/// Marks a memory instruction the pass made itself (epoch state, headers): never checked.
pub fn mark_nocheck<'ctx>(ir: &Ir<'ctx>, i: InstructionValue<'ctx>) {
    let kind = ir.ctx.get_kind_id(NOCHECK);
    let node = ir.ctx.metadata_node(&[]);
    i.set_metadata(node, kind).expect("an empty node is a node");
}

/// Whether `inst` carries the mark of [`mark_nocheck`].
pub fn is_nocheck(ir: &Ir, i: InstructionValue) -> bool {
    let kind = ir.ctx.get_kind_id(NOCHECK);
    i.get_metadata(kind).is_some()
}

/// Whether `f` is an intrinsic (`llvm.*`).
pub fn is_intrinsic(f: FunctionValue) -> bool {
    f.get_intrinsic_id() != 0
}

/// Operand `i` of `v`, an integer (of an integer operator or cast, or a GEP index).
pub fn int_operand<'ctx>(v: impl AsValueRef, i: u32) -> IntValue<'ctx> {
    operand(v, i).expect("an integer operand").into_int_value()
}

/// The call instruction of call site `call`.
pub fn call_instruction(call: CallSiteValue) -> InstructionValue {
    match call.try_as_basic_value() {
        ValueKind::Basic(v) => v.as_instruction_value().expect("a call is an instruction"),
        ValueKind::Instruction(i) => i,
    }
}

/// The integer result of call site `call` (of a function returning one).
pub fn int_result(call: CallSiteValue) -> IntValue {
    let r = call
        .try_as_basic_value()
        .expect_basic("a call with a result");
    r.into_int_value()
}

/// The first instruction of `bb` that is no phi (and, with `allocas`, no alloca): where
/// code that must follow a block's phis (or an entry block's allocas) goes.
pub fn first_non_phi(bb: BasicBlock, allocas: bool) -> InstructionValue {
    let mut i = bb.get_first_instruction();
    while let Some(inst) = i.filter(|i| {
        i.get_opcode() == InstructionOpcode::Phi
            || (allocas && i.get_opcode() == InstructionOpcode::Alloca)
    }) {
        i = inst.get_next_instruction();
    }
    i.expect("a terminator ends the block")
}

/// All instructions of function `f`, in order (collected first, so callers may change IR).
pub fn instructions(f: FunctionValue<'_>) -> Vec<InstructionValue<'_>> {
    f.get_basic_block_iter()
        .flat_map(|bb| bb.get_instructions())
        .collect()
}
