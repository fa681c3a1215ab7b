//! The free hook (`cudaFree`): double and invalid frees, leaks at exit; end to end over
//! the fake CUDA, plus the allocator's free rules over the host backend.

mod common;
use common::*;

use cusafe_format::packed::HEADER_GAP;
use cusafe_rt::alloc::{Allocator, FreeError, HostBackend};
use cusafe_rt::report::host::free_report;
use cusafe_rt::report::{text, Kind};
use cusafe_rt::rng::Rng;

#[test]
fn double_free_is_reported_with_the_call_site() {
    let r = run(&["free", "double"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: double-free in cudaFree",
            "is the 4096-byte buffer #1 (freed)",
            "called from:",
            "#0 s_free at ",
            "scenario.c:",
            "main at ",
            "HINT: the buffer was already freed",
        ],
    );
}

#[test]
fn interior_pointer_free_is_invalid() {
    let r = run(&["free", "interior"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: invalid-free in cudaFree",
            "interior pointer: 0x",
            "is at offset 64 inside the 4096-byte buffer #1 (live), not its start",
        ],
    );
}

#[test]
fn never_allocated_and_poisoned_frees_are_invalid() {
    let r = run(&["free", "never"], "");
    assert_has(
        &r.stderr,
        &[
            "invalid-free",
            "never allocated: no buffer was ever allocated at 0x0000140000000100",
        ],
    );
    let r = run(&["free", "poisoned"], "");
    assert_has(&r.stderr, &["invalid-free", "is a poisoned pointer"]);
}

#[test]
fn foreign_pointers_the_real_free_refuses_are_invalid() {
    let r = run(&["free", "host"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: invalid-free in cudaFree",
            "never allocated: no buffer was ever allocated at 0x",
            "host, stack and cudaMallocHost memory are not freed with cudaFree",
            "#0 s_free at ",
        ],
    );
}

#[test]
fn recover_mode_returns_invalid_value_and_goes_on() {
    let r = run(&["free", "double"], "halt_on_error=0:exitcode=7");
    assert_eq!(r.code, 7, "{r:?}");
    assert_eq!(r.stdout, "free returned 1\n");
}

#[test]
fn leaks_are_listed_at_exit() {
    let r = run(&["leak"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "exiting\n");
    assert_eq!(
        r.stderr
            .matches("ERROR: cusafe: leak in cudaMalloc")
            .count(),
        2,
        "{r:?}"
    );
    assert_has(
        &r.stderr,
        &[
            "the 123-byte buffer #1 (live) was never freed",
            "the 1-byte buffer #3 (live) was never freed",
            "SUMMARY: cusafe: 124 bytes leaked in 2 allocation(s)",
        ],
    );
    assert!(!r.stderr.contains("buffer #2"), "{r:?}");
}

#[test]
fn detect_leaks_0_keeps_quiet() {
    let r = run(&["leak"], "detect_leaks=0");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

#[test]
fn a_framework_with_a_caching_allocator_turns_the_automatic_leak_check_off() {
    // A stand-in for PyTorch's libc10_cuda.so: the name is what the policy looks at.
    let dir = scratch("torch-lib");
    let lib = dir.join("torch/lib/libc10_cuda.so");
    std::fs::create_dir_all(lib.parent().unwrap()).unwrap();
    let c = dir.join("empty.c");
    std::fs::write(&c, "int c10_cuda_stand_in;\n").unwrap();
    let ok = std::process::Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&lib)
        .arg(&c)
        .status()
        .unwrap();
    assert!(ok.success());
    let preload = format!("{}:{}", runtime_lib().display(), lib.display());
    let env = [("LD_PRELOAD", preload.as_str())];
    let r = run_env(&["leak"], "verbosity=1", &env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stderr.contains("leaked"), "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "leak check skipped: PyTorch is loaded",
            "libc10_cuda.so",
            "detect_leaks=1",
        ],
    );
    // Asked for, the check still runs.
    let r = run_env(&["leak"], "detect_leaks=1", &env);
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &["SUMMARY: cusafe: 124 bytes leaked in 2 allocation(s)"],
    );
    // Without such a framework the default lists leaks.
    assert_eq!(run(&["leak"], "").code, 1);
}

#[test]
fn alloc_backtrace_names_the_allocation_site() {
    let r = run(&["leak"], "alloc_backtrace=1");
    assert_has(
        &r.stderr,
        &["allocated at:", "#0 s_leak at ", "scenario.c:"],
    );
}

#[test]
fn free_errors_become_reports() {
    let mut a = Allocator::new(HostBackend::new(), Rng::new(3)).unwrap();
    let b = a.alloc(100, None, 0).unwrap();
    let e = a.free(b.ptr + 8, None).unwrap_err();
    assert!(matches!(e, FreeError::Interior { .. }));
    let r = free_report("cudaFree", &e).unwrap();
    assert_eq!(r.kind, Kind::InvalidFree);
    assert_eq!(r.buffer.as_ref().unwrap().offset, 8);
    a.free(b.ptr, None).unwrap();
    let e = a.free(b.ptr, None).unwrap_err();
    let r = free_report("cudaFree", &e).unwrap();
    assert_eq!(r.kind, Kind::DoubleFree);
    assert!(text::render(&r, 1).contains("the 100-byte buffer #1 (freed)"));
    // The header stays zero and the block stays in the table as freed.
    assert_eq!(
        a.backend().read_u64(b.ptr - HEADER_GAP),
        Some(0),
        "a packed block's header"
    );
    assert!(a.table().lookup(b.ptr).unwrap().freed);
}

#[test]
fn free_waits_for_the_device_only_after_a_launch() {
    let log = scratch("free_sync.log");
    let r = run_env(
        &["free_sync"],
        "",
        &[("FAKE_CUDA_LOG", log.to_str().unwrap())],
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let text = std::fs::read_to_string(&log).unwrap();
    // The runtime waits with the driver's cuCtxSynchronize (it may run without cudart).
    assert_eq!(text.matches("Synchronize").count(), 1, "{text}");
    assert_eq!(text.matches("cuCtxSynchronize").count(), 1, "{text}");
}
