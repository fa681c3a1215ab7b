//! `cusafe fuzz plot OUT`: the SVG of a campaign's history.

use std::path::PathBuf;

use clap::Args;
use cusafe_fuzz::outdir::OutDir;
use cusafe_fuzz::{plot, stats, Error, Result};

/// `plot`'s arguments.
#[derive(Debug, Args)]
pub struct PlotArgs {
    /// The campaign's output directory.
    pub out: PathBuf,
    /// Where to write the SVG (default OUT/plot.svg).
    #[arg(short = 'o', long)]
    pub svg: Option<PathBuf>,
}

/// Draws; exit status 0.
pub fn run(a: &PlotArgs) -> Result<u8> {
    let out = OutDir::new(&a.out);
    let rows = stats::read_history(&out.history(0))?;
    if rows.is_empty() {
        return Err(Error::Usage(format!(
            "{} has no statistics yet: run a campaign into it first",
            out.history(0).display()
        )));
    }
    let dest = a.svg.clone().unwrap_or_else(|| out.plot());
    std::fs::write(
        &dest,
        plot::svg(&rows, &format!("cusafe fuzz: {}", a.out.display())),
    )
    .map_err(|e| Error::io(format!("cannot write {}", dest.display()), e))?;
    println!("{}", dest.display());
    Ok(0)
}
