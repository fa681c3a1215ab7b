//! nvcc's options as `cusafe-nvcc` knows them: every name (long `--name` and short
//! `-name`; either is accepted with one or two dashes), whether it takes a value, and
//! what becomes of it.

/// An option the parser handles itself ([`crate::nvcc::args`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opt {
    /// `-c`.
    Compile,
    /// `-o FILE`.
    Output,
    /// `-E`.
    Preprocess,
    /// `-M`.
    Deps,
    /// `-MM`.
    DepsNonSystem,
    /// `-MD`.
    DepsWithCompile,
    /// `-MMD`.
    DepsNonSystemWithCompile,
    /// `-MF FILE`.
    DepFile,
    /// `-MT TARGET`.
    DepTarget,
    /// `-MP`.
    DepPhony,
    /// `-arch ARCH`.
    Arch,
    /// `-code CODE,...`.
    Code,
    /// `-gencode arch=A,code=C`.
    Gencode,
    /// `-O LEVEL` (host code).
    Optimize,
    /// `-g` (host code).
    Debug,
    /// `-G` (device code).
    DeviceDebug,
    /// `-lineinfo`.
    LineInfo,
    /// `-Xcompiler OPTS`.
    Xcompiler,
    /// `-Xlinker OPTS`.
    Xlinker,
    /// `-Xptxas OPTS`.
    Xptxas,
    /// `-std=STD`.
    Std,
    /// `-I DIR,...`.
    Include,
    /// `-D DEF,...`.
    Define,
    /// `-U NAME,...`.
    Undefine,
    /// `-L DIR,...`.
    LibraryPath,
    /// `-l LIB,...`.
    Library,
    /// `-isystem DIR,...`.
    SystemInclude,
    /// `-include FILE,...`.
    PreInclude,
    /// `-x c|c++|cu`.
    Language,
    /// `-rdc true|false`.
    Rdc,
    /// `-cudart static|shared|none`.
    Cudart,
    /// `-shared`.
    Shared,
    /// `-w`.
    NoWarnings,
    /// `-Werror KIND,...`.
    Werror,
    /// `--use_fast_math`.
    FastMath,
    /// `--ftz true|false`.
    Ftz,
    /// `--prec-div true|false`.
    PrecDiv,
    /// `--prec-sqrt true|false`.
    PrecSqrt,
    /// `--fmad true|false`.
    Fmad,
    /// `--maxrregcount N`.
    MaxRegisters,
    /// `--resource-usage`.
    ResourceUsage,
    /// `--default-stream legacy|null|per-thread`.
    DefaultStream,
    /// `-m 64`.
    Machine,
    /// `-v`.
    Verbose,
    /// `--dryrun`.
    DryRun,
    /// `--version`.
    Version,
    /// `--help`.
    Help,
    /// `--options-file FILE,...`.
    OptionsFile,
    /// `--forward-unknown-to-host-compiler`.
    ForwardUnknown,
}

