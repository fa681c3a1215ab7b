//! The program under test: its command line, whether it was built with
//! `--cusafe-fuzz`, and whether it can run many inputs in one process.

use std::path::{Path, PathBuf};

use cusafe_format::fuzz::{PERSISTENT_MARKER, RT_MARKER_SYMBOL};
use object::{Object, ObjectSymbol};
use serde::{Deserialize, Serialize};

use crate::{Error, Result};

/// How inputs reach the program.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Delivery {
    /// A file whose path replaces `@@` in the arguments.
    File,
    /// The program's standard input.
    Stdin,
    /// The engine's shared memory, many inputs per process (persistent mode).
    Shared,
}

/// A target as the engine runs it (saved as `OUT/target.json`).
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Target {
    /// The program (absolute).
    pub program: PathBuf,
    /// Its arguments, `@@` where the input file goes.
    pub args: Vec<String>,
    /// How inputs reach it.
    pub delivery: Delivery,
    /// Turns of a persistent process before it is replaced.
    pub turns: u32,
    /// Whether its host code was built with AddressSanitizer.
    pub asan: bool,
}

/// What the binary itself says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Inspection {
    /// `libcusafe_fuzz.a` is linked in (`--cusafe-fuzz`).
    pub fuzz_build: bool,
    /// A persistent harness (`CUSAFE_FUZZ_TARGET` / `CUSAFE_FUZZ_LOOP`) is in it.
    pub persistent: bool,
    /// AddressSanitizer's runtime is in it.
    pub asan: bool,
}

/// Reads the binary's symbols and looks for the persistent marker.
pub fn inspect(program: &Path) -> Result<Inspection> {
    let bytes = std::fs::read(program)
        .map_err(|e| Error::io(format!("cannot read the target {}", program.display()), e))?;
    let file = object::File::parse(&*bytes).map_err(|e| {
        Error::Target(format!(
            "{} is not an executable this machine can run ({e}); give the compiled program, not a script",
            program.display()
        ))
    })?;
    let has = |name: &str| {
        file.symbols()
            .chain(file.dynamic_symbols())
            .any(|s| s.name() == Ok(name))
    };
    let persistent = bytes
        .windows(PERSISTENT_MARKER.len())
        .any(|w| w == PERSISTENT_MARKER);
    Ok(Inspection {
        fuzz_build: has(RT_MARKER_SYMBOL),
        persistent,
        asan: has("__asan_init"),
    })
}

/// How the user asked for inputs to be delivered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DeliveryChoice {
    /// `--stdin`: the program reads its input from standard input.
    pub stdin: bool,
    /// `--no-persistent`: one process per input even for a persistent harness.
    pub no_persistent: bool,
}

impl Target {
    /// Checks `command` (program and arguments) and decides the delivery.
    pub fn from_command(command: &[String], choice: DeliveryChoice, turns: u32) -> Result<Target> {
        let (prog, args) = command.split_first().ok_or_else(|| {
            Error::Usage("no target: put the program and its arguments after `--`, e.g. `cusafe fuzz -i seeds -o out -- ./app @@`".into())
        })?;
        let program = resolve(prog)?;
        let seen = inspect(&program)?;
        if !seen.fuzz_build {
            return Err(Error::Target(format!(
                "{} was not built for fuzzing (no libcusafe_fuzz.a in it): rebuild it with `cusafe-clang++ --cusafe-fuzz ...` (add --cusafe-no-instrument for a coverage-only build)",
                program.display()
            )));
        }
        let has_at = args.iter().any(|a| a.contains("@@"));
        let delivery = if seen.persistent && !choice.no_persistent {
            Delivery::Shared
        } else if has_at {
            Delivery::File
        } else if choice.stdin || seen.persistent {
            Delivery::Stdin
        } else {
            return Err(Error::Usage(format!(
                "the command `{}` has no @@: put @@ where the program takes its input file (`-- {} @@`), or pass --stdin if it reads its input from standard input",
                command.join(" "),
                prog
            )));
        };
        if has_at && choice.stdin {
            return Err(Error::Usage(
                "--stdin and @@ both given: choose one way to pass the input".into(),
            ));
        }
        Ok(Target {
            program,
            args: args.to_vec(),
            delivery,
            turns,
            asan: seen.asan,
        })
    }

    /// The arguments for one run outside the engine with the input in `file`.
    pub fn args_for_file(&self, file: &Path) -> Vec<String> {
        let f = file.to_string_lossy();
        if self.delivery == Delivery::Shared && !self.args.iter().any(|a| a.contains("@@")) {
            // A CUSAFE_FUZZ_TARGET main takes its input file as argv[1].
            return vec![f.into_owned()];
        }
        self.args.iter().map(|a| a.replace("@@", &f)).collect()
    }

    /// Whether a one-off run passes the input on stdin.
    pub fn stdin_for_replay(&self) -> bool {
        self.delivery == Delivery::Stdin
    }
}

fn resolve(prog: &str) -> Result<PathBuf> {
    let p = Path::new(prog);
    let found = if p.components().count() > 1 {
        Some(p.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(p))
                .find(|c| c.is_file())
        })
    };
    let path = found.filter(|f| f.is_file()).ok_or_else(|| {
        Error::Target(format!(
            "cannot find the target program `{prog}`: give a path (./{prog}) or put it on PATH"
        ))
    })?;
    std::fs::canonicalize(&path)
        .map_err(|e| Error::io(format!("cannot resolve {}", path.display()), e))
}
