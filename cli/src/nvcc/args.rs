//! Reading an nvcc command line ([`parse`]) into a [`Parsed`]: the flags that shape the
//! whole command (GPU architectures, optimisation, debug info, language, math), and the
//! rest in order as [`Item`]s, already in clang's spelling.
//!
//! Options are looked up in [`super::options::SPECS`] by their long or short name, with
//! one or two dashes; a value follows after `=` or as the next argument, and for
//! `-I -D -U -L -l -O -m` also joined (`-Idir`, `-O3`). Response files (`@file`,
//! `--options-file file`, `-optf file`) are read in place, up to 8 deep.

use std::collections::VecDeque;

use super::arch::{GpuOptions, Written};
use super::options::{self, Action, Opt, Spec, JOINED};
use super::words;
use super::Error;

/// The language an input is compiled as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// C (`.c`, `-x c`).
    C,
    /// C++ for the host (`.cpp`, `.cc`, ..., `-x c++`).
    Cxx,
    /// CUDA (`.cu`, `-x cu`).
    Cuda,
}

impl Lang {
    /// clang's name for it after `-x`.
    pub fn clang_name(self) -> &'static str {
        match self {
            Lang::C => "c",
            Lang::Cxx => "c++",
            Lang::Cuda => "cuda",
        }
    }
}

/// Where the command stops.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Stop {
    /// Compiles (if needed) and links.
    #[default]
    Link,
    /// `-c`: objects.
    Compile,
    /// `-E`, `-M`, `-MM`: preprocessor output only.
    Preprocess,
}

/// `-cudart` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cudart {
    /// `static` (nvcc's default).
    Static,
    /// `shared`.
    Shared,
    /// `none`.
    None,
}

/// A piece of the command line that keeps its place, in clang's spelling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// An input file.
    Input(String),
    /// Flags for clang as they are.
    Clang(Vec<String>),
    /// Host compiler flags (`-Xcompiler`, unknown flags forwarded to the host compiler):
    /// host-only in CUDA compiles ([`super::map`]).
    Host(Vec<String>),
    /// Flags for the link only (`-L`, `-l`, `-Xlinker`, `-shared`): left out of
    /// commands that do not link.
    Link(Vec<String>),
    /// Flags for the device compile only (`-Xcuda-ptxas ...`): left out of commands
    /// that compile no CUDA.
    Device(Vec<String>),
}

/// nvcc's floating-point options (`None`: not given).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Math {
    /// `--use_fast_math`.
    pub fast: bool,
    /// `--ftz`.
    pub ftz: Option<bool>,
    /// `--prec-div`.
    pub prec_div: Option<bool>,
    /// `--prec-sqrt`, with the flag as written.
    pub prec_sqrt: Option<(String, bool)>,
    /// `--fmad`.
    pub fmad: Option<bool>,
}

/// A command line, read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Parsed {
    /// Everything that keeps its place, in order.
    pub items: Vec<Item>,
    /// `--cusafe-*` flags, for cusafe-clang++ as they are.
    pub cusafe: Vec<String>,
    /// `-arch`, `-code`, `-gencode`.
    pub gpu: GpuOptions,
    /// The host's `-O` flag for clang (`-O2`).
    pub host_opt: Option<String>,
    /// `-g`.
    pub host_debug: bool,
    /// `-G`.
    pub device_debug: bool,
    /// `-lineinfo`.
    pub line_info: bool,
    /// `-x`: the language of every source input.
    pub language: Option<Lang>,
    /// Where the command stops.
    pub stop: Stop,
    /// `-rdc=true` as written (last `-rdc` wins).
    pub rdc: Option<String>,
    /// `-cudart`, with the flag as written.
    pub cudart: Option<(String, Cudart)>,
    /// Floating-point options.
    pub math: Math,
    /// `-std=` value.
    pub std: Option<String>,
    /// `--default-stream per-thread`.
    pub per_thread_stream: bool,
    /// `-v`.
    pub verbose: bool,
    /// `--dryrun`.
    pub dry_run: bool,
    /// `--help`.
    pub help: bool,
    /// `--version`.
    pub version: bool,
    /// Warnings about ignored flags (one line each, without the prefix).
    pub warnings: Vec<String>,
}

/// Response files may include others this deep.
const MAX_DEPTH: usize = 8;

/// Input extensions nvcc compiles that clang cannot take here.
const UNSUPPORTED_INPUTS: &[&str] = &["ptx", "cubin", "fatbin", "gpu", "cup", "optixir"];

