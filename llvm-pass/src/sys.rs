//! llvm-sys where inkwell has no API: each function here wraps a C API call that
//! inkwell 0.11 does not expose in the form the pass needs, with the reason beside it.
//! Everything else in the pass reaches LLVM through inkwell (`crate::ir`).

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
///
/// inkwell reads operands only of instructions (`InstructionValue::get_operand`), not of
/// other users such as constant expressions, and wraps them in an `Either` of value or
/// block.
pub fn operand(v: LLVMValueRef, i: u32) -> LLVMValueRef {
    unsafe { LLVMGetOperand(v, i) }
}

/// Address space of pointer-typed `v` (None if `v` is not a pointer).
///
/// inkwell's value-to-type path (`AnyValueEnum::new(..).get_type()`) panics on label,
/// token and metadata values, which this query may be given.
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
///
/// inkwell names only typed values (`BasicValue::get_name`, `FunctionValue::get_name`),
/// reached through `AnyValueEnum::new`, which panics on some values this is given.
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
///
/// inkwell's `CallSiteValue::get_called_fn_value` also drops a callee whose type differs
/// from the call's function type; the pass must see such callees as before.
pub fn callee(call: LLVMValueRef) -> Option<LLVMValueRef> {
    unsafe {
        let f = LLVMGetCalledValue(call);
        (!f.is_null() && !LLVMIsAFunction(f).is_null()).then_some(f)
    }
}

/// All (user, operand index) pairs through which `v` is used.
///
/// inkwell walks uses (`BasicValueUse`), but gives the user as an `AnyValueEnum` (which
/// panics on some users) and cannot read operands of users that are not instructions.
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

/// The operands of metadata node `node` (null where an operand is null).
///
/// inkwell's `MetadataValue::get_node_values` wraps each operand with
/// `BasicMetadataValueEnum::new`, which crashes on the null operands that
/// `!nvvm.annotations` entries such as `!{null, !"align", i32 8}` carry.
pub fn md_node_operands(node: LLVMValueRef) -> Vec<LLVMValueRef> {
    unsafe {
        let mut ops = vec![std::ptr::null_mut(); LLVMGetMDNodeNumOperands(node) as usize];
        LLVMGetMDNodeOperands(node, ops.as_mut_ptr());
        ops
    }
}

/// The bytes of `v` if it is a metadata string.
///
/// inkwell's `MetadataValue::new` asserts that the value is a node or a string, so it
/// cannot be used to ask whether an arbitrary operand is one.
pub fn md_string(v: LLVMValueRef) -> Option<Vec<u8>> {
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
pub fn calls_inline_asm(call: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAInlineAsm(LLVMGetCalledValue(call)).is_null() }
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

/// Whether `v` is a global variable.
///
/// inkwell has no such query: its `GlobalValue` stands for functions, aliases and
/// variables alike and is made from a raw value without any check.
pub fn is_global_variable(v: LLVMValueRef) -> bool {
    unsafe { !LLVMIsAGlobalVariable(v).is_null() }
}

/// The successors of terminator `term`, in LLVM's successor order.
///
/// inkwell has no successor accessors (`LLVMGetNumSuccessors`, `LLVMGetSuccessor`): a
/// terminator's blocks are reachable only as its operands, which for a conditional `br`
/// come in reverse order (false, then true) and for `switch` interleaved with the case
/// values; the pass's block order (and so its output) follows successor order.
pub fn successors(term: LLVMValueRef) -> Vec<LLVMBasicBlockRef> {
    unsafe {
        (0..LLVMGetNumSuccessors(term))
            .map(|i| LLVMGetSuccessor(term, i))
            .collect()
    }
}

/// The number of operands of user `v` (an instruction or a constant expression).
///
/// inkwell counts operands only of instructions (`InstructionValue::get_num_operands`);
/// the pass also walks constant-expression GEPs and casts.
pub fn num_operands(v: LLVMValueRef) -> u32 {
    u32::try_from(unsafe { LLVMGetNumOperands(v) }).expect("an operand count is not negative")
}

/// The source element type of GEP `gep`, an instruction or a constant expression.
///
/// inkwell's `InstructionValue::get_gep_source_element_type` checks the opcode with
/// `LLVMGetInstructionOpcode`, which is no GEP for a constant-expression GEP (those
/// address globals, `__shared__` arrays among them).
pub fn gep_source_type(gep: LLVMValueRef) -> LLVMTypeRef {
    unsafe { LLVMGetGEPSourceElementType(gep) }
}

/// The function whose parameter `v` is, if `v` is a parameter.
///
/// inkwell has no argument value kind, no `LLVMIsAArgument` query and no
/// `LLVMGetParamParent`: a parameter is a plain `BasicValueEnum`, found only by
/// searching the parameters of a function already at hand.
pub fn param_parent(v: LLVMValueRef) -> Option<LLVMValueRef> {
    unsafe { (!LLVMIsAArgument(v).is_null()).then(|| LLVMGetParamParent(v)) }
}

/// The opcode of `v` if it is a constant expression.
///
/// inkwell has no constant-expression value kind and no `LLVMGetConstOpcode`: its
/// opcodes are those of instructions (`InstructionValue::get_opcode`), while GEPs and
/// casts of globals (`__shared__` arrays among them) are constant expressions.
pub fn const_opcode(v: LLVMValueRef) -> Option<LLVMOpcode> {
    unsafe { (!LLVMIsAConstantExpr(v).is_null()).then(|| LLVMGetConstOpcode(v)) }
}

/// The bit width of `v`'s type if it is an integer type.
///
/// inkwell's value-to-type path (`AnyValueEnum::new(..).get_type()`) panics on label,
/// token and metadata values, which this query may be given.
pub fn int_width(v: LLVMValueRef) -> Option<u32> {
    unsafe {
        let ty = LLVMTypeOf(v);
        (LLVMGetTypeKind(ty) == LLVMTypeKind::LLVMIntegerTypeKind).then(|| LLVMGetIntTypeWidth(ty))
    }
}