/// What becomes of an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Read by the parser.
    Read(Opt),
    /// Passed to clang as this flag.
    Clang(&'static str),
    /// Nothing to do: clang already behaves so (docs/cli.md says why).
    Quiet,
    /// Ignored with a one-line warning: why it is safe to ignore.
    Ignore(&'static str),
    /// Refused: why, and what to do instead.
    Refuse(&'static str, &'static str),
}

/// One option: long name, short name, whether it takes a value, what it does.
#[derive(Debug, Clone, Copy)]
pub struct Spec {
    /// The long name (`--name`).
    pub long: &'static str,
    /// The short name (`-name`).
    pub short: &'static str,
    /// Takes a value (`-o FILE`, `-o=FILE`).
    pub value: bool,
    /// What it does.
    pub action: Action,
}

/// Short names whose value may follow without a space or `=` (`-Idir`, `-DX=1`, `-O3`,
/// `-lm`, `-m64`).
pub const JOINED: &[char] = &['I', 'D', 'U', 'L', 'l', 'O', 'm'];

/// Why relocatable device code (`-rdc=true`, `-dc`) cannot be built.
pub const RDC_WHY: &str = "relocatable device code needs a device link by NVIDIA's nvlink, \
    which cusafe's CUDA tree (PyPI wheels) does not have, and clang does not link \
    device code itself (measured: clang 19 -fgpu-rdc leaves __cudaRegisterLinkedBinary \
    undefined, or with --offload-new-driver cannot find nvlink)";
/// What to do instead of relocatable device code.
pub const RDC_FIX: &str = "build whole-program device code (-rdc=false, the default): \
    define device functions used by several files in a header they include";

const fn spec(long: &'static str, short: &'static str, value: bool, action: Action) -> Spec {
    Spec {
        long,
        short,
        value,
        action,
    }
}

const fn read(long: &'static str, short: &'static str, value: bool, opt: Opt) -> Spec {
    spec(long, short, value, Action::Read(opt))
}

const fn refuse(
    long: &'static str,
    short: &'static str,
    why: &'static str,
    fix: &'static str,
) -> Spec {
    spec(long, short, false, Action::Refuse(why, fix))
}

/// Every option `cusafe-nvcc` knows.
pub const SPECS: &[Spec] = &[
    read("compile", "c", false, Opt::Compile),
    read("output-file", "o", true, Opt::Output),
    read("preprocess", "E", false, Opt::Preprocess),
    read("generate-dependencies", "M", false, Opt::Deps),
    read("generate-nonsystem-dependencies", "MM", false, Opt::DepsNonSystem),
    read("generate-dependencies-with-compile", "MD", false, Opt::DepsWithCompile),
    read(
        "generate-nonsystem-dependencies-with-compile",
        "MMD",
        false,
        Opt::DepsNonSystemWithCompile,
    ),
    read("dependency-output", "MF", true, Opt::DepFile),
    read("dependency-target-name", "MT", true, Opt::DepTarget),
    read("generate-dependency-targets", "MP", false, Opt::DepPhony),
    spec("link", "link", false, Action::Quiet),
    read("gpu-architecture", "arch", true, Opt::Arch),
    read("gpu-code", "code", true, Opt::Code),
    read("generate-code", "gencode", true, Opt::Gencode),
    read("optimize", "O", true, Opt::Optimize),
    read("debug", "g", false, Opt::Debug),
    read("device-debug", "G", false, Opt::DeviceDebug),
    read("generate-line-info", "lineinfo", false, Opt::LineInfo),
    read("compiler-options", "Xcompiler", true, Opt::Xcompiler),
    read("linker-options", "Xlinker", true, Opt::Xlinker),
    read("ptxas-options", "Xptxas", true, Opt::Xptxas),
    read("std", "std", true, Opt::Std),
    read("include-path", "I", true, Opt::Include),
    read("define-macro", "D", true, Opt::Define),
    read("undefine-macro", "U", true, Opt::Undefine),
    read("library-path", "L", true, Opt::LibraryPath),
    read("library", "l", true, Opt::Library),
    read("system-include", "isystem", true, Opt::SystemInclude),
    read("pre-include", "include", true, Opt::PreInclude),
    read("x", "x", true, Opt::Language),
    read("relocatable-device-code", "rdc", true, Opt::Rdc),
    read("cudart", "cudart", true, Opt::Cudart),
    read("shared", "shared", false, Opt::Shared),
    read("disable-warnings", "w", false, Opt::NoWarnings),
    read("Werror", "Werror", true, Opt::Werror),
    read("use_fast_math", "use_fast_math", false, Opt::FastMath),
    read("ftz", "ftz", true, Opt::Ftz),
    read("prec-div", "prec-div", true, Opt::PrecDiv),
    read("prec-sqrt", "prec-sqrt", true, Opt::PrecSqrt),
    read("fmad", "fmad", true, Opt::Fmad),
    read("maxrregcount", "maxrregcount", true, Opt::MaxRegisters),
    read("resource-usage", "res-usage", false, Opt::ResourceUsage),
    read("default-stream", "default-stream", true, Opt::DefaultStream),
    read("machine", "m", true, Opt::Machine),
    read("verbose", "v", false, Opt::Verbose),
    read("dryrun", "dryrun", false, Opt::DryRun),
    read("version", "V", false, Opt::Version),
    read("help", "h", false, Opt::Help),
    read("options-file", "optf", true, Opt::OptionsFile),
    read(
        "forward-unknown-to-host-compiler",
        "forward-unknown-to-host-compiler",
        false,
        Opt::ForwardUnknown,
    ),
    read("forward-unknown-opts", "forward-unknown-opts", false, Opt::ForwardUnknown),
    // clang's defaults already behave so (docs/cli.md).
    spec("expt-relaxed-constexpr", "expt-relaxed-constexpr", false, Action::Quiet),
    spec("expt-extended-lambda", "expt-extended-lambda", false, Action::Quiet),
    spec("extended-lambda", "extended-lambda", false, Action::Quiet),
    spec("allow-unsupported-compiler", "allow-unsupported-compiler", false, Action::Quiet),
    spec("Wno-deprecated-gpu-targets", "Wno-deprecated-gpu-targets", false, Action::Quiet),
    spec(
        "Wno-deprecated-declarations",
        "Wno-deprecated-declarations",
        false,
        Action::Clang("-Wno-deprecated-declarations"),
    ),
    spec("Wreorder", "Wreorder", false, Action::Clang("-Wreorder")),
    // Safe to ignore, with a warning.
    spec(
        "compiler-bindir",
        "ccbin",
        true,
        Action::Ignore("host code is compiled by clang++-19 (through cusafe-clang++), not by the named compiler"),
    ),
    spec(
        "Xcudafe",
        "Xcudafe",
        true,
        Action::Ignore("options of nvcc's EDG front end (cudafe) have no clang counterpart"),
    ),
    spec(
        "fatbin-options",
        "Xfatbin",
        true,
        Action::Ignore("cusafe-fatbinary takes no options from the command line"),
    ),
    spec(
        "diag-suppress",
        "diag-suppress",
        true,
        Action::Ignore("nvcc's diagnostic numbers have no clang counterpart (use -Xcompiler -Wno-...)"),
    ),
    spec(
        "diag-warn",
        "diag-warn",
        true,
        Action::Ignore("nvcc's diagnostic numbers have no clang counterpart"),
    ),
    spec(
        "diag-error",
        "diag-error",
        true,
        Action::Ignore("nvcc's diagnostic numbers have no clang counterpart (use -Xcompiler -Werror=...)"),
    ),
    spec(
        "display-error-number",
        "err-no",
        false,
        Action::Ignore("clang names its diagnostics by flag, not by number"),
    ),
    spec(
        "keep",
        "keep",
        false,
        Action::Ignore("intermediate files are not kept (clang's -save-temps does not go with the pass plugin)"),
    ),
    spec(
        "keep-dir",
        "keep-dir",
        true,
        Action::Ignore("intermediate files are not kept"),
    ),
    spec(
        "save-temps",
        "save-temps",
        false,
        Action::Ignore("intermediate files are not kept (clang's -save-temps does not go with the pass plugin)"),
    ),
    spec(
        "threads",
        "t",
        true,
        Action::Ignore("clang compiles the GPU architectures one after the other"),
    ),
    spec(
        "split-compile",
        "split-compile",
        true,
        Action::Ignore("clang compiles each translation unit in one piece"),
    ),
    spec(
        "source-in-ptx",
        "src-in-ptx",
        false,
        Action::Ignore("the PTX inside the binary keeps clang's line directives only"),
    ),
    spec(
        "time",
        "time",
        true,
        Action::Ignore("no timing file is written"),
    ),
    spec(
        "Wdefault-stream-launch",
        "Wdefault-stream-launch",
        false,
        Action::Ignore("an nvcc-only warning; clang has no counterpart"),
    ),
    spec(
        "Wmissing-launch-bounds",
        "Wmissing-launch-bounds",
        false,
        Action::Ignore("an nvcc-only warning; clang has no counterpart"),
    ),
    spec(
        "Wext-lambda-captures-this",
        "Wext-lambda-captures-this",
        false,
        Action::Ignore("an nvcc-only warning; clang has no counterpart"),
    ),
    // Refused: each says why and what to do instead.
    refuse("device-c", "dc", RDC_WHY, RDC_FIX),
    refuse("device-w", "dw", RDC_WHY, RDC_FIX),
    refuse(
        "device-link",
        "dlink",
        RDC_WHY,
        "link the objects with cusafe-nvcc (or cusafe-clang++) directly; device code is whole-program (-rdc=false)",
    ),
    refuse(
        "dlink-time-opt",
        "dlto",
        "device link-time optimisation needs nvlink, which cusafe's CUDA tree does not have",
        "leave it out (clang optimises each translation unit's device code whole)",
    ),
    refuse(
        "lib",
        "lib",
        "nvcc's library step is not implemented",
        "compile with -c and make the archive with ar (ar rcs libx.a a.o b.o)",
    ),
    refuse(
        "ptx",
        "ptx",
        "nvcc's PTX-only output is not implemented",
        "use cusafe-clang++ --cuda-device-only -S --cuda-gpu-arch=sm_NN (writes the PTX of one architecture)",
    ),
    refuse(
        "cubin",
        "cubin",
        "nvcc's cubin-only output is not implemented",
        "build the program or object; its fatbin holds the cubin (cuobjdump extracts it)",
    ),
    refuse(
        "fatbin",
        "fatbin",
        "nvcc's fatbin-only output is not implemented",
        "build the program or object; the fatbin is embedded in it",
    ),
    refuse(
        "cuda",
        "cuda",
        "nvcc's .cu.cpp.ii output (host code after nvcc's front end) has no clang counterpart",
        "use -E for preprocessed source",
    ),
    refuse(
        "run",
        "run",
        "cusafe-nvcc only compiles and links",
        "build with -o app, then run ./app",
    ),
    spec(
        "nvlink-options",
        "Xnvlink",
        true,
        Action::Refuse(
            "there is no device link step (nvlink): device code is whole-program",
            "leave the nvlink options out",
        ),
    ),
    spec(
        "archive-options",
        "Xarchive",
        true,
        Action::Refuse(
            "nvcc's library step (-lib) is not implemented",
            "make the archive with ar",
        ),
    ),
];

/// The option named `name` (without dashes), by its long or short name.
pub fn find(name: &str) -> Option<&'static Spec> {
    SPECS.iter().find(|s| s.long == name || s.short == name)
}