/// Reads a command line (without the program name).
pub fn parse(args: Vec<String>) -> Result<Parsed, Error> {
    let mut queue: VecDeque<(String, usize)> = args.into_iter().map(|a| (a, 0)).collect();
    let mut p = Parsed::default();
    let mut forward_unknown = false;
    let mut first_unknown: Option<String> = None;
    while let Some((arg, depth)) = queue.pop_front() {
        if let Some(path) = arg.strip_prefix('@') {
            include_file(path, &arg, depth, &mut queue)?;
        } else if arg.starts_with("--cusafe") || arg.starts_with("-cusafe") {
            // cusafe-clang++ checks them (and names near misses).
            p.cusafe.push(arg);
        } else if !arg.starts_with('-') || arg == "-" {
            input(&arg)?;
            p.items.push(Item::Input(arg));
        } else if let Some((spec, inline)) = lookup(&arg) {
            let (value, written) = take_value(spec, &arg, inline, &mut queue)?;
            match spec.action {
                Action::Quiet => {}
                Action::Clang(flag) => p.items.push(Item::Clang(vec![flag.into()])),
                Action::Ignore(why) => p.warnings.push(format!("{written}: ignored: {why}")),
                Action::Refuse(why, fix) => return Err(Error::new(&written, why, fix)),
                Action::Read(Opt::OptionsFile) => {
                    for file in words::list(&value).iter().rev() {
                        include_file(file, &written, depth, &mut queue)?;
                    }
                }
                Action::Read(Opt::ForwardUnknown) => forward_unknown = true,
                Action::Read(opt) => read(&mut p, opt, &value, &written)?,
            }
        } else {
            first_unknown.get_or_insert_with(|| arg.clone());
            push_host(&mut p, vec![arg]);
        }
    }
    match first_unknown {
        Some(flag) if !forward_unknown => Err(unknown(&flag)),
        _ => Ok(p),
    }
}

/// The value of the option `spec`, written as `arg` with `inline` after `=` or joined
/// (else the next argument, or none if it takes none), and the flag as written with it
/// (for messages).
fn take_value(
    spec: &Spec,
    arg: &str,
    inline: Option<String>,
    queue: &mut VecDeque<(String, usize)>,
) -> Result<(String, String), Error> {
    let (value, written) = match (inline, spec.value) {
        (None, false) => return Ok((String::new(), arg.to_owned())),
        (Some(_), false) => {
            let bare = arg.split('=').next().unwrap_or(arg);
            return Err(Error::new(arg, "takes no value", format!("write {bare}")));
        }
        (Some(v), true) => (v, arg.to_owned()),
        // A bare -O (no level after it): -O1, as gcc and clang read it.
        (None, true)
            if spec.action == Action::Read(Opt::Optimize)
                && !queue.front().is_some_and(|(next, _)| is_level(next)) =>
        {
            ("1".to_owned(), arg.to_owned())
        }
        (None, true) => {
            let (v, _) = queue
                .pop_front()
                .ok_or_else(|| Error::new(arg, "needs a value", format!("write {arg} VALUE")))?;
            let written = format!("{arg} {v}");
            (v, written)
        }
    };
    if value.is_empty() {
        return Err(Error::new(&written, "needs a value", "give one"));
    }
    Ok((value, written))
}

/// The spec of a flag and its inline value (after `=`, or joined to a one-letter name).
fn lookup(arg: &str) -> Option<(&'static Spec, Option<String>)> {
    let double = arg.starts_with("--");
    let body = arg.strip_prefix("--").or_else(|| arg.strip_prefix('-'))?;
    let (name, inline) = match body.split_once('=') {
        Some((name, value)) => (name, Some(value.to_owned())),
        None => (body, None),
    };
    if let Some(spec) = options::find(name) {
        return Some((spec, inline));
    }
    let first = body.chars().next()?;
    let rest = body.get(first.len_utf8()..).filter(|r| !r.is_empty())?;
    if double || !JOINED.contains(&first) {
        return None;
    }
    options::find(first.encode_utf8(&mut [0; 4])).map(|spec| (spec, Some(rest.to_owned())))
}

/// The error for an unknown flag, with the closest known one.
fn unknown(flag: &str) -> Error {
    let why = match options::suggest(flag) {
        Some(known) => format!("not an nvcc option (did you mean {known}?)"),
        None => "not an nvcc option".to_owned(),
    };
    Error::new(
        flag,
        why,
        format!(
            "host compiler flags go through -Xcompiler (-Xcompiler {flag}) or \
             --forward-unknown-to-host-compiler; cusafe-nvcc --help lists the options"
        ),
    )
}

