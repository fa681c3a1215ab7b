//! scripts/gpu/run-perf.sh and run-variance.sh without a GPU: a bundle whose builds are
//! shell scripts that print a PERF line, with a fake `nvidia-smi` and a fake `nvcc` on
//! PATH. Checks the interleaved runs, the nvcc mode (its builds before timing, a failed
//! build skipped), runs.tsv, env.txt, that the table tool reads the result, and
//! run-variance.sh's rows and summary.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::{repo, script};

/// A workload build that prints a PERF line with `ms` per pass.
fn build(bundle: &Path, name: &str, mode: &str, ms: &str) {
    script(
        &bundle.join(format!("{name}.{mode}")),
        &format!("echo \"PERF workload={name} iters=1 kernel_ms={ms} per_iter_ms={ms} verified=1 checksum=0x1 peak_mem_mib=1.0\""),
    );
}

/// A fresh scratch directory `NAME-PID` under the temporary directory, with empty
/// `bundle/` and `bin/` in it; returns it, `bundle`, `bin` and `out` (not made).
fn scratch(name: &str) -> (PathBuf, PathBuf, PathBuf, PathBuf) {
    let dir = std::env::temp_dir().join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (bundle, bin, out) = (dir.join("bundle"), dir.join("bin"), dir.join("out"));
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::create_dir_all(&bin).unwrap();
    (dir, bundle, bin, out)
}

