//! The table over the fixture run (tests/fixtures/run) and bundle (tests/fixtures/build):
//! medians, ratios, exclusion rules, the summary, the markdown and the JSON.

use cusafe_perf::build::WorkloadBuild;
use cusafe_perf::runs::{Perf, Run};
use cusafe_perf::table::{self, load, summarize, ModeResult, Reason, Report, Row};
use std::path::{Path, PathBuf};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn report() -> Report {
    load(&[fixtures().join("run")], &fixtures().join("build"), false).expect("fixtures load")
}

fn row<'a>(r: &'a Report, name: &str) -> &'a Row {
    r.rows
        .iter()
        .find(|x| x.workload == name)
        .unwrap_or_else(|| panic!("no row {name}"))
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() < 1e-9
}

fn run(mode: &str, rep: u32, rc: i32, ms: Option<f64>, verified: bool) -> Run {
    Run {
        workload: "llama_decode".into(),
        mode: mode.into(),
        rep,
        rc,
        wall_s: Some(1.0),
        perf: ms.map(|per_iter_ms| Perf {
            iters: 5,
            kernel_ms: Some(per_iter_ms * 5.0),
            per_iter_ms,
            verified,
            checksum: "0x1".into(),
            peak_mem_mib: Some(1.0),
            metric: None,
        }),
    }
}

#[test]
fn medians_over_reps_and_ratios() {
    let r = report();
    let g = row(&r, "gemm");
    assert_eq!(g.plain.samples_ms, vec![2.0, 2.2, 1.9]);
    assert_eq!(
        (
            g.plain.per_iter_ms,
            g.cusafe.per_iter_ms,
            g.noopt.per_iter_ms
        ),
        (Some(2.0), Some(2.5), Some(3.1))
    );
    assert!(close(g.ratio("cusafe/plain").unwrap(), 1.25));
    assert!(close(g.ratio("noopt/plain").unwrap(), 1.55));
    assert!(close(g.ratio("memcheck/cusafe").unwrap(), 20.0));
    assert_eq!(
        (g.plain.peak_mem_mib, g.cusafe.peak_mem_mib),
        (Some(256.0), Some(260.0))
    );
    assert_eq!(g.checksum_match, Some(true));
    assert!(g.problems.is_empty(), "{:?}", g.problems);
}

#[test]
fn registers_spills_and_checks_from_the_bundle() {
    let r = report();
    let g = row(&r, "gemm");
    let regs = |b: &str| g.build.usage[b].max_registers;
    assert_eq!((regs("plain"), regs("cusafe"), regs("noopt")), (40, 96, 90));
    assert_eq!(g.build.usage["cusafe"].max_spill_bytes, 8);
    let c = g.build.checks["cusafe"];
    assert_eq!(
        (c.functions, c.checks, c.proven, c.removed, c.hoisted),
        (2, 6, 4, 3, 3)
    );
    assert_eq!(g.build.checks["noopt"].checks, 14);
    // bfs's stats predate removed/hoisted and have a warning and a device function.
    let b = row(&r, "bfs").build.checks["cusafe"];
    assert_eq!(
        (b.functions, b.checks, b.proven, b.removed, b.hoisted),
        (2, 12, 3, 0, 0)
    );
    assert!(!row(&r, "bfs").build.checks.contains_key("noopt"));
    assert!(row(&r, "syrk").build.usage.is_empty());
}

