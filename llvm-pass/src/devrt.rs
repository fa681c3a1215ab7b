//! Links the device runtime (device-rt/cusafe_rt.c, compiled to NVPTX bitcode at build
//! time and embedded here) into an instrumented module, inlines its `__cusafe_fail` into
//! the cold blocks that call it and drops what the module does not use.

use crate::check::{FAIL_FN, SLOW_FN, TRAP_FN, TRAP_SLOT};
use crate::heap::{FREE_FN, MALLOC_FN};
use crate::ir::{uses, Ir};
use crate::shared::{SIZE_FN, START_FN};
use crate::sys::link_modules;
use inkwell::attributes::AttributeLoc;
use inkwell::memory_buffer::MemoryBuffer;
use inkwell::module::{Linkage, Module};
use inkwell::values::{BasicValue, FunctionValue, InstructionValue};

static RUNTIME_BC: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/cusafe_rt.bc"));

/// Attributes of the runtime's own compile that must not override the module's target.
const FOREIGN_ATTRS: [&str; 2] = ["target-cpu", "target-features"];

/// The runtime's entry points, callers before callees.
const ENTRIES: [&str; 8] = [
    MALLOC_FN,
    FREE_FN,
    FAIL_FN,
    TRAP_FN,
    SLOW_FN,
    "__cusafe_report",
    START_FN,
    SIZE_FN,
];

/// Links the runtime into `ir`'s module, makes its entry points internal, inlines every
/// call of [`FAIL_FN`] (unless `inline_cold` is off: the IR tests read the cold calls'
/// arguments) and deletes the entry points nothing calls.
pub fn link(ir: &Ir, inline_cold: bool) -> Result<(), String> {
    let buf = MemoryBuffer::create_from_memory_range(RUNTIME_BC, "cusafe_rt.bc");
    let rt = Module::parse_bitcode_from_buffer(&buf, ir.ctx)
        .map_err(|_| "cannot parse the embedded device runtime bitcode".to_string())?;
    drop(buf);
    // Use the instrumented module's target description.
    rt.set_data_layout(&ir.module().get_data_layout());
    rt.set_triple(&ir.module().get_triple());
    if link_modules(ir.module(), rt) {
        return Err("linking the device runtime failed".into());
    }
    for entry in ENTRIES {
        let f = function(ir, entry).ok_or_else(|| format!("device runtime lacks {entry}"))?;
        f.set_linkage(Linkage::Internal);
        for a in FOREIGN_ATTRS {
            f.remove_string_attribute(AttributeLoc::Function, a);
        }
    }
    // Collected first: inlining removes the calls.
    let inlined: Vec<InstructionValue> = if inline_cold {
        let fail = function(ir, FAIL_FN).expect("linked above");
        uses(fail).into_iter().map(|(call, _)| call).collect()
    } else {
        Vec::new()
    };
    for call in inlined {
        if !ir.inline_call(call) {
            return Err(format!("LLVM could not inline {FAIL_FN}"));
        }
    }
    // A trap slot no cold path loads would keep the trap entry alive.
    if let Some(slot) = ir.module().get_global(TRAP_SLOT) {
        if slot.as_pointer_value().get_first_use().is_none() {
            unsafe { slot.delete() };
        }
    }
    for entry in ENTRIES {
        let f = function(ir, entry).expect("linked above");
        if f.as_global_value()
            .as_pointer_value()
            .get_first_use()
            .is_none()
        {
            unsafe { f.delete() };
        }
    }
    Ok(())
}

fn function<'ctx>(ir: &Ir<'ctx>, name: &str) -> Option<FunctionValue<'ctx>> {
    ir.module().get_function(name)
}
