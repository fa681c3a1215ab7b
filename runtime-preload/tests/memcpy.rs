//! The copy hooks (`cudaMemcpy`, `cudaMemcpyAsync`, `cudaMemcpy2D`,
//! `cudaMemcpy2DAsync`): ranges checked against exact sizes, end to end and as pure
//! range checks.

mod common;
use common::*;

use cusafe_rt::alloc::{Allocator, HostBackend};
use cusafe_rt::check::{check_range, extent_2d, ApiRange};
use cusafe_rt::report::Kind;
use cusafe_rt::rng::Rng;
use proptest::prelude::*;

#[test]
fn reading_past_the_end_is_api_out_of_bounds() {
    let r = run(&["memcpy_oob", "src"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: api-out-of-bounds in cudaMemcpy (src)",
            "READ of range of 4000 bytes at 0x",
            "src range [0x",
            "(4000 bytes) starts at offset 0, running 2000 bytes past the end of the 2000-byte buffer #1 (live)",
            "called from:",
            "#0 s_memcpy_oob at ",
            "SUMMARY: cusafe: api-out-of-bounds in cudaMemcpy (src)",
        ],
    );
}

#[test]
fn each_copy_api_is_checked() {
    for (how, needles) in [
        (
            "dst",
            &[
                "cudaMemcpy (dst)",
                "WRITE of range of 2001 bytes",
                "running 1 bytes past the end of the 2000-byte buffer #1",
            ][..],
        ),
        (
            "async",
            &[
                "cudaMemcpyAsync (src)",
                "starts at offset 100, running 100 bytes past the end",
            ][..],
        ),
        (
            "d2d",
            &[
                "cudaMemcpy (src)",
                "starts 16 bytes before the start of the 2000-byte buffer #1",
            ][..],
        ),
        (
            "2d",
            &[
                "cudaMemcpy2D (dst)",
                "(2100 bytes)",
                "running 100 bytes past the end of the 2000-byte buffer #1",
            ][..],
        ),
        (
            "2dasync",
            &[
                "cudaMemcpy2DAsync (src)",
                "(2200 bytes)",
                "the 2000-byte buffer #2",
            ][..],
        ),
        (
            "freed",
            &[
                "ERROR: cusafe: use-after-free in cudaMemcpy (dst)",
                "is in the 2000-byte buffer #2 (freed)",
            ][..],
        ),
    ] {
        let r = run(&["memcpy_oob", how], "detect_leaks=0");
        assert_eq!(r.code, 1, "{how}: {r:?}");
        assert_has(&r.stderr, needles);
    }
}

#[test]
fn recover_mode_skips_the_copy_and_returns_invalid_value() {
    let r = run(&["memcpy_oob", "src"], "halt_on_error=0:detect_leaks=0");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "memcpy returned 1\nin-bounds copy fine\n");
}

#[test]
fn copies_within_bounds_pass() {
    let r = run(&["ok"], "");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

fn range(ptr: u64, len: u64) -> ApiRange {
    ApiRange {
        api: "cudaMemcpy",
        operand: "dst",
        ptr,
        len,
        write: true,
    }
}

#[test]
fn exact_bounds_at_the_edges() {
    let mut a = Allocator::new(HostBackend::new(), Rng::new(1)).unwrap();
    let b = a.alloc(1000, None, 0).unwrap();
    let t = a.table();
    assert!(check_range(&range(b.ptr, 1000), t).is_none());
    assert!(check_range(&range(b.ptr + 999, 1), t).is_none());
    assert!(check_range(&range(b.ptr + 1000, 0), t).is_none());
    assert_eq!(
        check_range(&range(b.ptr, 1001), t).unwrap().kind,
        Kind::ApiOutOfBounds
    );
    assert_eq!(
        check_range(&range(b.ptr - 1, 1), t).unwrap().kind,
        Kind::ApiOutOfBounds
    );
    assert_eq!(
        check_range(&range(b.ptr + 1000, 1), t).unwrap().kind,
        Kind::ApiOutOfBounds
    );
    // Host and foreign pointers are not checked.
    assert!(check_range(&range(0x7f00_0000_1000, 1 << 40), t).is_none());
    // A pointer in a window but in no block.
    assert_eq!(
        check_range(&range(b.ptr + (1 << 30), 4), t).unwrap().kind,
        Kind::WildAccess
    );
    assert_eq!(
        check_range(&range(b.ptr | 1 << 63, 4), t).unwrap().kind,
        Kind::PointerOverflow
    );
}

#[test]
fn extent_2d_spans_the_last_row_only_to_its_width() {
    assert_eq!(extent_2d(512, 100, 10), 9 * 512 + 100);
    assert_eq!(extent_2d(512, 0, 10), 0);
    assert_eq!(extent_2d(512, 100, 0), 0);
    assert_eq!(extent_2d(u64::MAX, 2, 3), u64::MAX);
}

proptest! {
    /// A range passes exactly when it lies inside the buffer.
    #[test]
    fn range_check_matches_the_exact_bounds(size in 1u64..100_000, off in -300i64..110_000, len in 1u64..120_000) {
        let mut a = Allocator::new(HostBackend::new(), Rng::new(9)).unwrap();
        let b = a.alloc(size, None, 0).unwrap();
        let ptr = b.ptr.wrapping_add(off as u64);
        let inside = off >= 0 && off as u64 + len <= size;
        let found = check_range(&range(ptr, len), a.table());
        prop_assert_eq!(found.is_none(), inside);
    }
}
