//! Scoring against sample logs in the tools' real formats.

use cusafe_suite::expect::from_source;
use cusafe_suite::parse::{cusafe_reports, memcheck_reports};
use cusafe_suite::score::{judge, Verdict};

const SRC: &str =
    "int x;\n__global__ void k(int *a) {\n  a[1] = 0; // cusafe-expect: heap-buffer-overflow\n}\n";

const CUSAFE_LOG: &str = "=================================================================
==4242==ERROR: cusafe: heap-buffer-overflow in kernel k(int*) at examples/k.cu:3:8
WRITE of size 4 at 0x00000c0000000104 by thread (1,0,0) in block (0,0,0)
SUMMARY: cusafe: heap-buffer-overflow in kernel k(int*) at examples/k.cu:3:8
";

const MEMCHECK_LOG: &str = "========= COMPUTE-SANITIZER
========= Invalid __global__ write of size 4 bytes
=========     at k(int *)+0x70 in /root/w/examples/k.cu:3
=========     by thread (1,0,0) in block (0,0,0)
=========     Address 0x7f0000000190 is out of bounds
=========
========= ERROR SUMMARY: 1 error
";

fn expectation() -> cusafe_suite::expect::Expectation {
    from_source("k", "examples/k.cu", SRC).expect("marker")
}

#[test]
fn markers_give_kind_and_line() {
    assert_eq!(expectation().bug, Some(("heap-buffer-overflow".into(), 3)));
    assert!(from_source("k", "k.cu", "a // cusafe-expect:\n").is_err());
    assert!(from_source("k", "k.cu", "// cusafe-expect: a\n// cusafe-expect: b\n").is_err());
}

#[test]
fn parses_both_tools() {
    let c = cusafe_reports(CUSAFE_LOG);
    assert_eq!(
        (c[0].kind.as_str(), c[0].file.as_str(), c[0].line),
        ("heap-buffer-overflow", "examples/k.cu", 3)
    );
    let m = memcheck_reports(MEMCHECK_LOG);
    assert_eq!(m.len(), 1);
    assert_eq!(
        (m[0].file.as_str(), m[0].line),
        ("/root/w/examples/k.cu", 3)
    );
}

#[test]
fn right_kind_wrong_line_is_a_miss() {
    let e = expectation();
    assert_eq!(judge(&e, "cusafe", CUSAFE_LOG, 1, None), Verdict::Found);
    let moved = CUSAFE_LOG.replace("k.cu:3:8", "k.cu:4:8");
    assert!(matches!(
        judge(&e, "cusafe", &moved, 1, None),
        Verdict::Wrong(_)
    ));
    let other = CUSAFE_LOG.replace("heap-buffer-overflow", "use-after-free");
    assert!(matches!(
        judge(&e, "cusafe", &other, 1, None),
        Verdict::Wrong(_)
    ));
    assert_eq!(judge(&e, "cusafe", "no errors\n", 0, None), Verdict::Missed);
    assert_eq!(judge(&e, "memcheck", MEMCHECK_LOG, 0, None), Verdict::Found);
}

#[test]
fn correct_programs_must_match_the_plain_run() {
    let e = from_source("ok", "examples/ok.cu", "int main() {}\n").expect("no marker");
    assert_eq!(
        judge(&e, "cusafe", "sum 42\n", 0, Some(("sum 42\n", 0))),
        Verdict::Clean
    );
    assert!(matches!(
        judge(&e, "cusafe", "sum 41\n", 0, Some(("sum 42\n", 0))),
        Verdict::Differs(_)
    ));
    assert!(matches!(
        judge(&e, "cusafe", "sum 42\n", 1, Some(("sum 42\n", 0))),
        Verdict::Differs(_)
    ));
    assert!(matches!(
        judge(&e, "cusafe", CUSAFE_LOG, 1, Some(("sum 42\n", 0))),
        Verdict::FalsePositive(_)
    ));
}

#[test]
fn a_correct_program_whose_plain_build_fails_is_a_broken_test() {
    let e = from_source("ok", "examples/ok.cu", "int main() {}\n").expect("no marker");
    assert!(matches!(
        judge(
            &e,
            "cusafe",
            CUSAFE_LOG,
            1,
            Some(("illegal instruction\n", 3))
        ),
        Verdict::BrokenTest(_)
    ));
}
