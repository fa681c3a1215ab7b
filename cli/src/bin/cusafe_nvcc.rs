//! `cusafe-nvcc`: nvcc's command line, built by `cusafe-clang++` (see
//! `cusafe_cli::nvcc`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1).collect();
    cusafe_cli::nvcc::main_with(
        args,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    )
}
