//! scripts/ab-runtime-bundle.sh without a GPU: from a fake perf bundle, the A/B bundle
//! holds each workload's plain and cusafe builds beside runtime A, the cusafe build again
//! beside runtime B in new/, and a noopt script that runs that second copy; a workload
//! the bundle lacks is refused with what to do.

mod common;

use std::path::Path;
use std::process::Command;

use common::{repo, script};

/// Makes a perf bundle in `dir` with workload `alpha` (its builds print their own path)
/// and the files the script copies.
fn fake_bundle(dir: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    std::fs::write(dir.join("WORKLOADS"), "alpha\n").unwrap();
    std::fs::write(dir.join("COMMIT"), "abc\n").unwrap();
    for build in ["alpha.plain", "alpha.cusafe"] {
        script(&dir.join(build), r#"echo "ran $0 $*""#);
    }
    for f in ["libcudart.so.12", "run-perf.sh", "libcusafe_rt.so"] {
        std::fs::write(dir.join(f), format!("{f} of the bundle")).unwrap();
    }
}

fn ab(args: &[&Path]) -> std::process::Output {
    Command::new(repo().join("scripts/ab-runtime-bundle.sh"))
        .args(args)
        .output()
        .expect("runs ab-runtime-bundle.sh")
}

#[test]
fn the_noopt_build_runs_the_cusafe_build_beside_the_second_runtime() {
    let dir = std::env::temp_dir().join(format!("cusafe-ab-runtime-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (bundle, out, new) = (dir.join("bundle"), dir.join("ab"), dir.join("new.so"));
    fake_bundle(&bundle);
    std::fs::write(&new, "runtime B").unwrap();

    let run = ab(&[&bundle, Path::new("-"), &new, &out]);
    assert!(run.status.success(), "{run:?}");
    let read = |p: &str| std::fs::read_to_string(out.join(p)).unwrap();
    assert_eq!(read("libcusafe_rt.so"), "libcusafe_rt.so of the bundle");
    assert_eq!(read("new/libcusafe_rt.so"), "runtime B");
    assert_eq!(read("new/libcudart.so.12"), "libcudart.so.12 of the bundle");
    assert_eq!(read("WORKLOADS"), "alpha\n");
    assert!(read("NOOPT_ENV").starts_with("A/B of the runtime"));

    let noopt = Command::new(out.join("alpha.noopt"))
        .arg("--quick")
        .output()
        .expect("runs the noopt script");
    let said = String::from_utf8_lossy(&noopt.stdout).into_owned();
    assert!(
        said.trim_end()
            .ends_with(&format!("{}/new/alpha.cusafe --quick", out.display())),
        "{said}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_workload_the_bundle_lacks_is_refused_with_the_fix() {
    let dir = std::env::temp_dir().join(format!("cusafe-ab-missing-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let bundle = dir.join("bundle");
    fake_bundle(&bundle);
    let out = dir.join("ab");
    let lib = bundle.join("libcusafe_rt.so");
    let run = ab(&[&bundle, Path::new("-"), &lib, &out, Path::new("beta")]);
    assert_eq!(run.status.code(), Some(2), "{run:?}");
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(
        err.contains("beta.plain is missing; is beta one of the bundle's workloads?"),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
