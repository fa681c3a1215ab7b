//! One run of a target outside LibAFL, on one input: replay, minimisation and the
//! memcheck oracle use it. The input goes where the target takes it (the file in
//! place of `@@`, argv\[1\] of a persistent harness, or stdin).

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::env::{self, ReportFiles};
use crate::finding::{Finding, NewReports, Reader};
use crate::symbolize::Symbolizer;
use crate::target::Target;
use crate::{Error, Result};

/// How a run ended.
#[derive(Clone, Debug)]
pub struct Outcome {
    /// Exit status (`None`: killed by a signal or by the timeout).
    pub code: Option<i32>,
    /// The signal that ended it.
    pub signal: Option<i32>,
    /// Whether the timeout killed it.
    pub timed_out: bool,
    /// The reports it left.
    pub reports: NewReports,
    /// Its standard output and error.
    pub output: String,
}

impl Outcome {
    /// The first finding: a report, else the signal or the timeout.
    pub fn finding(&self) -> Option<Finding> {
        if let Some(f) = self.reports.primary() {
            return Some(f.clone());
        }
        if self.timed_out {
            return Some(Finding::from_end("timeout", "timeout"));
        }
        self.signal
            .map(|s| Finding::from_end(&signal_name(s), "signal"))
    }
}

/// `SIGSEGV`-style name of a signal number.
pub fn signal_name(sig: i32) -> String {
    nix::sys::signal::Signal::try_from(sig)
        .map(|s| s.as_str().to_string())
        .unwrap_or_else(|_| format!("signal-{sig}"))
}

/// Runs `target` once on `input`, `prefix` (e.g. compute-sanitizer and its options)
/// before the program, with reports going to files under `work`.
pub fn run(
    target: &Target,
    input: &[u8],
    work: &Path,
    timeout: Duration,
    prefix: &[String],
    sym: &mut Symbolizer,
) -> Result<Outcome> {
    std::fs::create_dir_all(work)
        .map_err(|e| Error::io(format!("cannot create {}", work.display()), e))?;
    let files = ReportFiles::new(work);
    let mut reader = Reader::new(files.clone());
    let input_path = work.join("input");
    std::fs::write(&input_path, input)
        .map_err(|e| Error::io(format!("cannot write {}", input_path.display()), e))?;
    let (program, mut args) = match prefix.split_first() {
        Some((p, rest)) => {
            let mut a = rest.to_vec();
            a.push(target.program.display().to_string());
            (p.clone(), a)
        }
        None => (target.program.display().to_string(), Vec::new()),
    };
    args.extend(target.args_for_file(&input_path));
    let out_path = work.join("output");
    let out = std::fs::File::create(&out_path)
        .map_err(|e| Error::io(format!("cannot create {}", out_path.display()), e))?;
    let err = out
        .try_clone()
        .map_err(|e| Error::io("cannot duplicate the output file", e))?;
    let mut cmd = Command::new(&program);
    cmd.args(&args)
        .envs(env::vars(&files, false, 1, prefix.is_empty()))
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .stdin(if target.stdin_for_replay() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd.spawn().map_err(|e| {
        Error::io(
            format!("cannot start {program} (is it installed and executable?)"),
            e,
        )
    })?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(input);
    }
    let start = Instant::now();
    let (status, timed_out) = loop {
        match child.try_wait() {
            Ok(Some(s)) => break (Some(s), false),
            Ok(None) if start.elapsed() > timeout => {
                let _ = child.kill();
                break (child.wait().ok(), true);
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return Err(Error::io("cannot wait for the target", e)),
        }
    };
    use std::os::unix::process::ExitStatusExt;
    let output = std::fs::read_to_string(&out_path).unwrap_or_default();
    Ok(Outcome {
        code: status.and_then(|s| s.code()),
        signal: if timed_out {
            None
        } else {
            status.and_then(|s| s.signal())
        },
        timed_out,
        reports: reader.take(&target.program, sym),
        output,
    })
}