/// Checks an input's extension.
fn input(path: &str) -> Result<(), Error> {
    let ext = std::path::Path::new(path)
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("");
    if UNSUPPORTED_INPUTS.contains(&ext) {
        return Err(Error::new(
            path,
            format!(".{ext} inputs are not supported: clang compiles CUDA from source"),
            "pass the .cu file it was made from",
        ));
    }
    Ok(())
}

/// Puts the words of the response file `path` (named by `written`) at the front of
/// `queue`.
fn include_file(
    path: &str,
    written: &str,
    depth: usize,
    queue: &mut VecDeque<(String, usize)>,
) -> Result<(), Error> {
    if depth >= MAX_DEPTH {
        return Err(Error::new(
            written,
            format!("response files nested more than {MAX_DEPTH} deep"),
            "check that no response file includes itself",
        ));
    }
    let text = std::fs::read_to_string(path).map_err(|e| {
        Error::new(
            written,
            format!("cannot read {path} ({e})"),
            "check the path",
        )
    })?;
    for word in words::response_file(&text).into_iter().rev() {
        queue.push_front((word, depth + 1));
    }
    Ok(())
}

/// Adds host compiler words, joining them to the previous host words if those come
/// right before (`-Xcompiler -isystem -Xcompiler /dir` is one pair).
fn push_host(p: &mut Parsed, mut new: Vec<String>) {
    match p.items.last_mut() {
        Some(Item::Host(words)) => words.append(&mut new),
        _ => p.items.push(Item::Host(new)),
    }
}

/// An optimisation level nvcc takes.
fn is_level(value: &str) -> bool {
    matches!(value, "0" | "1" | "2" | "3")
}

/// `true`/`false` values.
fn boolean(value: &str, written: &str) -> Result<bool, Error> {
    match value {
        "true" => Ok(true),
        "false" => Ok(false),
        _ => Err(Error::new(
            written,
            format!("'{value}' is not true or false"),
            "write true or false",
        )),
    }
}

/// Each item of a list value, or an error if there is none.
fn items(value: &str, written: &str) -> Result<Vec<String>, Error> {
    let items = words::list(value);
    if items.is_empty() {
        return Err(Error::new(written, "needs a value", "give one"));
    }
    Ok(items)
}

