//! `cusafe gen`: writing programs, reducing one under a test command, a batch build
//! whose failing compiler run is reduced automatically, and a batch check that finds
//! an output difference. The compiler and the "binaries" are shell-script fakes, so
//! nothing here needs clang or a GPU (the real runs are scripts/build-gen.sh and
//! scripts/gpu/run-gen.sh).

use std::path::Path;

use crate::common::{output, script, tool, TempDir};

const CUSAFE: &str = env!("CARGO_BIN_EXE_cusafe");

fn gen(args: &[&str], dir: &Path) -> (i32, String, String) {
    output(tool(CUSAFE).arg("gen").args(args).current_dir(dir))
}

#[test]
fn write_prints_every_program_and_the_planted_lines() {
    let t = TempDir::new("gen-write");
    let (code, _, err) = gen(
        &["write", "--seed", "7", "--count", "3", "-o", "a.cu"],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(t.path().join("a.cu")).unwrap();
    for s in 7..10 {
        assert!(
            text.contains(&format!("namespace p{s} {{")),
            "program {s} missing"
        );
    }
    assert!(text.contains("int main(int argc, char **argv)"));
    let (code, _, err) = gen(
        &[
            "write", "--seed", "7", "--count", "3", "--plant", "-o", "b.cu",
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    let text = std::fs::read_to_string(t.path().join("b.cu")).unwrap();
    let sites: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("b.cu.plants.json")).unwrap())
            .unwrap();
    let sites = sites.as_array().unwrap();
    assert_eq!(sites.len(), 3);
    for s in sites {
        let line = text
            .lines()
            .nth(s["line"].as_u64().unwrap() as usize - 1)
            .unwrap();
        assert!(
            line.contains(&format!("cusafe-expect: {}", s["kind"].as_str().unwrap())),
            "{line}"
        );
    }
}

#[test]
fn reduce_keeps_what_the_test_wants_and_little_else() {
    let t = TempDir::new("gen-reduce");
    // Seed 3 has an atomic (checked below on the unreduced program).
    let (code, _, err) = gen(&["write", "--seed", "3", "-o", "full.cu"], t.path());
    assert_eq!(code, 0, "{err}");
    let full = std::fs::read_to_string(t.path().join("full.cu")).unwrap();
    assert!(full.contains("atomic"), "seed 3 should have an atomic");
    let (code, out, err) = gen(
        &[
            "reduce",
            "--seed",
            "3",
            "--test",
            "grep -q 'atomic[A-Z][a-z]*(&b0'",
            "-o",
            "red",
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let reduced = std::fs::read_to_string(t.path().join("red/reduced.cu")).unwrap();
    assert!(reduced.contains("(&b0"), "the interesting part is gone");
    assert!(
        reduced.len() * 2 < full.len(),
        "{} vs {}",
        reduced.len(),
        full.len()
    );
    assert!(out.contains("tests"), "{out}");
    // The saved representation prints the same program again.
    let (code, _, err) = gen(
        &["write", "--from", "red/reduced.json", "-o", "again.cu"],
        t.path(),
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        std::fs::read_to_string(t.path().join("again.cu")).unwrap(),
        reduced
    );
}

#[test]
fn bad_input_is_one_clear_error() {
    let t = TempDir::new("gen-bad");
    for (args, says) in [
        (vec!["write", "--count", "0"], "--count must be at least 1"),
        (vec!["check", "nowhere"], "is this a batch directory"),
        (
            vec!["reduce", "--seed", "1", "--test", "false", "-o", "r"],
            "does not call the starting program interesting",
        ),
        (
            vec!["write", "--from", "missing.json"],
            "cannot read missing.json",
        ),
        (vec!["build", "-o", "b", "--opt", "5"], "levels 0 to 3"),
    ] {
        let (code, _, err) = gen(&args, t.path());
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    }
}

/// A compiler that fails on any source holding `atomicMax`, and otherwise writes a
/// "binary" printing one checksum line per program (a different one at -O3).
const FAKE_CXX: &str = r#"
src=; out=; opt=
while [ $# -gt 0 ]; do
  case "$1" in
    -o) out=$2; shift ;;
    -O*) opt=$1 ;;
    *.cu) src=$1 ;;
  esac
  shift
done
if grep -q atomicMax "$src"; then echo "error: fake backend rejects atomicMax" >&2; exit 1; fi
mark=same; [ "$opt" = -O3 ] && mark=other
{
  echo '#!/bin/sh'
  for s in $(sed -n 's/^namespace p\([0-9]*\) {$/\1/p' "$src"); do
    if [ "$s" = 2 ]; then echo "echo p$s b0 $mark"; else echo "echo p$s b0 same"; fi
  done
} > "$out"
chmod +x "$out"
"#;

#[test]
fn a_failing_build_is_reduced_and_a_difference_is_found_and_saved() {
    let t = TempDir::new("gen-batch");
    let cxx = t.path().join("fake-cxx");
    script(&cxx, FAKE_CXX);
    // Find seeds with and without atomicMax among the first few.
    let with_max: Vec<u64> = (1..40u64)
        .filter(|&s| {
            let p = cusafe_gen::program(s, &cusafe_gen::Recipe::default());
            cusafe_gen::emit::file(&[p]).text.contains("atomicMax")
        })
        .collect();
    assert!(!with_max.is_empty());
    let (code, out, err) = gen(
        &[
            "build",
            "-o",
            "b",
            "--seed",
            "1",
            "--count",
            "40",
            "--per-file",
            "20",
            "--opt",
            "2",
            "--device-only",
            "--cxx",
            cxx.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("failed"), "{out}");
    let failures: Vec<_> = std::fs::read_dir(t.path().join("b/failures"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n != "scratch")
        .collect();
    assert!(!failures.is_empty(), "{err}");
    // Every program of a failing file that fails alone is listed, with the cause.
    let build: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("b/build.json")).unwrap())
            .unwrap();
    let listed: Vec<u64> = build["failed_programs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            assert_eq!(f["cause"], "error: fake backend rejects atomicMax", "{f}");
            f["seed"].as_u64().unwrap()
        })
        .collect();
    assert_eq!(listed, with_max);
    assert!(
        out.contains(&format!("{} programs fail alone", with_max.len())),
        "{out}"
    );
    for f in &failures {
        let seed: u64 = f.split('-').next().unwrap().parse().unwrap();
        assert!(with_max.contains(&seed), "{f}");
        let d = t.path().join("b/failures").join(f);
        let reduced = std::fs::read_to_string(d.join("reduced.cu")).unwrap();
        assert!(reduced.contains("atomicMax"));
        assert_eq!(reduced.matches("atomic").count(), 1, "{reduced}");
        assert!(std::fs::read_to_string(d.join("stderr.txt"))
            .unwrap()
            .contains("rejects atomicMax"));
    }
    // Seeds 2..4 have no atomicMax? Build a batch the fake accepts and check it.
    let clean: Vec<u64> = (1..40u64).filter(|s| !with_max.contains(s)).collect();
    assert!(
        clean.contains(&2),
        "seed 2 is the one the fake's -O3 build gets wrong"
    );
    let (code, out, err) = gen(
        &[
            "build",
            "-o",
            "c",
            "--seed",
            "2",
            "--count",
            "1",
            "--opt",
            "2,3",
            "--cxx",
            cxx.to_str().unwrap(),
        ],
        t.path(),
    );
    assert_eq!(code, 0, "{out}{err}");
    let (code, out, err) = gen(&["check", "c", "--jobs", "2"], t.path());
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains("2 output differences"), "{out}"); // plain and cusafe at -O3
    let check: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(t.path().join("c/check.json")).unwrap())
            .unwrap();
    assert_eq!(check["failing_seeds"], serde_json::json!([2]));
    assert_eq!(check["differences"][0]["build"], "f000.cusafe.O3");
    assert!(t.path().join("c/failures/2/program.json").exists());
}
