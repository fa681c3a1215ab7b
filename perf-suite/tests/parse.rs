//! Reading the pass's stats lines, ptxas.tsv, runs.tsv and the logs.

use cusafe_perf::checks::{self, Checks};
use cusafe_perf::logs::{cusafe_report, memcheck_errors};
use cusafe_perf::{ptxas, runs};

const NEW: &str = "cusafe: kernel _Z1kPf: 4 checks (3 loads, 1 stores, 0 atomics, 0 ranges; 0 against known objects), 2 arithmetic rules, 3 proven in bounds, 2 removed (dominated), 1 hoisted (loop header loads), 0 header loads shared, 0 unchecked (constant address or unknown size), 0 intrinsic accesses unchecked";
const OLD: &str = "cusafe: device function _Z1gPf: 5 checks (4 loads, 1 stores, 0 atomics, 0 ranges; 2 against known objects), 1 arithmetic rules, 6 proven in bounds, 0 unchecked (constant address or unknown size), 0 intrinsic accesses unchecked";

#[test]
fn stats_lines_are_summed_by_phrase() {
    let text = format!("x.cu:3:1: warning: something 9 checks ago\n{NEW}\n{OLD}\n\n");
    assert_eq!(
        checks::parse(&text),
        Checks {
            functions: 2,
            checks: 9,
            proven: 9,
            removed: 2,
            hoisted: 1,
        }
    );
}

#[test]
fn missing_removed_and_hoisted_count_zero() {
    let c = checks::parse(OLD);
    assert_eq!((c.checks, c.proven, c.removed, c.hoisted), (5, 6, 0, 0));
    assert_eq!(checks::parse(""), Checks::default());
    // "unchecked" is not "checks", "arithmetic rules" is not "proven".
    let odd = "cusafe: kernel k: 0 checks (0 loads), 7 arithmetic rules, 0 proven in bounds, 3 unchecked (x)";
    assert_eq!(checks::parse(odd).checks, 0);
    assert_eq!(checks::parse(odd).functions, 1);
}

#[test]
fn ptxas_tsv_maxima_per_build() {
    let k = ptxas::parse(
        "build\tkernel\tregisters\tstack_bytes\tspill_bytes\nplain\ta\t40\t0\t0\nplain\tb\t24\t8\t0\ncusafe\ta\t72\t16\t8\ncusafe\tb\t96\t0\t4\n",
    )
    .expect("parses");
    assert_eq!(k.len(), 4);
    let u = ptxas::usage(&k, "cusafe").expect("cusafe kernels");
    assert_eq!(
        (
            u.kernels,
            u.max_registers,
            u.max_stack_bytes,
            u.max_spill_bytes
        ),
        (2, 96, 16, 8)
    );
    assert_eq!(ptxas::usage(&k, "plain").expect("plain").max_stack_bytes, 8);
    assert!(ptxas::usage(&k, "noopt").is_none());
    assert!(ptxas::parse("plain\ta\tmany\t0\t0\n")
        .unwrap_err()
        .contains("many"));
}

#[test]
fn runs_tsv_rows_with_and_without_a_result_line() {
    let tsv = "workload\tmode\trep\trc\twall_s\titers\tkernel_ms\tper_iter_ms\tverified\tchecksum\tpeak_mem_mib\tmetric\tvalue\n\
llama_decode\tcusafe\t2\t0\t3.5\t8\t44.0\t5.5\t1\t0x1a\t1100.0\ttokens_per_s\t180.0\n\
gemm\tnoopt\t1\t124\t180.004\t\t\t\t\t\t\t\t\n";
    let r = runs::parse(tsv).expect("parses");
    assert_eq!(r.len(), 2);
    let p = r[0].perf.as_ref().expect("result line");
    assert_eq!((r[0].rep, r[0].rc, p.iters), (2, 0, 8));
    assert_eq!(
        (p.per_iter_ms, p.verified, p.checksum.as_str()),
        (5.5, true, "0x1a")
    );
    let m = p.metric.as_ref().expect("metric");
    assert_eq!((m.name.as_str(), m.value), ("tokens_per_s", 180.0));
    assert_eq!(r[1].rc, 124);
    assert!(r[1].perf.is_none());
    assert_eq!(r[1].wall_s, Some(180.004));
}

#[test]
fn runs_tsv_errors_name_the_line() {
    let e = runs::parse("workload\tmode\trep\trc\ngemm\tplain\t1\tx\n").unwrap_err();
    assert!(e.contains("line 2") && e.contains("rc"), "{e}");
    assert!(runs::parse("program\tmode\trc\tseconds\n")
        .unwrap_err()
        .contains("workload"));
    assert!(runs::parse("").is_err());
}

#[test]
fn logs_give_reports_and_error_counts() {
    let log = "PERF workload=a iters=1\n==7==ERROR: cusafe: heap-buffer-overflow in kernel k at perf-suite/workloads/a.cu:3:5\nSUMMARY: cusafe: heap-buffer-overflow\n";
    assert_eq!(
        cusafe_report(log).as_deref(),
        Some("heap-buffer-overflow in kernel k at perf-suite/workloads/a.cu:3:5")
    );
    assert_eq!(cusafe_report("PERF workload=a\n"), None);
    assert_eq!(
        memcheck_errors("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 3 errors\n"),
        Some(3)
    );
    assert_eq!(
        memcheck_errors("========= ERROR SUMMARY: 1 error\n"),
        Some(1)
    );
    assert_eq!(memcheck_errors("no summary\n"), None);
}
