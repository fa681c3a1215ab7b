//! scripts/gpu/run-ncu.sh and scripts/gpu/ncu-summary.py without a GPU: a bundle whose
//! builds are shell scripts and a fake `ncu` (given through `NCU`) that prints ncu's CSV
//! details page for two launches, and fails when the cusafe build is not run with the
//! runtime preloaded (or the plain one is). Checks runs.tsv, a missing build skipped,
//! and the summary's rows.

mod common;

use std::process::Command;

use common::{harmless_so, repo, script};

/// The fake ncu: the build it was given decides the numbers; the cusafe build must come
/// with LD_PRELOAD, the plain one without.
const FAKE_NCU: &str = r#"prog=""
for a in "$@"; do case $a in ./*) prog=$a ;; esac; done
mode=${prog##*.}
if [ "$mode" = cusafe ]; then
  [ -n "$LD_PRELOAD" ] || { echo "cusafe build without the runtime preloaded" >&2; exit 5; }
  d='1,200'; r=32
else
  [ -z "$LD_PRELOAD" ] || { echo "plain build with a preload" >&2; exit 6; }
  d='1,000'; r=16
fi
echo "==PROF== Connected to process 1 ($prog)"
echo '"ID","Process ID","Kernel Name","Section Name","Metric Name","Metric Unit","Metric Value"'
for id in 0 1; do
  echo "\"$id\",\"1\",\"<unnamed>::k$id(float *, int)\",\"GPU Speed Of Light Throughput\",\"Duration\",\"ns\",\"$d\""
  echo "\"$id\",\"1\",\"<unnamed>::k$id(float *, int)\",\"Launch Statistics\",\"Registers Per Thread\",\"register/thread\",\"$r\""
done
echo "==PROF== Disconnected from process 1""#;

#[test]
fn plain_and_preloaded_cusafe_builds_are_profiled_and_summarised_side_by_side() {
    let dir = std::env::temp_dir().join(format!("cusafe-run-ncu-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (bundle, out) = (dir.join("bundle"), dir.join("out"));
    std::fs::create_dir_all(&bundle).unwrap();
    std::fs::write(bundle.join("WORKLOADS"), "alpha\nbeta\n").unwrap();
    for build in ["alpha.plain", "alpha.cusafe", "beta.plain"] {
        script(&bundle.join(build), "exit 0");
    }
    std::fs::copy(harmless_so(), bundle.join("libcusafe_rt.so")).unwrap();
    let ncu = dir.join("ncu");
    script(&ncu, FAKE_NCU);

    let run = Command::new(repo().join("scripts/gpu/run-ncu.sh"))
        .arg(&bundle)
        .arg(&out)
        .env("NCU", &ncu)
        .output()
        .expect("runs run-ncu.sh");
    let text = String::from_utf8_lossy(&run.stdout).into_owned();
    assert!(
        run.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(
        text.contains("beta.cusafe: not in the bundle; skipped"),
        "{text}"
    );
    let runs = std::fs::read_to_string(out.join("runs.tsv")).unwrap();
    assert_eq!(
        runs,
        "workload\tmode\trc\nalpha\tplain\t0\nalpha\tcusafe\t0\nbeta\tplain\t0\n"
    );

    let sum = Command::new(repo().join("scripts/gpu/ncu-summary.py"))
        .arg(&out)
        .output()
        .expect("python3 runs the summary");
    assert!(
        sum.status.success(),
        "{}",
        String::from_utf8_lossy(&sum.stderr)
    );
    let md = std::fs::read_to_string(out.join("kernels.md")).unwrap();
    for want in [
        "| alpha | k0 (0) | 1,000 → 1,200 | 1.20x | 16 → 32 |",
        "| alpha | k1 (1) | 1,000 → 1,200 | 1.20x | 16 → 32 |",
    ] {
        assert!(md.contains(want), "{want}\n{md}");
    }
    // beta has no cusafe profile: no row.
    assert!(!md.contains("| beta |"), "{md}");
    let json = std::fs::read_to_string(out.join("kernels.json")).unwrap();
    assert!(json.contains("\"Duration\""), "{json}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_bad_setting_is_refused_with_what_to_set() {
    let dir = std::env::temp_dir().join(format!("cusafe-run-ncu-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let run = Command::new(repo().join("scripts/gpu/run-ncu.sh"))
        .arg(&dir)
        .arg(dir.join("out"))
        .env("NCU", "/bin/true")
        .env("NCU_COUNT", "two")
        .output()
        .expect("runs run-ncu.sh");
    assert_eq!(run.status.code(), Some(2));
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("NCU_COUNT"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
