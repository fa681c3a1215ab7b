//! `cusafe-nvcc`: nvcc's command line, built by `cusafe-clang++`.
//!
//! Makefiles and build systems written for nvcc run unchanged with `NVCC=cusafe-nvcc`:
//! the command line is read ([`args`]) and mapped onto the `cusafe-clang++` command that
//! builds the same thing with cusafe's checks ([`map`]), which then replaces this
//! process ([`driver`]). GPU architectures follow [`arch`]; the options and what becomes
//! of each are the table in [`options`]; response files and option lists are split by
//! [`words`]. docs/cli.md has the table of flags for users.
//!
//! Flags that cannot be honoured are errors (exit status 2) saying why and what to do,
//! flags that are safe to ignore give a one-line warning, and unknown flags are errors
//! naming the closest known option.

pub mod arch;
pub mod args;
pub mod driver;
pub mod map;
pub mod options;
pub mod words;

use std::ffi::OsString;
use std::io::Write;
use std::process::ExitCode;

use thiserror::Error;

use crate::locate::Locator;

/// An error of `cusafe-nvcc`: what it is about (a flag as written, a file), why, and
/// what to do. Printed as `cusafe-nvcc: error: <subject>: <why>; <fix>`, exit status 2.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{subject}: {why}; {fix}")]
pub struct Error {
    /// The flag as written, or the file or tool concerned.
    pub subject: String,
    /// Why it cannot be done.
    pub why: String,
    /// What to do instead.
    pub fix: String,
}

impl Error {
    /// An error about `subject`.
    pub fn new(subject: &str, why: impl Into<String>, fix: impl Into<String>) -> Self {
        Self {
            subject: subject.to_owned(),
            why: why.into(),
            fix: fix.into(),
        }
    }
}

/// The help text of `cusafe-nvcc --help`.
pub const HELP: &str = "\
cusafe-nvcc: nvcc's command line, built by cusafe-clang++ (clang++-19) with cusafe's
memory-safety checks

Usage: cusafe-nvcc [nvcc options] [--cusafe-* flags] inputs...

Inputs: .cu (CUDA), .cpp/.cc/.cxx (host C++), .c (C), .o/.a/.so (linked).
Options (long --name or short -name, one or two dashes, value after = or a space):
  -c, -o FILE, -E, -M, -MM, -MD, -MMD, -MF FILE, -MT TARGET, -MP, -shared, -x cu|c++|c
  -arch sm_NN|compute_NN|native, -code LIST, -gencode arch=compute_NN,code=sm_NN
                         each architecture named becomes --cuda-gpu-arch=sm_NN
                         (none: sm_90)
  -O0..3 (host), -g (host), -G (device debug, device -O0), -lineinfo
                         device code is built at -O3 unless -G, as with nvcc
  -std=c++NN, -I, -D, -U, -isystem, -include, -L, -l (lists: -I a,b)
  -Xcompiler LIST        host compiler flags (host-only in CUDA compiles)
  -Xlinker LIST, -Xptxas LIST, --maxrregcount N, --resource-usage
  --use_fast_math, --ftz, --prec-div, --prec-sqrt, --fmad, --default-stream
  -w, -Werror all-warnings, -cudart shared (static and none: shared, with a warning)
  --expt-relaxed-constexpr, --extended-lambda   clang's default already
  -ccbin, -Xcudafe, -t N, --keep, ...           ignored, with a warning
  -rdc=true, -dc, -dlink, -lib, -ptx, -cubin    refused (the error says why)
  -v (print the command, then run it), --dryrun (print, do not run), --version, --help
  --options-file FILE, -optf FILE, @FILE        read options from FILE
  --forward-unknown-to-host-compiler            unknown flags go to the host compiler
  --cusafe-*             passed to cusafe-clang++ (cusafe-clang++ --help)

docs/cli.md has the full table of flags and what cusafe does with each.
";

/// The whole of `cusafe-nvcc`: reads `args` (without the program name), then prints
/// help, the version or the command, or replaces the process with `cusafe-clang++`.
/// Errors are printed to `err`.
pub fn main_with(args: Vec<OsString>, out: &mut impl Write, err: &mut impl Write) -> ExitCode {
    match run(args, out, err) {
        Ok(code) => code,
        Err(e) => {
            // Nothing more to do if stderr is gone.
            let _ = writeln!(err, "cusafe-nvcc: error: {e}");
            ExitCode::from(2)
        }
    }
}

fn run(args: Vec<OsString>, out: &mut impl Write, err: &mut impl Write) -> Result<ExitCode, Error> {
    let args = args
        .into_iter()
        .map(|a| {
            a.into_string().map_err(|bad| {
                Error::new(
                    &bad.to_string_lossy(),
                    "not valid UTF-8",
                    "rename the file, or call cusafe-clang++ directly",
                )
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let parsed = args::parse(args)?;
    let write = |e: std::io::Error| {
        Error::new(
            "output",
            format!("cannot write ({e})"),
            "check where the output goes",
        )
    };
    if parsed.help {
        out.write_all(HELP.as_bytes()).map_err(write)?;
        return Ok(ExitCode::SUCCESS);
    }
    let locator = Locator::for_current_exe()
        .map_err(|e| Error::new("cusafe-nvcc", e.to_string(), "see docs/cli.md"))?;
    if parsed.version {
        writeln!(
            out,
            "cusafe-nvcc {} (cusafe): nvcc's command line, built by cusafe-clang++ with clang++-19",
            env!("CARGO_PKG_VERSION")
        )
        .map_err(write)?;
        let tree = locator
            .cuda_tree()
            .map_err(|e| Error::new("CUDA tree", e.to_string(), "see docs/cli.md"))?;
        writeln!(out, "{}", driver::cuda_version_line(&tree)?).map_err(write)?;
        return Ok(ExitCode::SUCCESS);
    }
    let machine = driver::Machine { locator };
    let mapped = map::map(&parsed, &machine)?;
    for warning in &mapped.warnings {
        writeln!(err, "cusafe-nvcc: warning: {warning}").map_err(write)?;
    }
    let driver = driver::find()?;
    if parsed.dry_run || parsed.verbose {
        writeln!(err, "{}", driver::display(&driver, &mapped.args)).map_err(write)?;
    }
    if parsed.dry_run {
        return driver::print_clang_command(&driver, &mapped.args, err);
    }
    err.flush().map_err(write)?;
    Err(driver::exec(&driver, &mapped.args))
}
