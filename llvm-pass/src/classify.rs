//! The one place that decides what gets checked, and against what.
//!
//! An access is checked against its *root*: the pointer its address was derived from by
//! a chain of GEPs and address-space casts.
//! * Roots that are objects known at compile time (local arrays, `__shared__` arrays,
//!   the dynamic shared window, `__device__` globals) are checked against the object's
//!   size: no header load, and no check at all when a constant offset proves the access
//!   in bounds (the static fast path).
//! * Every other root (arguments, loaded pointers, phis, ...) is checked at run time
//!   against the block its tag names. Checking against the root rather than the
//!   address catches non-linear jumps into another live block.

use crate::ir::{addr_space, opcode, operand, Ir, AS_CONST, AS_GENERIC, AS_GLOBAL, AS_SHARED};
use crate::sys::{const_opcode, gep_source_type, global_variable, num_operands, param_parent};
use cusafe_format::report::{
    OBJECT_DYNAMIC_SHARED, OBJECT_GLOBAL_VAR, OBJECT_LOCAL, OBJECT_SHARED,
};
use inkwell::attributes::{Attribute, AttributeLoc};
use inkwell::types::BasicTypeEnum;
use inkwell::values::{
    AsValueRef, BasicValue, BasicValueEnum, FunctionValue, PhiValue, PointerValue,
};
use llvm_sys::LLVMOpcode;
use std::collections::HashSet;

/// Name of the `inttoptr` that gives a re-laid-out local its tagged pointer (`locals`).
pub const TAGGED_LOCAL: &str = "cusafe.tagged";

/// Size of a statically known object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjSize {
    /// Known at compile time.
    Const(u64),
    /// The dynamic shared memory of the launch (`%dynamic_smem_size`).
    DynamicShared,
}

/// A statically known object an access is checked against.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Object {
    /// Its size.
    pub size: ObjSize,
    /// `OBJECT_*` space flag.
    pub space: u32,
    /// Its name as the module has it (globals keep their mangled names; locals are
    /// usually nameless in optimised code).
    pub name: String,
}

/// What to do with an access or an arithmetic result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Decision<'ctx> {
    /// Check against the heap block of `root` at run time.
    Heap {
        /// Pointer the address was derived from.
        root: PointerValue<'ctx>,
    },
    /// Check against a statically known object starting at `root`.
    Object {
        /// The object's start.
        root: PointerValue<'ctx>,
        /// The object.
        object: Object,
    },
    /// Provably in bounds of a statically known object: no check.
    Proven,
    /// Nothing to check against (constant addresses, objects of unknown size).
    Unknown,
}

/// Strips GEPs and casts (instructions and constant expressions) down to the root.
pub fn root_of(mut v: BasicValueEnum) -> BasicValueEnum {
    while let Some(next) = strip_one(v) {
        v = next;
    }
    v
}

/// Strips address-space casts and bitcasts (instructions and constant expressions), not
/// GEPs: `v` as the same address.
pub fn strip_casts(mut v: BasicValueEnum) -> BasicValueEnum {
    while matches!(
        op_of(v),
        Some(LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast)
    ) {
        v = operand(v, 0).expect("a cast's operand");
    }
    v
}

/// A pointer without its address-space casts and bitcasts ([`strip_casts`]).
pub fn strip_pointer_casts(p: PointerValue) -> PointerValue {
    strip_casts(p.into()).into_pointer_value()
}

/// The root a pointer derives from ([`root_of`]): a pointer too.
pub fn pointer_root(p: PointerValue) -> PointerValue {
    root_of(p.into()).into_pointer_value()
}

/// The opcode of an instruction or constant expression.
pub fn op_of(v: impl AsValueRef + Copy) -> Option<LLVMOpcode> {
    opcode(v).or_else(|| const_opcode(v))
}

fn strip_one(v: BasicValueEnum) -> Option<BasicValueEnum> {
    match op_of(v) {
        Some(
            LLVMOpcode::LLVMGetElementPtr | LLVMOpcode::LLVMAddrSpaceCast | LLVMOpcode::LLVMBitCast,
        ) => operand(v, 0),
        _ => None,
    }
}

/// The value of a constant integer of at most 64 bits (sign-extended).
pub fn const_int(v: BasicValueEnum) -> Option<i64> {
    match v {
        BasicValueEnum::IntValue(i) => i.get_sign_extended_constant(),
        _ => None,
    }
}

