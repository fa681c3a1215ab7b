//! Reading what the tools printed.

use regex::Regex;
use std::sync::LazyLock;

/// One error report found in a log.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Found {
    /// Report kind as the tool names it.
    pub kind: String,
    /// Source file the report points at (may be empty).
    pub file: String,
    /// Line (0 if none).
    pub line: u32,
}

static CUSAFE_ERR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"==\d+==ERROR: cusafe: ([a-z-]+) in (.*)").expect("regex"));
static FILE_LINE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([A-Za-z0-9_./+-]+\.(?:cu|cpp|cc|h|cuh)):(\d+)").expect("regex"));
static CS_ERR: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^========= (Invalid __\w+__ (?:read|write|atomic)|Program hit cudaError\w+|Malloc/Free error|Address .* is out of bounds|Leaked \d+ bytes)").expect("regex")
});

fn first_file_line(text: &str) -> (String, u32) {
    FILE_LINE
        .captures(text)
        .map(|c| (c[1].to_string(), c[2].parse().unwrap_or(0)))
        .unwrap_or_default()
}

/// Collects the reports of a log: each starts at a line `head` matches (capture 1 is
/// the kind) and ends where `ends` says; its place is the first `file:line` inside.
fn reports(log: &str, head: &Regex, ends: impl Fn(&str) -> bool) -> Vec<Found> {
    let lines: Vec<&str> = log.lines().collect();
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let Some(c) = head.captures(l) else {
            continue;
        };
        let end = lines[i + 1..]
            .iter()
            .position(|l| ends(l))
            .map_or(lines.len(), |e| i + 1 + e);
        let (file, line) = first_file_line(&lines[i..end].join("\n"));
        out.push(Found {
            kind: c[1].to_string(),
            file,
            line,
        });
    }
    out
}

/// cusafe's reports: the kind from the ERROR line, the place from the first `file:line`
/// in the report (the ERROR line for device errors, the host frame for API errors).
pub fn cusafe_reports(log: &str) -> Vec<Found> {
    reports(log, &CUSAFE_ERR, |l| l.starts_with("SUMMARY:"))
}

/// compute-sanitizer's errors: the headline and the first `file:line` in the block
/// after it (its device frames carry line info when built with -g).
pub fn memcheck_reports(log: &str) -> Vec<Found> {
    reports(log, &CS_ERR, |l| {
        l.trim() == "=========" || CS_ERR.is_match(l)
    })
}

/// The program's own output: the log without the tools' report lines.
pub fn program_output(log: &str) -> String {
    log.lines()
        .filter(|l| !l.starts_with("==") && !l.starts_with("========="))
        .collect::<Vec<_>>()
        .join("\n")
}
