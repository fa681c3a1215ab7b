//! Programs that need several GPUs: the manifest's `devices` field, and the scorer
//! skipping them on a run with fewer GPUs (or when their plain run said `skipped:`).

use cusafe_suite::expect::{from_source, Expectation};
use cusafe_suite::manifest::Manifest;
use cusafe_suite::score::{gpu_count, json, markdown, ran, score_with, totals, Verdict};
use std::path::{Path, PathBuf};

const MANIFEST: &str = r#"
[[program]]
name = "one"
class = "spatial"
subclass = "linear"
space = "global"
kind = "heap-buffer-overflow"
in_scope = true

[[program]]
name = "two"
class = "spatial"
subclass = "multi-device"
space = "global"
kind = "heap-buffer-overflow"
in_scope = true
devices = 2

[[program]]
name = "ok_two"
class = "correct"
subclass = "peer"
space = "global"
kind = "none"
in_scope = true
devices = 2
"#;

fn expectations() -> Vec<Expectation> {
    vec![
        from_source(
            "one",
            "p/one.cu",
            "x[n] = 0; // cusafe-expect: heap-buffer-overflow\n",
        )
        .unwrap(),
        from_source("ok_two", "p/ok_two.cu", "int main() {}\n").unwrap(),
        from_source(
            "two",
            "p/two.cu",
            "y[n] = 0; // cusafe-expect: heap-buffer-overflow\n",
        )
        .unwrap(),
    ]
}

struct RunDir(PathBuf);

