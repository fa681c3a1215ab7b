//! `cusafe-clang++`: clang++-19 for CUDA with cusafe's instrumentation (see
//! `cusafe_cli::clangxx`).

use std::process::ExitCode;

fn main() -> ExitCode {
    let args = std::env::args_os().skip(1).collect();
    match cusafe_cli::clangxx::main_with(args, &mut std::io::stdout().lock()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cusafe-clang++: error: {err}");
            ExitCode::from(2)
        }
    }
}