/// [`const_int`] of operand `i` of `v` (`None` where it has none).
pub fn const_operand(v: impl AsValueRef, i: u32) -> Option<i64> {
    const_int(operand(v, i)?)
}

/// Byte offset a constant-index GEP adds, or `None` if an index is not constant.
pub fn gep_offset(ir: &Ir, gep: BasicValueEnum) -> Option<i64> {
    // An instruction or a constant expression: the `sys` queries take both.
    let mut ty = gep_source_type(gep);
    let layout = ir.layout();
    let first = const_operand(gep, 1)?;
    let mut off = first.checked_mul(layout.get_abi_size(&ty) as i64)?;
    for i in 2..num_operands(gep) {
        let idx = const_operand(gep, i)?;
        if let BasicTypeEnum::StructType(st) = ty {
            off = off.checked_add(layout.offset_of_element(&st, idx as u32)? as i64)?;
            ty = st.get_field_type_at_index(idx as u32)?;
        } else {
            ty = match ty {
                BasicTypeEnum::ArrayType(a) => a.get_element_type(),
                BasicTypeEnum::VectorType(v) => v.get_element_type(),
                _ => panic!("a GEP steps into arrays, vectors and structs only"),
            };
            off = off.checked_add(idx.checked_mul(layout.get_abi_size(&ty) as i64)?)?;
        }
    }
    Some(off)
}

/// Offset of `addr` from its root when every step is constant.
pub fn const_offset(ir: &Ir, mut addr: BasicValueEnum) -> Option<i64> {
    let mut off = 0i64;
    while let Some(next) = strip_one(addr) {
        if op_of(addr) == Some(LLVMOpcode::LLVMGetElementPtr) {
            off = off.checked_add(gep_offset(ir, addr)?)?;
        }
        addr = next;
    }
    Some(off)
}

/// The pointer an integer was computed from, when exactly one pointer flows into it:
/// `ptrtoint p`, then adds or subtracts of integers that come from no pointer, and
/// `and`/`or`/`xor` with constants (aligning up or down, setting low bits). This is
/// how code carves one buffer out of another through `uintptr_t`
/// (`(p + 15) & ~15`). Anything else (two pointers mixed, loaded integers that might
/// be pointers) has no single provenance.
fn int_provenance(v: BasicValueEnum) -> Option<BasicValueEnum> {
    provenance_within(v, 16)
}

fn provenance_within(v: BasicValueEnum, depth: u32) -> Option<BasicValueEnum> {
    let depth = depth.checked_sub(1)?;
    let up = |x| provenance_within(x, depth);
    let pointer_free = |x| !mentions_pointer(x, depth);
    let constant = |x| const_int(x).is_some();
    let op = op_of(v)?;
    let a = operand(v, 0)?;
    if op == LLVMOpcode::LLVMPtrToInt {
        return Some(a);
    }
    let b = operand(v, 1)?;
    match op {
        LLVMOpcode::LLVMAdd if pointer_free(b) => up(a),
        LLVMOpcode::LLVMAdd if pointer_free(a) => up(b),
        LLVMOpcode::LLVMSub if pointer_free(b) => up(a),
        LLVMOpcode::LLVMAnd | LLVMOpcode::LLVMOr | LLVMOpcode::LLVMXor if constant(b) => up(a),
        LLVMOpcode::LLVMAnd | LLVMOpcode::LLVMOr | LLVMOpcode::LLVMXor if constant(a) => up(b),
        _ => None,
    }
}

/// Whether integer arithmetic on `v` reaches a `ptrtoint` (conservatively true when
/// the search runs out of depth).
fn mentions_pointer(v: BasicValueEnum, depth: u32) -> bool {
    let Some(depth) = depth.checked_sub(1) else {
        return true;
    };
    match op_of(v) {
        Some(LLVMOpcode::LLVMPtrToInt) => true,
        Some(
            LLVMOpcode::LLVMAdd
            | LLVMOpcode::LLVMSub
            | LLVMOpcode::LLVMMul
            | LLVMOpcode::LLVMShl
            | LLVMOpcode::LLVMLShr
            | LLVMOpcode::LLVMAShr
            | LLVMOpcode::LLVMAnd
            | LLVMOpcode::LLVMOr
            | LLVMOpcode::LLVMXor,
        ) => [0, 1].into_iter().any(|i| {
            let x = operand(v, i).expect("a binary operator's operand");
            mentions_pointer(x, depth)
        }),
        Some(LLVMOpcode::LLVMZExt | LLVMOpcode::LLVMSExt | LLVMOpcode::LLVMTrunc) => {
            mentions_pointer(operand(v, 0).expect("a cast's operand"), depth)
        }
        _ => false,
    }
}

