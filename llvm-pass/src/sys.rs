//! llvm-sys where inkwell has no API: each function here wraps a C API call that
//! inkwell 0.11 does not expose in the form the pass needs, with the reason beside it.
//! Everything else in the pass reaches LLVM through inkwell (`crate::ir`).

use inkwell::basic_block::BasicBlock;
use inkwell::types::BasicTypeEnum;
use inkwell::values::{
    AsValueRef, BasicValueEnum, FunctionValue, GlobalValue, InstructionValue, IntValue,
    MetadataValue,
};
use llvm_sys::core::*;
use llvm_sys::prelude::*;
use llvm_sys::target::LLVMGetModuleDataLayout;
use llvm_sys::{LLVMOpcode, LLVMTypeKind};

/// The module's own data layout.
///
/// inkwell has no accessor for a module's `LLVMTargetDataRef` (only for its layout
/// string, `Module::get_data_layout`), and its `TargetData` disposes the layout on drop:
/// the caller must keep the result in `ManuallyDrop`.
///
/// # Safety
/// `module` must be a valid module.
pub unsafe fn module_data_layout(module: LLVMModuleRef) -> llvm_sys::target::LLVMTargetDataRef {
    unsafe { LLVMGetModuleDataLayout(module) }
}

/// The opcode of `v` if it is an instruction.
///
/// inkwell reaches an instruction's opcode only through `InstructionValue`, and turning an
/// arbitrary value into one goes through `AnyValueEnum::new`, which panics on the label,
/// token and metadata values that operands can be.
pub fn opcode(v: impl AsValueRef) -> Option<LLVMOpcode> {
    let v = v.as_value_ref();
    unsafe {
        if LLVMIsAInstruction(v).is_null() {
            None
        } else {
            Some(LLVMGetInstructionOpcode(v))
        }
    }
}

/// Operand `i` of `v` if it is a first-class value (not a label, token or metadata).
///
/// inkwell reads operands only of instructions (`InstructionValue::get_operand`), not of
/// other users such as constant expressions, wraps them in an `Either` of value or
/// block, and panics on token and metadata operands (`BasicValueEnum::new`).
/// `None` too when `v` has no operand `i`.
pub fn operand<'ctx>(v: impl AsValueRef, i: u32) -> Option<BasicValueEnum<'ctx>> {
    let v = v.as_value_ref();
    unsafe {
        let n = u32::try_from(LLVMGetNumOperands(v)).expect("an operand count is not negative");
        (i < n).then(|| basic(LLVMGetOperand(v, i))).flatten()
    }
}

/// `v` (an instruction, say) as a first-class value, `None` if its type is not
/// first-class (void, label, token, metadata).
///
/// inkwell turns an instruction into a typed value through `AnyValueEnum::new`, which
/// panics on token-typed values.
pub fn value<'ctx>(v: impl AsValueRef) -> Option<BasicValueEnum<'ctx>> {
    unsafe { basic(v.as_value_ref()) }
}

/// `v` as an inkwell value if its type is first-class (what `BasicValueEnum::new`
/// takes without panicking).
///
/// # Safety
/// `v` must be a valid value (or null: `None`).
unsafe fn basic<'ctx>(v: LLVMValueRef) -> Option<BasicValueEnum<'ctx>> {
    use LLVMTypeKind::*;
    if v.is_null() {
        return None;
    }
    let first_class = matches!(
        unsafe { LLVMGetTypeKind(LLVMTypeOf(v)) },
        LLVMHalfTypeKind
            | LLVMBFloatTypeKind
            | LLVMFloatTypeKind
            | LLVMDoubleTypeKind
            | LLVMX86_FP80TypeKind
            | LLVMFP128TypeKind
            | LLVMPPC_FP128TypeKind
            | LLVMIntegerTypeKind
            | LLVMPointerTypeKind
            | LLVMStructTypeKind
            | LLVMArrayTypeKind
            | LLVMVectorTypeKind
            | LLVMScalableVectorTypeKind
    );
    first_class.then(|| unsafe { BasicValueEnum::new(v) })
}

