//! Findings and their deduplication key `(kind, kernel or function, file:line)`.
//!
//! Sources, in the order they are trusted: the cusafe runtime's JSON lines (device and
//! host-API reports, CUDA errors without a finding), ASan's JSON lines from
//! `libcusafe_fuzz.a` (symbolised here), then what the process's end says (a signal, a
//! timeout) when no report explains it.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::env::ReportFiles;
use crate::symbolize::Symbolizer;

/// One finding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// Which tool saw it: `cusafe`, `asan`, `memcheck`, `signal`, `timeout`.
    pub tool: String,
    /// The error kind (`heap-buffer-overflow`, `SIGSEGV`, `timeout`, ...).
    pub kind: String,
    /// `device` or `host`.
    pub side: String,
    /// The kernel (device) or function (host), empty when unknown.
    pub place: String,
    /// Source file, empty when unknown.
    pub file: String,
    /// Source line, 0 when unknown.
    pub line: u32,
    /// The record as the tool wrote it (or as built here).
    pub record: Value,
}

impl Finding {
    /// The deduplication key.
    pub fn key(&self) -> String {
        format!("{}|{}|{}:{}", self.kind, self.place, self.file, self.line)
    }

    /// A short, file-name-safe label: kind and place.
    pub fn slug(&self) -> String {
        let place: String = self
            .place
            .chars()
            .take_while(|c| *c != '(')
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let file = Path::new(&self.file)
            .file_name()
            .map(|f| format!("-{}-{}", f.to_string_lossy().replace('.', "_"), self.line))
            .unwrap_or_default();
        format!("{}-{}{}", self.kind, place, file)
    }

    /// One line for the terminal.
    pub fn summary(&self) -> String {
        let at = if self.file.is_empty() {
            String::new()
        } else {
            format!(" at {}:{}", self.file, self.line)
        };
        let place = if self.place.is_empty() {
            String::new()
        } else if self.side == "device" {
            format!(" in kernel {}", self.place)
        } else {
            format!(" in {}", self.place)
        };
        format!("{} ({} {}){place}{at}", self.kind, self.side, self.tool)
    }

