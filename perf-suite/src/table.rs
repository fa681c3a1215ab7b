//! Per-workload rows (medians over repetitions, ratios, what went wrong) and the
//! summary over the workloads that ran cleanly.

use crate::build::{Bundle, WorkloadBuild};
use crate::logs;
use crate::mean::{geomean, median};
use crate::runs::{self, Metric, Run};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

/// Run modes in table order: the three builds, the user's nvcc build (built on the GPU
/// machine, run-perf.sh's opt-in nvcc mode), the plain build with the runtime preloaded
/// (opt-in: what the allocator and hooks cost without a check), then the plain build
/// under compute-sanitizer memcheck.
pub const MODES: [&str; 6] = ["plain", "cusafe", "noopt", "nvcc", "preload", "memcheck"];

/// The comparisons the summary aggregates: name, numerator mode, denominator mode, and
/// the modes that must have run cleanly for a workload to count.
pub const COMPARISONS: [(&str, &str, &str, &[&str]); 6] = [
    ("cusafe/plain", "cusafe", "plain", &["plain", "cusafe"]),
    ("noopt/plain", "noopt", "plain", &["plain", "noopt"]),
    ("preload/plain", "preload", "plain", &["plain", "preload"]),
    ("cusafe/nvcc", "cusafe", "nvcc", &["nvcc", "cusafe"]),
    ("plain/nvcc", "plain", "nvcc", &["nvcc", "plain"]),
    (
        "memcheck/cusafe",
        "memcheck",
        "cusafe",
        &["plain", "cusafe", "memcheck"],
    ),
];

/// Why a mode's runs do not count.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
#[serde(tag = "reason", rename_all = "kebab-case")]
pub enum Reason {
    /// No run of this mode.
    NotRun,
    /// A run exited non-zero without a report or a wrong result.
    Failed {
        /// The exit status.
        rc: i32,
    },
    /// A run hit run-perf.sh's timeout.
    TimedOut,
    /// A run exited 0 without a PERF line.
    NoResult,
    /// The output did not match the reference (verified=0).
    Unverified,
    /// The output's checksum differs from the plain build's.
    ChecksumMismatch {
        /// This mode's checksum.
        got: String,
        /// The plain build's checksum(s).
        plain: String,
    },
    /// cusafe reported an error on a correct workload.
    FalsePositive {
        /// The report (kind, kernel, place).
        report: String,
    },
    /// Clean runs, but no ratio: a time of zero.
    NoRatio,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::NotRun => write!(f, "not run"),
            Reason::Failed { rc } => write!(f, "failed (exit {rc})"),
            Reason::TimedOut => write!(f, "timed out"),
            Reason::NoResult => write!(f, "no PERF line"),
            Reason::Unverified => write!(f, "unverified (wrong output)"),
            Reason::ChecksumMismatch { got, plain } => {
                write!(f, "checksum mismatch ({got}, plain {plain})")
            }
            Reason::FalsePositive { report } => {
                write!(f, "cusafe report = false positive ({report})")
            }
            Reason::NoRatio => write!(f, "no ratio (a time of zero)"),
        }
    }
}

/// A reason with the mode it applies to.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Problem {
    /// One of [`MODES`].
    pub mode: String,
    /// What went wrong.
    #[serde(flatten)]
    pub reason: Reason,
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.mode, self.reason)
    }
}

/// One mode's runs of one workload, summarised.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct ModeResult {
    /// Runs made.
    pub runs: usize,
    /// Their exit statuses, in repetition order.
    pub rcs: Vec<i32>,
    /// Median per-pass kernel time over the runs with a result line, ms.
    pub per_iter_ms: Option<f64>,
    /// The per-pass times of those runs, in repetition order, ms.
    pub samples_ms: Vec<f64>,
    /// Every run printed verified=1 (false when none did).
    pub verified: bool,
    /// The distinct output checksums, in order of first appearance.
    pub checksums: Vec<String>,
    /// Peak device memory over the runs, MiB.
    pub peak_mem_mib: Option<f64>,
    /// The workload's own figure (median over the runs), when it prints one.
    pub metric: Option<Metric>,
    /// compute-sanitizer's error count (memcheck mode; the most over its runs).
    pub memcheck_errors: Option<u64>,
    /// Why these runs do not count, one entry per distinct reason; empty when clean.
    /// (The JSON has them in the row's `problems`, with the mode.)
    #[serde(skip)]
    pub problems: Vec<Reason>,
}

