//! `cusafe-clang++`: a drop-in for `clang++` on CUDA code.
//!
//! The command line is not parsed with clap: clang takes hundreds of flags, in any order,
//! and every one that is not ours must reach clang untouched. [`CommandLine::parse`]
//! removes the `--cusafe-*` flags and reads just enough of the rest (inputs and their
//! languages, `-x`, `-c`/`-S`/`-E`..., `--cuda-gpu-arch`, `--cuda-path`, `-lcudart`) to
//! decide what to add; [`CommandLine::plan`] then builds the clang++-19 command:
//!
//! * CUDA inputs (`.cu`, or anything after `-x cuda`): `--cuda-path=<tree>`,
//!   `-Wno-unknown-cuda-version`, `-ffp-contract=on` ([`FP_CONTRACT`]),
//!   `--cuda-gpu-arch=sm_90` when no GPU arch is given, and
//!   unless `--cusafe-no-instrument`: `-Xarch_device -gline-directives-only` (device line
//!   tables for report locations; the host compile is untouched, and a later `-g` of the
//!   user's still wins) and `-Xarch_device -fpass-plugin=<plugin>` (both left out with
//!   `--cuda-host-only`, where clang would call them unused);
//! * a link step: `-L<cuda>/lib64 -lcudart` (unless the user links cudart) and rpaths to
//!   the CUDA libraries and `$ORIGIN`; unless `--cusafe-no-instrument` also
//!   `-L<rtdir> -Wl,--push-state,--no-as-needed -lcusafe_rt -Wl,--pop-state` placed
//!   before `-lcudart`, `-Wl,-rpath,<rtdir>` and `-Wl,--undefined=__cusafe_rt_present`.
//!
//! Host sanitizers (`-fsanitize=address` and the rest of clang's `-fsanitize*` and
//! `-fno-sanitize*` flags) apply to host code only: in CUDA compiles each such flag gets
//! `-Xarch_host` before it, in its place. A link with AddressSanitizer on also gets
//! `libcusafe_asan_defaults.a` (ASan's defaults that CUDA needs:
//! `protect_shadow_gap=0:detect_leaks=0`); ThreadSanitizer, MemorySanitizer and
//! DataFlowSanitizer are refused beside cusafe's runtime ([`INCOMPATIBLE_SANITIZERS`]),
//! and so is ASan's shared runtime (`-shared-libsan`, which crashes at start).
//!
//! A host-only compile (no CUDA input, no link) goes to clang++ unchanged.

use std::collections::BTreeMap;
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use cusafe_format::pass_env;
use thiserror::Error;

use crate::locate::{LocateError, Locator, Lookup, Need};
use crate::{plain_registers, register_cap, resources, shell};

/// GPU architecture used when the command line names none.
pub const DEFAULT_GPU_ARCH: &str = "sm_90";
/// Floating-point contraction of CUDA compiles (plain and instrumented): `a*b+c` fused
/// within one expression only. clang's CUDA default (`fast`) fuses across statements
/// in the backend, where the checks' branches between a multiply and an add change
/// what is fused: instrumented results would then differ in the last bits from plain
/// ones. The user's own `-ffp-contract=`/`-ffast-math` comes later and wins.
pub const FP_CONTRACT: &str = "-ffp-contract=on";
/// Symbol of `libcusafe_fuzz.a` the link asks for (its constructor starts the fork server).
pub const FUZZ_INIT_SYMBOL: &str = "cusafe_fuzz_init";
/// Host coverage flag of fuzz builds.
pub const HOST_COVERAGE_FLAG: &str = "-fsanitize-coverage=trace-pc-guard";

/// Host ASan checks of a fuzz build that can go on after a report.
pub const HOST_RECOVER_FLAG: &str = "-fsanitize-recover=address";
/// Symbol the runtime exports; the link asks for it so `--as-needed` cannot drop the runtime.
pub const RT_PRESENT_SYMBOL: &str = "__cusafe_rt_present";
/// Symbol of `libcusafe_asan_defaults.a` the link asks for: the archive member holding
/// it also holds the program's `__asan_default_options` (ASan's runtime already defines
/// that one weakly, so asking for it would not pull the member in).
pub const ASAN_DEFAULTS_SYMBOL: &str = "cusafe_asan_defaults";
/// Host sanitizers that cannot run beside `libcusafe_rt.so`, each with the reason:
/// refused in CUDA compiles and in links, unless `--cusafe-no-instrument` (without
/// `--cusafe-fuzz`) keeps the runtime out (a host-only compile passes through). The
/// runtime reserves its address windows at fixed addresses (`[2 TiB, 72 TiB)`);
/// measured with clang 19 on x86-64 by mapping those ranges in a program built with
/// each sanitizer.
pub const INCOMPATIBLE_SANITIZERS: &[(&str, &str)] = &[
    (
        "thread",
        "ThreadSanitizer refuses mappings outside its application ranges \
         (\"mmap at bad address\"), and libcusafe_rt.so maps its windows at fixed \
         addresses from 2 TiB to 72 TiB",
    ),
    (
        "memory",
        "MemorySanitizer's shadow and origin ranges hold the fixed address windows \
         libcusafe_rt.so reserves (2 TiB to 72 TiB), and it needs every library \
         instrumented (libcudart is not)",
    ),
    (
        "dataflow",
        "DataFlowSanitizer's shadow holds the fixed address windows libcusafe_rt.so \
         reserves (2 TiB to 72 TiB)",
    ),
];

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
  --cusafe-no-register-cap
                           keep the registers ptxas gives an instrumented kernel whose
                           loops run no check (by default, where the checks outside its
                           loops raise its count above the plain build's occupancy class,
                           the device code is built again with -Xcuda-ptxas
                           -maxrregcount set to the plain class: ptxas spills outside the
                           loops, and a note says so)
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
  --cusafe-no-asan-defaults
                           with -fsanitize=address, do not link cusafe's ASan defaults
                           (protect_shadow_gap=0:detect_leaks=0): for a program that
                           defines __asan_default_options itself, which must then set
                           protect_shadow_gap=0 (CUDA does not start without it)
  --cusafe-print-command   print the clang++ command line (shell-quoted) instead of
                           running it
  --help                   this text
  --version                cusafe-clang++'s version, then clang++'s