#[test]
fn exclusion_rules() {
    let r = report();
    let reasons = |w: &str, mode: &str| -> Vec<Reason> {
        row(&r, w)
            .problems
            .iter()
            .filter(|p| p.mode == mode)
            .map(|p| p.reason.clone())
            .collect()
    };
    // A cusafe report on a correct workload is a false positive (rc 1 is not listed apart).
    assert!(matches!(
        reasons("atax", "cusafe").as_slice(),
        [Reason::FalsePositive { report }] if report.starts_with("heap-buffer-overflow in kernel atax_kernel1")
    ));
    assert!(reasons("atax", "noopt").is_empty());
    // Wrong plain output: verified=0 (exit 1) is "unverified", in plain and memcheck.
    assert_eq!(reasons("jacobi2d", "plain"), vec![Reason::Unverified]);
    assert_eq!(reasons("jacobi2d", "memcheck"), vec![Reason::Unverified]);
    assert!(reasons("jacobi2d", "cusafe").is_empty());
    // A checksum that differs from plain's, and a timeout.
    assert!(matches!(
        reasons("mvt", "cusafe").as_slice(),
        [Reason::ChecksumMismatch { got, plain }] if got == "0x0000000000000222" && plain == "0x0000000000000111"
    ));
    assert_eq!(row(&r, "mvt").checksum_match, Some(false));
    assert_eq!(reasons("mvt", "noopt"), vec![Reason::TimedOut]);
    // The noopt median is over the two reps that printed a result line.
    assert_eq!(row(&r, "mvt").noopt.samples_ms, vec![1.2, 1.2]);
    // Built but never run.
    for mode in ["plain", "cusafe", "noopt", "memcheck"] {
        assert_eq!(reasons("syrk", mode), vec![Reason::NotRun]);
    }
    // A mode that no workload ran (nvcc is opt-in) is nobody's problem.
    assert!(r
        .rows
        .iter()
        .all(|w| reasons(&w.workload, "nvcc").is_empty()));
    assert_eq!(table::describe(&row(&r, "syrk").problems), "not run");
    // compute-sanitizer's errors are shown, not an exclusion.
    assert_eq!(row(&r, "bfs").memcheck.memcheck_errors, Some(2));
    assert!(row(&r, "bfs").problems.is_empty());
}

#[test]
fn summary_over_clean_workloads() {
    let r = report();
    let s = &r.summary;
    let agg = |name: &str| {
        s.comparisons
            .iter()
            .find(|a| a.comparison == name)
            .expect("comparison")
    };
    let c = agg("cusafe/plain");
    assert_eq!(c.workloads, ["bfs", "gemm", "llama_decode"]);
    assert!(close(c.geomean.unwrap(), (1.2f64 * 1.25 * 1.1).cbrt()));
    let max = c.max.as_ref().unwrap();
    assert_eq!(max.workload, "gemm");
    assert!(close(max.ratio, 1.25));
    let out: Vec<&str> = c.excluded.iter().map(|e| e.workload.as_str()).collect();
    assert_eq!(out, ["atax", "jacobi2d", "mvt", "syrk"]);

    let n = agg("noopt/plain");
    assert_eq!(n.workloads, ["atax", "bfs", "gemm", "llama_decode"]);
    assert!(close(
        n.geomean.unwrap(),
        (1.5f64 * 1.5 * 1.55 * 1.2).powf(0.25)
    ));
    let out: Vec<&str> = n.excluded.iter().map(|e| e.workload.as_str()).collect();
    assert_eq!(out, ["jacobi2d", "mvt", "syrk"]);

    let m = agg("memcheck/cusafe");
    assert_eq!(m.workloads, ["bfs", "gemm", "llama_decode"]);
    // No workload ran the nvcc build: its comparisons are left out.
    assert!(s.comparisons.iter().all(|a| !a.comparison.contains("nvcc")));
    assert!(close(
        m.geomean.unwrap(),
        (25.0f64 * 20.0 * (100.0 / 5.5)).cbrt()
    ));

    assert_eq!(s.metrics.len(), 1);
    let t = &s.metrics[0];
    assert_eq!(
        (t.workload.as_str(), t.metric.as_str()),
        ("llama_decode", "tokens_per_s")
    );
    assert_eq!((t.plain, t.cusafe, t.noopt), (200.0, 180.0, Some(170.0)));
    assert!(close(t.drop_percent, 10.0) && t.clean);
    // Bundle and run have the same commit; the fixture bundle has figures for two.
    assert_eq!(s.notes.len(), 1, "{:?}", s.notes);
    assert!(
        s.notes[0].ends_with("for atax, jacobi2d, llama_decode, mvt, syrk"),
        "{:?}",
        s.notes
    );
}