impl ModeResult {
    /// Summarises the runs of one mode; `logs[i]` is the log of `runs[i]` (empty when
    /// missing).
    pub fn from_runs(runs: &[&Run], logs: &[String]) -> ModeResult {
        let mut m = ModeResult {
            runs: runs.len(),
            rcs: runs.iter().map(|r| r.rc).collect(),
            ..ModeResult::default()
        };
        if runs.is_empty() {
            m.problems.push(Reason::NotRun);
            return m;
        }
        let perfs: Vec<_> = runs.iter().filter_map(|r| r.perf.as_ref()).collect();
        let times: Vec<f64> = perfs.iter().map(|p| p.per_iter_ms).collect();
        m.per_iter_ms = median(&times);
        m.samples_ms = times;
        m.verified = perfs.len() == runs.len() && perfs.iter().all(|p| p.verified);
        for p in &perfs {
            if !p.checksum.is_empty() && !m.checksums.contains(&p.checksum) {
                m.checksums.push(p.checksum.clone());
            }
        }
        m.peak_mem_mib = perfs.iter().filter_map(|p| p.peak_mem_mib).reduce(f64::max);
        if let Some(first) = perfs.iter().find_map(|p| p.metric.as_ref()) {
            let values: Vec<f64> = perfs
                .iter()
                .filter_map(|p| p.metric.as_ref())
                .filter(|x| x.name == first.name)
                .map(|x| x.value)
                .collect();
            m.metric = median(&values).map(|value| Metric {
                name: first.name.clone(),
                value,
            });
        }
        m.memcheck_errors = logs.iter().filter_map(|l| logs::memcheck_errors(l)).max();
        for (i, r) in runs.iter().enumerate() {
            let log = logs.get(i).map_or("", String::as_str);
            let reason = if let Some(report) = logs::cusafe_report(log) {
                Some(Reason::FalsePositive { report })
            } else if r.rc == 124 {
                Some(Reason::TimedOut)
            } else if r.perf.as_ref().is_some_and(|p| !p.verified) {
                Some(Reason::Unverified)
            } else if r.rc != 0 {
                Some(Reason::Failed { rc: r.rc })
            } else if r.perf.is_none() {
                Some(Reason::NoResult)
            } else {
                None
            };
            if let Some(reason) = reason.filter(|x| !m.problems.contains(x)) {
                m.problems.push(reason);
            }
        }
        m
    }
}

/// One workload: every mode's results, ratios, the bundle's figures, what went wrong.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Row {
    /// Workload name.
    pub workload: String,
    /// The plain build's runs.
    pub plain: ModeResult,
    /// The cusafe build's runs.
    pub cusafe: ModeResult,
    /// The cusafe build without check elimination (ablation).
    pub noopt: ModeResult,
    /// The user's nvcc -O3 build, made on the GPU machine.
    pub nvcc: ModeResult,
    /// The plain build with the runtime preloaded (allocator and hooks, no checks).
    pub preload: ModeResult,
    /// The plain build under compute-sanitizer memcheck (one pass).
    pub memcheck: ModeResult,
    /// Per comparison of [`COMPARISONS`] that has both times: the numerator mode's
    /// median per-pass time over the denominator mode's.
    pub ratios: BTreeMap<String, f64>,
    /// Every cusafe checksum is one of the plain build's (`None` when either has none).
    pub checksum_match: Option<bool>,
    /// Registers, stack, spills and checks from the bundle.
    pub build: WorkloadBuild,
    /// Everything that went wrong, per mode (checksum mismatches included).
    pub problems: Vec<Problem>,
}