Host sanitizers: -fsanitize=... and -fno-sanitize=... flags apply to host code only
(-Xarch_host is put before each in CUDA compiles). -fsanitize=address gives host
AddressSanitizer beside cusafe's device checks in one binary; its link adds ASan's
defaults for CUDA (protect_shadow_gap=0:detect_leaks=0; ASAN_OPTIONS overrides them).
thread, memory and dataflow, and ASan's shared runtime (-shared-libsan), cannot run
beside cusafe's runtime and are refused.

Environment: CUSAFE_CLANG (clang++ to run), CUSAFE_CUDA_PATH (the --cuda-path tree),
CUSAFE_PASS_PLUGIN (libcusafe_pass.so), CUSAFE_RT_LIB (libcusafe_rt.so),
CUSAFE_ASAN_DEFAULTS_LIB (libcusafe_asan_defaults.a); see docs/cli.md.

all other flags go to clang++-19
";

/// What went wrong in `cusafe-clang++` itself (clang's own failures are clang's exit code).
#[derive(Debug, Error)]
pub enum ClangxxError {
    /// A `--cusafe-` flag that does not exist (or a near miss: `-cusafe-stats`,
    /// `--cusafe_stats`, `--cusafe-stats=1`).
    #[error(
        "unknown cusafe flag '{flag}'{}; the cusafe flags are {} (cusafe-clang++ --help says what each does)",
        did_you_mean(*.suggestion),
        CUSAFE_FLAGS.join(", ")
    )]
    UnknownFlag {
        /// The flag as written.
        flag: String,
        /// The known flag it is closest to, if any is close.
        suggestion: Option<&'static str>,
    },
    /// Flags that do not go together.
    #[error("{0}")]
    Usage(String),
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
    /// A host sanitizer that cannot run beside cusafe's runtime.
    #[error(
        "{flag}: the {name} sanitizer cannot run beside cusafe's runtime (libcusafe_rt.so): \
         {why}. Use -fsanitize=address (and undefined) for host code beside cusafe, or \
         --cusafe-no-instrument for a build without cusafe"
    )]
    Sanitizer {
        /// The flag that turned it on, as written.
        flag: String,
        /// The sanitizer.
        name: String,
        /// Why it cannot run beside the runtime.
        why: &'static str,
    },
    /// ASan's shared runtime asked for beside cusafe's runtime.
    #[error(
        "{0}: AddressSanitizer's shared runtime (libclang_rt.asan-x86_64.so) calls dlsym \
         while it starts, before libcusafe_rt.so can answer, and the program crashes \
         (measured with clang 19.1.7). Leave it out (clang links ASan's static runtime by \
         default), or use --cusafe-no-instrument for a build without cusafe"
    )]
    SharedAsan(String),
}

/// The flag for a plain build from the same command line.
pub const NO_INSTRUMENT_FLAG: &str = "--cusafe-no-instrument";
/// The driver's second name (a symlink): called so, it builds as with
/// [`NO_INSTRUMENT_FLAG`].
pub const PLAIN_NAME: &str = "cusafe-plain-clang++";

/// Every `--cusafe-*` flag (`--help` says what each does).
pub const CUSAFE_FLAGS: &[&str] = &[
    NO_INSTRUMENT_FLAG,
    "--cusafe-stats",
    "--cusafe-recover",
    "--cusafe-no-launch-bounds",
    crate::register_cap::NO_CAP_FLAG,
    "--cusafe-fuzz",
    "--cusafe-fuzz-warp",
    "--cusafe-fuzz-no-asan",
    "--cusafe-fuzz-no-device-edges",
    "--cusafe-no-asan-defaults",
    "--cusafe-print-command",
];

/// Whether `arg` was meant as a cusafe flag although it is not spelt `--cusafe-...`
/// (`-cusafe-stats`, `--cusafe_stats`, `--CUSAFE-STATS`, `--cusafe`): no clang flag
/// starts so, and clang's "unknown argument" would not name ours.
fn looks_like_ours(arg: &str) -> bool {
    let a = arg.to_ascii_lowercase();
    ["-cusafe", "--cusafe"].iter().any(|p| {
        a.strip_prefix(p)
            .is_some_and(|rest| rest.is_empty() || rest.starts_with(['-', '_', '=']))
    })
}

/// The error for `flag`, with the known flag it is closest to.
fn unknown_flag(flag: &str) -> ClangxxError {
    ClangxxError::UnknownFlag {
        flag: flag.to_string(),
        suggestion: suggest(flag),
    }
}

