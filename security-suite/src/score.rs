//! Verdicts per program and tool, and the tables.

use crate::expect::Expectation;
use crate::parse::{cusafe_reports, memcheck_reports, program_output, Found};
use std::collections::BTreeMap;
use std::path::Path;

/// The tools (run modes) a suite run compares.
pub const TOOLS: [(&str, &str); 3] = [
    ("cusafe", "cusafe-clang++ build"),
    ("preload", "plain build + LD_PRELOAD=libcusafe_rt.so"),
    ("memcheck", "plain build under compute-sanitizer memcheck"),
];

/// What one tool did on one program.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Right kind (cusafe) or any error (memcheck) at the expected line.
    Found,
    /// Reported, but not the expected kind at the expected line.
    Wrong(String),
    /// Nothing reported for a buggy program.
    Missed,
    /// A correct program ran clean with the plain build's output.
    Clean,
    /// A correct program got a report.
    FalsePositive(String),
    /// A correct program's output or exit code differed from the plain build's.
    Differs(String),
    /// No log for this run.
    NotRun,
}

impl Verdict {
    fn cell(&self) -> String {
        match self {
            Verdict::Found => "found".into(),
            Verdict::Wrong(w) => format!("miss ({w})"),
            Verdict::Missed => "miss".into(),
            Verdict::Clean => "clean".into(),
            Verdict::FalsePositive(w) => format!("FALSE POSITIVE ({w})"),
            Verdict::Differs(w) => format!("output differs ({w})"),
            Verdict::NotRun => "not run".into(),
        }
    }
}

/// One row of the table.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Row {
    /// The expectation.
    pub expect: Expectation,
    /// Verdict per tool, keyed by tool name.
    pub verdicts: BTreeMap<String, Verdict>,
}

fn describe(f: &Found) -> String {
    if f.line == 0 {
        format!("{} with no line", f.kind)
    } else {
        format!("{} at line {}", f.kind, f.line)
    }
}

fn same_file(found: &str, want: &str) -> bool {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    !found.is_empty() && base(found) == base(want)
}

/// Judges one tool's log for one program. `plain` is the plain run's (log, rc).
pub fn judge(
    e: &Expectation,
    tool: &str,
    log: &str,
    rc: i32,
    plain: Option<(&str, i32)>,
) -> Verdict {
    let reports = if tool == "memcheck" {
        memcheck_reports(log)
    } else {
        cusafe_reports(log)
    };
    match &e.bug {
        Some((kind, line)) => {
            let hit = reports.iter().any(|f| {
                same_file(&f.file, &e.file)
                    && f.line == *line
                    && (tool == "memcheck" || &f.kind == kind)
            });
            match (hit, reports.first()) {
                (true, _) => Verdict::Found,
                (false, Some(f)) => Verdict::Wrong(describe(f)),
                (false, None) => Verdict::Missed,
            }
        }
        None => {
            if let Some(f) = reports.first() {
                return Verdict::FalsePositive(describe(f));
            }
            match plain {
                Some((_, prc)) if prc != rc => Verdict::Differs(format!("exit {rc}, plain {prc}")),
                Some((p, _)) if program_output(p) != program_output(log) => {
                    Verdict::Differs("stdout".into())
                }
                _ => Verdict::Clean,
            }
        }
    }
}

/// Exit codes from `runs.tsv` (program, mode, rc, seconds).
pub fn exit_codes(tsv: &str) -> BTreeMap<(String, String), i32> {
    tsv.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split('\t').collect();
            Some((
                (f.first()?.to_string(), f.get(1)?.to_string()),
                f.get(2)?.parse().ok()?,
            ))
        })
        .collect()
}

/// Scores every expectation against the logs in `run_dir` (`logs/NAME.MODE.txt`, `runs.tsv`).
pub fn score(expects: &[Expectation], run_dir: &Path) -> Vec<Row> {
    let tsv = std::fs::read_to_string(run_dir.join("runs.tsv")).unwrap_or_default();
    let rcs = exit_codes(&tsv);
    let read = |p: &str, mode: &str| {
        std::fs::read_to_string(run_dir.join("logs").join(format!("{p}.{mode}.txt"))).ok()
    };
    expects
        .iter()
        .map(|e| {
            let plain_log = read(&e.program, "plain");
            let plain_rc = rcs
                .get(&(e.program.clone(), "plain".into()))
                .copied()
                .unwrap_or(-1);
            let verdicts = TOOLS
                .iter()
                .map(|(tool, _)| {
                    let v = match read(&e.program, tool) {
                        None => Verdict::NotRun,
                        Some(log) => {
                            let rc = rcs
                                .get(&(e.program.clone(), tool.to_string()))
                                .copied()
                                .unwrap_or(-1);
                            judge(
                                e,
                                tool,
                                &log,
                                rc,
                                plain_log.as_deref().map(|p| (p, plain_rc)),
                            )
                        }
                    };
                    (tool.to_string(), v)
                })
                .collect();
            Row {
                expect: e.clone(),
                verdicts,
            }
        })
        .collect()
}

/// Markdown table plus per-tool totals.
pub fn markdown(rows: &[Row], header: &str) -> String {
    let mut s = format!("{header}\n\n| program | expected | ");
    s += &TOOLS
        .iter()
        .map(|(t, _)| *t)
        .collect::<Vec<_>>()
        .join(" | ");
    s += " |\n|---|---|";
    s += &"---|".repeat(TOOLS.len());
    s += "\n";
    for r in rows {
        let want = match &r.expect.bug {
            Some((k, l)) => format!("{k} @ {}:{l}", r.expect.file),
            None => "no report".into(),
        };
        let cells: Vec<String> = TOOLS.iter().map(|(t, _)| r.verdicts[*t].cell()).collect();
        s += &format!(
            "| {} | {} | {} |\n",
            r.expect.program,
            want,
            cells.join(" | ")
        );
    }
    s += "\nA bug counts as found only with the expected kind (cusafe; any memory error for compute-sanitizer) at the expected line. LD_PRELOAD mode instruments no kernel, so it can only find host-side bugs (frees, API copies).\n";
    s += "\n| tool | bugs found | bugs missed | correct programs clean | false positives |\n|---|---|---|---|---|\n";
    for (t, what) in TOOLS {
        let count =
            |f: &dyn Fn(&Verdict) -> bool| rows.iter().filter(|r| f(&r.verdicts[t])).count();
        let bugs = rows.iter().filter(|r| r.expect.bug.is_some()).count();
        let found = count(&|v| *v == Verdict::Found);
        s += &format!(
            "| {t} ({what}) | {found}/{bugs} | {} | {} | {} |\n",
            count(&|v| matches!(v, Verdict::Missed | Verdict::Wrong(_))),
            count(&|v| *v == Verdict::Clean),
            count(&|v| matches!(v, Verdict::FalsePositive(_) | Verdict::Differs(_))),
        );
    }
    s
}