#[test]
fn mode_results_from_runs() {
    let runs = [
        run("cusafe", 1, 0, Some(2.0), true),
        run("cusafe", 2, 0, Some(4.0), true),
        run("cusafe", 3, 0, None, false),
    ];
    let refs: Vec<&Run> = runs.iter().collect();
    // Recover mode: a report with exit 0 is still a false positive; the run without a
    // result line is listed apart; the median is over the runs with one.
    let logs = [
        String::new(),
        "==1==ERROR: cusafe: use-after-free in kernel k at a.cu:1:1\n".into(),
        String::new(),
    ];
    let m = ModeResult::from_runs(&refs, &logs);
    assert_eq!(m.per_iter_ms, Some(3.0));
    assert!(!m.verified);
    assert_eq!(
        m.problems,
        vec![
            Reason::FalsePositive {
                report: "use-after-free in kernel k at a.cu:1:1".into()
            },
            Reason::NoResult
        ]
    );
    let failed = [run("plain", 1, 3, None, false)];
    let m = ModeResult::from_runs(&failed.iter().collect::<Vec<_>>(), &[]);
    assert_eq!(m.problems, vec![Reason::Failed { rc: 3 }]);
    assert_eq!(
        ModeResult::from_runs(&[], &[]).problems,
        vec![Reason::NotRun]
    );
}

#[test]
fn markdown_and_json() {
    let r = report();
    let md = cusafe_perf::markdown::render(&r);
    assert!(
        md.contains("gpu: NVIDIA H100 80GB HBM3, 570.00, 81559 MiB"),
        "{md}"
    );
    assert!(md.contains("| gemm | 2.000 | 2.500 | 3.100 | – | 1.250× | 1.550× | – | – | 50.00 | 20.000× | 40 → 96 (90) | 0 → 8 | 256.0 / 260.0 | 6 (14) | 4 / 3 / 3 | ✓ ✓ ✓ – | same | ok |"), "{md}");
    assert!(
        md.contains("- cusafe/plain: geomean 1.182× (each ratio floored at 1.0: 1.182×) over 3 workloads, max 1.250× (gemm)"),
        "{md}"
    );
    assert!(
        md.contains(
            "- llama_decode tokens_per_s: plain 200.0, cusafe 180.0 (drop 10.0%), noopt 170.0"
        ),
        "{md}"
    );
    assert!(md.contains("syrk (not run)"), "{md}");
    assert!(
        md.contains("atax (cusafe: cusafe report = false positive (heap-buffer-overflow"),
        "{md}"
    );
    let table_rows = md
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| workload"))
        .count();
    assert_eq!(table_rows, 7);

    let v: serde_json::Value = serde_json::from_str(&table::json(&r)).expect("valid JSON");
    assert_eq!(v["rows"].as_array().unwrap().len(), 7);
    assert_eq!(v["rows"][2]["workload"], "gemm");
    assert_eq!(v["rows"][2]["cusafe"]["per_iter_ms"], 2.5);
    assert_eq!(v["rows"][2]["build"]["checks"]["cusafe"]["removed"], 3);
    assert_eq!(v["summary"]["comparisons"][0]["comparison"], "cusafe/plain");
    assert_eq!(v["rows"][0]["problems"][0]["mode"], "cusafe");
    assert_eq!(v["rows"][0]["problems"][0]["reason"], "false-positive");
}

