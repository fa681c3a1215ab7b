//! Thin helpers over the LLVM C API (llvm-sys) used by the instrumentation.

use crate::ffi::{cusafe_inline_call, cusafe_split_before, cusafe_split_if_then};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::{LLVMGetModuleDataLayout, LLVMStoreSizeOfType, LLVMTargetDataRef};
use llvm_sys::{LLVMIntPredicate, LLVMOpcode, LLVMTypeKind};

/// Address space of global memory in NVPTX.
pub const AS_GLOBAL: u32 = 1;
/// The generic address space.
pub const AS_GENERIC: u32 = 0;
/// NVPTX shared address space (`__shared__`).
pub const AS_SHARED: u32 = 3;

/// The module being instrumented with the types and builder the pass needs.
pub struct Ir {
    /// The LLVM context of the module.
    pub ctx: LLVMContextRef,
    /// The module.
    pub module: LLVMModuleRef,
    /// One builder, repositioned for each insertion.
    pub b: LLVMBuilderRef,
    td: LLVMTargetDataRef,
    /// `i8`.
    pub i8: LLVMTypeRef,
    /// `i32`.
    pub i32: LLVMTypeRef,
    /// `i64`.
    pub i64: LLVMTypeRef,
    /// `ptr` (generic).
    pub ptr: LLVMTypeRef,
    /// `ptr addrspace(1)`.
    pub gptr: LLVMTypeRef,
}

impl Drop for Ir {
    fn drop(&mut self) {
        unsafe { LLVMDisposeBuilder(self.b) };
    }
}

/// Empty name for new values.
pub const NONAME: *const std::ffi::c_char = c"".as_ptr();

impl Ir {
    /// Wraps `module` (borrowed: never disposed here).
    ///
    /// # Safety
    /// `module` must be a valid module that outlives the returned value.
    pub unsafe fn new(module: LLVMModuleRef) -> Ir {
        unsafe {
            let ctx = LLVMGetModuleContext(module);
            Ir {
                ctx,
                module,
                b: LLVMCreateBuilderInContext(ctx),
                td: LLVMGetModuleDataLayout(module),
                i8: LLVMInt8TypeInContext(ctx),
                i32: LLVMInt32TypeInContext(ctx),
                i64: LLVMInt64TypeInContext(ctx),
                ptr: LLVMPointerTypeInContext(ctx, AS_GENERIC),
                gptr: LLVMPointerTypeInContext(ctx, AS_GLOBAL),
            }
        }
    }

    /// The module's data layout.
    pub fn td(&self) -> LLVMTargetDataRef {
        self.td
    }

    /// Bytes written by a store of type `ty`.
    pub fn store_size(&self, ty: LLVMTypeRef) -> u64 {
        unsafe { LLVMStoreSizeOfType(self.td, ty) }
    }

    /// An `i64` constant.
    pub fn c64(&self, v: u64) -> LLVMValueRef {
        unsafe { LLVMConstInt(self.i64, v, 0) }
    }

    /// An `i32` constant.
    pub fn c32(&self, v: u32) -> LLVMValueRef {
        unsafe { LLVMConstInt(self.i32, v.into(), 0) }
    }

    /// The module's function `name`, declared with type `ty` if it has none.
    pub fn declare(&self, name: &str, ty: LLVMTypeRef) -> LLVMValueRef {
        let fname = std::ffi::CString::new(name).expect("no NUL in a function name");
        unsafe {
            let f = LLVMGetNamedFunction(self.module, fname.as_ptr());
            if f.is_null() {
                LLVMAddFunction(self.module, fname.as_ptr(), ty)
            } else {
                f
            }
        }
    }

    /// Gives the module the marker `symbol` (by which the runtime learns something of
    /// it at a kernel's first launch): a visible `.global` byte, weak so that modules
    /// linked together (`-fgpu-rdc`) share one.
    pub fn mark(&self, symbol: &str) {
        let name = std::ffi::CString::new(symbol).expect("no NUL in a marker's name");
        unsafe {
            if !LLVMGetNamedGlobal(self.module, name.as_ptr()).is_null() {
                return;
            }
            let g = LLVMAddGlobalInAddressSpace(self.module, self.i8, name.as_ptr(), AS_GLOBAL);
            LLVMSetInitializer(g, LLVMConstInt(self.i8, 1, 0));
            LLVMSetGlobalConstant(g, 1);
            LLVMSetLinkage(g, llvm_sys::LLVMLinkage::LLVMWeakODRLinkage);
        }
    }

    /// Positions the builder right before `inst`.
    pub fn at(&self, inst: LLVMValueRef) {
        unsafe { LLVMPositionBuilderBefore(self.b, inst) };
    }

    /// Positions the builder at the end of `bb`.
    pub fn at_end(&self, bb: LLVMBasicBlockRef) {
        unsafe { LLVMPositionBuilderAtEnd(self.b, bb) };
    }