fn ratio(num: Option<f64>, den: Option<f64>) -> Option<f64> {
    match (num, den) {
        (Some(n), Some(d)) if d > 0.0 => Some(n / d),
        _ => None,
    }
}

/// Whether every checksum of `m` is one of `plain`'s; `None` when either has none.
fn checksums_agree(m: &ModeResult, plain: &ModeResult) -> Option<bool> {
    if m.checksums.is_empty() || plain.checksums.is_empty() {
        return None;
    }
    Some(m.checksums.iter().all(|c| plain.checksums.contains(c)))
}

impl Row {
    /// Builds a row from one workload's runs (any order, other workloads' skipped),
    /// `log(run)` giving each run's log text, and the bundle's figures.
    pub fn new(
        workload: &str,
        runs: &[Run],
        log: &dyn Fn(&Run) -> String,
        build: WorkloadBuild,
    ) -> Row {
        let mode = |name: &str| {
            let mut mine: Vec<&Run> = runs
                .iter()
                .filter(|r| r.workload == workload && r.mode == name)
                .collect();
            mine.sort_by_key(|r| r.rep);
            let texts: Vec<String> = mine.iter().map(|r| log(r)).collect();
            ModeResult::from_runs(&mine, &texts)
        };
        let (plain, cusafe, noopt, nvcc, preload, memcheck) = (
            mode("plain"),
            mode("cusafe"),
            mode("noopt"),
            mode("nvcc"),
            mode("preload"),
            mode("memcheck"),
        );
        let mut problems = Vec::new();
        for (name, m) in [
            ("plain", &plain),
            ("cusafe", &cusafe),
            ("noopt", &noopt),
            ("nvcc", &nvcc),
            ("preload", &preload),
            ("memcheck", &memcheck),
        ] {
            // A mode that no workload of the run has (nvcc is opt-in, memcheck often
            // runs in a call of its own) is not a problem of this workload.
            let in_run = runs.iter().any(|r| r.mode == name);
            for reason in m
                .problems
                .iter()
                .filter(|x| in_run || **x != Reason::NotRun)
            {
                problems.push(Problem {
                    mode: name.to_string(),
                    reason: reason.clone(),
                });
            }
            // memcheck runs the plain build with one pass, and nvcc is another compiler
            // (it fuses multiply-adds across statements): their outputs may differ.
            if name == "cusafe" || name == "noopt" || name == "preload" {
                if let Some(false) = checksums_agree(m, &plain) {
                    problems.push(Problem {
                        mode: name.to_string(),
                        reason: Reason::ChecksumMismatch {
                            got: m.checksums.join(","),
                            plain: plain.checksums.join(","),
                        },
                    });
                }
            }
        }
        let mut row = Row {
            workload: workload.to_string(),
            ratios: BTreeMap::new(),
            checksum_match: checksums_agree(&cusafe, &plain),
            plain,
            cusafe,
            noopt,
            nvcc,
            preload,
            memcheck,
            build,
            problems,
        };
        for (name, num, den, _) in COMPARISONS {
            let time = |mode| row.mode(mode).and_then(|m| m.per_iter_ms);
            if let Some(x) = ratio(time(num), time(den)) {
                row.ratios.insert(name.to_string(), x);
            }
        }
        row
    }

    /// The results of one mode (one of [`MODES`]).
    pub fn mode(&self, name: &str) -> Option<&ModeResult> {
        match name {
            "plain" => Some(&self.plain),
            "cusafe" => Some(&self.cusafe),
            "noopt" => Some(&self.noopt),
            "nvcc" => Some(&self.nvcc),
            "preload" => Some(&self.preload),
            "memcheck" => Some(&self.memcheck),
            _ => None,
        }
    }