/// Address space of pointer-typed `v` (None if `v` is not a pointer).
///
/// inkwell's value-to-type path (`AnyValueEnum::new(..).get_type()`) panics on label,
/// token and metadata values, which this query may be given.
pub fn addr_space(v: impl AsValueRef) -> Option<u32> {
    unsafe {
        let ty = LLVMTypeOf(v.as_value_ref());
        if LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMPointerTypeKind {
            Some(LLVMGetPointerAddressSpace(ty))
        } else {
            None
        }
    }
}

/// Name of a value (empty if none).
///
/// inkwell names only typed values (`BasicValue::get_name`, `FunctionValue::get_name`),
/// reached through `AnyValueEnum::new`, which panics on some values this is given.
pub fn name(v: impl AsValueRef) -> String {
    unsafe {
        let mut len = 0usize;
        let p = LLVMGetValueName2(v.as_value_ref(), &mut len);
        if p.is_null() {
            return String::new();
        }
        String::from_utf8_lossy(std::slice::from_raw_parts(p as *const u8, len)).into_owned()
    }
}

/// The function a call instruction calls, if it is a direct call.
///
/// inkwell's `CallSiteValue::get_called_fn_value` also drops a callee whose type differs
/// from the call's function type; the pass must see such callees as before.
pub fn callee(call: InstructionValue<'_>) -> Option<FunctionValue<'_>> {
    unsafe {
        let f = LLVMGetCalledValue(call.as_value_ref());
        if f.is_null() || LLVMIsAFunction(f).is_null() {
            return None;
        }
        FunctionValue::new(f)
    }
}

/// All (instruction, operand index) pairs through which `v` is used (users that are
/// constants left out: an instruction has no others).
///
/// inkwell walks uses (`BasicValueUse`), but gives the user as an `AnyValueEnum` (which
/// panics on some users) and no operand index.
pub fn uses<'ctx>(v: impl AsValueRef) -> Vec<(InstructionValue<'ctx>, u32)> {
    let v = v.as_value_ref();
    let mut out = Vec::new();
    unsafe {
        let mut u = LLVMGetFirstUse(v);
        while !u.is_null() {
            let user = LLVMGetUser(u);
            if !LLVMIsAInstruction(user).is_null() {
                let n = LLVMGetNumOperands(user);
                for i in 0..n as u32 {
                    let pair = (InstructionValue::new(user), i);
                    if LLVMGetOperand(user, i) == v && !out.contains(&pair) {
                        out.push(pair);
                    }
                }
            }
            u = LLVMGetNextUse(u);
        }
    }
    out
}

/// Whether anything live uses `v`: an instruction, a global's initialiser, or a
/// constant expression that is itself so used.
///
/// inkwell's `get_first_use` also sees constant expressions whose own users were all
/// deleted: LLVM keeps them (`Constant::removeDeadConstantUsers` has no C API), so a
/// global a deleted function named through a cast still looks used.
pub fn is_used(v: impl AsValueRef) -> bool {
    unsafe fn live(v: LLVMValueRef) -> bool {
        unsafe {
            let mut u = LLVMGetFirstUse(v);
            while !u.is_null() {
                let user = LLVMGetUser(u);
                if LLVMIsAConstantExpr(user).is_null() || live(user) {
                    return true;
                }
                u = LLVMGetNextUse(u);
            }
        }
        false
    }
    unsafe { live(v.as_value_ref()) }
}

