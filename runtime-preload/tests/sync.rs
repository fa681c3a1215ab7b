//! The sync and error hooks (`cudaDeviceSynchronize`, `cudaStreamSynchronize`,
//! `cudaEventSynchronize`, `cudaGetLastError`, `cudaPeekAtLastError`): each is where a
//! trapped kernel's report comes out; so are a memcpy, a later launch, and the exit.

mod common;
use common::*;

#[test]
fn every_polling_point_reports_the_kernel_finding() {
    for how in [
        "stream", "event", "last", "peek", "memcpy", "launch", "exit",
    ] {
        let r = run(&["oob_at", how], "");
        assert_eq!(r.code, 1, "{how}: {r:?}");
        assert_eq!(
            r.stderr
                .matches("ERROR: cusafe: heap-buffer-overflow")
                .count(),
            1,
            "{how}: {r:?}"
        );
        assert_has(&r.stderr, &["add_one(int*, int) at vec.cu:12:5"]);
    }
}

#[test]
fn a_fault_without_a_record_gets_a_note() {
    let r = run(&["fault"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "sync returned 719\n");
    assert_has(
        &r.stderr,
        &[
            "cusafe: note: CUDA error 719 (cudaErrorLaunchFailure) came without a cusafe finding",
            "cusafe: leak check skipped: the CUDA context failed",
        ],
    );
    assert!(!r.stderr.contains("ERROR: cusafe: leak"), "{r:?}");
}
