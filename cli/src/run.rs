//! `cusafe run -- PROGRAM ARGS...`: runs a program with libcusafe_rt.so preloaded, so a
//! binary built elsewhere gets cusafe's checked allocator and host API checks without
//! recompiling. The process is replaced by the program (exit status, signals and
//! stdio are the program's own).

use std::ffi::{OsStr, OsString};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

use thiserror::Error;

use crate::locate::{LocateError, Locator};

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

/// Replaces this process with `command` (program and arguments) with the runtime
/// preloaded; returns only on failure.
pub fn run(locator: &Locator, command: &[OsString]) -> RunError {
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
    let source = Command::new(program)
        .args(args)
        .env("LD_PRELOAD", preload)
        .exec();
    RunError::Exec {
        program: program.to_string_lossy().into_owned(),
        source,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
