//! `cusafe-clang++`: a drop-in for `clang++` on CUDA code.
//!
//! The command line is not parsed with clap: clang takes hundreds of flags, in any order,
//! and every one that is not ours must reach clang untouched. [`CommandLine::parse`]
//! removes the `--cusafe-*` flags and reads just enough of the rest (inputs and their
//! languages, `-x`, `-c`/`-S`/`-E`..., `--cuda-gpu-arch`, `--cuda-path`, `-lcudart`) to
//! decide what to add; [`CommandLine::plan`] then builds the clang++-19 command:
//!
//! * CUDA inputs (`.cu`, or anything after `-x cuda`): `--cuda-path=<tree>`,
//!   `-Wno-unknown-cuda-version`, `--cuda-gpu-arch=sm_90` when no GPU arch is given, and
//!   unless `--cusafe-no-instrument`: `-Xarch_device -gline-directives-only` (device line
//!   tables for report locations; the host compile is untouched, and a later `-g` of the
//!   user's still wins) and `-Xarch_device -fpass-plugin=<plugin>` (both left out with
//!   `--cuda-host-only`, where clang would call them unused);
//! * a link step: `-L<cuda>/lib64 -lcudart` (unless the user links cudart) and rpaths to
//!   the CUDA libraries and `$ORIGIN`; unless `--cusafe-no-instrument` also
//!   `-L<rtdir> -Wl,--push-state,--no-as-needed -lcusafe_rt -Wl,--pop-state` placed
//!   before `-lcudart`, `-Wl,-rpath,<rtdir>` and `-Wl,--undefined=__cusafe_rt_present`.
//!
//! A host-only compile (no CUDA input, no link) goes to clang++ unchanged.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use thiserror::Error;

use crate::locate::{check_cuda_tree, LocateError, Locator, Need};
use crate::shell;

/// GPU architecture used when the command line names none.
pub const DEFAULT_GPU_ARCH: &str = "sm_90";
/// Environment variable that makes the pass plugin print a checks line per kernel.
pub const STATS_ENV: &str = "CUSAFE_PASS_STATS";
/// Environment variable that makes the pass build recover-mode cold paths.
pub const RECOVER_ENV: &str = "CUSAFE_PASS_RECOVER";
/// Environment variable that turns the pass's launch-time bounds off (value "0").
pub const LAUNCH_BOUNDS_ENV: &str = "CUSAFE_PASS_LAUNCH_BOUNDS";
/// Environment variable that makes the pass add device edge coverage ("1" or "warp").
pub const COVERAGE_ENV: &str = "CUSAFE_PASS_COVERAGE";
/// Environment variable that turns the pass's memory checks off (value "0").
pub const CHECKS_ENV: &str = "CUSAFE_PASS_CHECKS";
/// Symbol of `libcusafe_fuzz.a` the link asks for (its constructor starts the fork server).
pub const FUZZ_INIT_SYMBOL: &str = "cusafe_fuzz_init";
/// Host coverage flag of fuzz builds.
pub const HOST_COVERAGE_FLAG: &str = "-fsanitize-coverage=trace-pc-guard";

/// Host ASan checks of a fuzz build that can go on after a report.
pub const HOST_RECOVER_FLAG: &str = "-fsanitize-recover=address";
/// Symbol the runtime exports; the link asks for it so `--as-needed` cannot drop the runtime.
pub const RT_PRESENT_SYMBOL: &str = "__cusafe_rt_present";

/// The help text of `cusafe-clang++ --help`.
pub const HELP: &str = "\
cusafe-clang++: clang++-19 for CUDA, with cusafe's memory-safety instrumentation

Usage: cusafe-clang++ [cusafe flags] [clang++ flags] inputs...

Builds like clang++ (compile and link, -c, -o, -O0..3, -g, several inputs, .cu or
-x cuda, --cuda-gpu-arch; sm_90 when none is given). Device code is instrumented by the
cusafe pass plugin and programs are linked with libcusafe_rt.so before libcudart.