/// The function named by the first operand of metadata node `node` (if it names one)
/// and the bytes of its second (if it is a metadata string): an `!nvvm.annotations`
/// entry such as `!{ptr @k, !"kernel", i32 1}`. `None` when it has fewer than two
/// operands.
///
/// inkwell's `MetadataValue::get_node_values` wraps each operand with
/// `BasicMetadataValueEnum::new`, which crashes on the null operands that
/// `!nvvm.annotations` entries such as `!{null, !"align", i32 8}` carry, and its
/// `MetadataValue::new` asserts that the value is a node or a string, so it cannot be
/// used to ask whether an arbitrary operand is one.
pub fn annotation<'ctx>(
    node: MetadataValue<'ctx>,
) -> Option<(Option<FunctionValue<'ctx>>, Option<Vec<u8>>)> {
    let node = node.as_value_ref();
    unsafe {
        let n = LLVMGetMDNodeNumOperands(node) as usize;
        if n < 2 {
            return None;
        }
        let mut ops = vec![std::ptr::null_mut(); n];
        LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
        Some((FunctionValue::new(ops[0]), md_string(ops[1])))
    }
}

/// The bytes of `v` if it is a metadata string.
///
/// # Safety
/// `v` must be a valid value or null.
unsafe fn md_string(v: LLVMValueRef) -> Option<Vec<u8>> {
    unsafe {
        if v.is_null() || LLVMIsAMDString(v).is_null() {
            return None;
        }
        let mut len = 0u32;
        let p = LLVMGetMDString(v, &mut len);
        (!p.is_null()).then(|| std::slice::from_raw_parts(p as *const u8, len as usize).to_vec())
    }
}

/// Whether call instruction `call` calls inline assembly.
///
/// inkwell has no inline-assembly value kind nor an `LLVMIsAInlineAsm` query.
pub fn calls_inline_asm(call: InstructionValue) -> bool {
    unsafe { !LLVMIsAInlineAsm(LLVMGetCalledValue(call.as_value_ref())).is_null() }
}

/// Where debug location `loc` is: its file name (None where its scope has no file or the
/// file no name), line and column, then the same for each location it was inlined at,
/// innermost first.
///
/// inkwell's `DILocation` has line, column and scope but no inlined-at accessor (and a
/// raw location cannot be wrapped back into one: its fields are crate-private), and
/// neither `DIScope` nor `DIFile` gives the file's name.
pub fn debug_chain(loc: &inkwell::debug_info::DILocation) -> Vec<(Option<String>, u32, u32)> {
    use llvm_sys::debuginfo::*;
    let mut out = Vec::new();
    let mut loc = loc.as_mut_ptr();
    unsafe {
        while !loc.is_null() {
            let file = LLVMDIScopeGetFile(LLVMDILocationGetScope(loc));
            let mut len = 0u32;
            let f = if file.is_null() {
                std::ptr::null()
            } else {
                LLVMDIFileGetFilename(file, &mut len)
            };
            let name = (!f.is_null()).then(|| {
                String::from_utf8_lossy(std::slice::from_raw_parts(f as *const u8, len as usize))
                    .into_owned()
            });
            out.push((
                name,
                LLVMDILocationGetLine(loc),
                LLVMDILocationGetColumn(loc),
            ));
            loc = LLVMDILocationGetInlinedAt(loc);
        }
    }
    out
}

/// Links `src` into `dest` (`src` is destroyed); returns whether it failed.
///
/// inkwell's `Module::link_in_module` installs its own diagnostic handler on the context
/// to catch the linker's message and leaves it there, replacing clang's handler for the
/// rest of the compile.
pub fn link_modules<'ctx>(
    dest: &inkwell::module::Module<'ctx>,
    src: inkwell::module::Module<'ctx>,
) -> bool {
    let src = std::mem::ManuallyDrop::new(src);
    unsafe { llvm_sys::linker::LLVMLinkModules2(dest.as_mut_ptr(), src.as_mut_ptr()) != 0 }
}

/// `v` as a global variable, if it is one.
///
/// inkwell has no such query: its `GlobalValue` stands for functions, aliases and
/// variables alike and is made from a raw value without any check.
pub fn global_variable<'ctx>(v: impl AsValueRef) -> Option<GlobalValue<'ctx>> {
    let v = v.as_value_ref();
    unsafe { (!LLVMIsAGlobalVariable(v).is_null()).then(|| GlobalValue::new(v)) }
}

