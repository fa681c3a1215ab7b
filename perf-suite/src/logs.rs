//! What the run logs say beyond the result line: cusafe reports and compute-sanitizer's
//! error count.

use std::path::{Path, PathBuf};

/// The log run-perf.sh writes for one run: `RUN_DIR/logs/NAME.MODE.REP.txt`.
pub fn path(run_dir: &Path, workload: &str, mode: &str, rep: u32) -> PathBuf {
    run_dir
        .join("logs")
        .join(format!("{workload}.{mode}.{rep}.txt"))
}

/// The first cusafe report of a log: the text after `ERROR: cusafe: ` (kind, kernel and
/// place), or `None` when the log has none. Every workload is correct, so any report is
/// a false positive.
pub fn cusafe_report(log: &str) -> Option<String> {
    const MARK: &str = "ERROR: cusafe";
    log.lines().find_map(|l| {
        let at = l.find(MARK)?;
        let rest = l[at + MARK.len()..].trim_start_matches(':').trim();
        Some(if rest.is_empty() {
            "report".to_string()
        } else {
            rest.to_string()
        })
    })
}

/// compute-sanitizer's error count (`========= ERROR SUMMARY: N errors`), when the
/// log has that line.
pub fn memcheck_errors(log: &str) -> Option<u64> {
    log.lines().rev().find_map(|l| {
        let rest = l
            .trim_start_matches('=')
            .trim()
            .strip_prefix("ERROR SUMMARY:")?;
        rest.split_whitespace().next()?.parse().ok()
    })
}
