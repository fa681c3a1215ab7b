//! Where reports and runtime messages go: text to stderr or `log_path`, JSON lines to
//! `json_path`. Each message is one `write(2)` of a string built beforehand, so lines
//! of concurrent reports do not interleave and nothing depends on CUDA.

use std::fs::{File, OpenOptions};
use std::io::Write;

use super::{json, text, Report};
use crate::options::{expand_path, Options};

/// The open destinations.
#[derive(Debug)]
pub struct Sink {
    pid: u32,
    /// `None`: stderr.
    text: Option<File>,
    json: Option<File>,
}

fn open_append(option: &str, path: &str, pid: u32) -> Result<File, String> {
    let p = expand_path(path, pid);
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&p)
        .map_err(|e| format!("{option}={path}: cannot open '{p}': {e}"))
}

impl Sink {
    /// Opens the destinations the options name.
    pub fn open(o: &Options, pid: u32) -> Result<Sink, String> {
        let text = match &o.log_path {
            Some(p) => Some(open_append("log_path", p, pid)?),
            None => None,
        };
        let json = match &o.json_path {
            Some(p) => Some(open_append("json_path", p, pid)?),
            None => None,
        };
        Ok(Sink { pid, text, json })
    }

    /// A sink that writes text to stderr only.
    pub fn stderr(pid: u32) -> Sink {
        Sink {
            pid,
            text: None,
            json: None,
        }
    }

    /// The process id printed in reports.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// Writes a report in text and, when configured, JSON.
    pub fn emit(&self, r: &Report) {
        self.message(&text::render(r, self.pid));
        if let Some(mut f) = self.json.as_ref() {
            let _ = f.write_all(json::render(r, self.pid).as_bytes());
        }
    }

    /// Writes one JSON line (newline included) to the JSON destination, if there is one.
    pub fn json(&self, line: &str) {
        if let Some(mut f) = self.json.as_ref() {
            let _ = f.write_all(line.as_bytes());
        }
    }

    /// Writes a runtime message (warning, note, summary) to the text destination.
    pub fn message(&self, s: &str) {
        let _ = match self.text.as_ref() {
            Some(mut f) => f.write_all(s.as_bytes()),
            None => std::io::stderr().write_all(s.as_bytes()),
        };
    }
}
