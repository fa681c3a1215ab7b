//! The set hooks (`cudaMemset`, `cudaMemsetAsync`, `cudaMemset2D`), end to end.

mod common;
use common::*;

#[test]
fn memset_past_the_end() {
    let r = run(&["memset_oob", "plain"], "detect_leaks=0");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: api-out-of-bounds in cudaMemset (devPtr)",
            "WRITE of range of 600 bytes",
            "starts at offset 500, running 100 bytes past the end of the 1000-byte buffer #1 (live)",
        ],
    );
}

#[test]
fn memset_async_past_the_end() {
    let r = run(&["memset_oob", "async"], "detect_leaks=0");
    assert_has(
        &r.stderr,
        &["cudaMemsetAsync (devPtr)", "running 1 bytes past the end"],
    );
}

#[test]
fn memset_2d_checks_the_pitched_extent() {
    // 11 rows of a 10-row pitched buffer (pitch 512): the 11th row is out.
    let r = run(&["memset_oob", "2d"], "detect_leaks=0");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "cudaMemset2D (devPtr)",
            "(5220 bytes)",
            "running 100 bytes past the end of the 5120-byte buffer #2",
        ],
    );
    // The whole pitch of all 10 rows is inside.
    let r = run(&["memset_oob", "2dok"], "detect_leaks=0");
    assert_eq!(
        (r.code, r.stdout.as_str()),
        (0, "memset returned 0\n"),
        "{r:?}"
    );
}

#[test]
fn recover_mode_returns_invalid_value() {
    let r = run(&["memset_oob", "plain"], "halt_on_error=0:detect_leaks=0");
    assert_eq!(r.stdout, "memset returned 1\n");
}
