//! The bundle scripts/build-perf.sh wrote: COMMIT, WORKLOADS, NOOPT_ENV, and per workload its
//! kernels' ptxas figures (NAME.ptxas.tsv) and the pass's stats (NAME.cusafe.stats,
//! NAME.noopt.stats).

use crate::checks::{self, Checks};
use crate::ptxas::{self, Usage};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The builds a bundle holds, in table order.
pub const BUILDS: [&str; 3] = ["plain", "cusafe", "noopt"];

/// What the noopt build is made with unless the bundle's NOOPT_ENV says otherwise.
pub const NOOPT_DEFAULT: &str = "CUSAFE_PASS_OPT=0";

/// The builds whose stats files carry check counts.
pub const INSTRUMENTED: [&str; 2] = ["cusafe", "noopt"];

/// A bundle directory.
#[derive(Clone, Debug)]
pub struct Bundle {
    dir: PathBuf,
    /// Its COMMIT file (the repository's HEAD when it was built), when present.
    pub commit: Option<String>,
    /// The workloads its WORKLOADS file lists (those last built), in order.
    pub workloads: Vec<String>,
    /// Its NOOPT_ENV file: the pass variables the third build was made with, when the
    /// bundle says (`CUSAFE_PERF_NOOPT_ENV`; `CUSAFE_PASS_OPT=0` when absent).
    pub noopt_env: Option<String>,
}

/// What the bundle says about one workload's builds.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct WorkloadBuild {
    /// Per build (plain, cusafe, noopt): the maxima over its kernels.
    pub usage: BTreeMap<String, Usage>,
    /// Per instrumented build (cusafe, noopt): check counts summed over functions.
    pub checks: BTreeMap<String, Checks>,
}

impl Bundle {
    /// Opens a bundle directory; fails when it is not a directory.
    pub fn open(dir: &Path) -> Result<Bundle, String> {
        if !dir.is_dir() {
            return Err(format!(
                "{}: not a directory; pass the folder scripts/build-perf.sh wrote (e.g. build/perf)",
                dir.display()
            ));
        }
        let read = |name: &str| std::fs::read_to_string(dir.join(name)).ok();
        let commit = read("COMMIT")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        let workloads = read("WORKLOADS")
            .unwrap_or_default()
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(String::from)
            .collect();
        let noopt_env = read("NOOPT_ENV")
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty());
        Ok(Bundle {
            dir: dir.to_path_buf(),
            commit,
            workloads,
            noopt_env,
        })
    }

    /// Reads one workload's ptxas figures and stats (missing files give empty maps).
    pub fn workload(&self, name: &str) -> Result<WorkloadBuild, String> {
        let kernels = ptxas::load(&self.dir.join(format!("{name}.ptxas.tsv")))?;
        let mut w = WorkloadBuild::default();
        for build in BUILDS {
            if let Some(u) = ptxas::usage(&kernels, build) {
                w.usage.insert(build.to_string(), u);
            }
        }
        for build in INSTRUMENTED {
            if let Some(c) = checks::load(&self.dir.join(format!("{name}.{build}.stats")))? {
                w.checks.insert(build.to_string(), c);
            }
        }
        Ok(w)
    }
}
