//! `cusafe fuzz replay CRASH_DIR|INPUT`: one run of a saved input under the same
//! environment as in the campaign (one process, cusafe halting at the first error).

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use cusafe_fuzz::symbolize::Symbolizer;
use cusafe_fuzz::{runner, Error, Result};

/// `replay`'s arguments.
#[derive(Debug, Args)]
pub struct ReplayArgs {
    /// A crash directory (OUT/crashes/NNN-...) or an input file inside OUT.
    pub input: PathBuf,
    /// Timeout in milliseconds.
    #[arg(short = 't', long, default_value_t = 30_000)]
    pub timeout: u64,
}

/// Replays; exit status 1 when the run shows a finding, 0 when it runs clean.
pub fn run(a: &ReplayArgs) -> Result<u8> {
    let (target, input, out) = super::saved_input(&a.input)?;
    let bytes = std::fs::read(&input)
        .map_err(|e| Error::io(format!("cannot read {}", input.display()), e))?;
    let work = out.join("work").join("replay");
    let o = runner::run(
        &target,
        &bytes,
        &work,
        Duration::from_millis(a.timeout),
        &[],
        &mut Symbolizer::default(),
    )?;
    print!("{}", o.output);
    print!("{}", o.reports.text);
    match o.finding() {
        Some(f) => {
            println!("cusafe fuzz replay: {}", f.summary());
            println!("{}", serde_json::to_string(&f.record).unwrap_or_default());
            Ok(1)
        }
        None => {
            println!(
                "cusafe fuzz replay: no finding (exit status {})",
                o.code.map_or("none".into(), |c| c.to_string())
            );
            Ok(0)
        }
    }
}