    /// A finding made from the way the process ended.
    pub fn from_end(kind: &str, tool: &str) -> Finding {
        Finding {
            tool: tool.into(),
            kind: kind.into(),
            side: "host".into(),
            place: String::new(),
            file: String::new(),
            line: 0,
            record: serde_json::json!({"tool": tool, "kind": kind}),
        }
    }
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

/// A finding from one line of the runtime's JSON (`None` for lines that are not
/// objects with a kind).
pub fn from_cusafe(line: &str) -> Option<Finding> {
    let v: Value = serde_json::from_str(line).ok()?;
    let kind = text(&v, "kind");
    if kind.is_empty() || kind == "leak" {
        return None;
    }
    let side = if text(&v, "where") == "device"
        || v.get("kernel").is_some_and(Value::is_string) && text(&v, "where").is_empty()
    {
        "device"
    } else {
        "host"
    };
    let (place, file, line) = if side == "device" {
        (
            text(&v, "kernel"),
            text(&v, "file"),
            v.get("line").and_then(Value::as_u64).unwrap_or(0) as u32,
        )
    } else {
        let site = v
            .get("call_site")
            .and_then(Value::as_array)
            .and_then(|a| a.first())
            .cloned()
            .unwrap_or(Value::Null);
        let api = text(&v, "api");
        let place = if api.is_empty() {
            text(&v, "kernel")
        } else {
            api
        };
        (
            place,
            text(&site, "file"),
            site.get("line").and_then(Value::as_u64).unwrap_or(0) as u32,
        )
    };
    Some(Finding {
        tool: "cusafe".into(),
        kind,
        side: side.into(),
        place,
        file,
        line,
        record: v,
    })
}

/// A finding from one line of `libcusafe_fuzz.a`'s ASan JSON, symbolised with the
/// target's debug info: the first frame in the program's own code names the place.
pub fn from_asan(line: &str, program: &Path, sym: &mut Symbolizer) -> Option<Finding> {
    let mut v: Value = serde_json::from_str(line).ok()?;
    let kind = text(&v, "kind");
    let frames = v
        .get("frames")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut resolved = Vec::new();
    let mut top = None;
    let mut fallback = None;
    for f in &frames {
        let module = PathBuf::from(text(f, "module"));
        let offset = f.get("offset").and_then(Value::as_u64).unwrap_or(0);
        let pc = f.get("pc").and_then(Value::as_u64).unwrap_or(0);
        let same = module.file_name() == program.file_name();
        let loc = if same {
            sym.locate(program, offset, pc)
        } else {
            None
        };
        if let Some(l) = &loc {
            resolved
                .push(serde_json::json!({"function": l.function, "file": l.file, "line": l.line}));
            if !l.is_runtime() {
                // The program's own frame with a source line, else with a name only.
                if top.is_none() && !l.file.is_empty() {
                    top = Some(l.clone());
                }
                if fallback.is_none() {
                    fallback = Some(l.clone());
                }
            }
        }
    }
    if let Some(o) = v.as_object_mut() {
        o.insert("symbolized".into(), Value::Array(resolved));
    }
    let top = top.or(fallback).unwrap_or_default();
    Some(Finding {
        tool: "asan".into(),
        kind,
        side: "host".into(),
        place: top.function,
        file: top.file,
        line: top.line,
        record: v,
    })
}

/// Follows one client's report files: what was appended since the last look.
#[derive(Debug)]
pub struct Reader {
    files: ReportFiles,
    cusafe_at: u64,
    host_at: u64,
    log_at: u64,
}

/// What one input left in the report files.
#[derive(Clone, Debug, Default)]
pub struct NewReports {
    /// Findings, in the order they were written.
    pub findings: Vec<Finding>,
    /// The text reports (cusafe's and ASan's).
    pub text: String,
}

impl NewReports {
    /// The finding that names the input: its first host (ASan) report when it has one,
    /// else its first report. ASan goes on after a host report in a persistent target,
    /// so what the program does next runs on memory the bug may have overwritten; a
    /// device report that follows (measured: an edge list's surplus edges written past
    /// their array, then read back as vertex numbers the BFS kernel indexes with) is a
    /// consequence, not a bug of its own. Device reports skip their access and leave
    /// the host's memory as it was.
    pub fn primary(&self) -> Option<&Finding> {
        self.findings
            .iter()
            .find(|f| f.tool == "asan")
            .or_else(|| self.findings.first())
    }
}

fn read_from(path: &Path, at: &mut u64) -> String {
    use std::io::{Read, Seek, SeekFrom};
    let Ok(mut f) = std::fs::File::open(path) else {
        return String::new();
    };
    let len = f.metadata().map(|m| m.len()).unwrap_or(0);
    if len < *at {
        *at = 0;
    }
    let mut s = String::new();
    if f.seek(SeekFrom::Start(*at)).is_ok() && f.read_to_string(&mut s).is_ok() {
        *at += s.len() as u64;
    }
    s
}

impl Reader {
    /// Starts at the current ends of the files.
    pub fn new(files: ReportFiles) -> Self {
        let mut r = Reader {
            files,
            cusafe_at: 0,
            host_at: 0,
            log_at: 0,
        };
        r.take(Path::new(""), &mut Symbolizer::default());
        r
    }

    /// The report files followed.
    pub fn files(&self) -> &ReportFiles {
        &self.files
    }

    /// Reads everything appended since the last call; ASan's text logs are consumed.
    pub fn take(&mut self, program: &Path, sym: &mut Symbolizer) -> NewReports {
        let mut out = NewReports::default();
        for l in read_from(&self.files.cusafe_json(), &mut self.cusafe_at).lines() {
            out.findings.extend(from_cusafe(l));
        }
        for l in read_from(&self.files.host_json(), &mut self.host_at).lines() {
            out.findings.extend(from_asan(l, program, sym));
        }
        out.text = read_from(&self.files.cusafe_log(), &mut self.log_at);
        let prefix = self.files.asan_log_prefix();
        let stem = prefix
            .file_name()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        if let Ok(entries) = std::fs::read_dir(self.files.dir()) {
            for e in entries.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with(&format!("{stem}."))
                {
                    if let Ok(t) = std::fs::read_to_string(e.path()) {
                        out.text.push_str(&t);
                    }
                    let _ = std::fs::remove_file(e.path());
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(tool: &str, kind: &str, side: &str) -> Finding {
        Finding {
            side: side.into(),
            ..Finding::from_end(kind, tool)
        }
    }

    #[test]
    fn a_host_report_names_the_input() {
        let device = found("cusafe", "heap-buffer-overflow", "device");
        let host = found("asan", "heap-buffer-overflow", "host");
        let r = NewReports {
            findings: vec![device.clone(), host.clone()],
            text: String::new(),
        };
        assert_eq!(r.primary(), Some(&host));
        let r = NewReports {
            findings: vec![device.clone()],
            text: String::new(),
        };
        assert_eq!(r.primary(), Some(&device));
        assert_eq!(NewReports::default().primary(), None);
    }
}
