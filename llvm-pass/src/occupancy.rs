//! Loop-clean kernels (`CUSAFE_PASS_LOOP_CLEAN`): kernels with a loop whose loops run
//! no check after instrumenting. Their loops run the plain build's code, so the plain
//! build's register count is enough there, and what the checks add is needed only
//! outside loops, in code each thread runs once. `cusafe-clang++` names the file, then
//! caps the registers of a compile whose kernels above the plain counts are all listed
//! (ptxas spills in once-run code instead of lowering every loop's occupancy; the
//! wrapper's `register_cap` module, docs/pass.md "Loop-clean kernels").

use std::io::Write;

use inkwell::basic_block::BasicBlock;
use inkwell::values::{FunctionValue, InstructionOpcode};
use llvm_sys::LLVMOpcode;

use crate::dom::Cfg;
use crate::sys;

/// Whether instrumented kernel `f` has a loop, no loop block that reports or branches
/// to a block that reports (every check's branch goes to such a block), and no call of
/// a function with a body (a callee's registers count in the kernel).
pub fn loop_clean(f: FunctionValue) -> bool {
    let cfg = Cfg::of(f);
    if cfg.loops.is_empty() {
        return false;
    }
    cfg.blocks.iter().enumerate().all(|(i, &bb)| {
        if calls_body(bb) {
            return false;
        }
        if cfg.loops_of(i).next().is_none() {
            return true;
        }
        let successors = bb.get_terminator().map(sys::successors).unwrap_or_default();
        !reports(bb) && !successors.into_iter().any(reports)
    })
}

/// Whether `bb` calls a function with a body other than the device runtime's.
fn calls_body(bb: BasicBlock) -> bool {
    bb.get_instructions()
        .filter(|i| i.get_opcode() == InstructionOpcode::Call)
        .filter_map(sys::callee)
        .any(|c| !c.as_global_value().is_declaration() && !is_runtime(c))
}

/// Whether `bb` is a report path: it calls the device runtime, or it calls anything
/// (a trap-mode check calls the report through a pointer) and ends the thread.
fn reports(bb: BasicBlock) -> bool {
    let mut calls = bb
        .get_instructions()
        .filter(|i| i.get_opcode() == InstructionOpcode::Call);
    let ends = bb
        .get_terminator()
        .is_some_and(|t| crate::ir::opcode(t) == Some(LLVMOpcode::LLVMUnreachable));
    calls.any(|c| ends || sys::callee(c).is_some_and(is_runtime))
}

fn is_runtime(f: FunctionValue) -> bool {
    crate::ir::name(f).starts_with("__cusafe")
}

/// Appends `kernels` (mangled names, one per line) to the file `path` names; a failure
/// is said on stderr and the compile goes on (the file only enables register caps).
pub fn report(path: &std::ffi::OsStr, kernels: &[String]) {
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut file| {
            let text: String = kernels.iter().map(|k| format!("{k}\n")).collect();
            file.write_all(text.as_bytes())
        });
    if let Err(e) = written {
        eprintln!(
            "cusafe: warning: cannot append to {}={}: {e}; no kernel of this compile gets a register cap (check that its directory exists and is writable)",
            cusafe_format::pass_env::LOOP_CLEAN,
            path.to_string_lossy()
        );
    }
}
