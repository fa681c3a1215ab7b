//! scripts/gpu/run-multigpu.sh and scripts/gpu/multigpu-summary.py without a GPU: a
//! bundle whose suite programs, `cusafe` and framework script are shell scripts, with a
//! fake `nvidia-smi` (two GPUs), `compute-sanitizer` and `python3` (torch's part; the
//! rest goes to the real python3) on PATH. Checks the argument handling (--only,
//! --skip, unknown parts), what lands in OUT, and that the summary scores the suite
//! part with the manifest (found, clean, skipped) and adds up the fuzz clients.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn script(path: &Path, body: &str) {
    std::fs::write(path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("repository root")
        .to_path_buf()
}

/// The line of the program's `cusafe-expect:` marker.
fn marker_line(program: &str) -> usize {
    let src = std::fs::read_to_string(repo().join(format!("security-suite/programs/{program}.cu")))
        .expect("program source");
    src.lines()
        .position(|l| l.contains("cusafe-expect:"))
        .expect("marker")
        + 1
}

/// A shared object that is harmless to preload (the C library this test runs with), so
/// that run-examples.sh's LD_PRELOAD run of a shell-script program prints nothing more.
fn harmless_so() -> PathBuf {
    let maps = std::fs::read_to_string("/proc/self/maps").expect("maps");
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.contains("/libc.so"))
        .map(PathBuf::from)
        .expect("libc in the maps")
}

struct Scratch {
    dir: PathBuf,
    bundle: PathBuf,
    bin: PathBuf,
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn bundle(name: &str) -> Scratch {
    let dir =
        std::env::temp_dir().join(format!("cusafe-run-multigpu-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (bundle, bin) = (dir.join("bundle"), dir.join("bin"));
    for d in [
        bundle.join("suite"),
        bundle.join("fuzz/tgt/seeds"),
        bundle.join("frameworks"),
        bin.clone(),
    ] {
        std::fs::create_dir_all(d).unwrap();
    }
    let suite = bundle.join("suite");
    std::fs::copy(
        repo().join("scripts/gpu/run-examples.sh"),
        suite.join("run-examples.sh"),
    )
    .unwrap();
    std::fs::copy(harmless_so(), suite.join("libcusafe_rt.so")).unwrap();
    std::fs::write(suite.join("COMMIT"), "test\n").unwrap();
    std::fs::write(bundle.join("COMMIT"), "test\n").unwrap();
    std::fs::copy(
        repo().join("scripts/gpu/run-multigpu.sh"),
        bundle.join("run-multigpu.sh"),
    )
    .unwrap();
    // A bug cusafe finds, a correct program, and one that says it cannot run here.
    let bug = "heap_multigpu_dev1_overflow";
    let report = format!(
        "echo '==1==ERROR: cusafe: heap-buffer-overflow in kernel to_record on device 1 at security-suite/programs/{bug}.cu:{}:5'; echo 'SUMMARY: cusafe: heap-buffer-overflow'; exit 1",
        marker_line(bug)
    );
    script(&suite.join(format!("{bug}.cusafe")), &report);
    script(
        &suite.join(format!("{bug}.plain")),
        "echo 'record of 1000 outputs'",
    );
    for build in ["cusafe", "plain"] {
        script(
            &suite.join(format!("ok_multigpu_threads.{build}")),
            "echo 'all results correct'",
        );
        script(
            &suite.join(format!("ok_multigpu_peer.{build}")),
            "echo 'skipped: devices 0 and 1 cannot access each other'\"'\"'s memory (no peer access)'; exit 77",
        );
    }
    script(&bundle.join("fuzz/tgt.fuzz"), "exit 0");
    script(&bundle.join("fuzz/tgt.fixed"), "exit 0");
    std::fs::write(bundle.join("fuzz/tgt/seeds/a"), "x").unwrap();
    // `cusafe run -- CMD` runs CMD; `cusafe fuzz` writes each client's stats.
    script(
        &bundle.join("fuzz/cusafe"),
        r#"if [ "$1" = run ]; then shift; [ "$1" = -- ] && shift; echo "stats: allocs: 4" >&2; exec "$@"; fi
o=""; c=1; prev=""
for a in "$@"; do [ "$prev" = -o ] && o=$a; [ "$prev" = --clients ] && c=$a; prev=$a; done
mkdir -p "$o"
stats='{"elapsed_s": 1.0, "execs": 100, "execs_per_s": 100.0, "corpus": 3, "unique_crashes": 0}'
if [ "$c" = 1 ]; then echo "$stats" > "$o/stats.json"; exit 0; fi
i=1; while [ $i -le "$c" ]; do echo "$stats" > "$o/stats-$i.json"; i=$((i + 1)); done"#,
    );
    std::fs::write(bundle.join("frameworks/ddp_allreduce.py"), "# fake\n").unwrap();
    script(
        &bin.join("nvidia-smi"),
        r#"case "$1" in
-L) echo 'GPU 0: Fake GPU (UUID: GPU-0)'; echo 'GPU 1: Fake GPU (UUID: GPU-1)' ;;
--query-gpu=*) echo 'Fake GPU, 1.0, 1 MiB'; echo 'Fake GPU, 1.0, 1 MiB' ;;
topo) echo '	GPU0	GPU1'; echo 'GPU0	 X 	NV18' ;;
esac"#,
    );
    script(
        &bin.join("compute-sanitizer"),
        r#"while [ $# -gt 0 ]; do case $1 in ./*) break ;; esac; shift; done
"$@"; rc=$?; echo '========= ERROR SUMMARY: 0 errors'; exit $rc"#,
    );
    let real_python = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v python3"])
            .output()
            .expect("sh")
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    assert!(!real_python.is_empty(), "python3 is needed on PATH");
    script(
        &bin.join("python3"),
        &format!(
            r#"case "$*" in
*ddp_allreduce.py*) echo "mode $2"; echo 'RESULT ok'; exit 0 ;;
-c*torch*) echo 'python 3'; echo 'torch fake'; exit 0 ;;
esac
exec {real_python} "$@""#
        ),
    );
    Scratch { dir, bundle, bin }
}

