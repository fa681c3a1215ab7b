//! `cusafe fuzz`: coverage-guided whole-program fuzzing, one module per subcommand
//! (the engine itself is the `cusafe-fuzz` crate).
//!
//! * [`start`]: `cusafe fuzz [OPTIONS] -- PROGRAM [ARGS with @@]`, the campaign;
//! * [`replay`]: `cusafe fuzz replay CRASH_DIR|INPUT`, one run of a saved input;
//! * [`minimize`]: `cusafe fuzz minimize CRASH_DIR`, a smaller input, same finding;
//! * [`plot`]: `cusafe fuzz plot OUT`, the SVG of a campaign.

pub mod minimize;
pub mod plot;
pub mod replay;
pub mod start;

use std::path::{Path, PathBuf};

use clap::{Args, Subcommand};
use cusafe_fuzz::outdir::OutDir;
use cusafe_fuzz::target::Target;

/// `cusafe fuzz`'s arguments: a subcommand, or the campaign's options.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct FuzzArgs {
    /// replay, minimize or plot; without one, a campaign.
    #[command(subcommand)]
    pub command: Option<FuzzCmd>,
    /// The campaign's options (when no subcommand is given).
    #[command(flatten)]
    pub start: start::StartArgs,
}

/// The subcommands of `cusafe fuzz`.
#[derive(Debug, Subcommand)]
pub enum FuzzCmd {
    /// Run a saved crash input once and print its report.
    Replay(replay::ReplayArgs),
    /// Shrink a saved crash input while it keeps the same finding.
    Minimize(minimize::MinimizeArgs),
    /// Draw edges and unique crashes over time (SVG) from an output directory.
    Plot(plot::PlotArgs),
}

/// Runs `cusafe fuzz`; returns the exit status.
pub fn main(args: FuzzArgs) -> u8 {
    let r = match args.command {
        Some(FuzzCmd::Replay(a)) => replay::run(&a),
        Some(FuzzCmd::Minimize(a)) => minimize::run(&a),
        Some(FuzzCmd::Plot(a)) => plot::run(&a),
        None => start::run(&args.start),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cusafe fuzz: error: {e}");
            2
        }
    }
}

/// A crash directory or input file, with the campaign's target found beside it
/// (`OUT/target.json`, two levels above a crash directory's input).
pub fn saved_input(path: &Path) -> cusafe_fuzz::Result<(Target, PathBuf, PathBuf)> {
    let input = if path.is_dir() {
        path.join("input")
    } else {
        path.to_path_buf()
    };
    let out = input
        .ancestors()
        .skip(1)
        .find(|d| d.join("target.json").is_file())
        .ok_or_else(|| {
            cusafe_fuzz::Error::Usage(format!(
                "no target.json above {}: give a crash directory inside a `cusafe fuzz` output directory (OUT/crashes/NNN-...)",
                path.display()
            ))
        })?;
    let out = OutDir::new(out);
    let target = load_target(&out)?;
    Ok((target, input, out.root().to_path_buf()))
}

/// Reads `OUT/target.json`.
pub fn load_target(out: &OutDir) -> cusafe_fuzz::Result<Target> {
    let p = out.target_json();
    let s = std::fs::read_to_string(&p)
        .map_err(|e| cusafe_fuzz::Error::io(format!("cannot read {}", p.display()), e))?;
    serde_json::from_str(&s).map_err(|e| {
        cusafe_fuzz::Error::Usage(format!("{} is not a target description ({e})", p.display()))
    })
}