/// The root of `addr`, looking through `inttoptr` of integer arithmetic on a single
/// pointer ([`int_provenance`]) and through phis and selects whose incoming pointers
/// all derive from one object ([`merged_object`]); the flag says whether it did (the
/// offset from the root is then not known at compile time). The pass's own tagged
/// locals are roots.
fn root_through_ints(addr: PointerValue) -> (PointerValue, bool) {
    let mut root = pointer_root(addr);
    let mut through = false;
    loop {
        let next = match op_of(root) {
            Some(LLVMOpcode::LLVMIntToPtr) if !crate::ir::name(root).starts_with(TAGGED_LOCAL) => {
                let int = operand(root, 0).expect("an inttoptr's operand");
                int_provenance(int).map(|p| pointer_root(p.into_pointer_value()))
            }
            Some(LLVMOpcode::LLVMPHI | LLVMOpcode::LLVMSelect) => merged_object(root.into()),
            _ => None,
        };
        let Some(next) = next else {
            break;
        };
        root = next;
        through = true;
    }
    (root, through)
}

/// The one alloca or global every pointer flowing into phi or select `v` derives from
/// (through GEPs, casts and further phis and selects, loops included), if there is one.
/// Such a merge does not let the object escape: the pointer stays inside it, and an
/// access through it is checked against the object. Gives up past 64 merges.
pub fn merged_object(v: BasicValueEnum) -> Option<PointerValue> {
    let mut seen = HashSet::new();
    let mut object = None;
    merge_into(v, &mut seen, &mut object).then_some(object?)
}

fn merge_into<'ctx>(
    v: BasicValueEnum<'ctx>,
    seen: &mut HashSet<BasicValueEnum<'ctx>>,
    object: &mut Option<PointerValue<'ctx>>,
) -> bool {
    let r = root_of(v);
    let incoming: Vec<BasicValueEnum> = match op_of(r) {
        Some(LLVMOpcode::LLVMPHI) => {
            let phi = r.as_instruction_value().expect("a phi");
            let phi = PhiValue::try_from(phi).expect("a phi");
            (0..phi.count_incoming())
                .map(|i| phi.get_incoming(i).expect("an incoming value").0)
                .collect()
        }
        Some(LLVMOpcode::LLVMSelect) => [1, 2]
            .map(|i| operand(r, i).expect("a select's operand"))
            .to_vec(),
        _ => {
            let is_object =
                opcode(r) == Some(LLVMOpcode::LLVMAlloca) || global_variable(r).is_some();
            let BasicValueEnum::PointerValue(p) = r else {
                return false;
            };
            return is_object && *object.get_or_insert(p) == p;
        }
    };
    if !seen.insert(r) {
        return true; // already being merged (a loop): its other inputs decide
    }
    seen.len() <= 64 && incoming.into_iter().all(|x| merge_into(x, seen, object))
}

/// The object `root` is, if it is one whose size the pass can know.
fn object_of(ir: &Ir, root: PointerValue) -> Option<Object> {
    if let Some(alloca) = root
        .as_instruction()
        .filter(|i| opcode(*i) == Some(LLVMOpcode::LLVMAlloca))
    {
        let count = const_operand(alloca, 0)?;
        let ty = alloca.get_allocated_type().expect("an alloca");
        let size = (count as u64).checked_mul(ir.layout().get_abi_size(&ty))?;
        return Some(Object {
            size: ObjSize::Const(size),
            space: OBJECT_LOCAL,
            name: crate::ir::name(root),
        });
    }
    let ty = global_variable(root)?.get_value_type();
    let bytes = ir.layout().get_abi_size(&ty);
    let name = crate::ir::name(root);
    let space = match addr_space(root) {
        Some(AS_SHARED) if bytes == 0 => {
            return Some(Object {
                size: ObjSize::DynamicShared,
                space: OBJECT_DYNAMIC_SHARED,
                name,
            })
        }
        Some(AS_SHARED) => OBJECT_SHARED,
        Some(AS_GLOBAL | AS_CONST | AS_GENERIC) => OBJECT_GLOBAL_VAR,
        _ => return None,
    };
    (bytes > 0).then_some(Object {
        size: ObjSize::Const(bytes),
        space,
        name,
    })
}

