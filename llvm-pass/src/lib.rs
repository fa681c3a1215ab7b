//! cusafe's LLVM pass plugin.
//!
//! clang loads `libcusafe_pass.so` with `-fpass-plugin` (device side only); the C++ shim
//! (`shim/plugin.cpp`) registers a module pass at OptimizerLast (and as `cusafe` for
//! `opt -passes=cusafe`) that calls [`cusafe_run_on_module`]. On NVPTX modules it
//! instruments every global-memory access (see `docs/pass.md`) and links the device
//! runtime; other modules are left alone. Fuzz builds first get device edge coverage
//! ([`coverage`], `CUSAFE_PASS_COVERAGE`); `CUSAFE_PASS_CHECKS=0` leaves the coverage
//! alone (no checks).
//!
//! Flow per function (AddressSanitizer's shape): collect the interesting operands and
//! escaping pointer arithmetic first ([`collect`], [`arith::collect`]), with
//! [`classify`] the one place that decides what is checked; then plan the checks
//! ([`elim`] decides which, where and grouped how) and instrument ([`check`] emits the
//! plan, [`shape`] a group's range).
//!
//! The pass reaches LLVM through inkwell: [`ir::Ir`] holds the module (borrowed, never
//! disposed), its context, the pass's one builder and the common types as inkwell
//! objects. The few C API calls inkwell has no API for sit in [`sys`], each with the
//! reason; what only LLVM's C++ API offers (splitting, inlining, ScalarEvolution, ...)
//! is the shim's ([`ffi`]). No module but [`sys`] calls llvm-sys, and values cross
//! between modules as inkwell values (`InstructionValue`, `PointerValue`, ...); raw
//! handles appear only where [`sys`] and the shim are called.

mod arith;
mod base;
mod box_copy;
mod check;
mod classify;
mod collect;
mod coverage;
mod devrt;
mod dom;
mod elim;
mod ffi;
mod heap;
mod intervals;
mod ir;
mod kernels;
mod launch;
mod lift;
mod locals;
mod loops;
mod occupancy;
mod options;
mod plugin;
mod remat;
mod rtpage;
mod shape;
mod shared;
mod sink;
mod sites;
mod stack;
mod stats;
mod strip;
mod sys;
mod tile;

use inkwell::module::Module;
use inkwell::values::FunctionValue;
use ir::Ir;
use llvm_sys::prelude::*;
use options::PassOptions;
use std::mem::ManuallyDrop;

/// Entry point called by the C++ shim for each module. Returns whether the module changed.
///
/// # Safety
/// `m` must be a valid module owned by the caller; it is borrowed, never disposed.
#[no_mangle]
pub unsafe extern "C" fn cusafe_run_on_module(m: LLVMModuleRef) -> bool {
    if !unsafe { is_nvptx(m) } {
        return false;
    }
    let opts = options();
    let ir = unsafe { Ir::new(m) };
    if let Err(e) = instrument_module(&ir, &opts) {
        // No Result crosses into LLVM: say what failed and stop the compile.
        eprintln!("cusafe: error: {e}; please report this with the input file (compile with --cusafe-no-instrument to build without cusafe)");
        std::process::exit(70);
    }
    true
}

/// Entry point called by the C++ shim at the start of the pipeline: gives kernels their
/// launch-time window parameters (`launch`). Returns whether the module changed.
///
/// # Safety
/// `m` must be a valid module owned by the caller; it is borrowed, never disposed.
#[no_mangle]
pub unsafe extern "C" fn cusafe_windows_on_module(m: LLVMModuleRef) -> bool {
    if !unsafe { is_nvptx(m) } {
        return false;
    }
    if !options().launch_windows() {
        return false;
    }
    let ir = unsafe { Ir::new(m) };
    launch::add_windows(&ir, &kernels::kernels(&ir)) > 0
}

/// Reads the pass's options from the `CUSAFE_PASS_*` variables. A bad value stops the
/// compile here, at the pass's first contact with a device module, with one line naming
/// the variable and its accepted values (exit status 64, clang then says the frontend
/// failed): never a panic inside clang, never a guess.
fn options() -> PassOptions {
    PassOptions::from_env().unwrap_or_else(|e| {
        eprintln!("cusafe: error: {e}");
        std::process::exit(64);
    })
}

/// Whether module `m` is for NVPTX (its target triple says so).
///
/// # Safety
/// `m` must be a valid module; it is borrowed, never disposed.
unsafe fn is_nvptx(m: LLVMModuleRef) -> bool {
    let module = ManuallyDrop::new(unsafe { Module::new(m) });
    let triple = module.get_triple();
    triple.as_str().to_string_lossy().starts_with("nvptx")
}

fn defined_functions<'ctx>(ir: &Ir<'ctx>) -> Vec<FunctionValue<'ctx>> {
    ir.module()
        .get_functions()
        .filter(|f| !f.as_global_value().is_declaration())
        .filter(|&f| !ir::name(f).starts_with("__cusafe"))
        .collect()
}

