//! The `cusafe-clang++` command for a [`Parsed`] nvcc command line ([`map`]).
//!
//! The command starts with what shapes the whole compile (cusafe flags, GPU
//! architectures, device optimisation and debug info, math, host `-O`/`-g`, `-std`),
//! then the rest in the order given, with `-x` put before the inputs it applies to.
//! Device-only flags are left out of commands that compile no CUDA, link-only flags out
//! of commands that do not link (nvcc ignores them there; clang would warn).

use std::path::{Path, PathBuf};

use super::arch::Native;
use super::args::{Cudart, Item, Lang, Parsed, Stop};
use super::Error;
use crate::clangxx::takes_value;

/// What the mapping needs to know about this machine.
pub trait Context: Native {
    /// The CUDA tree's `include` directory, for host sources that include CUDA's
    /// headers (nvcc puts it on every compile); `None` if there is no tree.
    fn cuda_include(&self) -> Option<PathBuf>;
}

/// The `cusafe-clang++` arguments and the warnings to print.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mapped {
    /// Arguments for `cusafe-clang++`.
    pub args: Vec<String>,
    /// Warnings (one line each, without the `cusafe-nvcc: warning: ` prefix).
    pub warnings: Vec<String>,
}

/// Of the flags that take the next word as their value ([`takes_value`]), those clang
/// also takes joined (`-isystem/dir`), so that `-Xarch_host`
/// can carry them.
const JOINABLE: &[&str] = &[
    "-I",
    "-D",
    "-U",
    "-isystem",
    "-idirafter",
    "-iquote",
    "-include",
    "-imacros",
];
/// Of the flags that take the next word as their value, those for the linker.
const LINKER_PAIRED: &[&str] = &["-L", "-l", "-Xlinker", "-u", "-T", "-z", "-e"];
/// Host compiler flags for the link only, by prefix (clang drops linker inputs given
/// after `-Xarch_host`, measured with clang 19)...
const LINK_PREFIXES: &[&str] = &["-Wl,", "-l", "-L", "-fuse-ld=", "-static", "-nostdlib"];
/// ... and whole.
const LINK_FLAGS: &[&str] = &[
    "-rdynamic",
    "-shared",
    "-pie",
    "-no-pie",
    "-nodefaultlibs",
    "-nostartfiles",
];

/// Extensions of linker inputs: `-x` does not apply to them.
const LINKER_EXTENSIONS: &[&str] = &["o", "a", "so", "lo", "obj", "lib", "dylib"];
/// Host C++ source extensions.
const CXX_EXTENSIONS: &[&str] = &["cpp", "cc", "cxx", "c++", "cp", "C", "CPP", "ii"];

/// What the inputs and stop flags say about the command.
struct Facts<'a> {
    /// Some input is compiled as CUDA.
    cuda: bool,
    /// Some input is compiled as host C or C++.
    host_source: bool,
    /// The first input compiled as C.
    c_input: Option<&'a str>,
    /// The command links.
    links: bool,
    /// The command compiles device code (CUDA, not only preprocessed).
    device: bool,
}

/// Builds the `cusafe-clang++` command for `p`.
pub fn map(p: &Parsed, cx: &impl Context) -> Result<Mapped, Error> {
    let inputs: Vec<(&str, Option<Lang>)> = p
        .items
        .iter()
        .filter_map(|item| match item {
            Item::Input(path) => Some((path.as_str(), language(p.language, path))),
            _ => None,
        })
        .collect();
    if inputs.is_empty() {
        return Err(Error::new(
            "no input files",
            "nothing to compile or link",
            "name .cu, .cpp or .o files (cusafe-nvcc --help lists the options)",
        ));
    }
    if let Some(flag) = &p.rdc {
        return Err(Error::new(
            flag,
            super::options::RDC_WHY,
            super::options::RDC_FIX,
        ));
    }
    let has = |lang: Lang| inputs.iter().any(|&(_, l)| l == Some(lang));
    let facts = Facts {
        cuda: has(Lang::Cuda),
        host_source: has(Lang::Cxx) || has(Lang::C),
        c_input: inputs
            .iter()
            .find(|&&(_, l)| l == Some(Lang::C))
            .map(|i| i.0),
        links: p.stop == Stop::Link,
        device: has(Lang::Cuda) && p.stop != Stop::Preprocess,
    };
    let mut out = Mapped {
        args: p.cusafe.clone(),
        warnings: p.warnings.clone(),
    };
    whole_command(p, cx, &facts, &mut out)?;
    in_order(p, &facts, &mut out.args)?;
    Ok(out)
}