/// PATH with `bin` (the fake `nvidia-smi` and `nvcc`) in front.
fn path_with(bin: &Path) -> String {
    format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Runs the table tool over run directory `out` and bundle `bundle`; its markdown.
fn table_md(out: &Path, bundle: &Path) -> String {
    let table = Command::new(env!("CARGO_BIN_EXE_cusafe-perf"))
        .args(["table", "--run"])
        .arg(out)
        .arg("--build")
        .arg(bundle)
        .output()
        .expect("runs the table tool");
    assert!(
        table.status.success(),
        "{}",
        String::from_utf8_lossy(&table.stderr)
    );
    std::fs::read_to_string(out.join("table.md")).unwrap()
}

#[test]
fn the_nvcc_mode_builds_first_skips_a_failed_build_and_interleaves_the_runs() {
    let (dir, bundle, bin, out) = scratch("cusafe-run-perf");
    std::fs::create_dir_all(bundle.join("src/perf-suite/workloads")).unwrap();
    std::fs::write(bundle.join("src/perf-suite/harness.h"), "").unwrap();
    for name in ["good", "broken"] {
        build(&bundle, name, "plain", "2.0");
        build(&bundle, name, "cusafe", "2.2");
        std::fs::write(
            bundle.join(format!("src/perf-suite/workloads/{name}.cu")),
            "",
        )
        .unwrap();
    }
    std::fs::write(bundle.join("WORKLOADS"), "good\nbroken\n").unwrap();
    std::fs::write(bundle.join("COMMIT"), "test\n").unwrap();
    std::fs::copy(
        repo().join("scripts/gpu/run-perf.sh"),
        bundle.join("run-perf.sh"),
    )
    .unwrap();
    script(
        &bin.join("nvidia-smi"),
        "echo 'Fake GPU, 1.0, 1 MiB'; echo 1980,40",
    );
    // The fake nvcc "builds" NAME.cu into a script printing 1.8 ms, and fails on broken.cu.
    script(
        &bin.join("nvcc"),
        r#"case "$*" in *--version*) echo 'Cuda compilation tools, release 13.0, V13.0.0'; echo end; exit 0 ;; esac
src=""; o=""; prev=""
for a in "$@"; do [ "$prev" = -o ] && o=$a; case $a in *.cu) src=$a ;; esac; prev=$a; done
[ "$src" = broken.cu ] && { echo "broken.cu(1): error: nope" >&2; exit 1; }
name=$(basename "$src" .cu)
printf '#!/bin/sh\necho "PERF workload=%s iters=1 kernel_ms=1.8 per_iter_ms=1.8 verified=1 checksum=0x2 peak_mem_mib=1.0"\n' "$name" > "$o"
chmod +x "$o""#,
    );
    let run = Command::new("bash")
        .arg(bundle.join("run-perf.sh"))
        .arg(&bundle)
        .arg(&out)
        .env("PATH", path_with(&bin))
        .env("PERF_REPS", "2")
        .env("PERF_MODES", "plain cusafe nvcc")
        .env("NVCC", bin.join("nvcc"))
        .output()
        .expect("bash runs run-perf.sh");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&run.stderr)
    );
    // The failed nvcc build is named with its log, and its runs are skipped.
    assert!(
        stdout.contains("nvcc build of broken failed (see logs/broken.nvcc.build.txt)"),
        "{stdout}"
    );
    assert!(
        stdout.contains("broken.nvcc: not in the bundle; skipped"),
        "{stdout}"
    );
    let log = std::fs::read_to_string(out.join("logs/broken.nvcc.build.txt")).unwrap();
    assert!(log.contains("error: nope"), "{log}");
    let env = std::fs::read_to_string(out.join("env.txt")).unwrap();
    assert!(
        env.contains("nvcc: Cuda compilation tools, release 13.0"),
        "{env}"
    );
    // Rows in the interleaved order: per rep, plain, cusafe, nvcc.
    let tsv = std::fs::read_to_string(out.join("runs.tsv")).unwrap();
    let rows: Vec<(String, String, String)> = tsv
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            (f[0].to_string(), f[1].to_string(), f[2].to_string())
        })
        .collect();
    let want: Vec<(String, String, String)> = [
        ("good", "plain", "1"),
        ("good", "cusafe", "1"),
        ("good", "nvcc", "1"),
        ("good", "plain", "2"),
        ("good", "cusafe", "2"),
        ("good", "nvcc", "2"),
        ("broken", "plain", "1"),
        ("broken", "cusafe", "1"),
        ("broken", "plain", "2"),
        ("broken", "cusafe", "2"),
    ]
    .iter()
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
    .collect();
    assert_eq!(rows, want, "{tsv}");
    // The table reads it: cusafe/nvcc for the workload that has an nvcc build.
    let md = table_md(&out, &bundle);
    assert!(
        md.contains("- cusafe/nvcc: geomean 1.222× (each ratio floored at 1.0: 1.222×) over 1 workload, max 1.222× (good)"),
        "{md}"
    );
    assert!(
        md.contains("excluded from cusafe/nvcc: broken (not run)"),
        "{md}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_preload_mode_runs_the_plain_build_with_the_bundles_runtime() {
    let (dir, bundle, bin, out) = scratch("cusafe-run-perf-pre");
    // The plain build takes 2.1 ms with the bundle's runtime preloaded, else 2.0. (The
    // library is no ELF file: the loader says so and runs the script anyway.)
    let lib = bundle.join("libcusafe_rt.so");
    std::fs::write(&lib, "").unwrap();
    script(
        &bundle.join("w.plain"),
        &format!(
            r#"ms=2.0; [ "$LD_PRELOAD" = "{}" ] && ms=2.1
echo "PERF workload=w iters=1 kernel_ms=$ms per_iter_ms=$ms verified=1 checksum=0x1""#,
            lib.display()
        ),
    );
    build(&bundle, "w", "cusafe", "2.2");
    std::fs::write(bundle.join("WORKLOADS"), "w\n").unwrap();
    script(
        &bin.join("nvidia-smi"),
        "echo 'Fake GPU, 1.0, 1 MiB'; echo 1980,40",
    );
    let run = Command::new("bash")
        .arg(repo().join("scripts/gpu/run-perf.sh"))
        .arg(&bundle)
        .arg(&out)
        .env("PATH", path_with(&bin))
        .env("PERF_REPS", "1")
        .env("PERF_MODES", "plain preload cusafe")
        .output()
        .expect("bash runs run-perf.sh");
    assert!(
        run.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let tsv = std::fs::read_to_string(out.join("runs.tsv")).unwrap();
    let modes: Vec<&str> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').nth(1).unwrap())
        .collect();
    assert_eq!(modes, ["plain", "preload", "cusafe"], "{tsv}");
    let md = table_md(&out, &bundle);
    assert!(
        md.contains("- preload/plain (the runtime's allocator and hooks alone): geomean 1.050×"),
        "{md}"
    );
    assert!(md.contains("| 1.100× | – | – | 1.050× |"), "{md}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn an_unknown_mode_and_a_missing_nvcc_are_refused_with_the_fix() {
    let dir = std::env::temp_dir().join(format!("cusafe-run-perf-bad-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let run = |modes: &str, nvcc: &str| {
        Command::new("bash")
            .arg(repo().join("scripts/gpu/run-perf.sh"))
            .arg(&dir)
            .arg(dir.join("out"))
            .env("PERF_MODES", modes)
            .env("NVCC", nvcc)
            .output()
            .expect("bash runs run-perf.sh")
    };
    let r = run("plain fast", "/nonexistent/nvcc");
    assert_eq!(r.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&r.stderr).contains(
        "unknown mode 'fast' in PERF_MODES; use plain, cusafe, noopt, nvcc, preload, memcheck"
    ));
    std::fs::write(dir.join("x.plain"), "").unwrap();
    let r = run("plain nvcc", "/nonexistent/nvcc");
    assert_eq!(r.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&r.stderr).contains(
            "mode nvcc needs nvcc (/nonexistent/nvcc is missing); set NVCC or drop nvcc from PERF_MODES"
        ),
        "{}",
        String::from_utf8_lossy(&r.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn run_variance_interleaves_the_builds_and_summarises_each_pass_count() {
    let (dir, bundle, bin, out) = scratch("cusafe-run-variance");
    // Each build prints its pass count back as the time, plus 1 ms for cusafe.
    script(
        &bundle.join("w.plain"),
        r#"echo "PERF workload=w iters=$2 kernel_ms=1 per_iter_ms=$2.0 verified=1""#,
    );
    script(
        &bundle.join("w.cusafe"),
        r#"echo "PERF workload=w iters=$2 kernel_ms=1 per_iter_ms=$(($2 + 1)).0 verified=1""#,
    );
    script(&bin.join("nvidia-smi"), "echo '1980, 41'");
    let run = Command::new("bash")
        .arg(repo().join("scripts/gpu/run-variance.sh"))
        .arg(&bundle)
        .arg(&out)
        .args(["w", "2", "3", "30"])
        .env("PATH", path_with(&bin))
        .output()
        .expect("bash runs run-variance.sh");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}");
    assert_eq!(
        stdout.lines().collect::<Vec<_>>(),
        [
            "iters 3 plain  min 3.0 median 3.0 max 3.0 (n 2)",
            "iters 3 cusafe min 4.0 median 4.0 max 4.0 (n 2)",
            "iters 30 plain  min 30.0 median 30.0 max 30.0 (n 2)",
            "iters 30 cusafe min 31.0 median 31.0 max 31.0 (n 2)",
        ]
    );
    let tsv = std::fs::read_to_string(out.join("variance-w.tsv")).unwrap();
    assert_eq!(tsv.lines().count(), 9, "{tsv}");
    assert!(
        tsv.lines()
            .nth(1)
            .unwrap()
            .starts_with("3\tplain\t1\t3.0\t1980\t41\t0"),
        "{tsv}"
    );
    // A bundle without the workload says how to make one.
    let bad = Command::new("bash")
        .arg(repo().join("scripts/gpu/run-variance.sh"))
        .arg(&bundle)
        .arg(&out)
        .args(["missing", "1", "3"])
        .output()
        .expect("bash runs run-variance.sh");
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr)
        .contains("build the bundle with scripts/build-perf.sh"));
    let _ = std::fs::remove_dir_all(&dir);
}

/// scripts/build-perf.sh refuses a `CUSAFE_PERF_NOOPT_ENV` that is not pass variables
/// (before it builds anything), naming the fix.
#[test]
fn build_perf_refuses_a_noopt_env_that_is_not_pass_variables() {
    for bad in ["CUSAFE_PASS_DEFER=0 rm", "CC=gcc", "CUSAFE_PASS_DEFER=$(x)"] {
        let out = Command::new("bash")
            .arg(repo().join("scripts/build-perf.sh"))
            .arg(std::env::temp_dir().join("cusafe-build-perf-refused"))
            .env("CUSAFE_PERF_NOOPT_ENV", bad)
            .output()
            .expect("bash runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {err}");
        assert!(
            err.contains("is not a CUSAFE_PASS_NAME=VALUE assignment")
                && err.contains("CUSAFE_PERF_NOOPT_ENV=CUSAFE_PASS_DEFER=0"),
            "{bad}: {err}"
        );
    }
}

/// scripts/sass.sh names a missing input and its usage (before installing anything).
#[test]
fn sass_sh_names_a_missing_input() {
    let out = Command::new("bash")
        .arg(repo().join("scripts/sass.sh"))
        .arg("--plain")
        .arg("/nonexistent/kernel.cu")
        .output()
        .expect("bash runs");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("/nonexistent/kernel.cu: no such file; usage: scripts/sass.sh [--plain] FILE.cu [OUT_DIR]"),
        "{err}"
    );
}

/// scripts/lib/sass-counts.awk (scripts/sass.sh's counts) on a hand-made listing: a
/// report path that falls through after the check's branch, its lone EXIT and a callee
/// after the kernel are not hot; a kernel without checks is all hot.
#[test]
fn sass_counts_leave_report_paths_and_callees_out_of_hot() {
    let out = Command::new("awk")
        .arg("-f")
        .arg(repo().join("scripts/lib/sass-counts.awk"))
        .arg(repo().join("perf-suite/tests/fixtures/checked.sass"))
        .output()
        .expect("awk runs");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.lines().collect::<Vec<_>>(),
        [
            "checked: 14 instructions (6 hot: no report path, no callee), LDG 2, STG 1, LDS 0, STS 0, BRA 1, BSSY 0, CALL 1",
            "plain: 4 instructions (4 hot: no report path, no callee), LDG 1, STG 1, LDS 0, STS 0, BRA 0, BSSY 0, CALL 0",
        ]
    );
}