/// The known flag `flag` most likely meant: the same flag with a value attached
/// (`--cusafe-stats=1`), in another case or with `_` or one dash (`-cusafe_Stats`),
/// one at most 2 edits away (3 for long ones), or else the longest known flag it
/// starts with (`--cusafe-no-instrumentation`).
pub fn suggest(flag: &str) -> Option<&'static str> {
    let lower = flag.to_ascii_lowercase().replace('_', "-");
    let given = format!("--{}", lower.trim_start_matches('-'));
    let bare = given.split('=').next().unwrap_or(&given);
    let near = CUSAFE_FLAGS
        .iter()
        .map(|&known| (known, strsim::levenshtein(bare, known)))
        .filter(|&(known, d)| d <= if known.len() > 20 { 3 } else { 2 })
        .min_by_key(|&(_, d)| d)
        .map(|(known, _)| known);
    near.or_else(|| {
        CUSAFE_FLAGS
            .iter()
            .copied()
            .filter(|known| bare.starts_with(known))
            .max_by_key(|known| known.len())
    })
}

/// " (did you mean --cusafe-stats?)" or nothing.
fn did_you_mean(suggestion: Option<&str>) -> String {
    suggestion.map_or(String::new(), |s| format!(" (did you mean {s}?)"))
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
    /// `--cusafe-no-register-cap`.
    pub no_register_cap: bool,
    /// `--cusafe-fuzz` (or `--cusafe-fuzz-warp`).
    pub fuzz: bool,
    /// `--cusafe-fuzz-warp`.
    pub fuzz_warp: bool,
    /// `--cusafe-fuzz-no-asan`.
    pub fuzz_no_asan: bool,
    /// `--cusafe-fuzz-no-device-edges`.
    pub fuzz_no_device_edges: bool,
    /// `--cusafe-no-asan-defaults`.
    pub no_asan_defaults: bool,
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
    /// The inputs compiled as CUDA, as written.
    pub cuda_sources: Vec<String>,
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
    /// `--cuda-device-only`/`--offload-device-only`: no host compile (host-only flags
    /// would be unused).
    pub device_only: bool,
    /// `-shared` or `-r`: the link makes no executable.
    pub no_executable: bool,
    /// The last of `-shared-libsan`/`-shared-libasan`, unless `-static-libsan` came after
    /// it: the sanitizers' shared runtimes.
    pub shared_libsan: Option<String>,
    /// Indices in `args` of the `-fsanitize*`/`-fno-sanitize*` flags written on the
    /// command line itself (not inside a response file, not the value of another flag):
    /// the ones CUDA compiles give `-Xarch_host`.
    pub sanitize_at: Vec<usize>,
    /// The host sanitizers on after every `-fsanitize=`/`-fno-sanitize=` list in order
    /// (also those after `-Xarch_host` and inside response files): each name with the
    /// flag that turned it on.
    pub sanitizers: BTreeMap<String, String>,
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

/// `flag` takes the next argument as its value.
pub fn takes_value(flag: &str) -> bool {
    TAKES_VALUE.contains(&flag)
}

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
            cuda_sources: Vec::new(),
            stops_before_link: false,
            has_gpu_arch: false,
            host_only: false,
            user_cuda_path: None,
            cudart_at: None,
            device_only: false,
            no_executable: false,
            shared_libsan: None,
            sanitize_at: Vec::new(),
            sanitizers: BTreeMap::new(),
        };
        for arg in args {
            let text = arg.to_string_lossy();
            if let Some(ours) = text.strip_prefix("--cusafe-") {
                match ours {
                    "no-instrument" => out.flags.no_instrument = true,
                    "stats" => out.flags.stats = true,
                    "recover" => out.flags.recover = true,
                    "no-launch-bounds" => out.flags.no_launch_bounds = true,
                    "no-register-cap" => out.flags.no_register_cap = true,
                    "print-command" => out.flags.print_command = true,
                    "fuzz" => out.flags.fuzz = true,
                    "fuzz-warp" => {
                        out.flags.fuzz = true;
                        out.flags.fuzz_warp = true;
                    }
                    "fuzz-no-asan" => out.flags.fuzz_no_asan = true,
                    "fuzz-no-device-edges" => out.flags.fuzz_no_device_edges = true,
                    "no-asan-defaults" => out.flags.no_asan_defaults = true,
                    _ => return Err(unknown_flag(&text)),
                }
            } else if looks_like_ours(&text) {
                return Err(unknown_flag(&text));
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
                let kind = classify(text.as_ref(), language.as_deref());
                if kind == InputKind::Cuda {
                    out.cuda_sources.push(text.clone());
                }
                out.inputs.push(kind);
                // cudart named by its path (CMake's CUDA::cudart): the runtime goes
                // before it as before -lcudart.
                if is_cudart_path(&text) && out.cudart_at.is_none() {
                    out.cudart_at = Some(at);
                }
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
            if text == "--cuda-device-only" || text == "--offload-device-only" {
                out.device_only = true;
            }
            if text == "-shared" || text == "-r" {
                out.no_executable = true;
            }
            match text.as_str() {
                "-shared-libsan" | "-shared-libasan" => out.shared_libsan = Some(text.clone()),
                "-static-libsan" => out.shared_libsan = None,
                _ => {}
            }
            if is_sanitizer_flag(&text) {
                if out.args[at].to_string_lossy() == text {
                    out.sanitize_at.push(at);
                }
                apply_sanitizer_list(&text, &mut out.sanitizers);
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
            if takes_value(&text) {
                if let Some((value, _)) = iter.next() {
                    match text.as_str() {
                        "-x" => language = Some(value).filter(|l| l != "none"),
                        "-l" => library = Some(value),
                        "-Xarch_host" => apply_sanitizer_list(&value, &mut out.sanitizers),
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
            return Err(ClangxxError::Usage(
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

    /// Host AddressSanitizer is on (`-fsanitize=address` not turned off again).
    pub fn asan(&self) -> bool {
        self.sanitizers.contains_key("address")
    }

    /// Looks up what this invocation needs and builds the clang++ command.
    pub fn plan(&self, locator: &impl Lookup) -> Result<ClangCommand, ClangxxError> {
        let instrument = !self.flags.no_instrument;
        let fuzz = self.flags.fuzz;
        // A host-only compile passes through unchanged; its link will be refused.
        if (instrument || fuzz) && (self.compiles_cuda() || self.links()) {
            for (name, why) in INCOMPATIBLE_SANITIZERS {
                if let Some(flag) = self.sanitizers.get(*name) {
                    return Err(ClangxxError::Sanitizer {
                        flag: flag.clone(),
                        name: (*name).to_owned(),
                        why,
                    });
                }
            }
        }
        let asan_on = self.asan() || (fuzz && !self.flags.fuzz_no_asan);
        if let (true, Some(flag)) = (
            (instrument || fuzz) && self.links() && asan_on,
            &self.shared_libsan,
        ) {
            return Err(ClangxxError::SharedAsan(flag.clone()));
        }
        let program = locator.clang()?;
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
            locator.check_cuda_tree(&tree, &needs)?;
            Some(tree)
        } else {
            None
        };
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
        // The program's ASan defaults (fuzz builds have libcusafe_fuzz.a's; a shared
        // library or relocatable object is not where ASan looks for them).
        let asan_defaults = if self.links()
            && self.asan()
            && !fuzz
            && !self.flags.no_asan_defaults
            && !self.no_executable
        {
            Some(locator.asan_defaults()?)
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
            // Before the user's flags, so that their -ffp-contract/-ffast-math wins.
            args.push(FP_CONTRACT.into());
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
        // Host sanitizers stay off the device compile: clang 19 drops them there itself
        // (none reaches the nvptx cc1), -Xarch_host says so on the command line. clang
        // applies -Xarch_host flags to the link as well (measured: the ASan runtime is
        // linked). Without a host compile (--cuda-device-only) they would be unused.
        let host_sanitizers = self.compiles_cuda() && !self.device_only;
        let mut notes = Vec::new();
        for (at, arg) in self.args.iter().enumerate() {
            if let (true, Some(dir)) = (self.cudart_at == Some(at), &rt_dir) {
                args.extend(rt_flags(dir));
            }
            if host_sanitizers && self.sanitize_at.contains(&at) {
                args.push("-Xarch_host".into());
            }
            match cuda_tree
                .as_deref()
                .and_then(|t| absent_cuda_library(arg, t))
            {
                Some((with, note)) => {
                    notes.push(note);
                    args.extend(with.map(OsString::from));
                }
                None => args.push(arg.clone()),
            }
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
        if let Some(lib) = asan_defaults {
            args.push(format!("-Wl,--undefined={ASAN_DEFAULTS_SYMBOL}").into());
            args.push(lib.into_os_string());
        }
        if fuzz && self.links() {
            if asan && self.compiles_cuda() {
                // The link needs the flag to bring in ASan's runtime. clang 19 applies
                // the -Xarch_host copy above to the link already (measured); this one
                // keeps that visible here.
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
            (self.flags.stats, pass_env::STATS, "1"),
            (fuzz && instrument, pass_env::RECOVER, "skip"),
            (self.flags.recover && !fuzz, pass_env::RECOVER, "1"),
            (self.flags.no_launch_bounds, pass_env::LAUNCH_BOUNDS, "0"),
            (fuzz, pass_env::COVERAGE, coverage),
            (fuzz && !instrument, pass_env::CHECKS, "0"),
        ]
        .into_iter()
        .filter(|&(on, _, _)| on)
        .map(|(_, name, value)| (name.to_owned(), value.to_owned()))
        .collect();
        Ok(ClangCommand {
            program,
            args,
            env,
            notes,
        })
    }
}

/// A CUDA library that build systems link by default (CMake's CUDA runtime library
/// `Static` links `-lcudadevrt -lcudart_static`) and that the CUDA tree `tree` lacks (the
/// PyPI pieces cusafe installs have neither): what goes on the command line instead
/// (the shared cudart; nothing for cudadevrt, which only device-side launches need and
/// clang does not compile) and a note saying so. `None` for any other argument.
fn absent_cuda_library(arg: &OsStr, tree: &Path) -> Option<(Option<&'static str>, String)> {
    let name = arg.to_str()?.strip_prefix("-l")?;
    let lib64 = tree.join("lib64");
    let has = |name: &str| {
        lib64.join(format!("lib{name}.a")).exists() || lib64.join(format!("lib{name}.so")).exists()
    };
    match name {
        "cudart_static" if !has(name) => Some((
            Some("-lcudart"),
            format!(
                "-lcudart_static: {} has no static cudart; linking the shared libcudart.so.12 \
                 instead (cusafe's runtime checks both alike)",
                tree.display()
            ),
        )),
        "cudadevrt" if !has(name) => Some((
            None,
            format!(
                "-lcudadevrt: {} has no libcudadevrt.a; left out (only device-side kernel \
                 launches need it, and clang does not compile those)",
                tree.display()
            ),
        )),
        _ => None,
    }
}

/// A clang sanitizer flag: `-fsanitize=`, `-fno-sanitize=`, `-fsanitize-recover=`,
/// `-fsanitize-address-use-after-return=`, `-fsanitize-ignorelist=`, ...
fn is_sanitizer_flag(text: &str) -> bool {
    text.starts_with("-fsanitize") || text.starts_with("-fno-sanitize")
}

/// Applies one flag to the set of sanitizers on, as clang does in order:
/// `-fsanitize=a,b` turns each on (remembering `flag` for the first time it is turned
/// on), `-fno-sanitize=a,b` turns each off, `all` turns all off. Other flags (and
/// `-fsanitize-recover=` and the like) change nothing.
fn apply_sanitizer_list(flag: &str, on: &mut BTreeMap<String, String>) {
    if let Some(list) = flag.strip_prefix("-fsanitize=") {
        for name in list.split(',').filter(|n| !n.is_empty()) {
            on.entry(name.to_owned()).or_insert_with(|| flag.to_owned());
        }
    } else if let Some(list) = flag.strip_prefix("-fno-sanitize=") {
        for name in list.split(',') {
            if name == "all" {
                on.clear();
            } else {
                on.remove(name);
            }
        }
    }
}

/// Whether the input `path` is cudart's library itself (`.../libcudart.so`,
/// `libcudart.so.12`, `libcudart_static.a`).
fn is_cudart_path(path: &str) -> bool {
    let file = Path::new(path)
        .file_name()
        .and_then(OsStr::to_str)
        .unwrap_or("");
    file == "libcudart_static.a" || file == "libcudart.so" || file.starts_with("libcudart.so.")
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
    /// What was changed on the command line and why (printed before clang runs).
    pub notes: Vec<String>,
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

    /// Runs clang++ and waits for it.
    pub fn run(&self) -> Result<std::process::ExitStatus, ClangxxError> {
        Command::new(&self.program)
            .args(&self.args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .status()
            .map_err(|source| ClangxxError::Exec {
                program: self.program.clone(),
                source,
            })
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
/// command, or runs clang++: as a child for an instrumented CUDA compile that packs a
/// fatbinary (to warn about launch resources after it), else by replacing the process.
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
    let mut command = cmd.plan(&locator)?;
    for note in &command.notes {
        eprintln!("cusafe-clang++: note: {note}");
    }
    if cmd.flags.print_command {
        writeln!(out, "{}", command.display()).map_err(ClangxxError::Output)?;
        return Ok(ExitCode::SUCCESS);
    }
    // An instrumented compile that packs a fatbinary: cusafe-fatbinary lists the
    // kernels to warn about, and the warning names their plain build's registers too.
    let packs_instrumented =
        cmd.compiles_cuda() && !cmd.flags.no_instrument && !cmd.host_only && !cmd.device_only;
    let scratch = if packs_instrumented {
        tempfile::Builder::new()
            .prefix("cusafe-resources-")
            .tempdir()
            .ok()
    } else {
        None
    };
    let Some(scratch) = scratch else {
        return Err(command.exec());
    };
    let report = scratch.path().join("heavy.txt");
    command.env.push((
        resources::REPORT_ENV.to_owned(),
        report.to_string_lossy().into_owned(),
    ));
    let caps = !cmd.flags.no_register_cap && !register_cap::user_limit(&cmd.args);
    if caps {
        command.env.extend(register_cap::report_env(scratch.path()));
    }
    let mut status = command.run()?;
    if status.success() && caps {
        if let Some(capped) = cap_registers(&cmd, &locator, &command, scratch.path(), &report)? {
            status = capped;
        }
    }
    if status.success() {
        plain_registers::warn(&cmd, &locator, &report);
    }
    Ok(exit_code(status))
}

/// After an instrumented compile that succeeded: when a loop-clean kernel took more
/// registers than its plain build's occupancy class ([`register_cap`]), runs the
/// compile again with the cap and says so: the status of that compile (`None`: the
/// first build stands).
fn cap_registers(
    cmd: &CommandLine,
    locator: &impl Lookup,
    command: &ClangCommand,
    dir: &Path,
    heavy: &Path,
) -> Result<Option<std::process::ExitStatus>, ClangxxError> {
    let read = |var: &str| {
        let path = command
            .env
            .iter()
            .find(|(k, _)| k == var)
            .map(|(_, v)| v.clone());
        path.and_then(|p| std::fs::read_to_string(p).ok())
            .unwrap_or_default()
    };
    let registers = register_cap::read_registers(&read(register_cap::REGISTERS_ENV));
    let clean = register_cap::read_loop_clean(&read(cusafe_format::pass_env::LOOP_CLEAN));
    if register_cap::candidates(&registers, &clean).is_empty() {
        return Ok(None);
    }
    let decided = if cmd.cuda_sources.len() > 1 {
        Err(register_cap::Refusal::SeveralSources(
            cmd.cuda_sources.len(),
        ))
    } else {
        let plain = plain_registers::plain_counts(cmd, locator, dir);
        register_cap::decide(&registers, &clean, &plain)
    };
    let (cap, capped) = match decided {
        Ok(Some(c)) => c,
        Ok(None) => return Ok(None),
        Err(refusal) => {
            eprintln!("cusafe-clang++: note: {refusal}");
            return Ok(None);
        }
    };
    eprintln!("cusafe-clang++: note: {}", register_cap::note(cap, &capped));
    let mut again = command.clone();
    again.args.extend(register_cap::cap_args(cap));
    again.env.retain(|(k, _)| {
        k != register_cap::REGISTERS_ENV && k != cusafe_format::pass_env::LOOP_CLEAN
    });
    // The capped compile's cusafe-fatbinary lists the heavy kernels afresh.
    let _ = std::fs::remove_file(heavy);
    let status = again.run()?;
    if status.success() {
        return Ok(Some(status));
    }
    eprintln!(
        "cusafe-clang++: warning: the compile with -maxrregcount={cap} failed; building again without it ({} skips the cap)",
        register_cap::NO_CAP_FLAG
    );
    let _ = std::fs::remove_file(heavy);
    command.run().map(Some)
}

/// The exit code that passes `status` on (128 + the signal for a killed process, as
/// shells report it).
fn exit_code(status: std::process::ExitStatus) -> ExitCode {
    use std::os::unix::process::ExitStatusExt;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    ExitCode::from(u8::try_from(code).unwrap_or(1))
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
        assert!(!err.to_string().contains("did you mean"), "{err}");
    }

    #[test]
    fn misspelt_cusafe_flags_get_a_suggestion() {
        for (given, meant) in [
            ("--cusafe-stat", Some("--cusafe-stats")),
            ("--cusafe-stats=1", Some("--cusafe-stats")),
            ("--cusafe-recovery", Some("--cusafe-recover")),
            ("--cusafe-noinstrument", Some("--cusafe-no-instrument")),
            (
                "--cusafe-no-instrumentation",
                Some("--cusafe-no-instrument"),
            ),
            (
                "--cusafe_no_launch_bounds",
                Some("--cusafe-no-launch-bounds"),
            ),
            ("-cusafe-fuzz", Some("--cusafe-fuzz")),
            ("--CUSAFE-FUZZ-WARP", Some("--cusafe-fuzz-warp")),
            (
                "--cusafe-fuzz-no-device-edge",
                Some("--cusafe-fuzz-no-device-edges"),
            ),
            ("--cusafe-print-cmd", None),
            ("--cusafe-bogus", None),
            ("--cusafe", None),
        ] {
            assert_eq!(suggest(given), meant, "{given}");
            let err = CommandLine::parse([OsString::from(given), OsString::from("k.cu")])
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with(&format!("unknown cusafe flag '{given}'")),
                "{err}"
            );
            assert!(
                err.contains("the cusafe flags are --cusafe-no-instrument, "),
                "{err}"
            );
            match meant {
                Some(m) => assert!(err.contains(&format!("(did you mean {m}?)")), "{err}"),
                None => assert!(!err.contains("did you mean"), "{err}"),
            }
        }
        // Not ours: clang's flags that merely contain the word pass through.
        let c = parse(&["-DCUSAFE=1", "-fcusafe-like", "k.cu"]);
        assert_eq!(c.args.len(), 3);
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

    /// Fixed paths for every piece (`asan_defaults: false`: that archive is missing).
    struct Fixed {
        asan_defaults: bool,
    }

    const FIXED: Fixed = Fixed {
        asan_defaults: true,
    };

    impl Lookup for Fixed {
        fn clang(&self) -> Result<PathBuf, LocateError> {
            Ok("/llvm/clang++".into())
        }
        fn cuda_tree(&self) -> Result<PathBuf, LocateError> {
            Ok("/cuda".into())
        }
        fn check_cuda_tree(&self, _: &Path, _: &[Need]) -> Result<(), LocateError> {
            Ok(())
        }
        fn pass_plugin(&self) -> Result<PathBuf, LocateError> {
            Ok("/cs/libcusafe_pass.so".into())
        }
        fn runtime(&self) -> Result<PathBuf, LocateError> {
            Ok("/cs/libcusafe_rt.so".into())
        }
        fn fuzz_lib(&self) -> Result<PathBuf, LocateError> {
            Ok("/cs/libcusafe_fuzz.a".into())
        }
        fn fuzz_include(&self) -> Result<PathBuf, LocateError> {
            Ok("/cs/include".into())
        }
        fn asan_defaults(&self) -> Result<PathBuf, LocateError> {
            if self.asan_defaults {
                Ok("/cs/libcusafe_asan_defaults.a".into())
            } else {
                Err(LocateError::Library {
                    name: crate::locate::ASAN_DEFAULTS_NAME,
                    var: crate::locate::ASAN_DEFAULTS_ENV,
                    tried: "/cs/libcusafe_asan_defaults.a".into(),
                    hint: "",
                })
            }
        }
    }

    /// The planned command with [`FIXED`], as `--cusafe-print-command` prints it.
    fn planned(words: &[&str]) -> String {
        parse(words).plan(&FIXED).unwrap().display()
    }

    const DEVICE: &str = "--cuda-path=/cuda -Wno-unknown-cuda-version -ffp-contract=on \
        --cuda-gpu-arch=sm_90 \
        -Xarch_device -gline-directives-only -Xarch_device -fpass-plugin=/cs/libcusafe_pass.so";
    const LINK: &str = "-L/cs -Wl,--push-state,--no-as-needed -lcusafe_rt -Wl,--pop-state \
        -L/cuda/lib64 -lcudart -Wl,-rpath,/cs '-Wl,-rpath,$ORIGIN' -Wl,-rpath,/cuda/lib64 \
        -Wl,--undefined=__cusafe_rt_present";
    const DEFAULTS: &str = "-Wl,--undefined=cusafe_asan_defaults /cs/libcusafe_asan_defaults.a";

    #[test]
    fn cudart_named_by_path_gets_the_runtime_before_it() {
        let c = parse(&["a.o", "/cuda/lib64/libcudart.so", "-o", "app"]);
        assert_eq!(c.cudart_at, Some(1));
        let line = planned(&["a.o", "/opt/cuda/lib64/libcudart.so.12", "-o", "app"]);
        let (rt, cudart) = (
            line.find("-lcusafe_rt").unwrap(),
            line.find("libcudart.so.12"),
        );
        assert!(rt < cudart.unwrap(), "{line}");
        assert!(!line.contains(" -lcudart "), "{line}");
        assert!(!is_cudart_path("/x/libcudart_extra.so") && is_cudart_path("libcudart_static.a"));
    }

    #[test]
    fn the_users_fp_contract_comes_after_ours_and_wins() {
        for words in [
            &["-ffp-contract=fast", "-c", "a.cu"][..],
            &["--cusafe-no-instrument", "-ffast-math", "-c", "a.cu"][..],
        ] {
            let line = planned(words);
            let ours = line.find(FP_CONTRACT).expect(&line);
            let theirs = line.find(words[words.len() - 3]).expect(&line);
            assert!(ours < theirs, "{line}");
        }
        // Host-only compiles are clang++'s own.
        assert!(!planned(&["-c", "a.cpp"]).contains("fp-contract"));
    }

    #[test]
    fn asan_cuda_build_is_host_only_and_links_the_defaults() {
        assert_eq!(
            planned(&["-fsanitize=address", "-O1", "-g", "a.cu", "-o", "app"]),
            format!(
                "/llvm/clang++ {DEVICE} -Xarch_host -fsanitize=address -O1 -g a.cu -o app \
                 {LINK} {DEFAULTS}"
            )
        );
        // Without it, nothing of the kind.
        let plain = planned(&["-O1", "a.cu", "-o", "app"]);
        assert!(
            !plain.contains("-Xarch_host") && !plain.contains("asan"),
            "{plain}"
        );
    }

    #[test]
    fn every_sanitizer_flag_of_a_cuda_compile_goes_host_only_in_its_place() {
        assert_eq!(
            planned(&[
                "-fsanitize=address,undefined",
                "-c",
                "-fsanitize-recover=address",
                "a.cu",
                "-fno-sanitize=vptr",
                "-fsanitize-address-use-after-return=always",
                "-o",
                "a.o",
            ]),
            format!(
                "/llvm/clang++ {DEVICE} -Xarch_host -fsanitize=address,undefined -c \
                 -Xarch_host -fsanitize-recover=address a.cu -Xarch_host -fno-sanitize=vptr \
                 -Xarch_host -fsanitize-address-use-after-return=always -o a.o"
            ),
            "a compile: no link flags, no defaults"
        );
    }

    #[test]
    fn link_only_keeps_the_flags_as_written_and_adds_the_defaults() {
        assert_eq!(
            planned(&["-fsanitize=address", "a.o", "b.o", "-o", "app"]),
            format!("/llvm/clang++ -fsanitize=address a.o b.o -o app {LINK} {DEFAULTS}")
        );
        // A user's -lcudart: the runtime still goes right before it.
        assert_eq!(
            planned(&["a.o", "-fsanitize=address", "-lcudart", "-o", "app"]),
            "/llvm/clang++ a.o -fsanitize=address -L/cs -Wl,--push-state,--no-as-needed \
             -lcusafe_rt -Wl,--pop-state -lcudart -o app -L/cuda/lib64 -Wl,-rpath,/cs \
             '-Wl,-rpath,$ORIGIN' -Wl,-rpath,/cuda/lib64 -Wl,--undefined=__cusafe_rt_present \
             -Wl,--undefined=cusafe_asan_defaults /cs/libcusafe_asan_defaults.a"
        );
        // The plain build needs the defaults too (CUDA does not start without them).
        let plain = planned(&["--cusafe-no-instrument", "-fsanitize=address", "a.o"]);
        assert!(plain.ends_with(DEFAULTS), "{plain}");
    }

    #[test]
    fn asan_is_on_after_the_flags_in_order() {
        for (words, on) in [
            (&["-fsanitize=address"][..], true),
            (&["-fsanitize=undefined,address"], true),
            (
                &["-fsanitize=address,undefined", "-fno-sanitize=address"],
                false,
            ),
            (&["-fsanitize=address", "-fno-sanitize=undefined"], true),
            (&["-fsanitize=address", "-fno-sanitize=all"], false),
            (&["-fno-sanitize=address", "-fsanitize=address"], true),
            (&["-fsanitize-recover=address"], false),
            (&["-fsanitize=kernel-address"], false),
            (&["-Xarch_host", "-fsanitize=address"], true),
            (&["-Xarch_device", "-fsanitize=address"], false),
            (&["-Xclang", "-fsanitize=address"], false),
        ] {
            let mut all = words.to_vec();
            all.extend(["a.cu", "-o", "app"]);
            let c = parse(&all);
            assert_eq!(c.asan(), on, "{words:?}");
            let cmd = c.plan(&FIXED).unwrap().display();
            assert_eq!(cmd.ends_with(DEFAULTS), on, "{words:?}: {cmd}");
        }
        // The user's own -Xarch_host is not doubled.
        let cmd = planned(&["-Xarch_host", "-fsanitize=address", "a.cu"]);
        assert!(
            cmd.contains(" -Xarch_host -fsanitize=address a.cu "),
            "{cmd}"
        );
    }

    #[test]
    fn response_files_turn_asan_on_but_are_passed_as_they_are() {
        let dir = std::env::temp_dir().join(format!("cusafe-rsp-asan-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let rsp = dir.join("flags.rsp");
        std::fs::write(&rsp, "-fsanitize=address -O1\n").unwrap();
        let arg = format!("@{}", rsp.display());
        let cmd = planned(&[&arg, "a.cu", "-o", "app"]);
        std::fs::remove_dir_all(&dir).unwrap();
        assert!(cmd.contains(&format!("{DEVICE} {arg} a.cu")), "{cmd}");
        assert!(cmd.ends_with(DEFAULTS), "{cmd}");
    }

    #[test]
    fn no_defaults_for_fuzz_builds_libraries_or_when_asked() {
        for words in [
            &["--cusafe-fuzz", "-fsanitize=address", "a.cu", "-o", "app"][..],
            &[
                "--cusafe-no-asan-defaults",
                "-fsanitize=address",
                "a.cu",
                "-o",
                "app",
            ],
            &[
                "-fsanitize=address",
                "-shared",
                "-fPIC",
                "a.cu",
                "-o",
                "liba.so",
            ],
            &["-fsanitize=address", "-r", "a.o", "-o", "all.o"],
            &["-fsanitize=address", "-c", "a.cu"],
        ] {
            let cmd = planned(words);
            assert!(!cmd.contains("cusafe_asan_defaults"), "{words:?}: {cmd}");
            assert!(cmd.contains("-Xarch_host -fsanitize=address") == words.contains(&"a.cu"));
        }
        // Only links that need the archive look for it.
        let missing = Fixed {
            asan_defaults: false,
        };
        let err = parse(&["-fsanitize=address", "a.cu", "-o", "app"])
            .plan(&missing)
            .unwrap_err();
        assert!(
            err.to_string().contains("libcusafe_asan_defaults.a"),
            "{err}"
        );
        assert!(parse(&["-fsanitize=address", "-c", "a.cu"])
            .plan(&missing)
            .is_ok());
    }

    #[test]
    fn device_only_and_host_only_compiles_keep_the_flags_as_written() {
        let cmd = planned(&["--cuda-device-only", "-fsanitize=address", "-c", "a.cu"]);
        assert!(!cmd.contains("-Xarch_host"), "{cmd}");
        assert_eq!(
            planned(&["-fsanitize=address,undefined", "-c", "h.cpp"]),
            "/llvm/clang++ -fsanitize=address,undefined -c h.cpp"
        );
        let cmd = planned(&["--cuda-host-only", "-fsanitize=address", "-c", "a.cu"]);
        assert!(
            cmd.contains("-Xarch_host -fsanitize=address -c a.cu"),
            "{cmd}"
        );
    }

    #[test]
    fn sanitizers_that_cannot_run_beside_the_runtime_are_refused() {
        for (words, flag) in [
            (&["-fsanitize=thread", "a.cu"][..], "-fsanitize=thread"),
            (
                &["-fsanitize=undefined,memory", "-c", "a.cu"],
                "-fsanitize=undefined,memory",
            ),
            (
                &["-Xarch_host", "-fsanitize=dataflow", "a.o"],
                "-fsanitize=dataflow",
            ),
            (
                &["--cusafe-fuzz", "-fsanitize=thread", "a.cu"],
                "-fsanitize=thread",
            ),
        ] {
            let err = parse(words).plan(&FIXED).unwrap_err();
            let msg = err.to_string();
            assert!(msg.starts_with(&format!("{flag}: the ")), "{msg}");
            assert!(msg.contains("--cusafe-no-instrument"), "{msg}");
        }
        // ASan's shared runtime crashes at start beside libcusafe_rt.so.
        for words in [
            &["-fsanitize=address", "-shared-libsan", "a.cu", "-o", "app"][..],
            &["-shared-libasan", "-fsanitize=address", "a.o"],
            &["--cusafe-fuzz", "-shared-libsan", "a.cu"],
        ] {
            let err = parse(words).plan(&FIXED).unwrap_err().to_string();
            assert!(
                err.starts_with("-shared-lib") && err.contains("dlsym"),
                "{err}"
            );
        }
        for words in [
            &[
                "-fsanitize=address",
                "-shared-libsan",
                "-static-libsan",
                "a.cu",
            ][..],
            &["-fsanitize=address", "-shared-libsan", "-c", "a.cu"],
            &["-fsanitize=undefined", "-shared-libsan", "a.cu"],
            &[
                "--cusafe-no-instrument",
                "-fsanitize=address",
                "-shared-libsan",
                "a.cu",
            ],
        ] {
            assert!(parse(words).plan(&FIXED).is_ok(), "{words:?}");
        }
        for words in [
            &["--cusafe-no-instrument", "-fsanitize=thread", "a.cu"][..],
            &["-fsanitize=thread", "-fno-sanitize=thread", "a.cu"],
            &["-fsanitize=thread", "-c", "h.cpp"],
            &["-fsanitize=leak,undefined,address", "a.cu"],
        ] {
            assert!(parse(words).plan(&FIXED).is_ok(), "{words:?}");
        }
    }
}
