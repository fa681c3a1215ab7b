//! `cusafe`: run a program under the runtime, check the installation, fuzz, convert reports.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use cusafe_cli::locate::Locator;
use cusafe_cli::{doctor, fuzz, gen, report, run};

#[derive(Debug, Parser)]
#[command(
    name = "cusafe",
    version,
    about = "cusafe: memory safety for CUDA programs"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run a program with libcusafe_rt.so preloaded (put first in LD_PRELOAD); exits with
    /// the program's status.
    Run {
        /// First say what cusafe can and cannot check in the program (once), and run it
        /// with verbosity=1.
        #[arg(short, long)]
        verbose: bool,
        /// The program and its arguments (put them after `--`).
        #[arg(
            required = true,
            trailing_var_arg = true,
            allow_hyphen_values = true,
            value_name = "PROGRAM"
        )]
        command: Vec<OsString>,
    },
    /// Check clang-19, the CUDA tree, the pass plugin, the runtime and the GPU; exit 1 if
    /// something needed is missing.
    Doctor,
    /// Coverage-guided whole-program fuzzing with cusafe and ASan as in-process oracles:
    /// `cusafe fuzz -i SEEDS -o OUT -- ./app @@` (also: replay, minimize, plot).
    Fuzz(Box<fuzz::FuzzArgs>),
    /// Random UB-free CUDA programs and the differential runner over them: `cusafe gen
    /// write|build|check|reduce` (plain vs cusafe at -O0..-O3, planted bugs, EMI).
    Gen(gen::GenArgs),
    /// The runtime's JSON lines (CUSAFE_OPTIONS=json_path=...) as one SARIF 2.1.0 log for
    /// GitHub code scanning and editors: `cusafe report --sarif [-o OUT.sarif] [--srcroot
    /// DIR] FILE.jsonl...`.
    Report(report::ReportArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let locator = match Locator::for_current_exe() {
        Ok(l) => l,
        Err(e) => {
            eprintln!("cusafe: error: {e}");
            return ExitCode::from(2);
        }
    };
    match cli.command {
        Cmd::Run { verbose, command } => {
            let err = run::run(&locator, &command, verbose);
            eprintln!("cusafe run: error: {err}");
            ExitCode::from(err.exit_code())
        }
        Cmd::Doctor => {
            let checks = doctor::run_checks(&locator);
            if let Err(e) = doctor::print(&checks, &mut std::io::stdout().lock()) {
                eprintln!("cusafe doctor: error: cannot write: {e}");
                return ExitCode::from(2);
            }
            if doctor::all_present(&checks) {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Cmd::Fuzz(args) => ExitCode::from(fuzz::main(*args)),
        Cmd::Gen(args) => ExitCode::from(gen::main(args)),
        Cmd::Report(args) => ExitCode::from(report::main(args)),
    }
}
