//! `cusafe-fatbinary`: the `fatbinary` clang calls, over libnvfatbin (see
//! `cusafe_cli::fatbinary`).

use std::process::ExitCode;

use cusafe_cli::fatbinary::{self, FatbinaryError, NVFATBIN_ENV};
use cusafe_cli::locate::env_nonempty;
use cusafe_cli::{register_cap, resources};

fn main() -> ExitCode {
    let argv: Vec<_> = std::env::args_os().collect();
    let args = match fatbinary::parse(argv.iter().cloned()) {
        Ok(args) => args,
        // clap prints help/version on stdout (exit 0) and its errors on stderr (exit 2).
        Err(FatbinaryError::Usage(err)) => err.exit(),
        Err(err) => return fail(&err),
    };
    let candidates = fatbinary::library_candidates(
        env_nonempty(NVFATBIN_ENV),
        argv.first().map(|a| a.as_os_str()),
    );
    let result = fatbinary::read_images(&args).and_then(|inputs| {
        let lib = fatbinary::load_library(&candidates)?;
        fatbinary::create(&args, &inputs, &lib)?;
        warn_about_resources(&inputs);
        report_registers(&inputs);
        Ok(())
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => fail(&err),
    }
}

/// Says which instrumented kernels leave no room for 1024-thread blocks (once each, over
/// the cubins of every architecture): into the file `cusafe-clang++` named in
/// [`resources::REPORT_ENV`], which warns with the plain build's counts, else on stderr.
fn warn_about_resources(inputs: &[Vec<u8>]) {
    let mut said = std::collections::HashSet::new();
    let heavy: Vec<_> = inputs
        .iter()
        .flat_map(|i| resources::heavy_kernels(i))
        .filter(|h| said.insert(h.mangled.clone()))
        .collect();
    if heavy.is_empty() {
        return;
    }
    if let Some(path) = env_nonempty(resources::REPORT_ENV) {
        let text: String = heavy.iter().map(|h| h.report_line()).collect();
        let written = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(&path)
            .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
        if written.is_ok() {
            return;
        }
    }
    for h in heavy {
        eprintln!("{}", h.warning());
    }
}

/// Appends every instrumented kernel's registers to the file `cusafe-clang++` named in
/// [`register_cap::REGISTERS_ENV`] (`MANGLED REGISTERS` lines), for its register caps.
fn report_registers(inputs: &[Vec<u8>]) {
    let Some(path) = env_nonempty(register_cap::REGISTERS_ENV) else {
        return;
    };
    let text: String = inputs
        .iter()
        .flat_map(|i| resources::instrumented_registers(i))
        .map(|(k, r)| format!("{k} {r}\n"))
        .collect();
    let written = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(&path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, text.as_bytes()));
    if let Err(e) = written {
        eprintln!(
            "cusafe-fatbinary: warning: cannot append to {}={}: {e}; this compile gets no register cap",
            register_cap::REGISTERS_ENV,
            path.to_string_lossy()
        );
    }
}

fn fail(err: &FatbinaryError) -> ExitCode {
    eprintln!("cusafe-fatbinary: error: {err}");
    ExitCode::from(err.exit_code())
}
