//! The device heap: every call of `malloc` in device code becomes a call of device-rt's
//! [`MALLOC_FN`] and every call of `free` one of [`FREE_FN`] with a check site, so that
//! in-kernel allocations (`new` and `delete` of clang's CUDA headers call the two) are
//! tagged blocks of the arena (`cusafe_format::devheap`) with exact bounds and the
//! usual checks, and a bad `free` is reported at its line.
//!
//! A module that allocates gets the marker [`MARKER_SYMBOL`], by which the runtime
//! learns at a kernel's first launch that the arena must be mapped.

use crate::ir::{callee, instructions, name, Ir};
use crate::sites::Sites;
use cusafe_format::devheap::MARKER_SYMBOL;
use inkwell::types::FunctionType;
use inkwell::values::{
    BasicMetadataValueEnum, BasicValue, CallSiteValue, FunctionValue, InstructionOpcode,
};

/// device-rt's `malloc`: an arena block, or the real `malloc`'s when the arena cannot
/// serve the size.
pub const MALLOC_FN: &str = "__cusafe_malloc";
/// device-rt's `free`: checks the pointer (double and invalid frees are reported at the
/// site), then queues the block or calls the real `free`.
pub const FREE_FN: &str = "__cusafe_free";

/// What [`instrument`] rewrote.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rewritten {
    /// Calls of `malloc`.
    pub mallocs: usize,
    /// Calls of `free`.
    pub frees: usize,
}

/// Sends the calls of `malloc` and `free` in `functions` to device-rt; marks the module
/// when it allocates.
pub fn instrument<'ctx>(
    ir: &Ir<'ctx>,
    functions: &[FunctionValue<'ctx>],
    sites: &mut Sites<'ctx>,
) -> Rewritten {
    let mut done = Rewritten::default();
    let malloc_fn = declare(ir, MALLOC_FN, ir.ptr.fn_type(&[ir.i64.into()], false));
    let free_ty = ir
        .ctx
        .void_type()
        .fn_type(&[ir.ptr.into(), ir.ptr.into()], false);
    let free_fn = declare(ir, FREE_FN, free_ty);
    for &f in functions {
        for inst in instructions(f) {
            if inst.get_opcode() != InstructionOpcode::Call {
                continue;
            }
            let Some(target) = callee(inst) else {
                continue;
            };
            let (to, site) = match name(target).as_str() {
                "malloc" => (malloc_fn, None),
                "free" => {
                    let text = sites.text(ir, f, inst, "");
                    (free_fn, Some(sites.site(ir, 0, text)))
                }
                _ => continue,
            };
            let call = CallSiteValue::try_from(inst).expect("a call");
            if call.count_arguments() != 1 {
                continue;
            }
            ir.at(inst);
            let arg = inst
                .get_operand(0)
                .and_then(|o| o.value())
                .expect("an argument");
            let mut args: Vec<BasicMetadataValueEnum> = vec![arg.into()];
            args.extend(site.map(BasicMetadataValueEnum::from));
            let callee_ptr = to.0.as_global_value().as_pointer_value();
            let call =
                ir.b.build_indirect_call(to.1, callee_ptr, &args, "")
                    .expect("positioned");
            let call = crate::ir::call_instruction(call);
            if let Some(loc) = inst.get_debug_location() {
                call.set_debug_location(Some(loc));
            }
            if site.is_none() {
                let old = name(inst);
                inst.set_name("").expect("malloc returns a value");
                call.set_name(&old).expect("malloc returns a value");
                inst.replace_all_uses_with(&call);
                done.mallocs += 1;
            } else {
                done.frees += 1;
            }
            inst.erase_from_basic_block();
        }
    }
    for (f, _) in [malloc_fn, free_fn] {
        if f.as_global_value()
            .as_pointer_value()
            .get_first_use()
            .is_none()
        {
            unsafe { f.delete() };
        }
    }
    if done.mallocs > 0 {
        ir.mark(MARKER_SYMBOL);
    }
    done
}

/// The function `name` of type `ty` and that type.
fn declare<'ctx>(
    ir: &Ir<'ctx>,
    name: &str,
    ty: FunctionType<'ctx>,
) -> (FunctionValue<'ctx>, FunctionType<'ctx>) {
    (ir.declare(name, ty), ty)
}
