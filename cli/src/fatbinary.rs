//! `cusafe-fatbinary`: the `fatbinary` tool clang calls, rebuilt over libnvfatbin
//! (NVIDIA's own `fatbinary` is missing from the CUDA 12 wheels).
//!
//! clang-19 calls it as
//! `fatbinary -64 --create OUT [-g] --image=profile=sm_90,file=X.cubin --image=profile=compute_90,file=X.s`:
//! `sm_NN` images are cubins (`nvFatbinAddCubin`), `compute_NN` images PTX
//! (`nvFatbinAddPTX`), both with the architecture string `NN` (`90a` for `sm_90a`).
//! Entries are stored uncompressed unless `--compress=true` is given, so any driver can
//! read them and tests can inspect them. Cubins are stored byte for byte; libnvfatbin
//! stores PTX with comments and indentation stripped, as NVIDIA's tool does.
//!
//! libnvfatbin is found through `CUSAFE_NVFATBIN` (a path), else
//! `<directory of argv[0], symlinks not resolved>/../lib64/libnvfatbin.so.12` (so a
//! `fatbinary` symlink in `<cuda tree>/bin` uses the tree's copy), else the soname.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use clap::error::{ContextKind, ErrorKind};
use clap::Parser;
use thiserror::Error;

use crate::nvfatbin::{self, Entry, EntryKind, NvFatbin, NvFatbinError};

/// Overrides where libnvfatbin is loaded from.
pub const NVFATBIN_ENV: &str = "CUSAFE_NVFATBIN";

/// The flags, as listed in error messages.
const ACCEPTED: &str =
    "-64, -32, --create OUT, --image=profile=ARCH,file=PATH, -g, --compress=BOOL";

/// The command line of `cusafe-fatbinary` (after [`normalize`]).
#[derive(Debug, Parser)]
#[command(
    name = "cusafe-fatbinary",
    version,
    about = "Creates a CUDA fatbinary from cubins and PTX with libnvfatbin (a replacement for NVIDIA's fatbinary, as called by clang).",
    after_help = "NVIDIA's spellings -64 and -32 are accepted. libnvfatbin: $CUSAFE_NVFATBIN, else <argv[0] dir>/../lib64/libnvfatbin.so.12, else the soname."
)]
pub struct Args {
    /// Make 64-bit entries (clang passes -64).
    #[arg(long = "64", conflicts_with = "bits32")]
    pub bits64: bool,
    /// Make 32-bit entries.
    #[arg(long = "32")]
    pub bits32: bool,
    /// The fatbinary to write.
    #[arg(long, value_name = "OUT")]
    pub create: PathBuf,
    /// Mark the entries as carrying debug information.
    #[arg(short = 'g')]
    pub debug: bool,
    /// Compress the entries (libnvfatbin's compression; off by default).
    #[arg(long, value_name = "BOOL", default_value_t = false, action = clap::ArgAction::Set)]
    pub compress: bool,
    /// An input: profile=sm_NN (a cubin) or profile=compute_NN (PTX), and file=PATH.
    #[arg(long = "image", value_name = "profile=ARCH,file=PATH", value_parser = parse_image, required = true)]
    pub images: Vec<Image>,
}

/// One `--image=profile=...,file=...`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Image {
    /// Cubin (`sm_`) or PTX (`compute_`).
    pub kind: EntryKind,
    /// The architecture string for libnvfatbin (`90`, `90a`).
    pub arch: String,
    /// The input file.
    pub file: PathBuf,
}