    /// The problems of the given modes.
    pub fn problems_in(&self, modes: &[&str]) -> Vec<&Problem> {
        self.problems
            .iter()
            .filter(|p| modes.contains(&p.mode.as_str()))
            .collect()
    }

    /// The ratio of a comparison (by its name in [`COMPARISONS`]).
    pub fn ratio(&self, comparison: &str) -> Option<f64> {
        self.ratios.get(comparison).copied()
    }
}

/// Problems in words: "not run" when every one is [`Reason::NotRun`], else each as
/// `mode: reason`, joined by "; ".
pub fn describe<'a>(problems: impl IntoIterator<Item = &'a Problem>) -> String {
    let all: Vec<&Problem> = problems.into_iter().collect();
    if !all.is_empty() && all.iter().all(|p| p.reason == Reason::NotRun) {
        return "not run".to_string();
    }
    all.iter()
        .map(|p| p.to_string())
        .collect::<Vec<_>>()
        .join("; ")
}

/// A workload left out of a comparison, and why.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Excluded {
    /// Workload name.
    pub workload: String,
    /// The problems that exclude it.
    pub problems: Vec<Problem>,
}

/// The largest ratio of a comparison.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Max {
    /// Where it is.
    pub workload: String,
    /// The ratio.
    pub ratio: f64,
}

/// One comparison over the workloads that ran cleanly in the modes it needs.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Aggregate {
    /// Its name, e.g. `cusafe/plain`.
    pub comparison: String,
    /// The workloads counted.
    pub workloads: Vec<String>,
    /// Geometric mean of their ratios.
    pub geomean: Option<f64>,
    /// Geometric mean of their ratios each floored at 1.0: no credit for a workload that
    /// runs faster in the numerator's build (different code generation, not a property
    /// of the checks).
    pub floored_geomean: Option<f64>,
    /// The largest ratio among them.
    pub max: Option<Max>,
    /// Every workload left out, with the reasons.
    pub excluded: Vec<Excluded>,
}

/// A workload's own figure (e.g. llama_decode's tokens/s), plain vs cusafe.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct MetricChange {
    /// Workload name.
    pub workload: String,
    /// The figure's name (`passes_per_s` when derived from the per-pass times).
    pub metric: String,
    /// Median in the plain build.
    pub plain: f64,
    /// Median in the cusafe build.
    pub cusafe: f64,
    /// Median in the noopt build, when it ran.
    pub noopt: Option<f64>,
    /// `(1 - cusafe / plain) * 100`: the drop of a throughput figure, in percent.
    pub drop_percent: f64,
    /// Both builds ran cleanly.
    pub clean: bool,
}

/// The summary lines.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Summary {
    /// cusafe/plain, noopt/plain and memcheck/cusafe.
    pub comparisons: Vec<Aggregate>,
    /// Workloads' own figures (tokens/s and the like).
    pub metrics: Vec<MetricChange>,
    /// Warnings about the inputs (bundle and run from different commits, ...).
    pub notes: Vec<String>,
}

/// The workload whose throughput the summary always shows: its own metric
/// (tokens_per_s) when its result line has one, else passes per second.
pub const HEADLINE: &str = "llama_decode";

/// A workload's own figure, plain vs cusafe; for [`HEADLINE`] without one, passes per
/// second from the per-pass times.
fn metric_change(r: &Row) -> Option<MetricChange> {
    let own = |m: &ModeResult| m.metric.as_ref().map(|x| (x.name.clone(), x.value));
    let derived = |m: &ModeResult| {
        m.per_iter_ms
            .filter(|t| *t > 0.0)
            .map(|t| ("passes_per_s".to_string(), 1000.0 / t))
    };
    let pick: &dyn Fn(&ModeResult) -> Option<(String, f64)> =
        if own(&r.plain).is_some() || r.workload != HEADLINE {
            &own
        } else {
            &derived
        };
    let ((name, plain), (cname, cusafe)) = (pick(&r.plain)?, pick(&r.cusafe)?);
    (name == cname && plain != 0.0).then(|| MetricChange {
        workload: r.workload.clone(),
        metric: name,
        plain,
        cusafe,
        noopt: pick(&r.noopt).map(|(_, v)| v),
        drop_percent: (1.0 - cusafe / plain) * 100.0,
        clean: r.problems_in(&["plain", "cusafe"]).is_empty(),
    })
}

