//! `cusafe gen`: random UB-free CUDA programs and the differential runner over them,
//! one module per subcommand (the generator itself is the `cusafe-gen` crate).
//!
//! * [`write`]: `cusafe gen write`, one file of programs (with EMI variants or a
//!   planted bug);
//! * [`build`]: `cusafe gen build`, a batch of files built plain and with cusafe at
//!   -O0..-O3 (or only compiled through the pass, verifier and ptxas, for CI), with
//!   every build failure reduced;
//! * [`check`]: `cusafe gen check`, runs a built batch on the GPU and compares: same
//!   checksums in every build, no report; or, for planted bugs, the report at the
//!   planted line;
//! * [`reduce`]: `cusafe gen reduce`, delta reduction of one program under a test
//!   command.

pub mod build;
pub mod check;
pub mod reduce;
pub mod write;

use clap::{Args, Subcommand, ValueEnum};
use cusafe_gen::{Emi, Limits, Recipe};

/// `cusafe gen`'s arguments.
#[derive(Debug, Args)]
pub struct GenArgs {
    /// The subcommand.
    #[command(subcommand)]
    pub command: GenCmd,
}

/// The subcommands of `cusafe gen`.
#[derive(Debug, Subcommand)]
pub enum GenCmd {
    /// Write one CUDA file holding programs SEED..SEED+COUNT.
    Write(write::WriteArgs),
    /// Generate a batch of files and build each plain and with cusafe at every level.
    Build(build::BuildArgs),
    /// Run a built batch and compare outputs (or match planted bugs to reports).
    Check(check::CheckArgs),
    /// Shrink one program while a test command still calls it interesting.
    Reduce(reduce::ReduceArgs),
}

/// EMI variant on the command line.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum EmiArg {
    /// Always-false guards holding random code and bad accesses that never run.
    Dead,
    /// Always-true guards around existing statements.
    Live,
}

/// What every subcommand that generates needs: the recipe's options.
#[derive(Clone, Debug, Args)]
pub struct RecipeArgs {
    /// An EMI variant instead of the base program (same checksums expected).
    #[arg(long, value_enum)]
    pub emi: Option<EmiArg>,
    /// Plant one bad access per program (the kind cycles through every space and
    /// fault over consecutive seeds).
    #[arg(long)]
    pub plant: bool,
    /// Kernels per program (at most).
    #[arg(long, default_value_t = 3)]
    pub kernels: u32,
    /// Top-level statements per kernel (at most).
    #[arg(long, default_value_t = 12)]
    pub statements: u32,
}

impl RecipeArgs {
    /// The generator's recipe for `seed`.
    pub fn recipe(&self, seed: u64) -> Recipe {
        Recipe {
            limits: Limits {
                kernels: self.kernels.max(1),
                statements: self.statements.max(1),
                ..Limits::default()
            },
            emi: self.emi.map(|e| match e {
                EmiArg::Dead => Emi::Dead,
                EmiArg::Live => Emi::Live,
            }),
            plant: self.plant.then_some(Some(
                (seed % cusafe_gen::plant::CHOICES.len() as u64) as usize,
            )),
        }
    }
}

/// Runs `cusafe gen`; returns the exit status.
pub fn main(args: GenArgs) -> u8 {
    let r = match args.command {
        GenCmd::Write(a) => write::run(&a),
        GenCmd::Build(a) => build::run(&a),
        GenCmd::Check(a) => check::run(&a),
        GenCmd::Reduce(a) => reduce::run(&a),
    };
    match r {
        Ok(code) => code,
        Err(e) => {
            eprintln!("cusafe gen: error: {e}");
            2
        }
    }
}