/// What went wrong.
#[derive(Debug, Error)]
pub enum FatbinaryError {
    /// A flag this tool does not know.
    #[error("unknown flag '{0}' (cusafe-fatbinary accepts {ACCEPTED}; see --help)")]
    UnknownFlag(String),
    /// Any other command-line error, as clap reports it.
    #[error("{0}")]
    Usage(clap::Error),
    /// An input could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The output could not be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file.
        path: PathBuf,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// libnvfatbin could not be loaded from any place tried.
    #[error("cannot load libnvfatbin ({tried}): run scripts/setup.sh, or set {NVFATBIN_ENV} to libnvfatbin.so.12")]
    NoLibrary {
        /// Each place tried, with dlopen's message.
        tried: String,
    },
    /// libnvfatbin refused the inputs.
    #[error(transparent)]
    NvFatbin(#[from] NvFatbinError),
}

impl FatbinaryError {
    /// The exit status for this error: 2 for command-line mistakes, 1 otherwise.
    pub fn exit_code(&self) -> u8 {
        match self {
            FatbinaryError::UnknownFlag(_) | FatbinaryError::Usage(_) => 2,
            _ => 1,
        }
    }
}

/// Parses `profile=sm_90,file=X.cubin` (keys in any order).
pub fn parse_image(value: &str) -> Result<Image, String> {
    let mut profile = None;
    let mut file = None;
    for field in value.split(',') {
        match field.split_once('=') {
            Some(("profile", p)) => profile = Some(p),
            Some(("file", f)) => file = Some(f),
            _ => {
                return Err(format!(
                    "unknown image field '{field}' (expected profile=ARCH,file=PATH)"
                ))
            }
        }
    }
    let profile = profile.ok_or("missing profile= (e.g. profile=sm_90)")?;
    let file = file.filter(|f| !f.is_empty()).ok_or("missing file=PATH")?;
    let (kind, arch) = if let Some(arch) = profile.strip_prefix("sm_") {
        (EntryKind::Cubin, arch)
    } else if let Some(arch) = profile.strip_prefix("compute_") {
        (EntryKind::Ptx, arch)
    } else {
        return Err(format!(
            "unsupported profile '{profile}' (expected sm_NN for a cubin or compute_NN for PTX)"
        ));
    };
    if !arch.starts_with(|c: char| c.is_ascii_digit())
        || !arch.chars().all(|c| c.is_ascii_alphanumeric())
    {
        return Err(format!("bad architecture in profile '{profile}'"));
    }
    Ok(Image {
        kind,
        arch: arch.to_owned(),
        file: PathBuf::from(file),
    })
}

/// Rewrites NVIDIA's single-dash spellings for clap: `-64` → `--64`, `-32` → `--32`. Any
/// other single-dash flag longer than one letter (`-compress=true`, `-cuda`) is refused
/// here, naming it, since clap would split it into letters.
pub fn normalize(
    args: impl IntoIterator<Item = OsString>,
) -> Result<Vec<OsString>, FatbinaryError> {
    let mut out = Vec::new();
    for arg in args {
        let text = arg.to_string_lossy();
        match text.as_ref() {
            "-64" | "-32" => out.push(OsString::from(format!("-{text}"))),
            t if t.starts_with('-') && !t.starts_with("--") && t.len() > 2 => {
                return Err(FatbinaryError::UnknownFlag(t.to_owned()));
            }
            _ => out.push(arg),
        }
    }
    Ok(out)
}

/// Parses a full command line (program name first). `--help` and `--version` come back
/// as [`FatbinaryError::Usage`] holding clap's text, for the caller to print.
pub fn parse(argv: impl IntoIterator<Item = OsString>) -> Result<Args, FatbinaryError> {
    let argv = normalize(argv)?;
    Args::try_parse_from(argv).map_err(|err| match err.kind() {
        ErrorKind::UnknownArgument => match err.get(ContextKind::InvalidArg) {
            Some(flag) => FatbinaryError::UnknownFlag(flag.to_string()),
            None => FatbinaryError::Usage(err),
        },
        _ => FatbinaryError::Usage(err),
    })
}

/// The places libnvfatbin is looked for, in order: `CUSAFE_NVFATBIN` alone if set, else
/// `<dir of argv0>/../lib64/libnvfatbin.so.12` (when argv0 has a directory), then the
/// soname.
pub fn library_candidates(env: Option<OsString>, argv0: Option<&OsStr>) -> Vec<OsString> {
    if let Some(path) = env {
        return vec![path];
    }
    let mut out = Vec::new();
    if let Some(dir) = argv0
        .map(Path::new)
        .and_then(Path::parent)
        .filter(|d| !d.as_os_str().is_empty())
    {
        out.push(dir.join("../lib64").join(nvfatbin::SONAME).into_os_string());
    }
    out.push(OsString::from(nvfatbin::SONAME));
    out
}

/// Loads the first candidate that opens.
pub fn load_library(candidates: &[OsString]) -> Result<NvFatbin, FatbinaryError> {
    let mut tried = Vec::new();
    for candidate in candidates {
        match NvFatbin::open(candidate) {
            Ok(lib) => return Ok(lib),
            Err(err) => tried.push(err.to_string()),
        }
    }
    Err(FatbinaryError::NoLibrary {
        tried: tried.join("; "),
    })
}

/// Reads every image's file, in order.
pub fn read_images(args: &Args) -> Result<Vec<Vec<u8>>, FatbinaryError> {
    args.images
        .iter()
        .map(|image| {
            std::fs::read(&image.file).map_err(|source| FatbinaryError::Read {
                path: image.file.clone(),
                source,
            })
        })
        .collect()
}

/// Builds the fatbinary `args` describes from the images' contents (see
/// [`read_images`]) and writes it to `args.create`.
pub fn create(args: &Args, inputs: &[Vec<u8>], lib: &NvFatbin) -> Result<(), FatbinaryError> {
    let mut options = vec![if args.bits32 { "-32" } else { "-64" }];
    if args.debug {
        options.push("-g");
    }
    options.push(if args.compress {
        "-compress=true"
    } else {
        "-compress=false"
    });
    let identifiers: Vec<String> = args
        .images
        .iter()
        .map(|image| {
            image
                .file
                .file_name()
                .unwrap_or(image.file.as_os_str())
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let entries: Vec<Entry<'_>> = args
        .images
        .iter()
        .zip(inputs)
        .zip(&identifiers)
        .map(|((image, data), identifier)| Entry {
            kind: image.kind,
            arch: &image.arch,
            identifier,
            data,
        })
        .collect();
    let bytes = lib.build(&options, &entries)?;
    std::fs::write(&args.create, bytes).map_err(|source| FatbinaryError::Write {
        path: args.create.clone(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(words: &[&str]) -> Vec<OsString> {
        words.iter().map(OsString::from).collect()
    }

    #[test]
    fn parses_clangs_command_line() {
        let args = parse(argv(&[
            "fatbinary",
            "-64",
            "--create",
            "out.fatbin",
            "-g",
            "--image=profile=sm_90,file=k.cubin",
            "--image=profile=compute_90a,file=k.s",
        ]))
        .unwrap();
        assert!(args.bits64 && args.debug && !args.compress);
        assert_eq!(args.create, PathBuf::from("out.fatbin"));
        assert_eq!(
            args.images,
            vec![
                Image {
                    kind: EntryKind::Cubin,
                    arch: "90".into(),
                    file: "k.cubin".into()
                },
                Image {
                    kind: EntryKind::Ptx,
                    arch: "90a".into(),
                    file: "k.s".into()
                },
            ]
        );
    }

    #[test]
    fn refuses_unknown_flags_by_name() {
        for bad in [
            "--bogus",
            "-compress=true",
            "--image3=kind=elf,sm=90,file=x",
        ] {
            let err = parse(argv(&[
                "fatbinary",
                "--create",
                "o",
                bad,
                "--image=profile=sm_90,file=a",
            ]))
            .unwrap_err();
            assert!(
                matches!(err, FatbinaryError::UnknownFlag(_)),
                "{bad}: {err}"
            );
            let shown = bad.split('=').next().unwrap();
            assert!(err.to_string().contains(shown), "{bad}: {err}");
        }
    }

    #[test]
    fn refuses_bad_images() {
        assert!(parse_image("profile=lto_90,file=a")
            .unwrap_err()
            .contains("lto_90"));
        assert!(parse_image("profile=sm_90").unwrap_err().contains("file="));
        assert!(parse_image("file=a").unwrap_err().contains("profile="));
        assert!(parse_image("profile=sm_90,file=a,kind=elf")
            .unwrap_err()
            .contains("kind=elf"));
        assert!(parse_image("profile=sm_x,file=a").is_err());
    }

    #[test]
    fn library_lookup_order() {
        let c = library_candidates(None, Some(OsStr::new("/t/cuda/bin/fatbinary")));
        assert_eq!(
            c,
            vec![
                OsString::from("/t/cuda/bin/../lib64/libnvfatbin.so.12"),
                OsString::from("libnvfatbin.so.12")
            ]
        );
        assert_eq!(
            library_candidates(None, Some(OsStr::new("fatbinary"))),
            vec![OsString::from("libnvfatbin.so.12")]
        );
        assert_eq!(
            library_candidates(Some("/x.so".into()), Some(OsStr::new("/a/b"))),
            vec![OsString::from("/x.so")]
        );
    }
}