    /// `ptrtoint v to i64`.
    pub fn to_int(&self, v: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildPtrToInt(self.b, v, self.i64, NONAME) }
    }

    /// `a >> k` (logical).
    pub fn lshr(&self, a: LLVMValueRef, k: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildLShr(self.b, a, k, NONAME) }
    }

    /// `a << k`.
    pub fn shl(&self, a: LLVMValueRef, k: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildShl(self.b, a, k, NONAME) }
    }

    /// `a & b`.
    pub fn and(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildAnd(self.b, a, b, NONAME) }
    }

    /// `a | b`.
    pub fn or(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildOr(self.b, a, b, NONAME) }
    }

    /// `a ^ b`.
    pub fn xor(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildXor(self.b, a, b, NONAME) }
    }

    /// `a + b`.
    pub fn add(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildAdd(self.b, a, b, NONAME) }
    }

    /// `a - b`.
    pub fn sub(&self, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildSub(self.b, a, b, NONAME) }
    }

    /// `icmp pred a, b`.
    pub fn icmp(&self, pred: LLVMIntPredicate, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildICmp(self.b, pred, a, b, NONAME) }
    }

    /// `select c, a, b`.
    pub fn select(&self, c: LLVMValueRef, a: LLVMValueRef, b: LLVMValueRef) -> LLVMValueRef {
        unsafe { LLVMBuildSelect(self.b, c, a, b, NONAME) }
    }

    /// `zext/trunc v to ty` (integers).
    pub fn int_cast(&self, v: LLVMValueRef, ty: LLVMTypeRef) -> LLVMValueRef {
        unsafe { LLVMBuildIntCast2(self.b, v, ty, 0, NONAME) }
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
pub fn mark_nocheck(ir: &Ir, inst: LLVMValueRef) {
    unsafe {
        let kind =
            LLVMGetMDKindIDInContext(ir.ctx, NOCHECK.as_ptr() as *const _, NOCHECK.len() as u32);
        let node = LLVMMDNodeInContext2(ir.ctx, std::ptr::null_mut(), 0);
        LLVMSetMetadata(inst, kind, LLVMMetadataAsValue(ir.ctx, node));
    }
}

/// Whether `inst` carries the mark of [`mark_nocheck`].
pub fn is_nocheck(ir: &Ir, inst: LLVMValueRef) -> bool {
    unsafe {
        let kind =
            LLVMGetMDKindIDInContext(ir.ctx, NOCHECK.as_ptr() as *const _, NOCHECK.len() as u32);
        !LLVMGetMetadata(inst, kind).is_null()
    }
}

/// The opcode of `v` if it is an instruction.
pub fn opcode(v: LLVMValueRef) -> Option<LLVMOpcode> {
    unsafe {
        if LLVMIsAInstruction(v).is_null() {
            None
        } else {
            Some(LLVMGetInstructionOpcode(v))
        }
    }
}

/// Operand `i` of `v`.
pub fn operand(v: LLVMValueRef, i: u32) -> LLVMValueRef {
    unsafe { LLVMGetOperand(v, i) }
}

/// Address space of pointer-typed `v` (None if `v` is not a pointer).
pub fn addr_space(v: LLVMValueRef) -> Option<u32> {
    unsafe {
        let ty = LLVMTypeOf(v);
        if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind {
            Some(LLVMGetPointerAddressSpace(ty))
        } else {
            None
        }
    }
}

/// Name of a value (empty if none).
pub fn name(v: LLVMValueRef) -> String {
    unsafe {
        let mut len = 0usize;
        let p = LLVMGetValueName2(v, &mut len);
        if p.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
    }
}

/// The function a call instruction calls, if it is a direct call.
pub fn callee(call: LLVMValueRef) -> Option<LLVMValueRef> {
    unsafe {
        let f = LLVMGetCalledValue(call);
        (!f.is_null() && !LLVMIsAFunction(f).is_null()).then_some(f)
    }
}

/// Whether `f` is an intrinsic (`llvm.*`).
pub fn is_intrinsic(f: LLVMValueRef) -> bool {
    unsafe { LLVMGetIntrinsicID(f) != 0 }
}

/// All instructions of function `f`, in order (collected first, so callers may change IR).
pub fn instructions(f: LLVMValueRef) -> Vec<LLVMValueRef> {
    let mut out = Vec::new();
    unsafe {
        let mut bb = LLVMGetFirstBasicBlock(f);
        while !bb.is_null() {
            let mut i = LLVMGetFirstInstruction(bb);
            while !i.is_null() {
                out.push(i);
                i = LLVMGetNextInstruction(i);
            }
            bb = LLVMGetNextBasicBlock(bb);
        }
    }
    out
}

/// All (user, operand index) pairs through which `v` is used.
pub fn uses(v: LLVMValueRef) -> Vec<(LLVMValueRef, u32)> {
    let mut out = Vec::new();
    unsafe {
        let mut u = LLVMGetFirstUse(v);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            let n = LLVMGetNumOperands(user);
            for i in 0..n as u32 {
                if LLVMGetOperand(user, i) == v && !out.contains(&(user, i)) {
                    out.push((user, i));
                }
            }
            u = LLVMGetNextUse(u);
        }
    }
    out
}