/// The flags that shape the whole compile, after the cusafe flags.
fn whole_command(p: &Parsed, cx: &impl Context, f: &Facts, out: &mut Mapped) -> Result<(), Error> {
    let mut push = |words: &[&str]| out.args.extend(words.iter().map(|w| (*w).to_owned()));
    if f.cuda && p.stop == Stop::Preprocess {
        // One preprocessor output (clang would write the device side's too; with -o it
        // refuses "multiple output files").
        push(&["--cuda-host-only"]);
    }
    if f.device {
        for sm in p.gpu.sm_names(cx)? {
            push(&[&format!("--cuda-gpu-arch={sm}")]);
        }
        // nvcc optimises device code whatever -O says (-O is for host code), except
        // with -G; clang would otherwise compile it at the host's level (-O0 by default).
        push(&["-Xarch_device", if p.device_debug { "-O0" } else { "-O3" }]);
        if p.device_debug {
            push(&["-Xarch_device", "-g"]);
        } else if p.line_info {
            push(&["-Xarch_device", "-gline-directives-only"]);
        }
        math(p, &mut push, &mut out.warnings);
        if p.per_thread_stream {
            push(&["-fgpu-default-stream=per-thread"]);
        }
    }
    if p.per_thread_stream && f.host_source {
        push(&["-DCUDA_API_PER_THREAD_DEFAULT_STREAM=1"]);
    }
    if let Some(opt) = &p.host_opt {
        push(&[opt.as_str()]);
    }
    if p.host_debug {
        push(if f.cuda {
            &["-Xarch_host", "-g"]
        } else {
            &["-g"]
        });
    }
    if let Some(std) = &p.std {
        if let (Some(c), true) = (f.c_input, std.starts_with("c++")) {
            return Err(Error::new(
                &format!("-std={std}"),
                format!("{c} is C, and clang refuses a C++ standard for C (one clang command takes one -std)"),
                "compile the .c files in a command of their own, without -std=c++NN",
            ));
        }
        push(&[&format!("-std={std}")]);
    }
    if f.host_source {
        if let Some(include) = cx.cuda_include() {
            push(&["-isystem", &include.to_string_lossy()]);
        }
    }
    if p.verbose {
        push(&["-v"]);
    }
    if f.links {
        cudart_warning(p, &mut out.warnings);
    }
    Ok(())
}

/// Everything else, in the order given, with `-x` before the inputs it applies to;
/// link flags only in links, device flags only in device compiles.
fn in_order(p: &Parsed, f: &Facts, args: &mut Vec<String>) -> Result<(), Error> {
    let mut current: Option<&str> = None;
    for item in &p.items {
        match item {
            Item::Input(path) => {
                let wanted = explicit_language(p.language, path).map(Lang::clang_name);
                if wanted != current {
                    args.extend(["-x".to_owned(), wanted.unwrap_or("none").to_owned()]);
                    current = wanted;
                }
                args.push(path.clone());
            }
            Item::Clang(words) => args.extend(words.iter().cloned()),
            Item::Host(words) => host_words(words, f.cuda, f.links, args)?,
            Item::Link(words) if f.links => args.extend(words.iter().cloned()),
            Item::Device(words) if f.device => args.extend(words.iter().cloned()),
            Item::Link(_) | Item::Device(_) => {}
        }
    }
    Ok(())
}

/// The language `path` is compiled as (`None`: a linker input).
fn language(forced: Option<Lang>, path: &str) -> Option<Lang> {
    explicit_language(forced, path).or_else(|| match extension(path) {
        "cu" => Some(Lang::Cuda),
        e if CXX_EXTENSIONS.contains(&e) => Some(Lang::Cxx),
        _ => None,
    })
}

