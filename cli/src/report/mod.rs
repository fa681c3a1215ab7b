//! `cusafe report --sarif`: the JSON lines that the runtime writes with
//! `CUSAFE_OPTIONS=json_path=FILE` (any number of files, e.g. one per process) as one
//! SARIF 2.1.0 log, for GitHub code scanning and editors' SARIF viewers.
//!
//! * [`input`]: reads the JSON lines (errors name the file and line).
//! * [`place`]: source positions (the report's, its call site's, its buffer's allocation
//!   and free sites') and their artifact URIs (`--srcroot`).
//! * [`rules`]: the rule text of each report kind.
//! * [`sarif`]: the conversion, deduplication included; [`text`]: the results' messages.
//!
//! `docs/cli.md` ("cusafe report --sarif") says what each SARIF field holds.

pub mod input;
pub mod place;
pub mod rules;
pub mod sarif;
pub mod text;

#[cfg(test)]
mod schema_check;
#[cfg(test)]
mod tests;

use std::fs::File;
use std::io::{BufReader, Write};
use std::path::{Path, PathBuf};

use clap::Args;

use input::{InputError, Report};
use place::Uris;

/// `cusafe report`'s command line.
#[derive(Debug, Args)]
pub struct ReportArgs {
    /// Write a SARIF 2.1.0 log (the one output format, required).
    #[arg(long, required = true)]
    pub sarif: bool,
    /// Write the log to this file instead of stdout.
    #[arg(short, long, value_name = "OUT.sarif")]
    pub output: Option<PathBuf>,
    /// Make source paths under DIR relative to it (uriBaseId SRCROOT), e.g. the
    /// repository root for GitHub code scanning; relative paths are taken as relative to it.
    #[arg(long, value_name = "DIR")]
    pub srcroot: Option<PathBuf>,
    /// JSON-lines files written with CUSAFE_OPTIONS=json_path=...; `-` or none: stdin.
    #[arg(value_name = "FILE.jsonl")]
    pub inputs: Vec<PathBuf>,
}

/// Why `cusafe report` failed.
#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    /// An input could not be opened.
    #[error("cannot open {path}: {source}")]
    Open {
        /// The input.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// A line of an input is not a report.
    #[error(transparent)]
    Input(#[from] InputError),
    /// `--srcroot` could not be made absolute.
    #[error("--srcroot {path}: {source}")]
    SrcRoot {
        /// The directory given.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The log could not be written.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The output (`<stdout>` for stdout).
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
}

/// Runs `cusafe report`; returns the exit status (0, or 2 with the error on stderr).
pub fn main(args: ReportArgs) -> u8 {
    match run(&args) {
        Ok(conv) => {
            let plural =
                |n: usize, what: &str| format!("{n} {what}{}", if n == 1 { "" } else { "s" });
            eprintln!(
                "cusafe report: {} -> {}, {}",
                plural(conv.reports, "report"),
                plural(conv.results, "result"),
                plural(conv.notifications, "notification")
            );
            if conv.notifications > 0 {
                eprintln!(
                    "cusafe report: note: reports without a source position (faults without a finding, host calls \
                     in code built without -g, leaks without an allocation site) are \
                     notifications in runs[0].invocations[0].toolExecutionNotifications, \
                     which GitHub code scanning does not list"
                );
            }
            0
        }
        Err(e) => {
            eprintln!("cusafe report: error: {e}");
            2
        }
    }
}

/// Reads the inputs, converts them and writes the log.
pub fn run(args: &ReportArgs) -> Result<sarif::Conversion, ReportError> {
    let uris = Uris::new(args.srcroot.as_deref()).map_err(|source| ReportError::SrcRoot {
        path: args.srcroot.clone().unwrap_or_default(),
        source,
    })?;
    let stdin = [PathBuf::from("-")];
    let inputs = if args.inputs.is_empty() {
        &stdin[..]
    } else {
        &args.inputs[..]
    };
    let mut reports = Vec::new();
    for path in inputs {
        reports.extend(read_input(path)?);
    }
    let conv = sarif::convert(&reports, &uris);
    let mut text = serde_json::to_string_pretty(&conv.log).expect("a SARIF log serializes");
    text.push('\n');
    let written = match &args.output {
        Some(path) => std::fs::write(path, text).map_err(|source| (path.clone(), source)),
        None => std::io::stdout()
            .lock()
            .write_all(text.as_bytes())
            .map_err(|source| (PathBuf::from("<stdout>"), source)),
    };
    written.map_err(|(path, source)| ReportError::Write { path, source })?;
    Ok(conv)
}

/// The reports of one input (`-`: stdin).
fn read_input(path: &Path) -> Result<Vec<Report>, ReportError> {
    if path == Path::new("-") {
        return Ok(input::read("<stdin>", std::io::stdin().lock())?);
    }
    let file = File::open(path).map_err(|source| ReportError::Open {
        path: path.to_path_buf(),
        source,
    })?;
    Ok(input::read(
        &path.display().to_string(),
        BufReader::new(file),
    )?)
}