/// The known option closest to `flag` (as written, with its dashes and any `=value`),
/// spelt as nvcc's documentation does (`--long` or `-short`), if one is close: at most 2
/// edits (3 for names longer than 12 characters), case and `-`/`_` aside (on a tie, one
/// with the same first letter), or else the first long name it begins (`--gpu-arch`:
/// `--gpu-architecture`).
pub fn suggest(flag: &str) -> Option<String> {
    let name = flag.trim_start_matches('-');
    let name = name.split('=').next().unwrap_or(name);
    let norm = |s: &str| s.to_ascii_lowercase().replace('_', "-");
    let given = norm(name);
    let prefix_of = || {
        SPECS
            .iter()
            .find(|s| given.len() >= 3 && norm(s.long).starts_with(&given))
            .map(|s| format!("--{}", s.long))
    };
    SPECS
        .iter()
        .flat_map(|s| [format!("--{}", s.long), format!("-{}", s.short)])
        .map(|known| {
            let d = strsim::levenshtein(&given, &norm(known.trim_start_matches('-')));
            (known, d)
        })
        .filter(|(known, d)| *d <= if known.len() > 12 { 3 } else { 2 } && *d < given.len())
        // On a tie, a name with the same first letter (`-Xcompile`: `-Xcompiler`).
        .min_by_key(|(known, d)| {
            (
                *d,
                known.trim_start_matches('-').chars().next() != name.chars().next(),
            )
        })
        .map(|(known, _)| known)
        .or_else(prefix_of)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = SPECS.iter().flat_map(|s| [s.long, s.short]).collect();
        names.sort_unstable();
        let before = names.len();
        names.dedup();
        // Options whose long and short names are the same count once.
        let same = SPECS.iter().filter(|s| s.long == s.short).count();
        assert_eq!(names.len(), before - same);
    }

    #[test]
    fn suggestions() {
        for (given, meant) in [
            ("--use-fast-math", Some("--use_fast_math")),
            ("-use_fastmath", Some("--use_fast_math")),
            ("--expt-relaxed-constexp", Some("--expt-relaxed-constexpr")),
            ("--gpu-arch=sm_80", Some("--gpu-architecture")),
            ("-lineinf", Some("-lineinfo")),
            ("--generate-line-infos", Some("--generate-line-info")),
            ("-Xcompile", Some("-Xcompiler")),
            ("-Wall", None),
            ("-fPIC", None),
            ("-q", None),
        ] {
            assert_eq!(suggest(given).as_deref(), meant, "{given}");
        }
    }
}