/// The language to name with `-x` before `path`: nvcc's `-x` for every source input,
/// and C for `.c` files (clang++ would compile them as C++; nvcc compiles them as C).
fn explicit_language(forced: Option<Lang>, path: &str) -> Option<Lang> {
    let ext = extension(path);
    let linker_input = LINKER_EXTENSIONS.contains(&ext) || path.contains(".so.");
    match forced {
        Some(lang) if !linker_input => Some(lang),
        _ => (ext == "c").then_some(Lang::C),
    }
}

fn extension(path: &str) -> &str {
    Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
}

/// nvcc's math options for the device compile. `--use_fast_math` is `--ftz=true
/// --prec-div=false --prec-sqrt=false --fmad=true` and approximate transcendentals
/// (each can be set otherwise on its own). Measured on clang 19 PTX: the flags below
/// give `div.approx.ftz.f32`, `sqrt.approx.ftz.f32`, `sin.approx.ftz.f32` as nvcc's
/// fast math does, without `-ffast-math`'s no-NaN/no-infinity assumptions.
fn math(p: &Parsed, push: &mut impl FnMut(&[&str]), warnings: &mut Vec<String>) {
    let m = &p.math;
    if m.ftz.unwrap_or(m.fast) {
        push(&["-fgpu-flush-denormals-to-zero"]);
    }
    if m.fast {
        push(&["-fgpu-approx-transcendentals"]);
    }
    if !m.prec_div.unwrap_or(!m.fast) {
        push(&["-Xarch_device", "-mllvm=-nvptx-prec-divf32=0"]);
    }
    if m.fmad == Some(false) {
        push(&["-Xarch_device", "-ffp-contract=off"]);
    }
    if let Some((flag, true)) = &m.prec_sqrt {
        warnings.push(format!(
            "{flag}: ignored: clang 19 compiles sqrtf to sqrt.approx whatever the flags \
             (libdevice's __CUDA_PREC_SQRT is 0 under clang); call __fsqrt_rn where the \
             exact square root matters"
        ));
    }
}

/// The warning for `-cudart` values other than `shared`.
fn cudart_warning(p: &Parsed, warnings: &mut Vec<String>) {
    let why = match &p.cudart {
        Some((_, Cudart::Static)) => {
            "linking the shared libcudart.so.12 instead (cusafe's CUDA tree has no \
             libcudart_static.a, and libcusafe_rt.so checks the CUDA runtime API by \
             interposing the shared library); the program finds it through its rpath"
        }
        Some((_, Cudart::None)) => {
            "libcudart.so.12 is linked all the same (cusafe-clang++ links it after \
             libcusafe_rt.so); a program that uses only the driver API does not call it"
        }
        _ => return,
    };
    if let Some((flag, _)) = &p.cudart {
        warnings.push(format!("{flag}: {why}"));
    }
}

