//! The current input: from the engine's shared buffer in persistent mode, else from a
//! file (argv\[1\] of `CUSAFE_FUZZ_TARGET`'s main, `CUSAFE_FUZZ_INPUT`) or stdin.

use std::io::Read;
use std::path::PathBuf;

use cusafe_format::fuzz::INPUT_ENV;
use libafl_targets::coverage::{INPUT_LENGTH_PTR, INPUT_PTR};

/// Where a run outside persistent mode reads its input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    /// A file.
    File(PathBuf),
    /// Standard input.
    Stdin,
}

impl Source {
    /// The file named by `arg` (argv\[1\]), else `CUSAFE_FUZZ_INPUT`, else stdin.
    pub fn pick(arg: Option<PathBuf>) -> Source {
        arg.or_else(|| std::env::var_os(INPUT_ENV).map(PathBuf::from))
            .map_or(Source::Stdin, Source::File)
    }

    /// Reads the whole input; an unreadable file is an error naming it.
    pub fn read(&self) -> Result<Vec<u8>, String> {
        match self {
            Source::File(p) => std::fs::read(p)
                .map_err(|e| format!("cannot read the input file {}: {e}", p.display())),
            Source::Stdin => {
                let mut v = Vec::new();
                std::io::stdin()
                    .read_to_end(&mut v)
                    .map_err(|e| format!("cannot read the input from stdin: {e}"))?;
                Ok(v)
            }
        }
    }
}

/// The input the engine put in shared memory for this turn (persistent mode).
pub fn shared() -> Vec<u8> {
    // SAFETY: mapped by server::start in persistent mode: a u32 length, then the bytes;
    // the engine writes it before it resumes this process.
    unsafe {
        let len = *INPUT_LENGTH_PTR as usize;
        std::slice::from_raw_parts(INPUT_PTR, len).to_vec()
    }
}
