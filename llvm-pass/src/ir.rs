//! The module being instrumented, reached through inkwell: context, module, builder,
//! common types and the small IR helpers the instrumentation shares.
//!
//! The rest of the pass still works on raw `LLVMValueRef`s in places; those helpers take
//! and give raw handles at their edge and wrap them in inkwell values inside. Queries
//! inkwell has no API for live in `crate::sys` and are re-exported here.

use crate::ffi::{cusafe_inline_call, cusafe_split_before, cusafe_split_if_then};
use inkwell::basic_block::BasicBlock;
use inkwell::builder::Builder;
use inkwell::context::ContextRef;
use inkwell::module::{Linkage, Module};
use inkwell::targets::TargetData;
use inkwell::types::{AnyType, FunctionType, IntType, PointerType};
use inkwell::values::{
    AsValueRef, BasicValueEnum, FunctionValue, InstructionValue, IntValue, PointerValue,
};
use inkwell::{AddressSpace, IntPredicate};
use llvm_sys::prelude::*;
use llvm_sys::LLVMIntPredicate;
use std::mem::ManuallyDrop;

pub use crate::sys::{addr_space, callee, name, opcode, operand, uses};

/// Address space of global memory in NVPTX.
pub const AS_GLOBAL: u32 = 1;
/// The generic address space.
pub const AS_GENERIC: u32 = 0;
/// NVPTX shared address space (`__shared__`).
pub const AS_SHARED: u32 = 3;

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

/// `v` (integer-typed) as an inkwell integer value.
pub fn int<'ctx>(v: LLVMValueRef) -> IntValue<'ctx> {
    unsafe { IntValue::new(v) }
}

/// `v` (pointer-typed) as an inkwell pointer value.
pub fn pointer<'ctx>(v: LLVMValueRef) -> PointerValue<'ctx> {
    unsafe { PointerValue::new(v) }
}

/// The instruction `v` as an inkwell instruction.
pub fn inst<'ctx>(v: LLVMValueRef) -> InstructionValue<'ctx> {
    unsafe { InstructionValue::new(v) }
}

/// The function `f` as an inkwell function.
pub fn function<'ctx>(f: LLVMValueRef) -> FunctionValue<'ctx> {
    unsafe { FunctionValue::new(f) }.expect("a function")
}

/// The basic block `bb` as an inkwell block.
pub fn block<'ctx>(bb: LLVMBasicBlockRef) -> BasicBlock<'ctx> {
    unsafe { BasicBlock::new(bb) }.expect("a block")
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
    pub fn c64(&self, v: u64) -> LLVMValueRef {
        self.i64.const_int(v, false).as_value_ref()
    }

    /// An `i32` constant.
    pub fn c32(&self, v: u32) -> LLVMValueRef {
        self.i32.const_int(v.into(), false).as_value_ref()
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
    pub fn at(&self, before: LLVMValueRef) {
        self.b.position_before(&inst(before));
    }

    /// Positions the builder at the end of `bb`.
    pub fn at_end(&self, bb: BasicBlock<'ctx>) {
        self.b.position_at_end(bb);
    }

    /// `ptrtoint v to i64`.
    pub fn to_int(&self, v: LLVMValueRef) -> LLVMValueRef {
        self.b
            .build_ptr_to_int(pointer(v), self.i64, "")
            .expect("positioned")
            .as_value_ref()
    }

    /// `a >> k` (logical).
    pub fn lshr(&self, a: LLVMValueRef, k: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_right_shift(int(a), int(k), false, "");
        r.expect("positioned").as_value_ref()
    }

    /// `a << k`.
    pub fn shl(&self, a: LLVMValueRef, k: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_left_shift(int(a), int(k), "");
        r.expect("positioned").as_value_ref()
    }

    /// `a & b`.
    pub fn and(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_and(int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `a | b`.
    pub fn or(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_or(int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `a ^ b`.
    pub fn xor(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_xor(int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `!a` (all bits flipped).
    pub fn not(&self, a: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_not(int(a), "");
        r.expect("positioned").as_value_ref()
    }

    /// `a + b`.
    pub fn add(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_int_add(int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `a - b`.
    pub fn sub(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self.b.build_int_sub(int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `icmp pred a, b`.
    pub fn icmp(&self, pred: LLVMIntPredicate, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let r = self
            .b
            .build_int_compare(IntPredicate::from(pred), int(a), int(b), "");
        r.expect("positioned").as_value_ref()
    }

    /// `select c, a, b`.
    pub fn select(&self, c: LLVMValueRef, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        let (a, b) = unsafe { (BasicValueEnum::new(a), BasicValueEnum::new(b)) };
        let r = self.b.build_select(int(c), a, b, "");
        r.expect("positioned").as_value_ref()
    }

    /// `zext/trunc v to ty` (integers).
    pub fn int_cast(&self, v: LLVMValueRef, ty: IntType<'ctx>) -> LLVMValueRef {
        let r = self.b.build_int_cast_sign_flag(int(v), ty, false, "");
        r.expect("positioned").as_value_ref()
    }

    /// Splits before `before` and guards a new block with `cond` (weighted unlikely).
    /// Returns the new block's terminator.
    pub fn split_if_then(&self, cond: LLVMValueRef, before: LLVMValueRef) -> LLVMValueRef {
        unsafe { cusafe_split_if_then(cond, before) }
    }

    /// Splits so that a new block starts at `before`; returns that block.
    pub fn split_before(&self, before: LLVMValueRef) -> LLVMBasicBlockRef {
        unsafe { cusafe_split_before(before) }
    }

    /// Inlines the call instruction `call`; returns whether LLVM's inliner did.
    pub fn inline_call(&self, call: LLVMValueRef) -> bool {
        unsafe { cusafe_inline_call(call) }
    }
}

const NOCHECK: &str = "cusafe.nocheck";

/// Marks a memory instruction the pass made itself (epoch state, headers): never checked.
pub fn mark_nocheck(ir: &Ir, i: LLVMValueRef) {
    let kind = ir.ctx.get_kind_id(NOCHECK);
    let node = ir.ctx.metadata_node(&[]);
    inst(i)
        .set_metadata(node, kind)
        .expect("an empty node is a node");
}

/// Whether `inst` carries the mark of [`mark_nocheck`].
pub fn is_nocheck(ir: &Ir, i: LLVMValueRef) -> bool {
    let kind = ir.ctx.get_kind_id(NOCHECK);
    inst(i).get_metadata(kind).is_some()
}

/// Whether `f` is an intrinsic (`llvm.*`).
pub fn is_intrinsic(f: LLVMValueRef) -> bool {
    unsafe { FunctionValue::new(f) }.is_some_and(|f| f.get_intrinsic_id() != 0)
}

/// All instructions of function `f`, in order (collected first, so callers may change IR).
pub fn instructions(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    function(f)
        .get_basic_block_iter()
        .flat_map(|bb| bb.get_instructions())
        .map(|i| i.as_value_ref())
        .collect()
}
