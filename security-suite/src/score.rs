//! Verdicts per program and tool, and the tables.

use crate::expect::Expectation;
use crate::manifest::{Entry, Manifest};
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
    /// Nothing reported for a bug the manifest marks out of scope (the reason).
    ExpectedMiss(String),
    /// A correct program whose plain build already fails: no verdict on the tool.
    BrokenTest(String),
    /// The program could not run here (why): it needs more GPUs than the run had, or
    /// its plain run said `skipped: ...` and exited [`SKIP_EXIT`]. Counted in no total.
    Skipped(String),
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
            Verdict::ExpectedMiss(why) => format!("expected miss ({why})"),
            Verdict::BrokenTest(w) => format!("broken test ({w})"),
            Verdict::Skipped(why) => format!("skipped ({why})"),
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
    /// The program's manifest entry, when scored with a manifest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<Entry>,
}

impl Row {
    /// Whether the row counts in the found/missed totals: bugs the manifest marks out
    /// of scope do not.
    pub fn in_scope(&self) -> bool {
        self.entry.as_ref().is_none_or(|e| e.in_scope)
    }

    fn cell(&self, tool: &str) -> String {
        match &self.verdicts[tool] {
            Verdict::Found if !self.in_scope() => "found (out of scope)".into(),
            v => v.cell(),
        }
    }
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
            if let Some((_, prc)) = plain.filter(|&(_, prc)| prc != 0) {
                return Verdict::BrokenTest(format!("plain build exits {prc}"));
            }
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

/// The exit status of a program that cannot run on this machine (too few GPUs, no peer
/// access; automake's skip status); it prints a line starting with `skipped:` first.
pub const SKIP_EXIT: i32 = 77;

/// How many GPUs a run had: the `gpu:` lines of its `env.txt` (run-examples.sh writes one
/// per GPU from nvidia-smi); `None` without env.txt or such lines.
pub fn gpu_count(run_dir: &Path) -> Option<u32> {
    let env = std::fs::read_to_string(run_dir.join("env.txt")).ok()?;
    let n = env.lines().filter(|l| l.starts_with("gpu:")).count() as u32;
    (n > 0).then_some(n)
}

/// Why a program is skipped, if it is: its manifest entry needs more GPUs than the run
/// had (`gpus`), or its plain run exited [`SKIP_EXIT`] after a `skipped: ...` line
/// (whose text is the reason).
pub fn skip_reason(
    entry: Option<&Entry>,
    gpus: Option<u32>,
    plain: Option<(&str, i32)>,
) -> Option<String> {
    if let (Some(e), Some(g)) = (entry, gpus) {
        if e.devices > g {
            return Some(format!("needs {} GPUs, the run had {g}", e.devices));
        }
    }
    let (log, rc) = plain?;
    if rc != SKIP_EXIT {
        return None;
    }
    log.lines()
        .find_map(|l| l.trim().strip_prefix("skipped:"))
        .map(|why| why.trim().to_string())
}

/// The expectations of the programs the run has a row for in `runs.tsv`: a run of a
/// subset of the suite (e.g. scripts/gpu/run-multigpu.sh) is scored on that subset.
pub fn ran(expects: &[Expectation], run_dir: &Path) -> Vec<Expectation> {
    let rcs = run_exit_codes(run_dir);
    expects
        .iter()
        .filter(|e| rcs.keys().any(|(p, _)| *p == e.program))
        .cloned()
        .collect()
}

/// The exit codes of a run: its `runs.tsv`, and the `runs.SHARD.tsv` of each shard
/// when the run was sharded (`run-examples.sh BUNDLE OUT k/n`).
pub fn run_exit_codes(run_dir: &Path) -> BTreeMap<(String, String), i32> {
    let mut files = vec![run_dir.join("runs.tsv")];
    let mut shards: Vec<_> = std::fs::read_dir(run_dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .and_then(|n| n.strip_prefix("runs.")?.strip_suffix(".tsv"))
                .is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    shards.sort();
    files.extend(shards);
    files
        .iter()
        .filter_map(|f| std::fs::read_to_string(f).ok())
        .flat_map(|tsv| exit_codes(&tsv))
        .collect()
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
    score_with(expects, None, run_dir)
}

/// [`score`] with the manifest's entries attached to the rows: a bug it marks out of
/// scope that a tool missed gets [`Verdict::ExpectedMiss`] with the manifest's reason,
/// and a program that needs more GPUs than the run had ([`gpu_count`]) gets
/// [`Verdict::Skipped`] from every tool, as does one whose plain run said it was
/// skipped ([`skip_reason`]). Check the manifest against the expectations first
/// ([`Manifest::check`]).
pub fn score_with(
    expects: &[Expectation],
    manifest: Option<&Manifest>,
    run_dir: &Path,
) -> Vec<Row> {
    let rcs = run_exit_codes(run_dir);
    let read = |p: &str, mode: &str| {
        std::fs::read_to_string(run_dir.join("logs").join(format!("{p}.{mode}.txt"))).ok()
    };
    let gpus = gpu_count(run_dir);
    expects
        .iter()
        .map(|e| {
            let entry = manifest.and_then(|m| m.get(&e.program)).cloned();
            let plain_log = read(&e.program, "plain");
            let plain_rc = rcs
                .get(&(e.program.clone(), "plain".into()))
                .copied()
                .unwrap_or(-1);
            let skip = skip_reason(
                entry.as_ref(),
                gpus,
                plain_log.as_deref().map(|p| (p, plain_rc)),
            );
            let verdicts = TOOLS
                .iter()
                .map(|(tool, _)| {
                    if let Some(why) = &skip {
                        return (tool.to_string(), Verdict::Skipped(why.clone()));
                    }
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
                    (tool.to_string(), out_of_scope(v, entry.as_ref()))
                })
                .collect();
            Row {
                expect: e.clone(),
                verdicts,
                entry,
            }
        })
        .collect()
}

/// A miss of an out-of-scope bug is an expected miss.
fn out_of_scope(v: Verdict, entry: Option<&Entry>) -> Verdict {
    match (v, entry) {
        (Verdict::Missed, Some(e)) if !e.in_scope => {
            Verdict::ExpectedMiss(e.reason.clone().unwrap_or_default())
        }
        (v, _) => v,
    }
}

/// Counts for one tool over a set of rows. Out-of-scope bugs are counted apart and
/// never as found or missed.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Tally {
    /// In-scope bug programs.
    pub bugs: usize,
    /// In-scope bugs found (right kind at the right line).
    pub found: usize,
    /// In-scope bugs missed or reported with the wrong kind or line.
    pub missed: usize,
    /// Correct programs.
    pub correct: usize,
    /// Correct programs that ran clean with the plain build's output.
    pub clean: usize,
    /// Correct programs with a report or a different output or exit code.
    pub false_positives: usize,
    /// Runs with no log (any class).
    pub not_run: usize,
    /// Out-of-scope bug programs (expected misses).
    pub out_of_scope: usize,
    /// Out-of-scope bugs the tool found anyway.
    pub out_of_scope_found: usize,
    /// Programs skipped (too few GPUs for them, no peer access): in no other count.
    pub skipped: usize,
}

impl Tally {
    fn add(&mut self, row: &Row, tool: &str) {
        let v = &row.verdicts[tool];
        if matches!(v, Verdict::Skipped(_)) {
            self.skipped += 1;
            return;
        }
        if *v == Verdict::NotRun {
            self.not_run += 1;
        }
        if row.expect.bug.is_none() {
            self.correct += 1;
            self.clean += usize::from(*v == Verdict::Clean);
            self.false_positives +=
                usize::from(matches!(v, Verdict::FalsePositive(_) | Verdict::Differs(_)));
        } else if !row.in_scope() {
            self.out_of_scope += 1;
            self.out_of_scope_found += usize::from(*v == Verdict::Found);
        } else {
            self.bugs += 1;
            self.found += usize::from(*v == Verdict::Found);
            self.missed += usize::from(matches!(v, Verdict::Missed | Verdict::Wrong(_)));
        }
    }

