//! The allocation hooks (`cudaMalloc`, `cudaMallocPitch`, `cudaMalloc3D`), end to end
//! over the fake CUDA: tags, headers, pitches, no address reuse, fallbacks.

mod common;
use common::*;

#[test]
fn correct_program_runs_silently() {
    let r = run(&["ok"], "");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(r.stdout, "ok 100\n");
}

#[test]
fn headers_hold_exact_sizes_and_zero_after_free() {
    let r = run(&["header"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_has(
        &r.stdout,
        &[
            "tag=7 h400=400 h3m=3145728 h5g=5368709120 pitch=512 hpitch=5120 pitch3d=512 h3d=15360 x=100 y=10",
            "freed h400=0 h3m=0 h5g=0",
        ],
    );
}
