//! The environment of a target run: where its reports go and the sanitizers' options.
//!
//! Reports travel as files the engine reads after each input, never as scraped text:
//! `cusafe.jsonl` (the runtime's `json_path`), `host.jsonl` (ASan findings written by
//! `libcusafe_fuzz.a`), plus the text forms (`cusafe.log`, `asan.<pid>`) that are kept
//! beside each saved crash.

use std::path::{Path, PathBuf};

use cusafe_format::fuzz::{HOST_JSON_ENV, TURNS_ENV};

/// The report files of one client.
#[derive(Clone, Debug)]
pub struct ReportFiles {
    dir: PathBuf,
}

impl ReportFiles {
    /// Files under `dir`.
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        ReportFiles { dir: dir.into() }
    }
    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }
    /// cusafe's JSON lines.
    pub fn cusafe_json(&self) -> PathBuf {
        self.dir.join("cusafe.jsonl")
    }
    /// cusafe's text reports.
    pub fn cusafe_log(&self) -> PathBuf {
        self.dir.join("cusafe.log")
    }
    /// ASan findings as JSON lines.
    pub fn host_json(&self) -> PathBuf {
        self.dir.join("host.jsonl")
    }
    /// ASan's text log prefix (`asan.<pid>`).
    pub fn asan_log_prefix(&self) -> PathBuf {
        self.dir.join("asan")
    }
}

fn joined(existing: Option<String>, ours: &str, sep: char) -> String {
    match existing {
        Some(e) if !e.is_empty() => format!("{e}{sep}{ours}"),
        _ => ours.to_string(),
    }
}

/// The variables for a target run. `persistent`: many inputs in one process, so cusafe
/// and ASan report and go on (`halt_on_error=0`; ASan's needs the recover-capable host
/// code of `--cusafe-fuzz` builds, other builds still stop at their first host report). The user's own `CUSAFE_OPTIONS` and
/// `ASAN_OPTIONS` come first; ours win where they name the same option.
/// `tagging`: whether the runtime tags allocations (off for the memcheck baseline, whose
/// sanitizer must see plain allocations).
pub fn vars(
    files: &ReportFiles,
    persistent: bool,
    turns: u32,
    tagging: bool,
) -> Vec<(String, String)> {
    let cusafe = format!(
        "json_path={}:log_path={}:detect_leaks=0:halt_on_error={}:tagging={}",
        files.cusafe_json().display(),
        files.cusafe_log().display(),
        if persistent { 0 } else { 1 },
        u8::from(tagging)
    );
    // protect_shadow_gap=0: the CUDA driver maps memory in the range ASan would
    // otherwise protect. abort_on_error: a finding that halts ends the process with
    // SIGABRT, a crash to the engine. symbolize=0: the engine symbolises from DWARF itself.
    let asan = format!(
        "abort_on_error=1:halt_on_error={}:symbolize=0:detect_leaks=0:protect_shadow_gap=0:handle_abort=0:log_path={}",
        if persistent { 0 } else { 1 },
        files.asan_log_prefix().display()
    );
    let mut v = vec![
        (
            "CUSAFE_OPTIONS".to_string(),
            joined(std::env::var("CUSAFE_OPTIONS").ok(), &cusafe, ':'),
        ),
        (
            "ASAN_OPTIONS".to_string(),
            joined(std::env::var("ASAN_OPTIONS").ok(), &asan, ':'),
        ),
        (
            HOST_JSON_ENV.to_string(),
            files.host_json().display().to_string(),
        ),
        (TURNS_ENV.to_string(), turns.to_string()),
    ];
    if persistent {
        v.push(("__AFL_PERSISTENT".to_string(), "1".to_string()));
    }
    v
}
