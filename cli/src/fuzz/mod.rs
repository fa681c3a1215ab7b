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

use std::path::PathBuf;

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
    Replay(SavedArgs),
    /// Shrink a saved crash input while it keeps the same finding.
    Minimize(SavedArgs),
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

/// The arguments of `replay` and `minimize`: one saved input.
#[derive(Debug, Args)]
pub struct SavedArgs {
    /// A crash directory (OUT/crashes/NNN-...) or an input file inside OUT.
    pub input: PathBuf,
    /// Timeout of one run, in milliseconds.
    #[arg(short = 't', long, default_value_t = 30_000)]
    pub timeout: u64,
}

/// A saved input with the campaign's target found beside it (`OUT/target.json`, above
/// the input).
pub struct Saved {
    /// The campaign's target.
    pub target: Target,
    /// The input file (`input` of a crash directory).
    pub input: PathBuf,
    /// Its bytes.
    pub bytes: Vec<u8>,
    /// Scratch directory for the runs of subcommand `sub` (`OUT/work/<sub>`).
    pub work: PathBuf,
}

/// Loads the input `a` names, for subcommand `sub`.
pub fn load(a: &SavedArgs, sub: &str) -> cusafe_fuzz::Result<Saved> {
    let path = &a.input;
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
    let bytes = std::fs::read(&input)
        .map_err(|e| cusafe_fuzz::Error::io(format!("cannot read {}", input.display()), e))?;
    let work = out.root().join("work").join(sub);
    Ok(Saved {
        target,
        input,
        bytes,
        work,
    })
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