/// The successors of terminator `term`, in LLVM's successor order.
///
/// inkwell has no successor accessors (`LLVMGetNumSuccessors`, `LLVMGetSuccessor`): a
/// terminator's blocks are reachable only as its operands, which for a conditional `br`
/// come in reverse order (false, then true) and for `switch` interleaved with the case
/// values; the pass's block order (and so its output) follows successor order.
pub fn successors(term: InstructionValue<'_>) -> Vec<BasicBlock<'_>> {
    let term = term.as_value_ref();
    unsafe {
        (0..LLVMGetNumSuccessors(term))
            .map(|i| BasicBlock::new(LLVMGetSuccessor(term, i)).expect("a successor"))
            .collect()
    }
}

/// The number of operands of user `v` (an instruction or a constant expression).
///
/// inkwell counts operands only of instructions (`InstructionValue::get_num_operands`);
/// the pass also walks constant-expression GEPs and casts.
pub fn num_operands(v: impl AsValueRef) -> u32 {
    let n = unsafe { LLVMGetNumOperands(v.as_value_ref()) };
    u32::try_from(n).expect("an operand count is not negative")
}

/// The source element type of GEP `gep`, an instruction or a constant expression.
///
/// inkwell's `InstructionValue::get_gep_source_element_type` checks the opcode with
/// `LLVMGetInstructionOpcode`, which is no GEP for a constant-expression GEP (those
/// address globals, `__shared__` arrays among them).
pub fn gep_source_type<'ctx>(gep: impl AsValueRef) -> BasicTypeEnum<'ctx> {
    unsafe { BasicTypeEnum::new(LLVMGetGEPSourceElementType(gep.as_value_ref())) }
}

/// The function whose parameter `v` is, if `v` is a parameter.
///
/// inkwell has no argument value kind, no `LLVMIsAArgument` query and no
/// `LLVMGetParamParent`: a parameter is a plain `BasicValueEnum`, found only by
/// searching the parameters of a function already at hand.
pub fn param_parent<'ctx>(v: impl AsValueRef) -> Option<FunctionValue<'ctx>> {
    let v = v.as_value_ref();
    unsafe {
        if LLVMIsAArgument(v).is_null() {
            return None;
        }
        FunctionValue::new(LLVMGetParamParent(v))
    }
}

/// The opcode of `v` if it is a constant expression.
///
/// inkwell has no constant-expression value kind and no `LLVMGetConstOpcode`: its
/// opcodes are those of instructions (`InstructionValue::get_opcode`), while GEPs and
/// casts of globals (`__shared__` arrays among them) are constant expressions.
pub fn const_opcode(v: impl AsValueRef) -> Option<LLVMOpcode> {
    let v = v.as_value_ref();
    unsafe { (!LLVMIsAConstantExpr(v).is_null()).then(|| LLVMGetConstOpcode(v)) }
}

/// The condition of the conditional branch `br` (a `br i1 %c, ...`).
///
/// inkwell reads a branch's condition only as operand 0 and has no setter for it.
pub fn branch_condition(br: InstructionValue<'_>) -> IntValue<'_> {
    unsafe { IntValue::new(LLVMGetCondition(br.as_value_ref())) }
}

/// Makes `cond` the condition of the conditional branch `br`.
pub fn set_branch_condition<'ctx>(br: InstructionValue<'ctx>, cond: IntValue<'ctx>) {
    unsafe { LLVMSetCondition(br.as_value_ref(), cond.as_value_ref()) }
}

/// A poison value of type `ty` (a phi's incoming value on a path that never reads it).
///
/// inkwell has `get_poison` only per concrete type (`IntType`, `PointerType`, ...), not
/// on `BasicTypeEnum`.
pub fn poison(ty: BasicTypeEnum<'_>) -> BasicValueEnum<'_> {
    use inkwell::types::AsTypeRef;
    unsafe { BasicValueEnum::new(LLVMGetPoison(ty.as_type_ref())) }
}