fn instrument_module(ir: &Ir, opts: &PassOptions) -> Result<(), String> {
    let want_stats = opts.stats;
    // Kernels have their windows from the start of the pipeline (clang); `opt
    // -passes=cusafe` runs this pass alone, which adds them here.
    if opts.launch_windows() {
        launch::add_windows(ir, &kernels::kernels(ir));
    }
    // Index groups need the optimized IR: added here, at the end of the pipeline.
    if opts.index_groups() {
        launch::add_index_groups(ir, &kernels::kernels(ir));
    }
    let kernels = kernels::kernels(ir);
    let functions = defined_functions(ir);
    let stat_line = |f: FunctionValue, s: &stats::Stats| {
        let kind = if kernels.contains(&f) {
            "kernel"
        } else {
            "device function"
        };
        eprintln!("{}", s.line(kind, &ir::name(f)));
    };
    // Coverage first, on the program's blocks only: no check or cold path exists yet,
    // and the device runtime (and libdevice's `__nv_*`, when not inlined) get none.
    let mut points = std::collections::HashMap::new();
    if let Some(mode) = opts.coverage {
        let file = coverage::source_file(ir);
        for &f in functions
            .iter()
            .filter(|&&f| !ir::name(f).starts_with("__nv_"))
        {
            points.insert(f, coverage::instrument(ir, f, mode, &file));
        }
    }
    if !opts.checks {
        if want_stats {
            for &f in &functions {
                let s = stats::Stats {
                    coverage: points.get(&f).copied().unwrap_or(0),
                    ..Default::default()
                };
                stat_line(f, &s);
            }
        }
        rtpage::finish(ir);
        return verify_if_asked(ir, opts);
    }
    let windows = launch::windows(ir, &kernels);
    let slots = launch::index_slots(ir, &kernels);
    let mut sites = sites::Sites::default();
    heap::instrument(ir, &functions, &mut sites);
    if stack::dynamic(&functions) {
        ir.mark(cusafe_format::stack::MARKER_SYMBOL);
    }
    let mut replaced = check::Replaced::new();
    let mut tagged_locals = 0;
    let mut scoped = std::collections::HashSet::new();
    for &f in &functions {
        let l = locals::instrument(ir, f);
        tagged_locals += l.objects;
        if l.scope_marks > 0 {
            scoped.insert(f);
        }
    }
    let tagged_shared = shared::instrument(ir, &functions);
    let cold = elim::ColdPaths {
        pseudo: tagged_locals + tagged_shared > 0,
        kernels: kernels.clone(),
        recover: opts.recover_build(),
    };
    let checker = check::Checker::new(ir, cold.clone(), windows);
    let optimise = opts.optimise;
    // Loop-clean kernels are listed for register caps in trap-mode builds only (a
    // recover-mode cold path rejoins the loop it left).
    let loop_clean_report = std::env::var_os(cusafe_format::pass_env::LOOP_CLEAN)
        .filter(|p| !p.is_empty() && !opts.recover_build());
    let mut loop_clean = Vec::new();
    if tagged_locals > 0 {
        for &k in &kernels {
            locals::reset_depth_at_entry(ir, k);
        }
    }
    for f in functions {
        if optimise {
            loops::simplify(f);
        }
        strip::strip_exits(ir, f);
        if optimise && opts.lifts() {
            sink::sink_tile_stores(ir, f, kernels.contains(&f));
            lift::speculate(ir, f);
        }
        if optimise && opts.box_copy && opts.coverage.is_none() && kernels.contains(&f) {
            if let Some(c) = box_copy::copy(ir, f) {
                if want_stats {
                    eprintln!(
                        "cusafe: kernel {}: a copy for {} proves {} more accesses in bounds (other blocks run the checked copy)",
                        ir::name(f),
                        c.shape,
                        c.proven
                    );
                }
            }
        }
        let insts = ir::instructions(f);
        let cfg = dom::Cfg::of(f);
        let mut found = collect::collect(ir, &insts);
        found.keep_last_byte(|i| {
            cfg.block_of(i)
                .is_some_and(|b| cfg.loops_of(b).next().is_some())
        });
        let scoped = scoped.contains(&f);
        let plan = elim::plan(ir, &cfg, &found.accesses, &cold, scoped, &slots, opts);
        let escapes = arith::collect(ir, &insts);
        arith::instrument(ir, &escapes);
        let mut emit = check::FnEmit::new(ir, &mut sites, &mut replaced, f, &found.accesses, &plan);
        for &i in &plan.order {
            checker.instrument(&mut emit, i);
        }
        checker.emit_flushes(&mut emit);
        checker.emit_loop_checks(&mut emit, &plan.loop_checks, opts.loop_sets);
        emit.predicate();
        if loop_clean_report.is_some() && kernels.contains(&f) && occupancy::loop_clean(f) {
            loop_clean.push(ir::name(f));
        }
        if want_stats {
            let mut s = stats::Stats::of(&found, escapes.len(), &plan);
            s.coverage = points.get(&f).copied().unwrap_or(0);
            stat_line(f, &s);
        }
    }
    if let Some(path) = &loop_clean_report {
        occupancy::report(path, &loop_clean);
    }
    devrt::link(ir, opts.inline_cold)?;
    rtpage::finish(ir);
    verify_if_asked(ir, opts)
}

/// [`verify`] when `CUSAFE_PASS_VERIFY=1`.
fn verify_if_asked(ir: &Ir, opts: &PassOptions) -> Result<(), String> {
    if opts.verify {
        verify(ir)?;
    }
    Ok(())
}

/// Runs the LLVM verifier on the instrumented module (`CUSAFE_PASS_VERIFY=1`; the test
/// scripts set it, since clang does not verify after plugins in release builds).
fn verify(ir: &Ir) -> Result<(), String> {
    ir.module().verify().map_err(|text| {
        format!(
            "the instrumented module fails the LLVM verifier: {}",
            text.to_string_lossy()
        )
    })
}