/// Host compiler words: in CUDA compiles each gets `-Xarch_host` (so that it stays off
/// the device compile, as with nvcc), except linker flags, which go as they are (clang
/// drops linker inputs after `-Xarch_host`) and only to links. A flag that takes a
/// separate value takes the next word (`-isystem /dir`).
fn host_words(
    words: &[String],
    cuda: bool,
    links: bool,
    out: &mut Vec<String>,
) -> Result<(), Error> {
    let mut iter = words.iter();
    while let Some(word) = iter.next() {
        let w = word.as_str();
        if takes_value(w) {
            let value = iter.next().ok_or_else(|| {
                Error::new(
                    &format!("-Xcompiler {w}"),
                    "its value is missing",
                    format!("give it in the same list: -Xcompiler {w},VALUE"),
                )
            })?;
            if LINKER_PAIRED.contains(&w) {
                if links {
                    out.extend([word.clone(), value.clone()]);
                }
            } else if cuda && JOINABLE.contains(&w) {
                out.extend(["-Xarch_host".to_owned(), format!("{w}{value}")]);
            } else {
                out.extend([word.clone(), value.clone()]);
            }
        } else if LINK_FLAGS.contains(&w) || LINK_PREFIXES.iter().any(|f| w.starts_with(f)) {
            if links {
                out.push(word.clone());
            }
        } else if cuda && w.starts_with('-') {
            out.extend(["-Xarch_host".to_owned(), word.clone()]);
        } else {
            out.push(word.clone());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::nvcc::args::parse;

    /// A machine with an sm_86 GPU and a CUDA tree at /cuda (`gpu: false`: no GPU).
    struct Fixed {
        gpu: bool,
    }

    impl Native for Fixed {
        fn native_archs(&self) -> Result<Vec<String>, String> {
            if self.gpu {
                Ok(vec!["sm_86".into()])
            } else {
                Err("nvptx-arch found no GPU".into())
            }
        }
    }

    impl Context for Fixed {
        fn cuda_include(&self) -> Option<PathBuf> {
            Some("/cuda/include".into())
        }
    }

    const HERE: Fixed = Fixed { gpu: true };

    fn mapped(argv: &[&str]) -> Result<Mapped, String> {
        let args = argv.iter().map(|a| (*a).to_owned()).collect();
        parse(args)
            .and_then(|p| map(&p, &HERE))
            .map_err(|e| e.to_string())
    }

    /// The clang arguments for `argv`, joined by spaces.
    fn line(argv: &[&str]) -> String {
        match mapped(argv) {
            Ok(m) => m.args.join(" "),
            Err(e) => panic!("{argv:?}: {e}"),
        }
    }

    /// Device compile flags every CUDA compile gets (device code at -O3, as nvcc).
    const DEV: &str = "-Xarch_device -O3";

    #[test]
    fn nvcc_command_lines_map_to_these_clang_command_lines() {
        let table: &[(&[&str], String)] = &[
            (&["-c", "k.cu"], format!("{DEV} -c k.cu")),
            (
                &["-arch=sm_80", "-O2", "-c", "k.cu", "-o", "k.o"],
                format!("--cuda-gpu-arch=sm_80 {DEV} -O2 -c k.cu -o k.o"),
            ),
            (
                &["-arch", "compute_80", "-code", "sm_80,sm_86", "k.cu"],
                format!("--cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_86 {DEV} k.cu"),
            ),
            (
                &[
                    "-gencode",
                    "arch=compute_80,code=sm_80",
                    "-gencode=arch=compute_90,code=[sm_90,compute_90]",
                    "k.cu",
                ],
                format!("--cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 {DEV} k.cu"),
            ),
            (
                &[
                    "--generate-code",
                    "arch=compute_70,code=\"sm_70,compute_70\"",
                    "k.cu",
                ],
                format!("--cuda-gpu-arch=sm_70 {DEV} k.cu"),
            ),
            (
                &["--gpu-architecture=native", "k.cu"],
                format!("--cuda-gpu-arch=sm_86 {DEV} k.cu"),
            ),
            (
                &["-g", "-G", "-lineinfo", "k.cu"],
                "-Xarch_device -O0 -Xarch_device -g -Xarch_host -g k.cu".into(),
            ),
            (
                &["--device-debug", "--debug", "k.cu"],
                "-Xarch_device -O0 -Xarch_device -g -Xarch_host -g k.cu".into(),
            ),
            (
                &["-lineinfo", "-O3", "k.cu"],
                format!("{DEV} -Xarch_device -gline-directives-only -O3 k.cu"),
            ),
            (
                &["--generate-line-info", "--optimize", "1", "k.cu"],
                format!("{DEV} -Xarch_device -gline-directives-only -O1 k.cu"),
            ),
            (&["-O", "k.cu"], format!("{DEV} -O1 k.cu")),
            (&["-O=2", "k.cu", "-O0"], format!("{DEV} -O0 k.cu")),
            (
                &["-Xcompiler", "-fPIC,-Wall", "-Xcompiler=-O3", "k.cu"],
                format!("{DEV} -Xarch_host -fPIC -Xarch_host -Wall -Xarch_host -O3 k.cu"),
            ),
            (
                &[
                    "--compiler-options",
                    "\"-Wl,-rpath,/x\" -fopenmp",
                    "-Xcompiler",
                    "-isystem,/sys",
                    "-Xcompiler",
                    "-include",
                    "-Xcompiler",
                    "pre.h",
                    "k.cu",
                    "-o",
                    "app",
                ],
                format!(
                    "{DEV} -Wl,-rpath,/x -Xarch_host -fopenmp -Xarch_host -isystem/sys \
                     -Xarch_host -includepre.h k.cu -o app"
                ),
            ),
            (
                &["-Xcompiler", "\"-Wl,--as-needed\",-lm", "-c", "k.cu"],
                format!("{DEV} -c k.cu"),
            ),
            // nvcc splits at the commas too: -Wl and --as-needed become two flags.
            (
                &["-Xcompiler", "-Wl,--as-needed", "-c", "k.cu"],
                format!("{DEV} -Xarch_host -Wl -Xarch_host --as-needed -c k.cu"),
            ),
            (
                &["-Xcompiler", "-fPIC", "-c", "a.cpp", "-std=c++17"],
                "-std=c++17 -isystem /cuda/include -fPIC -c a.cpp".into(),
            ),
            (&["-c", "x.c"], "-isystem /cuda/include -c -x c x.c".into()),
            (
                &["x.c", "k.cu", "y.o"],
                format!("{DEV} -isystem /cuda/include -x c x.c -x none k.cu y.o"),
            ),
            (
                &["-x", "cu", "a.cpp", "b.o", "-o", "app"],
                format!("{DEV} -x cuda a.cpp -x none b.o -o app"),
            ),
            (
                &["--x=c++", "-c", "k.cu"],
                "-isystem /cuda/include -c -x c++ k.cu".into(),
            ),
            (
                &[
                    "a.o",
                    "b.o",
                    "-o",
                    "app",
                    "-L/lib",
                    "-lfoo,bar",
                    "-Xlinker",
                    "-rpath,/x",
                    "--library",
                    "z",
                    "--library-path=/l2",
                    "-shared",
                ],
                "a.o b.o -o app -L/lib -lfoo -lbar -Xlinker -rpath -Xlinker /x -lz -L/l2 -shared"
                    .into(),
            ),
            (
                &[
                    "-c",
                    "k.cu",
                    "-L/lib",
                    "-lfoo",
                    "-Xlinker",
                    "--as-needed",
                    "-Xptxas",
                    "-v",
                ],
                format!("{DEV} -c k.cu -Xcuda-ptxas -v"),
            ),
            (
                &["a.o", "-Xptxas", "-v", "--maxrregcount=32", "-arch=sm_80"],
                "a.o".into(),
            ),
            (
                &[
                    "-I",
                    "inc",
                    "-Iinc2,inc3",
                    "--include-path=inc4",
                    "-D",
                    "A=1",
                    "-DB",
                    "--define-macro",
                    "C,D",
                    "-U",
                    "E",
                    "-isystem",
                    "sys",
                    "-include",
                    "pre.h",
                    "--system-include=sys2",
                    "--pre-include",
                    "pre2.h",
                    "-DS=\"a,b\"",
                    "-c",
                    "k.cu",
                ],
                format!(
                    "{DEV} -Iinc -Iinc2 -Iinc3 -Iinc4 -DA=1 -DB -DC -DD -UE -isystem sys \
                     -include pre.h -isystem sys2 -include pre2.h -DS=\"a,b\" -c k.cu"
                ),
            ),
            (&["-M", "k.cu"], "--cuda-host-only -M k.cu".into()),
            (
                &["--generate-nonsystem-dependencies", "k.cu", "-o", "k.d"],
                "--cuda-host-only -MM k.cu -o k.d".into(),
            ),
            (
                &["-MD", "-MF", "k.d", "-MT", "k.o", "-MP", "-c", "k.cu"],
                format!("{DEV} -MD -MF k.d -MT k.o -MP -c k.cu"),
            ),
            (&["-MMD", "-c", "k.cu"], format!("{DEV} -MMD -c k.cu")),
            (&["-E", "k.cu"], "--cuda-host-only -E k.cu".into()),
            (&["-E", "a.cpp"], "-isystem /cuda/include -E a.cpp".into()),
            (
                &["--use_fast_math", "k.cu"],
                format!(
                    "{DEV} -fgpu-flush-denormals-to-zero -fgpu-approx-transcendentals \
                     -Xarch_device -mllvm=-nvptx-prec-divf32=0 k.cu"
                ),
            ),
            (
                &[
                    "-use_fast_math",
                    "--ftz=false",
                    "--prec-div=true",
                    "--prec-sqrt=false",
                    "k.cu",
                ],
                format!("{DEV} -fgpu-approx-transcendentals k.cu"),
            ),
            (
                &["--fmad=false", "-ftz=true", "--prec-div", "false", "k.cu"],
                format!(
                    "{DEV} -fgpu-flush-denormals-to-zero -Xarch_device -mllvm=-nvptx-prec-divf32=0 \
                     -Xarch_device -ffp-contract=off k.cu"
                ),
            ),
            (
                &[
                    "--expt-relaxed-constexpr",
                    "--expt-extended-lambda",
                    "-extended-lambda",
                    "-Wno-deprecated-gpu-targets",
                    "-std=c++17",
                    "--std",
                    "c++20",
                    "k.cu",
                ],
                format!("{DEV} -std=c++20 k.cu"),
            ),
            (
                &[
                    "-rdc=true",
                    "-rdc",
                    "false",
                    "-cudart",
                    "shared",
                    "-m64",
                    "--machine=64",
                    "k.cu",
                    "--link",
                ],
                format!("{DEV} k.cu"),
            ),
            (
                &[
                    "-w",
                    "-Werror",
                    "all-warnings,reorder",
                    "-Wreorder",
                    "-Wno-deprecated-declarations",
                    "k.cu",
                ],
                format!(
                    "{DEV} -w -Werror -Werror=reorder -Wreorder -Wno-deprecated-declarations k.cu"
                ),
            ),
            (
                &[
                    "--maxrregcount",
                    "32",
                    "--resource-usage",
                    "k.cu",
                    "-Xptxas=-O2,-dlcm=ca",
                ],
                format!(
                    "{DEV} -Xcuda-ptxas --maxrregcount=32 -Xcuda-ptxas -v k.cu \
                     -Xcuda-ptxas -O2 -Xcuda-ptxas -dlcm=ca"
                ),
            ),
            (
                &["--default-stream", "per-thread", "k.cu", "a.cpp"],
                format!(
                    "{DEV} -fgpu-default-stream=per-thread -DCUDA_API_PER_THREAD_DEFAULT_STREAM=1 \
                     -isystem /cuda/include k.cu a.cpp"
                ),
            ),
            (
                &["--cusafe-no-instrument", "-v", "k.cu", "--cusafe-stats"],
                format!("--cusafe-no-instrument --cusafe-stats {DEV} -v k.cu"),
            ),
            (
                &[
                    "--forward-unknown-to-host-compiler",
                    "-Wall",
                    "-fPIC",
                    "k.cu",
                ],
                format!("{DEV} -Xarch_host -Wall -Xarch_host -fPIC k.cu"),
            ),
            (
                &["-fPIC", "-forward-unknown-opts", "a.o"],
                "-fPIC a.o".into(),
            ),
            (&["-g", "a.o", "-o", "app"], "-g a.o -o app".into()),
            (
                &["-shared", "-Xcompiler", "-fPIC", "k.cu", "-o", "libk.so"],
                format!("{DEV} -shared -Xarch_host -fPIC k.cu -o libk.so"),
            ),
            (
                &["-Xcompiler", "-fsanitize=address", "k.cu"],
                format!("{DEV} -Xarch_host -fsanitize=address k.cu"),
            ),
            (
                &[
                    "-ccbin",
                    "g++-12",
                    "-Xcudafe",
                    "--diag_suppress=177",
                    "-t",
                    "4",
                    "k.cu",
                ],
                format!("{DEV} k.cu"),
            ),
        ];
        for (argv, expected) in table {
            assert_eq!(line(argv), *expected, "{argv:?}");
        }
    }

    #[test]
    fn flags_that_cannot_be_honoured_are_errors_saying_why_and_what_to_do() {
        let table: &[(&[&str], &str)] = &[
            (
                &["-rdc=true", "k.cu"],
                "-rdc=true: relocatable device code needs",
            ),
            (
                &["--relocatable-device-code", "true", "-c", "k.cu"],
                "--relocatable-device-code true: relocatable",
            ),
            (&["-dc", "k.cu"], "-dc: relocatable device code needs"),
            (&["-dlink", "a.o"], "-dlink: relocatable device code"),
            (&["-lib", "a.o"], "-lib: nvcc's library step"),
            (&["-ptx", "k.cu"], "-ptx: nvcc's PTX-only output"),
            (
                &["-Xnvlink", "-v", "a.o"],
                "-Xnvlink -v: there is no device link step",
            ),
            (
                &["-arch=all", "k.cu"],
                "-arch=all: building for every architecture",
            ),
            (
                &["-arch=sm_100x", "k.cu"],
                "-arch=sm_100x: 'sm_100x' is not a GPU architecture",
            ),
            (&["-O5", "k.cu"], "-O5: '5' is not an optimisation level"),
            (&["-o"], "-o: needs a value"),
            (&[], "no input files: nothing to compile or link"),
            (&["-c", "-O2"], "no input files"),
            (
                &["-Wall", "k.cu"],
                "-Wall: not an nvcc option; host compiler flags go through -Xcompiler",
            ),
            (
                &["--use-fast-math", "k.cu"],
                "(did you mean --use_fast_math?)",
            ),
            (&["-std=c++17", "x.c", "k.cu"], "-std=c++17: x.c is C"),
            (
                &["-x", "fortran", "k.cu"],
                "-x fortran: 'fortran' is not a language",
            ),
            (&["-rdc=maybe", "k.cu"], "'maybe' is not true or false"),
            (
                &["-cudart", "dynamic", "k.cu"],
                "-cudart dynamic: 'dynamic' is not static",
            ),
            (
                &["-Werror", "foo.cu"],
                "-Werror foo.cu: 'foo.cu' is not a -Werror kind",
            ),
            (&["-m32", "k.cu"], "-m32: only 64-bit"),
            (
                &["--expt-relaxed-constexpr=true", "k.cu"],
                "takes no value; write --expt-relaxed-constexpr",
            ),
            (&["-lineinfo=1", "k.cu"], "-lineinfo=1: takes no value"),
            (&["k.ptx"], "k.ptx: .ptx inputs are not supported"),
            (
                &["-Xcompiler", "-isystem", "k.cu"],
                "-Xcompiler -isystem: its value is missing",
            ),
            (&["-I=", "k.cu"], "-I=: needs a value"),
            (&["-D,", "k.cu"], "-D,: needs a value"),
            (&["--maxrregcount", "x", "k.cu"], "'x' is not a number"),
            (
                &["--default-stream=per-block", "k.cu"],
                "'per-block' is not legacy",
            ),
            (
                &["-gencode", "arch=compute_80,code=lto_80", "k.cu"],
                "LTO device code",
            ),
            (
                &["@/nonexistent/args.rsp"],
                "@/nonexistent/args.rsp: cannot read /nonexistent/args.rsp",
            ),
            (
                &["-optf", "/nonexistent/o"],
                "-optf /nonexistent/o: cannot read",
            ),
        ];
        for (argv, says) in table {
            let err = mapped(argv).unwrap_err();
            assert!(err.contains(says), "{argv:?}: {err}");
            assert!(err.contains("; "), "{argv:?}: no fix in {err}");
        }
        // -arch=native on a machine without a GPU.
        let p = parse(vec!["-arch=native".into(), "k.cu".into()]).unwrap();
        let err = map(&p, &Fixed { gpu: false }).unwrap_err().to_string();
        assert!(err.starts_with("-arch=native: cannot tell this machine's GPU (nvptx-arch found no GPU); build on the GPU machine, or name"), "{err}");
    }

    #[test]
    fn ignored_flags_warn_once_each() {
        let m = mapped(&[
            "-ccbin",
            "g++-12",
            "-Xcudafe",
            "--diag_suppress=177",
            "--keep",
            "-Werror",
            "cross-execution-space-call",
            "--prec-sqrt=true",
            "k.cu",
            "-o",
            "app",
            "-cudart",
            "static",
        ])
        .unwrap();
        let starts: Vec<&str> = m
            .warnings
            .iter()
            .map(|w| w.split(':').next().unwrap())
            .collect();
        assert_eq!(
            starts,
            [
                "-ccbin g++-12",
                "-Xcudafe --diag_suppress=177",
                "--keep",
                "-Werror cross-execution-space-call",
                "--prec-sqrt=true",
                "-cudart static"
            ]
        );
        assert!(
            m.warnings[0].contains("compiled by clang++-19"),
            "{:?}",
            m.warnings
        );
        assert!(
            m.warnings[5].contains("shared libcudart.so.12"),
            "{:?}",
            m.warnings
        );
        // -cudart only matters to links; shared (and the default) say nothing.
        for argv in [
            &["-cudart", "static", "-c", "k.cu"][..],
            &["-cudart=shared", "k.cu"],
            &["k.cu"],
        ] {
            assert!(mapped(argv).unwrap().warnings.is_empty(), "{argv:?}");
        }
        let none = mapped(&["--cudart=none", "a.o"]).unwrap();
        assert!(
            none.warnings[0].starts_with("--cudart=none: libcudart.so.12 is linked"),
            "{:?}",
            none.warnings
        );
    }

    #[test]
    fn response_files_are_read_in_place() {
        let dir = std::env::temp_dir().join(format!("cusafe-nvcc-rsp-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let inner = dir.join("inner.rsp");
        std::fs::write(&inner, "-DINNER 'my file.cu'").unwrap();
        let outer = dir.join("outer.rsp");
        std::fs::write(
            &outer,
            format!("-O2 \"-DQ=a b\"\n@{}\n-o\tapp", inner.display()),
        )
        .unwrap();
        let opts = dir.join("opts");
        std::fs::write(&opts, "-lineinfo").unwrap();
        let other = dir.join("other");
        std::fs::write(&other, "-w").unwrap();
        let list = format!("{},{}", opts.display(), other.display());
        assert_eq!(
            line(&["-c", &format!("@{}", outer.display()), "--options-file", &list, "-I", "@inc"]),
            format!("{DEV} -Xarch_device -gline-directives-only -O2 -c -DQ=a b -DINNER my file.cu -o app -w -I@inc")
        );
        // A file that includes itself stops at the depth limit.
        let looping = dir.join("loop.rsp");
        std::fs::write(&looping, format!("@{}", looping.display())).unwrap();
        let err = mapped(&[&format!("@{}", looping.display())]).unwrap_err();
        assert!(err.contains("nested more than 8 deep"), "{err}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn no_command_line_panics() {
        let tokens = [
            "",
            "-",
            "--",
            "-=",
            "=",
            "-O",
            "-O9",
            "-X",
            "@",
            "-Xcompiler",
            "-Xcompiler=",
            "-gencode",
            "arch=",
            "code=[",
            "arch=compute_80,code=[sm_80",
            "-arch=sm_",
            "é",
            "-é",
            "--é=x",
            "-Dé",
            "-x",
            "cu",
            "k.cu",
            "a.o",
            "x.c",
            "-c",
            "-M",
            "-o",
            "-isystem",
            "-Xcompiler=-isystem",
            "-code=",
            "-arch=native",
            "-std=c++17",
            "\"",
            "'",
            "\\",
            "-Xptxas",
            "-I",
            "-l",
        ];
        for a in tokens {
            for b in tokens {
                for c in ["k.cu", "-c", "-o", "-Xcompiler", "'"] {
                    let _ = mapped(&[a, b, c]);
                    let _ = mapped(&[c, a, b]);
                }
            }
        }
    }
}