/// Applies one option the parser reads.
fn read(p: &mut Parsed, opt: Opt, value: &str, written: &str) -> Result<(), Error> {
    let clang = |words: &[&str]| Item::Clang(words.iter().map(|w| (*w).to_owned()).collect());
    let stop_at = |p: &mut Parsed, stop: Stop| {
        if stop == Stop::Preprocess || p.stop == Stop::Link {
            p.stop = stop;
        }
    };
    let w = || Written {
        flag: written.to_owned(),
        value: value.to_owned(),
    };
    match opt {
        Opt::Compile => {
            stop_at(p, Stop::Compile);
            p.items.push(clang(&["-c"]));
        }
        Opt::Preprocess | Opt::Deps | Opt::DepsNonSystem => {
            stop_at(p, Stop::Preprocess);
            let flag = match opt {
                Opt::Preprocess => "-E",
                Opt::Deps => "-M",
                _ => "-MM",
            };
            p.items.push(clang(&[flag]));
        }
        Opt::Output => p.items.push(clang(&["-o", value])),
        Opt::DepsWithCompile => p.items.push(clang(&["-MD"])),
        Opt::DepsNonSystemWithCompile => p.items.push(clang(&["-MMD"])),
        Opt::DepFile => p.items.push(clang(&["-MF", value])),
        Opt::DepTarget => p.items.push(clang(&["-MT", value])),
        Opt::DepPhony => p.items.push(clang(&["-MP"])),
        Opt::Arch => p.gpu.arch.push(w()),
        Opt::Code => p.gpu.code.push(w()),
        Opt::Gencode => p.gpu.gencode.push(w()),
        Opt::Optimize => {
            if !is_level(value) {
                return Err(Error::new(
                    written,
                    format!("'{value}' is not an optimisation level"),
                    "write -O0, -O1, -O2 or -O3",
                ));
            }
            p.host_opt = Some(format!("-O{value}"));
        }
        Opt::Debug => p.host_debug = true,
        Opt::DeviceDebug => p.device_debug = true,
        Opt::LineInfo => p.line_info = true,
        Opt::Xcompiler => push_host(p, words::tool_options(value)),
        Opt::Xlinker => {
            for word in words::tool_options(value) {
                p.items.push(Item::Link(vec!["-Xlinker".into(), word]));
            }
        }
        Opt::Xptxas => {
            let flags = words::tool_options(value)
                .into_iter()
                .flat_map(|word| ["-Xcuda-ptxas".to_owned(), word])
                .collect();
            p.items.push(Item::Device(flags));
        }
        Opt::Std => p.std = Some(value.to_owned()),
        Opt::Include | Opt::Define | Opt::Undefine => {
            let flag = match opt {
                Opt::Include => "-I",
                Opt::Define => "-D",
                _ => "-U",
            };
            for item in items(value, written)? {
                p.items.push(Item::Clang(vec![format!("{flag}{item}")]));
            }
        }
        Opt::SystemInclude | Opt::PreInclude => {
            let flag = if opt == Opt::SystemInclude {
                "-isystem"
            } else {
                "-include"
            };
            for item in items(value, written)? {
                p.items.push(clang(&[flag, &item]));
            }
        }
        Opt::LibraryPath | Opt::Library => {
            let flag = if opt == Opt::LibraryPath { "-L" } else { "-l" };
            for item in items(value, written)? {
                p.items.push(Item::Link(vec![format!("{flag}{item}")]));
            }
        }
        Opt::Language => {
            p.language = Some(match value {
                "c" => Lang::C,
                "c++" => Lang::Cxx,
                "cu" => Lang::Cuda,
                _ => {
                    return Err(Error::new(
                        written,
                        format!("'{value}' is not a language nvcc takes"),
                        "write -x cu, -x c++ or -x c",
                    ))
                }
            })
        }
        Opt::Rdc => p.rdc = boolean(value, written)?.then(|| written.to_owned()),
        Opt::Cudart => {
            let kind = match value {
                "static" => Cudart::Static,
                "shared" => Cudart::Shared,
                "none" => Cudart::None,
                _ => {
                    return Err(Error::new(
                        written,
                        format!("'{value}' is not static, shared or none"),
                        "write -cudart shared",
                    ))
                }
            };
            p.cudart = Some((written.to_owned(), kind));
        }
        Opt::Shared => p.items.push(Item::Link(vec!["-shared".into()])),
        Opt::NoWarnings => p.items.push(clang(&["-w"])),
        Opt::Werror => {
            for kind in items(value, written)? {
                match kind.as_str() {
                    "all-warnings" => p.items.push(clang(&["-Werror"])),
                    "reorder" | "deprecated-declarations" => {
                        p.items.push(Item::Clang(vec![format!("-Werror={kind}")]))
                    }
                    "cross-execution-space-call" => p.warnings.push(format!(
                        "{written}: {kind} ignored: clang always reports such calls as errors"
                    )),
                    "default-stream-launch"
                    | "missing-launch-bounds"
                    | "ext-lambda-captures-this" => p.warnings.push(format!(
                        "{written}: {kind} ignored: an nvcc-only warning; clang has no counterpart"
                    )),
                    _ => {
                        return Err(Error::new(
                            written,
                            format!("'{kind}' is not a -Werror kind"),
                            "write -Werror all-warnings (or reorder, deprecated-declarations, ...)",
                        ))
                    }
                }
            }
        }
        Opt::FastMath => p.math.fast = true,
        Opt::Ftz => p.math.ftz = Some(boolean(value, written)?),
        Opt::PrecDiv => p.math.prec_div = Some(boolean(value, written)?),
        Opt::PrecSqrt => p.math.prec_sqrt = Some((written.to_owned(), boolean(value, written)?)),
        Opt::Fmad => p.math.fmad = Some(boolean(value, written)?),
        Opt::MaxRegisters => {
            if !value.bytes().all(|b| b.is_ascii_digit()) {
                return Err(Error::new(
                    written,
                    format!("'{value}' is not a number"),
                    "write --maxrregcount N",
                ));
            }
            p.items.push(Item::Device(vec![
                "-Xcuda-ptxas".into(),
                format!("--maxrregcount={value}"),
            ]));
        }
        Opt::ResourceUsage => p
            .items
            .push(Item::Device(vec!["-Xcuda-ptxas".into(), "-v".into()])),
        Opt::DefaultStream => {
            p.per_thread_stream = match value {
                "per-thread" => true,
                "legacy" | "null" => false,
                _ => {
                    return Err(Error::new(
                        written,
                        format!("'{value}' is not legacy, null or per-thread"),
                        "write --default-stream per-thread",
                    ))
                }
            }
        }
        Opt::Machine => match value {
            "64" => {}
            _ => {
                return Err(Error::new(
                    written,
                    "only 64-bit code is supported (CUDA 12 has no 32-bit host support)",
                    "leave it out, or write -m64",
                ))
            }
        },
        Opt::Verbose => p.verbose = true,
        Opt::DryRun => p.dry_run = true,
        Opt::Version => p.version = true,
        Opt::Help => p.help = true,
        // parse handles these itself.
        Opt::OptionsFile | Opt::ForwardUnknown => {}
    }
    Ok(())
}