/// Aggregates the rows: every comparison whose modes the run has (a mode no workload
/// ran, such as the opt-in nvcc, leaves its comparisons out).
pub fn summarize(rows: &[Row]) -> Summary {
    let ran = |mode: &str| {
        rows.iter()
            .any(|r| r.mode(mode).is_some_and(|m| m.runs > 0))
    };
    let comparisons = COMPARISONS
        .iter()
        .filter(|(_, num, den, _)| ran(num) && ran(den))
        .map(|(name, _, _, needs)| {
            let mut included = Vec::new();
            let mut excluded = Vec::new();
            for r in rows {
                let problems: Vec<Problem> = r.problems_in(needs).into_iter().cloned().collect();
                match (problems.is_empty(), r.ratio(name)) {
                    (true, Some(x)) => included.push((r.workload.clone(), x)),
                    (true, None) => excluded.push(Excluded {
                        workload: r.workload.clone(),
                        problems: vec![Problem {
                            mode: name.to_string(),
                            reason: Reason::NoRatio,
                        }],
                    }),
                    (false, _) => excluded.push(Excluded {
                        workload: r.workload.clone(),
                        problems,
                    }),
                }
            }
            let ratios: Vec<f64> = included.iter().map(|(_, x)| *x).collect();
            Aggregate {
                comparison: name.to_string(),
                geomean: geomean(&ratios),
                floored_geomean: geomean(&ratios.iter().map(|x| x.max(1.0)).collect::<Vec<_>>()),
                max: included
                    .iter()
                    .max_by(|a, b| a.1.total_cmp(&b.1))
                    .map(|(w, x)| Max {
                        workload: w.clone(),
                        ratio: *x,
                    }),
                workloads: included.into_iter().map(|(w, _)| w).collect(),
                excluded,
            }
        })
        .collect();
    let metrics = rows.iter().filter_map(metric_change).collect();
    Summary {
        comparisons,
        metrics,
        notes: Vec::new(),
    }
}

/// Everything the table shows (and the JSON holds).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Report {
    /// The run's env.txt (date, host, GPU, driver, compute-sanitizer, bundle commit);
    /// for several run directories, each one's under a `run DIR:` line.
    pub env: String,
    /// The bundle's COMMIT.
    pub build_commit: Option<String>,
    /// What the noopt build was made with: the bundle's NOOPT_ENV, or check elimination
    /// off (`CUSAFE_PASS_OPT=0`) when the bundle does not say.
    pub noopt_env: String,
    /// One row per workload, by name.
    pub rows: Vec<Row>,
    /// Aggregates over the rows.
    pub summary: Summary,
}

/// The `bundle:` line of env.txt.
fn env_commit(env: &str) -> Option<&str> {
    env.lines()
        .find_map(|l| l.strip_prefix("bundle:"))
        .map(str::trim)
}

