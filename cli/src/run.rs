//! `cusafe run -- PROGRAM ARGS...`: runs a program with libcusafe_rt.so preloaded, so a
//! binary built elsewhere gets cusafe's checked allocator and host API checks without
//! recompiling. The process is replaced by the program (exit status, signals and
//! stdio are the program's own). With `-v` it first says what it can and cannot check
//! in that program (`inspect.rs`).

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use thiserror::Error;

use crate::inspect::{inspect, resolve};
use crate::locate::{LocateError, Locator};

/// The runtime's options variable.
const ENV_OPTIONS: &str = "CUSAFE_OPTIONS";

/// What went wrong before the program could start.
#[derive(Debug, Error)]
pub enum RunError {
    /// The runtime is missing.
    #[error(transparent)]
    Locate(#[from] LocateError),
    /// The program could not be executed.
    #[error("cannot run {program}: {source}")]
    Exec {
        /// The program, as given.
        program: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

impl RunError {
    /// The exit status: 2 for a missing runtime; like a shell for a program that cannot
    /// be run (127 not found, 126 otherwise).
    pub fn exit_code(&self) -> u8 {
        match self {
            RunError::Locate(_) => 2,
            RunError::Exec { source, .. } if source.kind() == std::io::ErrorKind::NotFound => 127,
            RunError::Exec { .. } => 126,
        }
    }
}

/// The new `LD_PRELOAD`: the runtime first, then what was there before (if anything).
pub fn preload_value(runtime: &Path, existing: Option<&OsStr>) -> OsString {
    let mut value = runtime.as_os_str().to_owned();
    if let Some(existing) = existing.filter(|e| !e.is_empty()) {
        value.push(":");
        value.push(existing);
    }
    value
}

/// `CUSAFE_OPTIONS` with `verbosity=1` added, unless the options set a verbosity.
pub fn verbose_options(existing: Option<&OsStr>) -> OsString {
    match existing.map(|e| e.to_string_lossy().into_owned()) {
        Some(e) if e.split(':').any(|p| p.starts_with("verbosity=")) => e.into(),
        Some(e) if !e.is_empty() => format!("{e}:verbosity=1").into(),
        _ => "verbosity=1".into(),
    }
}

/// Replaces this process with `command` (program and arguments) with the runtime
/// preloaded; returns only on failure. `verbose`: first say what cusafe can and cannot
/// check in the program, and run it with `verbosity=1`.
pub fn run(locator: &Locator, command: &[OsString], verbose: bool) -> RunError {
    let runtime = match locator.runtime() {
        Ok(rt) => rt.canonicalize().unwrap_or(rt),
        Err(err) => return err.into(),
    };
    let Some((program, args)) = command.split_first() else {
        return RunError::Exec {
            program: String::new(),
            source: std::io::Error::new(std::io::ErrorKind::InvalidInput, "no program given"),
        };
    };
    let preload = preload_value(&runtime, std::env::var_os("LD_PRELOAD").as_deref());
    let mut cmd = Command::new(program);
    cmd.args(args).env("LD_PRELOAD", preload);
    if verbose {
        match resolve(program).as_deref().and_then(inspect) {
            Some(sight) => sight.describe().iter().for_each(|l| eprintln!("{l}")),
            None => eprintln!(
                "cusafe run: cannot read {} to say what it links; its CUDA calls are still checked",
                program.to_string_lossy()
            ),
        }
        cmd.env(
            ENV_OPTIONS,
            verbose_options(std::env::var_os(ENV_OPTIONS).as_deref()),
        );
    }
    let source = cmd.exec();
    RunError::Exec {
        program: program.to_string_lossy().into_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbose_adds_verbosity_unless_set() {
        assert_eq!(verbose_options(None), OsString::from("verbosity=1"));
        assert_eq!(
            verbose_options(Some(OsStr::new("halt_on_error=0"))),
            OsString::from("halt_on_error=0:verbosity=1")
        );
        assert_eq!(
            verbose_options(Some(OsStr::new("verbosity=2"))),
            OsString::from("verbosity=2")
        );
    }

    #[test]
    fn runtime_goes_first() {
        let rt = Path::new("/x/libcusafe_rt.so");
        assert_eq!(
            preload_value(rt, None),
            OsString::from("/x/libcusafe_rt.so")
        );
        assert_eq!(
            preload_value(rt, Some(OsStr::new(""))),
            OsString::from("/x/libcusafe_rt.so")
        );
        assert_eq!(
            preload_value(rt, Some(OsStr::new("/a.so /b.so"))),
            OsString::from("/x/libcusafe_rt.so:/a.so /b.so")
        );
    }
}