impl Drop for RunDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A run on `gpus` GPUs (env.txt's `gpu:` lines) with logs for `runs` (program, mode,
/// exit code, log text).
fn run_dir(test: &str, gpus: usize, runs: &[(&str, &str, i32, &str)]) -> RunDir {
    let dir = std::env::temp_dir().join(format!("cusafe-suite-skip-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    let mut env = String::from("date: now\n");
    for _ in 0..gpus {
        env += "gpu: NVIDIA H100 80GB HBM3, 580.159.04, 81559 MiB\n";
    }
    std::fs::write(dir.join("env.txt"), env).unwrap();
    let mut tsv = String::from("program\tmode\trc\tseconds\n");
    for (name, mode, rc, log) in runs {
        std::fs::write(dir.join("logs").join(format!("{name}.{mode}.txt")), log).unwrap();
        tsv += &format!("{name}\t{mode}\t{rc}\t0.1\n");
    }
    std::fs::write(dir.join("runs.tsv"), tsv).unwrap();
    RunDir(dir)
}

fn report(file: &str) -> String {
    format!("==7==ERROR: cusafe: heap-buffer-overflow in kernel k() at {file}:1:3\nSUMMARY: cusafe: heap-buffer-overflow\n")
}

fn verdict(rows: &[cusafe_suite::score::Row], p: &str, tool: &str) -> Verdict {
    rows.iter()
        .find(|r| r.expect.program == p)
        .unwrap()
        .verdicts[tool]
        .clone()
}

#[test]
fn devices_defaults_to_one_and_must_be_positive() {
    let m = Manifest::parse(MANIFEST, "m.toml").expect("valid");
    assert_eq!(m.get("one").unwrap().devices, 1);
    assert_eq!(m.get("two").unwrap().devices, 2);
    m.check(&expectations()).expect("agrees");
    let e = Manifest::parse(
        &MANIFEST.replacen("devices = 2", "devices = 0", 1),
        "m.toml",
    )
    .expect_err("0 GPUs");
    assert!(e.contains("program \"two\": devices = 0"), "{e}");
    let e = Manifest::parse(
        &MANIFEST.replacen("devices = 2", "devices = \"2\"", 1),
        "m.toml",
    )
    .expect_err("a string");
    assert!(e.contains("devices"), "{e}");
}

#[test]
fn gpu_count_reads_env_txt() {
    let run = run_dir("count", 2, &[]);
    assert_eq!(gpu_count(&run.0), Some(2));
    assert_eq!(gpu_count(Path::new("/nonexistent/run")), None);
}

#[test]
fn programs_needing_more_gpus_than_the_run_had_are_skipped_outside_the_totals() {
    let m = Manifest::parse(MANIFEST, "m.toml").unwrap();
    let skip = "skipped: needs 2 GPUs, found 1\n";
    let run = run_dir(
        "one-gpu",
        1,
        &[
            ("one", "plain", 0, "ran\n"),
            ("one", "cusafe", 1, &report("p/one.cu")),
            ("two", "plain", 77, skip),
            ("two", "cusafe", 77, skip),
            ("ok_two", "plain", 77, skip),
            ("ok_two", "cusafe", 77, skip),
        ],
    );
    let rows = score_with(&expectations(), Some(&m), &run.0);
    assert_eq!(verdict(&rows, "one", "cusafe"), Verdict::Found);
    for p in ["two", "ok_two"] {
        for tool in ["cusafe", "preload", "memcheck"] {
            assert_eq!(
                verdict(&rows, p, tool),
                Verdict::Skipped("needs 2 GPUs, the run had 1".into()),
                "{p} {tool}"
            );
        }
    }
    let t = totals(&rows);
    let c = &t.tools["cusafe"];
    assert_eq!(
        (
            c.bugs,
            c.found,
            c.missed,
            c.correct,
            c.false_positives,
            c.skipped
        ),
        (1, 1, 0, 0, 0, 2)
    );
    assert_eq!(t.by_class["correct"]["cusafe"].skipped, 1);
    let md = markdown(&rows, "# run");
    assert!(
        md.contains("| two | spatial / multi-device | global | heap-buffer-overflow @ p/two.cu:1 | skipped (needs 2 GPUs, the run had 1) |"),
        "{md}"
    );
    assert!(
        md.contains("| cusafe (cusafe-clang++ build) | 1/1 | 0 | 0 | 0 | 0 (0) |"),
        "{md}"
    );
    assert!(
        md.contains("Skipped, in no total: 2 programs: ok_two (needs 2 GPUs, the run had 1), two (needs 2 GPUs, the run had 1)."),
        "{md}"
    );
    assert!(md.contains("| correct | 1 skipped |"), "{md}");
    let j: serde_json::Value = serde_json::from_str(&json(&rows)).unwrap();
    assert_eq!(j["totals"]["tools"]["cusafe"]["skipped"], 2);
    assert_eq!(j["rows"][2]["entry"]["devices"], 2);
    assert!(
        j["rows"][0]["entry"].get("devices").is_none(),
        "1 is left out"
    );
}

#[test]
fn with_enough_gpus_they_are_scored_and_a_plain_skip_still_skips() {
    let m = Manifest::parse(MANIFEST, "m.toml").unwrap();
    let no_peer = "skipped: devices 0 and 1 cannot access each other's memory (no peer access)\n";
    let run = run_dir(
        "two-gpus",
        2,
        &[
            ("one", "plain", 0, "ran\n"),
            ("two", "plain", 0, "ran\n"),
            ("two", "cusafe", 1, &report("p/two.cu")),
            ("ok_two", "plain", 77, no_peer),
            ("ok_two", "cusafe", 77, no_peer),
        ],
    );
    let rows = score_with(&expectations(), Some(&m), &run.0);
    assert_eq!(verdict(&rows, "two", "cusafe"), Verdict::Found);
    assert_eq!(verdict(&rows, "one", "cusafe"), Verdict::NotRun);
    assert_eq!(
        verdict(&rows, "ok_two", "cusafe"),
        Verdict::Skipped(
            "devices 0 and 1 cannot access each other's memory (no peer access)".into()
        )
    );
    // Exit 77 without the line is an ordinary failure, not a skip.
    let run = run_dir(
        "77-no-line",
        2,
        &[
            ("ok_two", "plain", 77, "ran\n"),
            ("ok_two", "cusafe", 0, "ran\n"),
        ],
    );
    let rows = score_with(&expectations(), Some(&m), &run.0);
    assert!(matches!(
        verdict(&rows, "ok_two", "cusafe"),
        Verdict::BrokenTest(_)
    ));
}

#[test]
fn ran_keeps_the_programs_the_run_has_rows_for() {
    let run = run_dir(
        "subset",
        2,
        &[("two", "plain", 0, "ran\n"), ("two", "cusafe", 0, "ran\n")],
    );
    let kept = ran(&expectations(), &run.0);
    assert_eq!(
        kept.iter().map(|e| e.program.as_str()).collect::<Vec<_>>(),
        ["two"]
    );
}

/// A run in shards (`run-examples.sh BUNDLE OUT k/n`) writes `runs.K.tsv`, no
/// `runs.tsv`: the scorer reads the shards' exit codes (a correct program whose plain
/// run exited 0 is clean, not a broken test).
#[test]
fn sharded_runs_are_read() {
    let run = run_dir(
        "shards",
        1,
        &[
            ("one", "plain", 0, "ok\n"),
            ("one", "cusafe", 1, &report("p/one.cu")),
        ],
    );
    std::fs::rename(run.0.join("runs.tsv"), run.0.join("runs.1.tsv")).unwrap();
    std::fs::write(run.0.join("logs/ok_two.plain.txt"), "fine\n").unwrap();
    std::fs::write(run.0.join("logs/ok_two.cusafe.txt"), "fine\n").unwrap();
    std::fs::write(
        run.0.join("runs.2.tsv"),
        "program\tmode\trc\tseconds\nok_two\tplain\t0\t0.1\nok_two\tcusafe\t0\t0.1\n",
    )
    .unwrap();
    let exp: Vec<Expectation> = expectations()
        .into_iter()
        .filter(|e| e.program != "two")
        .collect();
    let manifest =
        Manifest::parse(&MANIFEST.replace("devices = 2", "devices = 1"), "m.toml").expect("valid");
    assert_eq!(ran(&exp, &run.0).len(), 2);
    let rows = score_with(&exp, Some(&manifest), &run.0);
    assert_eq!(verdict(&rows, "one", "cusafe"), Verdict::Found);
    assert_eq!(verdict(&rows, "ok_two", "cusafe"), Verdict::Clean);
}