fn run(s: &Scratch, out: &Path, args: &[&str]) -> Output {
    run_with(s, out, args, &[])
}

fn run_with(s: &Scratch, out: &Path, args: &[&str], envs: &[(&str, &str)]) -> Output {
    Command::new("bash")
        .arg(s.bundle.join("run-multigpu.sh"))
        .arg(out)
        .args(args)
        .env(
            "PATH",
            format!(
                "{}:{}",
                s.bin.display(),
                std::env::var("PATH").unwrap_or_default()
            ),
        )
        .env(
            "WORK",
            s.dir.join(format!(
                "work-{}",
                out.file_name().unwrap().to_string_lossy()
            )),
        )
        .env("FUZZ_SECS", "1")
        .env("FUZZ_CONFIGS", "1:1 2:2")
        .env("SUITE_SHARDS", "2")
        .envs(envs.iter().copied())
        .output()
        .expect("bash runs run-multigpu.sh")
}

fn files(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn text(o: &Output) -> String {
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

#[test]
fn arguments_are_checked_and_parts_can_be_left_out() {
    let s = bundle("args");
    let o = run(&s, &s.dir.join("o1"), &["--only", "suite,gpus"]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o));
    assert!(text(&o).contains("unknown part gpus"), "{}", text(&o));
    let o = Command::new("bash")
        .arg(s.bundle.join("run-multigpu.sh"))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o).contains("Usage: run-multigpu.sh OUT"),
        "{}",
        text(&o)
    );

    let out = s.dir.join("o2");
    let o = run_with(
        &s,
        &out,
        &["--skip", "fuzz", "--skip", "frameworks", "--skip", "facts"],
        &[("SUITE_SHARDS", "1")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(files(&out), ["progress.txt", "suite.tgz"]);
    let progress = std::fs::read_to_string(out.join("progress.txt")).unwrap();
    assert!(
        progress.contains("suite: 12 runs of 3 programs"),
        "{progress}"
    );
    let out = s.dir.join("o3");
    let o = run(&s, &out, &["--only", "facts,fuzz"]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(files(&out), ["facts.txt", "fuzz.tgz", "progress.txt"]);
    let facts = std::fs::read_to_string(out.join("facts.txt")).unwrap();
    assert!(
        facts.contains("GPU 1: Fake GPU") && facts.contains("NV18"),
        "{facts}"
    );
}

#[test]
fn steps_that_do_not_fit_the_time_budget_are_skipped() {
    let s = bundle("budget");
    let out = s.dir.join("out");
    let o = run_with(
        &s,
        &out,
        &["--only", "frameworks,fuzz"],
        &[("BUDGET_S", "40")],
    );
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(files(&out), ["frameworks.tgz", "fuzz.tgz", "progress.txt"]);
    let progress = std::fs::read_to_string(out.join("progress.txt")).unwrap();
    for want in [
        "frameworks: ddp skipped:",
        "frameworks: single skipped:",
        "fuzz: 1 clients on 1 GPUs skipped:",
        "fuzz: 2 clients on 2 GPUs skipped:",
    ] {
        assert!(progress.contains(want), "{want}\n{progress}");
    }
}

#[test]
fn a_whole_run_is_summarised_into_tables() {
    let s = bundle("whole");
    let out = s.dir.join("out");
    let o = run(&s, &out, &[]);
    assert!(o.status.success(), "{}", text(&o));
    assert_eq!(
        files(&out),
        [
            "facts.txt",
            "frameworks.tgz",
            "fuzz.tgz",
            "progress.txt",
            "suite.tgz"
        ]
    );
    let progress = std::fs::read_to_string(out.join("progress.txt")).unwrap();
    assert!(
        progress.contains("suite: 12 runs of 3 programs")
            && progress.contains("frameworks: ddp 0 0 yes 0")
            && progress.contains("frameworks: single 0 0 yes 0")
            && progress.contains("fuzz: tgt fixed 2 2 1.0 200.0 200 100.0,100.0 3 0 0")
            && progress.contains("done"),
        "{progress}"
    );

    let res = s.dir.join("results");
    let sum = Command::new(repo().join("scripts/gpu/multigpu-summary.py"))
        .arg(&out)
        .arg(&res)
        .args(["--suite-bin", env!("CARGO_BIN_EXE_cusafe-suite")])
        .arg("--raw")
        .arg(s.dir.join("raw"))
        .output()
        .expect("python3 runs the summary");
    assert!(sum.status.success(), "{}", text(&sum));
    let md = std::fs::read_to_string(res.join("multigpu.md")).unwrap();
    for want in [
        "- GPU 1: Fake GPU (UUID: GPU-1)",
        "| cusafe | 1/1 | 1/1 | 0 | 1 | 0 |",
        "| heap_multigpu_dev1_overflow | 2 | found | missed | missed |",
        "| ok_multigpu_threads | 2 | clean | clean | clean |",
        "| ok_multigpu_peer | 2 | skipped (devices 0 and 1 cannot access each other's memory (no peer access))",
        "| ddp | pass | 0 | 0 | yes | 0 |",
        "| tgt | fixed | 2 | 2 | 1.0 | 200.0 | 100.0 | 2.00x |",
    ] {
        assert!(md.contains(want), "{want}\n{md}");
    }
    let suite = std::fs::read_to_string(res.join("suite.md")).unwrap();
    assert!(
        suite.contains("Skipped, in no total: 1 program: ok_multigpu_peer"),
        "{suite}"
    );
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(res.join("multigpu.json")).unwrap()).unwrap();
    assert_eq!(j["fuzz"][1]["execs_per_s"], "200.0");
    assert_eq!(j["frameworks"][0]["allocs_tagged"], "4");
    assert_eq!(j["suite"]["totals"]["cusafe"]["skipped"], 1);
}