    fn cell(&self) -> String {
        let mut parts = Vec::new();
        if self.bugs > 0 {
            parts.push(format!("{}/{} found", self.found, self.bugs));
        }
        if self.correct > 0 {
            parts.push(format!("{}/{} clean", self.clean, self.correct));
        }
        if self.out_of_scope > 0 {
            parts.push(format!(
                "{} out of scope ({} found)",
                self.out_of_scope, self.out_of_scope_found
            ));
        }
        if self.not_run > 0 {
            parts.push(format!("{} not run", self.not_run));
        }
        if self.skipped > 0 {
            parts.push(format!("{} skipped", self.skipped));
        }
        parts.join(", ")
    }
}

/// Totals per tool, and per tool within each class and memory space (the last two
/// only for rows with a manifest entry).
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Totals {
    /// Tool name → tally over all rows.
    pub tools: BTreeMap<String, Tally>,
    /// Class → tool name → tally.
    pub by_class: BTreeMap<String, BTreeMap<String, Tally>>,
    /// Memory space → tool name → tally.
    pub by_space: BTreeMap<String, BTreeMap<String, Tally>>,
}

/// Adds up the rows.
pub fn totals(rows: &[Row]) -> Totals {
    let mut t = Totals::default();
    for (tool, _) in TOOLS {
        let tally = |rs: &mut dyn Iterator<Item = &Row>| {
            let mut x = Tally::default();
            rs.for_each(|r| x.add(r, tool));
            x
        };
        t.tools.insert(tool.to_string(), tally(&mut rows.iter()));
        for r in rows {
            let Some(e) = &r.entry else { continue };
            t.by_class
                .entry(e.class.clone())
                .or_default()
                .entry(tool.to_string())
                .or_default()
                .add(r, tool);
            t.by_space
                .entry(e.space.clone())
                .or_default()
                .entry(tool.to_string())
                .or_default()
                .add(r, tool);
        }
    }
    t
}

/// The JSON a run's scoring writes: every row and the totals.
#[derive(serde::Serialize)]
pub struct Report<'a> {
    /// One row per program.
    pub rows: &'a [Row],
    /// Per tool, per class and per space.
    pub totals: Totals,
}