/// Decides how an access of `len` bytes (if known) through `addr` is checked.
pub fn decide<'ctx>(ir: &Ir, addr: PointerValue<'ctx>, len: Option<u64>) -> Decision<'ctx> {
    let (object_root, through_ints) = root_through_ints(addr);
    if let Some(object) = object_of(ir, object_root) {
        let off = (!through_ints)
            .then(|| const_offset(ir, addr.into()))
            .flatten();
        if let (ObjSize::Const(size), Some(len), Some(off)) = (object.size, len, off) {
            if off >= 0 && (off as u64).checked_add(len).is_some_and(|end| end <= size) {
                return Decision::Proven;
            }
        }
        return Decision::Object {
            root: object_root,
            object,
        };
    }
    // Heap roots keep the pointer the address was formed from: its tag names the block.
    let root = pointer_root(addr);
    let heap_space = |v: PointerValue| matches!(addr_space(v), Some(AS_GENERIC | AS_GLOBAL));
    let constant = || root.is_const() || opcode(root) == Some(LLVMOpcode::LLVMAlloca);
    if heap_space(addr) && heap_space(root) && !constant() {
        Decision::Heap { root }
    } else {
        Decision::Unknown
    }
}

/// Whether `root` can only be a shared or constant address seen through the generic
/// space: it is one (after casts and GEPs), or a phi or select of such values and of
/// itself (a pointer stepping through a `__shared__` array). Such a pointer never
/// carries a tag (escaping `__shared__` arrays became pseudo-pointers before the rule
/// runs), so neither the pointer-arithmetic rule nor a header can
/// apply to it: its checks take the foreign window.
pub fn never_tagged(root: PointerValue) -> bool {
    let mut seen = HashSet::new();
    let mut work: Vec<BasicValueEnum> = vec![root.into()];
    while let Some(v) = work.pop() {
        let v = root_of(v);
        if !seen.insert(v) {
            continue;
        }
        if seen.len() > 64 {
            return false;
        }
        if matches!(addr_space(v), Some(AS_SHARED | AS_CONST)) {
            continue;
        }
        let incoming = match op_of(v) {
            Some(LLVMOpcode::LLVMPHI) => 0..num_operands(v),
            Some(LLVMOpcode::LLVMSelect) => 1..3,
            _ => return false,
        };
        work.extend(incoming.filter_map(|i| operand(v, i)));
    }
    true
}

/// Whether the root of a heap check may hold a pseudo-pointer (`format::pseudo`) at run
/// time, in a module where escaping locals or `__shared__` arrays make them. Values the
/// host passed in cannot: a kernel's pointer arguments and pointers loaded from a
/// kernel's by-value arguments or from `__constant__` memory (the device cannot write
/// either). Anything else might have been stored or passed by code that took an
/// object's address.
pub fn may_be_pseudo(root: PointerValue, kernels: &[FunctionValue]) -> bool {
    let kernel_arg = |v: BasicValueEnum| param_parent(v).is_some_and(|f| kernels.contains(&f));
    if kernel_arg(root.into()) {
        return false;
    }
    if op_of(root) != Some(LLVMOpcode::LLVMLoad) {
        return true;
    }
    let from = root_of(operand(root, 0).expect("a load's address"));
    let host_written = addr_space(from) == Some(AS_CONST) || (kernel_arg(from) && is_byval(from));
    !host_written
}

/// Whether argument `arg` is passed by value (`byval`).
fn is_byval(arg: BasicValueEnum) -> bool {
    let f = param_parent(arg).expect("an argument");
    let index = (0..f.count_params())
        .find(|&i| f.get_nth_param(i) == Some(arg))
        .expect("an argument of its parent");
    let kind = Attribute::get_named_enum_kind_id("byval");
    f.get_enum_attribute(AttributeLoc::Param(index), kind)
        .is_some()
}