#[test]
fn the_command_writes_both_files() {
    let dir = std::env::temp_dir().join(format!("cusafe-perf-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (md, json) = (dir.join("t.md"), dir.join("t.json"));
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cusafe-perf"))
        .arg("table")
        .arg("--run")
        .arg(fixtures().join("run"))
        .arg("--build")
        .arg(fixtures().join("build"))
        .arg("--md")
        .arg(&md)
        .arg("--json")
        .arg(&json)
        .output()
        .expect("runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::read_to_string(&md)
        .unwrap()
        .starts_with("# Perf suite run"));
    assert!(std::fs::read_to_string(&json).unwrap().contains("\"rows\""));
    // A folder that is not a run says what to pass.
    let bad = std::process::Command::new(env!("CARGO_BIN_EXE_cusafe-perf"))
        .args(["table", "--run"])
        .arg(&dir)
        .arg("--build")
        .arg(fixtures().join("build"))
        .output()
        .expect("runs");
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("env.txt"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn llama_decode_without_a_metric_gets_passes_per_second() {
    let runs = [
        run("plain", 1, 0, Some(4.0), true),
        run("cusafe", 1, 0, Some(5.0), true),
    ];
    let r = Row::new(
        "llama_decode",
        &runs,
        &|_| String::new(),
        WorkloadBuild::default(),
    );
    let s = summarize(&[r]);
    let m = &s.metrics[0];
    assert_eq!(m.metric, "passes_per_s");
    assert_eq!((m.plain, m.cusafe, m.noopt), (250.0, 200.0, None));
    assert!(close(m.drop_percent, 20.0));
    // Only that workload gets a derived figure.
    let other = Row::new("gemm", &runs, &|_| String::new(), WorkloadBuild::default());
    assert!(summarize(&[other]).metrics.is_empty());
}

#[test]
fn a_run_split_over_several_directories() {
    let dir = std::env::temp_dir().join(format!("cusafe-perf-split-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("logs")).expect("temp dir");
    std::fs::write(
        dir.join("env.txt"),
        "host: second\nbundle: 0123456789abcdef0123456789abcdef01234567\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("runs.tsv"),
        "workload\tmode\trep\trc\twall_s\titers\tkernel_ms\tper_iter_ms\tverified\tchecksum\tpeak_mem_mib\tmetric\tvalue\n\
         nw\tplain\t1\t0\t1.0\t5\t10\t2.0\t1\t0x5\t8.0\t\t\n\
         nw\tcusafe\t1\t0\t1.0\t5\t15\t3.0\t1\t0x5\t8.0\t\t\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("logs/nw.cusafe.1.txt"),
        "==9==ERROR: cusafe: use-after-free in kernel nw at a.cu:1:1\n",
    )
    .unwrap();
    let both = [fixtures().join("run"), dir.clone()];
    let r = load(&both, &fixtures().join("build"), false).expect("loads");
    assert!(
        r.env.contains("host: fixture") && r.env.contains("host: second"),
        "{}",
        r.env
    );
    // The second directory's logs are read for its workload.
    assert!(matches!(
        row(&r, "nw").problems_in(&["plain", "cusafe"]).as_slice(),
        [p] if matches!(p.reason, Reason::FalsePositive { .. }) && p.mode == "cusafe"
    ));
    assert_eq!(row(&r, "gemm").cusafe.per_iter_ms, Some(2.5));
    // A workload in two directories is an error.
    let twice = [fixtures().join("run"), fixtures().join("run")];
    let e = load(&twice, &fixtures().join("build"), false);
    assert!(e.is_err_and(|e| e.contains("in both") && e.contains("--pool")));
    // Pooled, the same runs count twice: gemm's plain reps 2.0, 2.2, 1.9 twice over.
    let r = load(&twice, &fixtures().join("build"), true).expect("pooled");
    let g = row(&r, "gemm");
    assert_eq!(g.plain.runs, 6);
    assert_eq!(g.plain.samples_ms, vec![2.0, 2.2, 1.9, 2.0, 2.2, 1.9]);
    assert_eq!(g.plain.per_iter_ms, Some(2.0));
    // Each pooled run's log is read from its own directory.
    let split_twice = [dir.clone(), dir.clone()];
    let r = load(&split_twice, &fixtures().join("build"), true).expect("pooled");
    let nw = row(&r, "nw");
    assert_eq!(nw.cusafe.runs, 2);
    assert!(matches!(
        nw.problems_in(&["cusafe"]).as_slice(),
        [p] if matches!(p.reason, Reason::FalsePositive { .. })
    ));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn nvcc_columns_and_the_floored_geomean() {
    // Two workloads: one faster sanitized (0.5x), one 1.44x; nvcc's build is faster than
    // clang's plain one and computes another checksum (that is no problem).
    let mut runs = vec![
        run("plain", 1, 0, Some(4.0), true),
        run("cusafe", 1, 0, Some(2.0), true),
        run("nvcc", 1, 0, Some(2.0), true),
    ];
    runs[2].perf.as_mut().unwrap().checksum = "0x2".into();
    let mut other: Vec<Run> = [
        run("plain", 1, 0, Some(1.0), true),
        run("cusafe", 1, 0, Some(1.44), true),
        run("nvcc", 1, 0, Some(1.2), true),
    ]
    .into_iter()
    .map(|mut r| {
        r.workload = "gemm".into();
        r
    })
    .collect();
    runs.append(&mut other);
    let rows: Vec<Row> = ["gemm", "llama_decode"]
        .iter()
        .map(|w| Row::new(w, &runs, &|_| String::new(), WorkloadBuild::default()))
        .collect();
    assert!(rows.iter().all(|r| r.problems.is_empty()), "{rows:?}");
    assert!(close(rows[0].ratio("cusafe/nvcc").unwrap(), 1.2));
    assert!(close(rows[1].ratio("plain/nvcc").unwrap(), 2.0));
    let s = summarize(&rows);
    let agg = |name: &str| {
        s.comparisons
            .iter()
            .find(|a| a.comparison == name)
            .expect("comparison")
            .clone()
    };
    let c = agg("cusafe/plain");
    assert!(close(c.geomean.unwrap(), (1.44f64 * 0.5).sqrt()));
    assert!(close(c.floored_geomean.unwrap(), 1.2));
    let n = agg("cusafe/nvcc");
    assert_eq!(n.workloads, ["gemm", "llama_decode"]);
    assert!(close(n.geomean.unwrap(), 1.2f64.sqrt()));
    let md = cusafe_perf::markdown::render(&Report {
        env: "gpu: test".into(),
        build_commit: None,
        noopt_env: cusafe_perf::build::NOOPT_DEFAULT.into(),
        rows,
        summary: s,
    });
    assert!(
        md.contains("- plain/nvcc (clang's plain build vs nvcc's): geomean"),
        "{md}"
    );
    assert!(
        md.contains("| gemm | 1.000 | 1.440 | – | 1.200 | 1.440× | – | 1.200× |"),
        "{md}"
    );
}

/// Copies the fixture bundle into a fresh temporary directory.
fn bundle_copy(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("cusafe-perf-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for e in std::fs::read_dir(fixtures().join("build")).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dir.join(e.file_name())).unwrap();
    }
    dir
}

#[test]
fn the_noopt_column_is_named_after_the_bundles_noopt_env() {
    let md = cusafe_perf::markdown::render(&report());
    assert!(
        md.contains("noopt is the cusafe build with check elimination off (`CUSAFE_PASS_OPT=0`)")
    );
    assert!(
        md.contains("- noopt/plain (check elimination off): geomean"),
        "{md}"
    );
    let dir = bundle_copy("noopt-env");
    std::fs::write(dir.join("NOOPT_ENV"), "CUSAFE_PASS_DEFER=0\n").unwrap();
    let r = load(&[fixtures().join("run")], &dir, false).expect("loads");
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(r.noopt_env, "CUSAFE_PASS_DEFER=0");
    let md = cusafe_perf::markdown::render(&r);
    assert!(
        md.contains(
            "noopt is the cusafe build made with `CUSAFE_PASS_DEFER=0` (the bundle's NOOPT_ENV)"
        ),
        "{md}"
    );
    assert!(
        md.contains("- noopt/plain (CUSAFE_PASS_DEFER=0): geomean"),
        "{md}"
    );
    assert!(!md.contains("check elimination off"), "{md}");
}