/// The JSON document for `rows`.
pub fn json(rows: &[Row]) -> String {
    let r = Report {
        rows,
        totals: totals(rows),
    };
    serde_json::to_string_pretty(&r).expect("rows serialise")
}

/// Markdown table plus per-tool totals, and per-class and per-space totals when the
/// rows carry manifest entries.
pub fn markdown(rows: &[Row], header: &str) -> String {
    let with_manifest = rows.iter().any(|r| r.entry.is_some());
    let mut s = format!("{header}\n\n| program | ");
    if with_manifest {
        s += "class | space | ";
    }
    s += "expected | ";
    s += &TOOLS
        .iter()
        .map(|(t, _)| *t)
        .collect::<Vec<_>>()
        .join(" | ");
    s += " |\n|---|---|";
    if with_manifest {
        s += "---|---|";
    }
    s += &"---|".repeat(TOOLS.len());
    s += "\n";
    for r in rows {
        let mut want = match &r.expect.bug {
            Some((k, l)) => format!("{k} @ {}:{l}", r.expect.file),
            None => "no report".into(),
        };
        if !r.in_scope() {
            want += " (out of scope)";
        }
        let cells: Vec<String> = TOOLS.iter().map(|(t, _)| r.cell(t)).collect();
        let class = match &r.entry {
            Some(e) => format!("{} / {} | {} | ", e.class, e.subclass, e.space),
            None if with_manifest => "? | ? | ".into(),
            None => String::new(),
        };
        s += &format!(
            "| {} | {class}{} | {} |\n",
            r.expect.program,
            want,
            cells.join(" | ")
        );
    }
    s += "\nA bug counts as found only with the expected kind (cusafe; any memory error for compute-sanitizer) at the expected line. LD_PRELOAD mode instruments no kernel, so it can only find host-side bugs (frees, API copies).";
    if with_manifest {
        s += " Bugs the manifest marks out of scope are expected misses: they are left out of the found/missed totals and counted apart.";
    }
    s += "\n";
    let t = totals(rows);
    s += "\n| tool | bugs found | bugs missed | correct programs clean | false positives | out of scope (found) |\n|---|---|---|---|---|---|\n";
    for (tool, what) in TOOLS {
        let x = &t.tools[tool];
        s += &format!(
            "| {tool} ({what}) | {}/{} | {} | {} | {} | {} ({}) |\n",
            x.found,
            x.bugs,
            x.missed,
            x.clean,
            x.false_positives,
            x.out_of_scope,
            x.out_of_scope_found
        );
    }
    let skipped: Vec<String> = rows
        .iter()
        .filter_map(|r| match r.verdicts.values().next() {
            Some(Verdict::Skipped(why)) => Some(format!("{} ({why})", r.expect.program)),
            _ => None,
        })
        .collect();
    if !skipped.is_empty() {
        s += &format!(
            "\nSkipped, in no total: {} program{}: {}.\n",
            skipped.len(),
            if skipped.len() == 1 { "" } else { "s" },
            skipped.join(", ")
        );
    }
    for (title, groups) in [("class", &t.by_class), ("memory space", &t.by_space)] {
        if groups.is_empty() {
            continue;
        }
        s += &format!("\n| {title} | ");
        s += &TOOLS
            .iter()
            .map(|(t, _)| *t)
            .collect::<Vec<_>>()
            .join(" | ");
        s += " |\n|---|";
        s += &"---|".repeat(TOOLS.len());
        s += "\n";
        for (group, per_tool) in groups {
            let cells: Vec<String> = TOOLS.iter().map(|(t, _)| per_tool[*t].cell()).collect();
            s += &format!("| {group} | {} |\n", cells.join(" | "));
        }
    }
    s
}