cusafe flags:
  --cusafe-no-instrument   plain build from the same command line: no pass plugin, no
                           runtime (CUDA path, GPU arch and cudart are still added)
  --cusafe-stats           let the pass print a checks line per kernel
                           (sets CUSAFE_PASS_STATS=1 for clang)
  --cusafe-recover         device code that can keep going after a report when run with
                           CUSAFE_OPTIONS=halt_on_error=0 (report each site once, skip
                           the bad access); costs registers. Without it a device report
                           always ends the launch (sets CUSAFE_PASS_RECOVER=1 for clang)
  --cusafe-no-launch-bounds
                           kernels decode each pointer argument's bounds on the device
                           instead of taking them from the runtime at launch (for
                           launches cusafe's runtime does not see; slower; sets
                           CUSAFE_PASS_LAUNCH_BOUNDS=0 for clang)
  --cusafe-fuzz            a fuzz target for `cusafe fuzz`: host code with SanitizerCoverage
                           (trace-pc-guard) and AddressSanitizer, device code with edge
                           coverage (one byte store per edge) besides the checks, recover-
                           capable device code that skips every failing access (no merged
                           or hoisted checks: CUSAFE_PASS_RECOVER=skip), libcusafe_fuzz.a
                           and <cusafe/fuzz.h> (the persistent harness). With
                           --cusafe-no-instrument: coverage only (the baseline's target)
  --cusafe-fuzz-warp       as --cusafe-fuzz, but only a warp's first active lane stores
  --cusafe-fuzz-no-asan    fuzz build without host AddressSanitizer
  --cusafe-fuzz-no-device-edges
                           fuzz build without device edge coverage (to measure its cost)
  --cusafe-print-command   print the clang++ command line (shell-quoted) instead of
                           running it
  --help                   this text
  --version                cusafe-clang++'s version, then clang++'s

Environment: CUSAFE_CLANG (clang++ to run), CUSAFE_CUDA_PATH (the --cuda-path tree),
CUSAFE_PASS_PLUGIN (libcusafe_pass.so), CUSAFE_RT_LIB (libcusafe_rt.so); see docs/cli.md.

all other flags go to clang++-19
";

/// What went wrong in `cusafe-clang++` itself (clang's own failures are clang's exit code).
#[derive(Debug, Error)]
pub enum ClangxxError {
    /// A `--cusafe-` flag that does not exist.
    #[error("unknown cusafe flag {0} (cusafe-clang++ --help lists them)")]
    UnknownFlag(String),
    /// A toolchain piece is missing.
    #[error(transparent)]
    Locate(#[from] LocateError),
    /// clang++ could not be started.
    #[error("cannot run {}: {source}", program.display())]
    Exec {
        /// The program.
        program: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Writing to stdout failed.
    #[error("cannot write output: {0}")]
    Output(#[source] std::io::Error),
}

/// The flags `cusafe-clang++` handles itself.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CusafeFlags {
    /// `--cusafe-no-instrument`.
    pub no_instrument: bool,
    /// `--cusafe-stats`.
    pub stats: bool,
    /// `--cusafe-recover`.
    pub recover: bool,
    /// `--cusafe-no-launch-bounds`.
    pub no_launch_bounds: bool,
    /// `--cusafe-fuzz` (or `--cusafe-fuzz-warp`).
    pub fuzz: bool,
    /// `--cusafe-fuzz-warp`.
    pub fuzz_warp: bool,
    /// `--cusafe-fuzz-no-asan`.
    pub fuzz_no_asan: bool,
    /// `--cusafe-fuzz-no-device-edges`.
    pub fuzz_no_device_edges: bool,
    /// `--cusafe-print-command`.
    pub print_command: bool,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
}

/// What an input file is, as far as cusafe cares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InputKind {
    /// Compiled as CUDA (host and device).
    Cuda,
    /// Compiled for the host only (C, C++, assembly...).
    Host,
    /// Goes to the linker (objects, archives, shared libraries, `-l`).
    Linker,
}

/// A `cusafe-clang++` command line, read.
#[derive(Debug, Clone)]
pub struct CommandLine {
    /// Our own flags.
    pub flags: CusafeFlags,
    /// The arguments for clang++, in order, without ours.
    pub args: Vec<OsString>,
    /// The kind of every input, in order.
    pub inputs: Vec<InputKind>,
    /// A flag stops before linking (`-c`, `-S`, `-E`, `-fsyntax-only`, `-M`, ...).
    pub stops_before_link: bool,
    /// A GPU arch was given (`--cuda-gpu-arch=` or `--offload-arch=`).
    pub has_gpu_arch: bool,
    /// `--cuda-host-only`/`--offload-host-only`: no device compile, so no device flags.
    pub host_only: bool,
    /// The user's own `--cuda-path=`.
    pub user_cuda_path: Option<PathBuf>,
    /// Index in `args` of the first `-lcudart`/`-lcudart_static` (or the `-l` before it).
    pub cudart_at: Option<usize>,
}

/// clang flags whose value is the next argument (so it is not an input).
const TAKES_VALUE: &[&str] = &[
    "-o",
    "-x",
    "-I",
    "-D",
    "-U",
    "-L",
    "-l",
    "-include",
    "-imacros",
    "-include-pch",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-iprefix",
    "-iwithprefix",
    "-iwithprefixbefore",
    "-isysroot",
    "-ivfsoverlay",
    "-MF",
    "-MT",
    "-MQ",
    "-MJ",
    "-Xlinker",
    "-Xclang",
    "-Xassembler",
    "-Xpreprocessor",
    "-Xarch_device",
    "-Xarch_host",
    "-Xcuda-ptxas",
    "-Xcuda-fatbinary",
    "-Xopenmp-target",
    "-Xoffload-linker",
    "-mllvm",
    "-target",
    "-arch",
    "-T",
    "-u",
    "-z",
    "-e",
    "-A",
    "-B",
    "-F",
    "--param",
    "-dependency-file",
    "-dependency-dot",
    "-working-directory",
];

/// Flags after which clang does not link.
const STOP_BEFORE_LINK: &[&str] = &[
    "-c",
    "-S",
    "-E",
    "-M",
    "-MM",
    "-fsyntax-only",
    "--precompile",
    "--cuda-device-only",
    "--offload-device-only",
];

const HOST_EXTENSIONS: &[&str] = &[
    "c", "cc", "cp", "cpp", "cxx", "c++", "C", "CC", "CPP", "i", "ii", "m", "mm", "M", "s", "S",
    "sx", "h", "hh", "hpp", "hxx", "H",
];

impl CommandLine {
    /// Reads a command line (without the program name). Response files (`@file`) are
    /// read for the scan but passed to clang as they are.
    pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Self, ClangxxError> {
        let mut out = CommandLine {
            flags: CusafeFlags::default(),
            args: Vec::new(),
            inputs: Vec::new(),
            stops_before_link: false,
            has_gpu_arch: false,
            host_only: false,
            user_cuda_path: None,
            cudart_at: None,
        };
        for arg in args {
            let text = arg.to_string_lossy();
            if let Some(ours) = text.strip_prefix("--cusafe-") {
                match ours {
                    "no-instrument" => out.flags.no_instrument = true,
                    "stats" => out.flags.stats = true,
                    "recover" => out.flags.recover = true,
                    "no-launch-bounds" => out.flags.no_launch_bounds = true,
                    "print-command" => out.flags.print_command = true,
                    "fuzz" => out.flags.fuzz = true,
                    "fuzz-warp" => {
                        out.flags.fuzz = true;
                        out.flags.fuzz_warp = true;
                    }
                    "fuzz-no-asan" => out.flags.fuzz_no_asan = true,
                    "fuzz-no-device-edges" => out.flags.fuzz_no_device_edges = true,
                    _ => return Err(ClangxxError::UnknownFlag(text.into_owned())),
                }
            } else if text == "--help" {
                out.flags.help = true;
            } else if text == "--version" {
                out.flags.version = true;
            } else {
                out.args.push(arg);
            }
        }

        // Each word with the index in `args` it comes from (a response file's words all
        // come from the `@file` argument).
        let mut words = Vec::new();
        for (at, arg) in out.args.iter().enumerate() {
            expand_response_file(&arg.to_string_lossy(), at, 0, &mut words);
        }
        // The language of later inputs set by `-x` (None: by extension).
        let mut language: Option<String> = None;
        let mut iter = words.into_iter();
        while let Some((text, at)) = iter.next() {
            if !text.starts_with('-') || text == "-" {
                out.inputs
                    .push(classify(text.as_ref(), language.as_deref()));
                continue;
            }
            if STOP_BEFORE_LINK.contains(&text.as_str()) {
                out.stops_before_link = true;
            }
            if text.starts_with("--cuda-gpu-arch=") || text.starts_with("--offload-arch=") {
                out.has_gpu_arch = true;
            }
            if text == "--cuda-host-only" || text == "--offload-host-only" {
                out.host_only = true;
            }
            if let Some(path) = text.strip_prefix("--cuda-path=") {
                out.user_cuda_path = Some(PathBuf::from(path));
            }
            if let Some(lang) = text.strip_prefix("-x").filter(|l| !l.is_empty()) {
                language = Some(lang.to_owned()).filter(|l| l != "none");
            }
            let mut library = text
                .strip_prefix("-l")
                .filter(|l| !l.is_empty())
                .map(str::to_owned);
            if TAKES_VALUE.contains(&text.as_str()) {
                if let Some((value, _)) = iter.next() {
                    match text.as_str() {
                        "-x" => language = Some(value).filter(|l| l != "none"),
                        "-l" => library = Some(value),
                        _ => {}
                    }
                }
            }
            if let Some(library) = library {
                out.inputs.push(InputKind::Linker);
                if is_cudart(&library) && out.cudart_at.is_none() {
                    out.cudart_at = Some(at);
                }
            }
        }
        if (out.flags.fuzz_no_asan || out.flags.fuzz_no_device_edges) && !out.flags.fuzz {
            return Err(ClangxxError::UnknownFlag(
                "--cusafe-fuzz-no-asan and --cusafe-fuzz-no-device-edges need --cusafe-fuzz (add it)"
                    .into(),
            ));
        }
        Ok(out)
    }

    /// Some input is compiled as CUDA.
    pub fn compiles_cuda(&self) -> bool {
        self.inputs.contains(&InputKind::Cuda)
    }

    /// This invocation links a program or library.
    pub fn links(&self) -> bool {
        !self.inputs.is_empty() && !self.stops_before_link
    }

    /// Looks up what this invocation needs and builds the clang++ command.
    pub fn plan(&self, locator: &Locator) -> Result<ClangCommand, ClangxxError> {
        let program = locator.clang()?;
        let instrument = !self.flags.no_instrument;
        let cuda_tree = if self.compiles_cuda() || self.links() {
            let tree = match &self.user_cuda_path {
                Some(tree) => tree.clone(),
                None => locator.cuda_tree()?,
            };
            let mut needs = Vec::new();
            if self.compiles_cuda() {
                needs.push(Need::Compile);
            }
            if self.links() {
                needs.push(Need::Link);
            }
            check_cuda_tree(&tree, &needs)?;
            Some(tree)
        } else {
            None
        };
        let fuzz = self.flags.fuzz;
        let asan = fuzz && !self.flags.fuzz_no_asan;
        let plugin = if self.compiles_cuda() && (instrument || fuzz) && !self.host_only {
            Some(locator.pass_plugin()?)
        } else {
            None
        };
        let rt_dir = if self.links() && (instrument || fuzz) {
            let rt = locator.runtime()?;
            Some(rt.parent().unwrap_or(Path::new(".")).to_path_buf())
        } else {
            None
        };

        let mut args: Vec<OsString> = Vec::new();
        if fuzz {
            args.push(joined("-I", &locator.fuzz_include()?));
            let mut host = vec![HOST_COVERAGE_FLAG];
            if asan {
                // Recover-capable host checks: a persistent target goes on after a
                // host report as after a device one (`halt_on_error=0` in
                // libcusafe_fuzz.a's ASan defaults), instead of paying a new process and
                // CUDA's start-up for every input that meets a known bug.
                host.push("-fsanitize=address");
                host.push(HOST_RECOVER_FLAG);
            }
            for flag in host {
                if self.compiles_cuda() {
                    args.push("-Xarch_host".into());
                }
                args.push(flag.into());
            }
        }
        if self.compiles_cuda() {
            if let (Some(tree), None) = (&cuda_tree, &self.user_cuda_path) {
                args.push(joined("--cuda-path=", tree));
            }
            args.push("-Wno-unknown-cuda-version".into());
            if !self.has_gpu_arch {
                args.push(format!("--cuda-gpu-arch={DEFAULT_GPU_ARCH}").into());
            }
            if let Some(plugin) = &plugin {
                args.push("-Xarch_device".into());
                args.push("-gline-directives-only".into());
                args.push("-Xarch_device".into());
                args.push(joined("-fpass-plugin=", plugin));
            }
        }

        // --no-as-needed: with the user's -Wl,--as-needed, GNU ld drops a library that only
        // satisfies an --undefined symbol (measured with binutils 2.40).
        let rt_flags = |dir: &Path| -> Vec<OsString> {
            vec![
                joined("-L", dir),
                "-Wl,--push-state,--no-as-needed".into(),
                "-lcusafe_rt".into(),
                "-Wl,--pop-state".into(),
            ]
        };
        match (self.cudart_at, &rt_dir) {
            (Some(at), Some(dir)) => {
                args.extend(self.args[..at].iter().cloned());
                args.extend(rt_flags(dir));
                args.extend(self.args[at..].iter().cloned());
            }
            _ => args.extend(self.args.iter().cloned()),
        }

        if self.links() {
            if let Some(tree) = &cuda_tree {
                let lib64 = tree.join("lib64");
                if self.cudart_at.is_none() {
                    if let Some(dir) = &rt_dir {
                        args.extend(rt_flags(dir));
                    }
                    args.push(joined("-L", &lib64));
                    args.push("-lcudart".into());
                } else {
                    args.push(joined("-L", &lib64));
                }
                if let Some(dir) = &rt_dir {
                    args.push(joined("-Wl,-rpath,", dir));
                }
                args.push("-Wl,-rpath,$ORIGIN".into());
                args.push(joined("-Wl,-rpath,", &lib64));
                if rt_dir.is_some() {
                    args.push(format!("-Wl,--undefined={RT_PRESENT_SYMBOL}").into());
                }
            }
        }
        if fuzz && self.links() {
            if asan && self.compiles_cuda() {
                // -Xarch_host reaches the host compile only; the link needs the flag
                // to bring in ASan's runtime.
                args.push("-Xarch_host".into());
                args.push("-fsanitize=address".into());
                args.push("-Xarch_host".into());
                args.push(HOST_COVERAGE_FLAG.into());
            }
            args.push(format!("-Wl,--undefined={FUZZ_INIT_SYMBOL}").into());
            // Most of the archive (LibAFL's fuzzer side) is never called from a target.
            args.push("-Wl,--gc-sections".into());
            args.push(locator.fuzz_lib()?.into_os_string());
            for lib in ["-lpthread", "-ldl", "-lm"] {
                args.push(lib.into());
            }
        }

        let coverage = if self.flags.fuzz_no_device_edges {
            "0"
        } else if self.flags.fuzz_warp {
            "warp"
        } else {
            "1"
        };
        let env = [
            (self.flags.stats, STATS_ENV, "1"),
            (fuzz && instrument, RECOVER_ENV, "skip"),
            (self.flags.recover && !fuzz, RECOVER_ENV, "1"),
            (self.flags.no_launch_bounds, LAUNCH_BOUNDS_ENV, "0"),
            (fuzz, COVERAGE_ENV, coverage),
            (fuzz && !instrument, CHECKS_ENV, "0"),
        ]
        .into_iter()
        .filter(|&(on, _, _)| on)
        .map(|(_, name, value)| (name.to_owned(), value.to_owned()))
        .collect();
        Ok(ClangCommand { program, args, env })
    }
}

/// `cudart` or `cudart_static` (the name after `-l`).
fn is_cudart(library: &str) -> bool {
    library == "cudart" || library == "cudart_static"
}

/// Appends the words of `arg` to `words`, each with `at`: the words of the response
/// file it names (recursively, at most 8 deep) if `arg` is a readable `@file`, else `arg`.
fn expand_response_file(arg: &str, at: usize, depth: usize, words: &mut Vec<(String, usize)>) {
    let contents = arg
        .strip_prefix('@')
        .filter(|_| depth < 8)
        .and_then(|path| std::fs::read_to_string(path).ok());
    match contents {
        Some(contents) => {
            for word in split_response_file(&contents) {
                expand_response_file(&word, at, depth + 1, words);
            }
        }
        None => words.push((arg.to_owned(), at)),
    }
}

/// Splits a response file into words the GNU way: whitespace separates, single and
/// double quotes group, a backslash escapes the next character.
fn split_response_file(contents: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote: Option<char> = None;
    let mut chars = contents.chars();
    while let Some(c) = chars.next() {
        match (c, quote) {
            ('\\', _) => {
                let escaped = chars.next().unwrap_or('\\');
                word.get_or_insert_with(String::new).push(escaped);
            }
            (q, None) if q == '\'' || q == '"' => {
                quote = Some(q);
                word.get_or_insert_with(String::new);
            }
            (q, Some(open)) if q == open => quote = None,
            (w, None) if w.is_whitespace() => words.extend(word.take()),
            (other, _) => word.get_or_insert_with(String::new).push(other),
        }
    }
    words.extend(word);
    words
}

/// The kind of an input, from `-x` if one is in force, else from its extension.
fn classify(input: &OsStr, language: Option<&str>) -> InputKind {
    if let Some(lang) = language {
        return if lang.starts_with("cuda") {
            InputKind::Cuda
        } else {
            InputKind::Host
        };
    }
    let ext = Path::new(input).extension().and_then(OsStr::to_str);
    match ext {
        Some("cu") => InputKind::Cuda,
        Some(e) if HOST_EXTENSIONS.contains(&e) => InputKind::Host,
        _ => InputKind::Linker,
    }
}

fn joined(prefix: &str, path: &Path) -> OsString {
    let mut s = OsString::from(prefix);
    s.push(path.as_os_str());
    s
}

/// The clang++ command `cusafe-clang++` runs.
#[derive(Debug, Clone)]
pub struct ClangCommand {
    /// clang++ itself.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Environment variables set for it.
    pub env: Vec<(String, String)>,
}

impl ClangCommand {
    /// The command as one shell line (`VAR=value ... clang++ args...`).
    pub fn display(&self) -> String {
        let env = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={}", shell::quote(v.as_ref())));
        let words = shell::join(
            std::iter::once(self.program.as_os_str())
                .chain(self.args.iter().map(|a| a.as_os_str())),
        );
        env.chain(std::iter::once(words))
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Replaces this process with clang++; returns only if that fails.
    pub fn exec(&self) -> ClangxxError {
        let source = Command::new(&self.program)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .exec();
        ClangxxError::Exec {
            program: self.program.clone(),
            source,
        }
    }
}

/// The whole of `cusafe-clang++`: reads `args`, then prints help, the version or the
/// command, or replaces the process with clang++.
pub fn main_with(args: Vec<OsString>, out: &mut impl Write) -> Result<ExitCode, ClangxxError> {
    let cmd = CommandLine::parse(args)?;
    let locator = Locator::for_current_exe()?;
    if cmd.flags.help {
        out.write_all(HELP.as_bytes())
            .map_err(ClangxxError::Output)?;
        return Ok(ExitCode::SUCCESS);
    }
    if cmd.flags.version {
        writeln!(out, "cusafe-clang++ {} (cusafe)", env!("CARGO_PKG_VERSION"))
            .map_err(ClangxxError::Output)?;
        out.flush().map_err(ClangxxError::Output)?;
        let clang = locator.clang()?;
        let status = Command::new(&clang)
            .arg("--version")
            .status()
            .map_err(|source| ClangxxError::Exec {
                program: clang,
                source,
            })?;
        return Ok(if status.success() {
            ExitCode::SUCCESS
        } else {
            ExitCode::FAILURE
        });
    }
    let command = cmd.plan(&locator)?;
    if cmd.flags.print_command {
        writeln!(out, "{}", command.display()).map_err(ClangxxError::Output)?;
        return Ok(ExitCode::SUCCESS);
    }
    Err(command.exec())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(words: &[&str]) -> CommandLine {
        CommandLine::parse(words.iter().map(OsString::from)).unwrap()
    }

    #[test]
    fn classifies_inputs() {
        let c = parse(&["-O2", "a.cu", "b.cpp", "c.o", "-lm", "-o", "app"]);
        assert_eq!(
            c.inputs,
            vec![
                InputKind::Cuda,
                InputKind::Host,
                InputKind::Linker,
                InputKind::Linker
            ]
        );
        assert!(c.links() && c.compiles_cuda());
        let c = parse(&["-x", "cuda", "k.cpp", "-x", "none", "h.cpp", "-c"]);
        assert_eq!(c.inputs, vec![InputKind::Cuda, InputKind::Host]);
        assert!(!c.links());
        let c = parse(&["-xcuda", "k.cc"]);
        assert_eq!(c.inputs, vec![InputKind::Cuda]);
        let c = parse(&["-x", "c++", "k.cu"]);
        assert_eq!(c.inputs, vec![InputKind::Host]);
    }

    #[test]
    fn values_of_flags_are_not_inputs() {
        let c = parse(&[
            "-I", "inc.cu", "-o", "x.cu", "-Xlinker", "y.o", "-c", "k.cpp",
        ]);
        assert_eq!(c.inputs, vec![InputKind::Host]);
    }

    #[test]
    fn reads_cusafe_flags_and_drops_them() {
        let c = parse(&[
            "--cusafe-no-instrument",
            "a.cu",
            "--cusafe-stats",
            "--cusafe-print-command",
            "--cusafe-recover",
            "--cusafe-no-launch-bounds",
        ]);
        assert!(c.flags.no_instrument && c.flags.stats && c.flags.print_command);
        assert!(c.flags.recover && c.flags.no_launch_bounds);
        assert_eq!(c.args, vec![OsString::from("a.cu")]);
        let err = CommandLine::parse([OsString::from("--cusafe-bogus")]).unwrap_err();
        assert!(err.to_string().contains("--cusafe-bogus"));
    }

    #[test]
    fn finds_cudart_arch_and_cuda_path() {
        let c = parse(&[
            "a.o",
            "-l",
            "cudart",
            "--cuda-gpu-arch=sm_80",
            "--cuda-path=/x",
        ]);
        assert_eq!(c.cudart_at, Some(1));
        assert!(c.has_gpu_arch);
        assert_eq!(c.user_cuda_path, Some(PathBuf::from("/x")));
        let c = parse(&["a.o", "-lcudart_static"]);
        assert_eq!(c.cudart_at, Some(1));
        let c = parse(&["a.cu", "--offload-arch=sm_80"]);
        assert!(c.has_gpu_arch);
    }

    #[test]
    fn response_files_are_scanned_but_passed_as_they_are() {
        let dir = std::env::temp_dir().join(format!("cusafe-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rsp = dir.join("args.rsp");
        std::fs::write(&rsp, "-c 'my file.cu' \"-DX=a b\"\n-lcudart\n").unwrap();
        let arg = format!("@{}", rsp.display());
        let c = parse(&["-O2", &arg, "-o", "k.o"]);
        assert_eq!(c.args[1], OsString::from(&arg));
        assert_eq!(c.inputs, vec![InputKind::Cuda, InputKind::Linker]);
        assert!(c.stops_before_link);
        assert_eq!(c.cudart_at, Some(1), "the runtime goes before the @file");
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(
            split_response_file("a\\ b 'c d' \"e\\\"f\" ''"),
            vec!["a b", "c d", "e\"f", ""]
        );
        // An unreadable @file is an input as far as clang is concerned.
        let c = parse(&["@/nonexistent/args.rsp"]);
        assert_eq!(c.inputs, vec![InputKind::Linker]);
    }
}
