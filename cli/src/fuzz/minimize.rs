//! `cusafe fuzz minimize CRASH_DIR`: the smallest input that keeps the same finding,
//! written beside the original as `input.min`.

use std::time::Duration;

use cusafe_fuzz::{minimize, Error, Result};

use super::{Saved, SavedArgs};

/// Minimises; exit status 0 on success.
pub fn run(a: &SavedArgs) -> Result<u8> {
    let Saved {
        target,
        input,
        bytes,
        work,
    } = super::load(a, "minimize")?;
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
