//! `cusafe fuzz minimize CRASH_DIR`: the smallest input that keeps the same finding,
//! written beside the original as `input.min`.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use cusafe_fuzz::{minimize, Error, Result};

/// `minimize`'s arguments.
#[derive(Debug, Args)]
pub struct MinimizeArgs {
    /// A crash directory (OUT/crashes/NNN-...) or an input file inside OUT.
    pub input: PathBuf,
    /// Timeout of one run, in milliseconds.
    #[arg(short = 't', long, default_value_t = 30_000)]
    pub timeout: u64,
}

/// Minimises; exit status 0 on success.
pub fn run(a: &MinimizeArgs) -> Result<u8> {
    let (target, input, out) = super::saved_input(&a.input)?;
    let bytes = std::fs::read(&input)
        .map_err(|e| Error::io(format!("cannot read {}", input.display()), e))?;
    let work = out.join("work").join("minimize");
    let m = minimize::minimize(&target, &bytes, &work, Duration::from_millis(a.timeout))?;
    let dest = input.with_extension("min");
    std::fs::write(&dest, &m.input)
        .map_err(|e| Error::io(format!("cannot write {}", dest.display()), e))?;
    println!(
        "cusafe fuzz minimize: {} -> {} bytes in {} runs, same finding: {}\n  {}",
        bytes.len(),
        m.input.len(),
        m.runs,
        m.finding.summary(),
        dest.display()
    );
    Ok(0)
}