/// Reads one or more run directories (env.txt, runs.tsv, logs/) and the bundle they
/// ran, and builds the report. Several directories are the parts of one suite run split
/// over device calls (`PERF_ONLY`): without `pool` a workload may appear in only one of
/// them; with it, a workload's runs in several directories are pooled, their reps
/// numbered on in the order given (a rerun of the same bundle at more reps, such as the
/// launch-bound workloads'). Workloads are those of the runs and of the bundle's
/// WORKLOADS file.
pub fn load(run_dirs: &[PathBuf], build_dir: &Path, pool: bool) -> Result<Report, String> {
    let hint = "pass the folder run-perf.sh wrote (it has env.txt, runs.tsv, logs/)";
    let mut envs = Vec::new();
    let mut runs: Vec<Run> = Vec::new();
    // Workload -> the first run directory that has it (its index, the directory).
    let mut home: BTreeMap<String, (usize, &Path)> = BTreeMap::new();
    // (workload, mode, rep as numbered here) -> (its directory, its rep there).
    let mut origin: BTreeMap<(String, String, u32), (&Path, u32)> = BTreeMap::new();
    // (workload, mode) -> the highest rep numbered so far.
    let mut last: BTreeMap<(String, String), u32> = BTreeMap::new();
    for (k, dir) in run_dirs.iter().enumerate() {
        let read = |name: &str| {
            let p = dir.join(name);
            std::fs::read_to_string(&p).map_err(|e| format!("{}: {e}; {hint}", p.display()))
        };
        envs.push((dir, read("env.txt")?));
        let mut mine =
            runs::parse(&read("runs.tsv")?).map_err(|e| format!("{}: {e}", dir.display()))?;
        let before = last.clone();
        for r in &mut mine {
            match home.get(&r.workload) {
                Some((j, other)) if *j != k && !pool => {
                    return Err(format!(
                        "workload {} is in both {} and {}; give each workload's runs once, or pass --pool to pool the reps of reruns of one bundle",
                        r.workload,
                        other.display(),
                        dir.display()
                    ))
                }
                Some(_) => {}
                None => {
                    home.insert(r.workload.clone(), (k, dir));
                }
            }
            let key = (r.workload.clone(), r.mode.clone());
            let rep = before.get(&key).copied().unwrap_or(0) + r.rep;
            origin.insert((key.0.clone(), key.1.clone(), rep), (dir, r.rep));
            let top = last.entry(key).or_insert(0);
            *top = (*top).max(rep);
            r.rep = rep;
        }
        runs.extend(mine);
    }
    let env = match envs.as_slice() {
        [(_, env)] => env.clone(),
        _ => envs
            .iter()
            .map(|(dir, env)| format!("run {}:\n{}", dir.display(), env.trim_end()))
            .collect::<Vec<_>>()
            .join("\n\n"),
    };
    let bundle = Bundle::open(build_dir)?;
    let names: BTreeSet<String> = runs
        .iter()
        .map(|r| r.workload.clone())
        .chain(bundle.workloads.iter().cloned())
        .collect();
    let log = |r: &Run| {
        origin
            .get(&(r.workload.clone(), r.mode.clone(), r.rep))
            .and_then(|&(dir, rep)| {
                std::fs::read_to_string(logs::path(dir, &r.workload, &r.mode, rep)).ok()
            })
            .unwrap_or_default()
    };
    let mut rows = Vec::new();
    for name in &names {
        rows.push(Row::new(name, &runs, &log, bundle.workload(name)?));
    }
    let mut summary = summarize(&rows);
    for (dir, env) in &envs {
        match (env_commit(env), &bundle.commit) {
            (Some(ran), Some(built)) if ran != built => summary.notes.push(format!(
                "{}'s bundle commit ({ran}) differs from {}'s COMMIT ({built}): registers and checks may not be those of the binaries that ran",
                dir.display(),
                build_dir.display()
            )),
            _ => {}
        }
    }
    let unbuilt: Vec<&str> = rows
        .iter()
        .filter(|r| r.build.usage.is_empty() && r.build.checks.is_empty())
        .map(|r| r.workload.as_str())
        .collect();
    if !unbuilt.is_empty() {
        summary.notes.push(format!(
            "no ptxas.tsv or stats in {} for {}",
            build_dir.display(),
            unbuilt.join(", ")
        ));
    }
    Ok(Report {
        env,
        build_commit: bundle.commit,
        noopt_env: bundle
            .noopt_env
            .unwrap_or_else(|| crate::build::NOOPT_DEFAULT.to_string()),
        rows,
        summary,
    })
}

/// The JSON document of a report.
pub fn json(report: &Report) -> String {
    serde_json::to_string_pretty(report).expect("report serialises")
}
