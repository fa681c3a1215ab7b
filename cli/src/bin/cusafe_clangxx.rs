//! `cusafe-clang++`: clang++-19 for CUDA with cusafe's instrumentation (see
//! `cusafe_cli::clangxx`). Called as `cusafe-plain-clang++` (a symlink), it builds
//! plain, as with `--cusafe-no-instrument`: for build systems that take a compiler path
//! and nothing else (CMake's `CMAKE_CUDA_COMPILER`).

use std::ffi::OsString;
use std::path::Path;
use std::process::ExitCode;

use cusafe_cli::clangxx::{NO_INSTRUMENT_FLAG, PLAIN_NAME};

fn main() -> ExitCode {
    let mut all = std::env::args_os();
    let called = all.next().unwrap_or_default();
    let mut args: Vec<OsString> = Vec::new();
    if Path::new(&called).file_name() == Some(PLAIN_NAME.as_ref()) {
        args.push(NO_INSTRUMENT_FLAG.into());
    }
    args.extend(all);
    match cusafe_cli::clangxx::main_with(args, &mut std::io::stdout().lock()) {
        Ok(code) => code,
        Err(err) => {
            eprintln!("cusafe-clang++: error: {err}");
            ExitCode::from(2)
        }
    }
}
