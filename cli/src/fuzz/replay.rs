//! `cusafe fuzz replay CRASH_DIR|INPUT`: one run of a saved input under the same
//! environment as in the campaign (one process, cusafe halting at the first error).

use std::time::Duration;

use cusafe_fuzz::symbolize::Symbolizer;
use cusafe_fuzz::{runner, Result};

use super::{Saved, SavedArgs};

/// Replays; exit status 1 when the run shows a finding, 0 when it runs clean.
pub fn run(a: &SavedArgs) -> Result<u8> {
    let Saved {
        target,
        bytes,
        work,
        ..
    } = super::load(a, "replay")?;
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
