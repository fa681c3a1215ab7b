//! Where the tools find what they drive: clang-19, the CUDA tree (`--cuda-path`), the pass
//! plugin and the runtime.
//!
//! Every piece has an environment override (used as given, and an error if it names
//! nothing); without it the lookup is relative to the running executable (symlinks
//! resolved), so the workspace layout (`target/release/` beside `.toolchain/`) and a
//! bundle (`bin/`, `lib/`, `cuda/`) both work without set-up:
//!
//! | piece | override | then |
//! |---|---|---|
//! | clang++ | `CUSAFE_CLANG` | `/usr/lib/llvm-19/bin/clang++` |
//! | CUDA tree | `CUSAFE_CUDA_PATH` | nearest ancestor of the exe's directory holding `.toolchain/cuda`, else `<exe dir>/../cuda` |
//! | pass plugin | `CUSAFE_PASS_PLUGIN` | `<exe dir>/libcusafe_pass.so`, else `<exe dir>/../lib/libcusafe_pass.so` |
//! | runtime | `CUSAFE_RT_LIB` | `<exe dir>/libcusafe_rt.so`, else `<exe dir>/../lib/libcusafe_rt.so` |
//! | fuzz archive | `CUSAFE_FUZZ_LIB` | `<exe dir>/libcusafe_fuzz.a`, else `<exe dir>/../lib/libcusafe_fuzz.a` |
//! | fuzz header | `CUSAFE_FUZZ_INCLUDE` | nearest ancestor of the exe's directory holding `fuzz-rt/include`, else `<exe dir>/../include` |
//! | ASan defaults | `CUSAFE_ASAN_DEFAULTS_LIB` | `<exe dir>/libcusafe_asan_defaults.a`, else `<exe dir>/../lib/libcusafe_asan_defaults.a` |
//!
//! [`Lookup`] is the same set of lookups as a trait, so that the command `cusafe-clang++`
//! plans can be tested with fixed paths.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use thiserror::Error;

/// Overrides the clang++ that `cusafe-clang++` drives.
pub const CLANG_ENV: &str = "CUSAFE_CLANG";
/// Overrides the CUDA tree passed as `--cuda-path`.
pub const CUDA_PATH_ENV: &str = "CUSAFE_CUDA_PATH";
/// Overrides the pass plugin (a path to the `.so` itself).
pub const PLUGIN_ENV: &str = cusafe_format::pass_env::PLUGIN;
/// Overrides the runtime (a path to a file named `libcusafe_rt.so`).
pub const RT_ENV: &str = "CUSAFE_RT_LIB";

/// Overrides the fuzz archive `libcusafe_fuzz.a`.
pub const FUZZ_LIB_ENV: &str = "CUSAFE_FUZZ_LIB";
/// Overrides the directory holding `cusafe/fuzz.h`.
pub const FUZZ_INCLUDE_ENV: &str = "CUSAFE_FUZZ_INCLUDE";
const FUZZ_LIB_NAME: &str = "libcusafe_fuzz.a";
/// Overrides the ASan defaults archive `libcusafe_asan_defaults.a`.
pub const ASAN_DEFAULTS_ENV: &str = "CUSAFE_ASAN_DEFAULTS_LIB";
/// File name of the ASan defaults archive built by the `asan-defaults` crate
/// (`-fsanitize=address` links link it).
pub const ASAN_DEFAULTS_NAME: &str = "libcusafe_asan_defaults.a";

/// The clang++ used when `CUSAFE_CLANG` is not set (Debian's clang-19 package).
pub const DEFAULT_CLANG: &str = "/usr/lib/llvm-19/bin/clang++";
/// File name of the pass plugin built by the `llvm-pass` crate.
pub const PLUGIN_NAME: &str = "libcusafe_pass.so";
/// File name of the runtime built by the `runtime-preload` crate.
pub const RT_NAME: &str = "libcusafe_rt.so";

/// Why a piece of the toolchain could not be found. Each message ends with what to do.
#[derive(Debug, Error)]
pub enum LocateError {
    /// `std::env::current_exe` failed, so nothing relative to the executable can be found.
    #[error("cannot tell where this executable lives ({0}); set the CUSAFE_* path variables (docs/cli.md)")]
    CurrentExe(#[source] std::io::Error),
    /// An override variable names a path that does not exist.
    #[error("{var}={} does not exist: point {var} at an existing {what}, or unset it", path.display())]
    BadOverride {
        /// The variable.
        var: &'static str,
        /// Its value.
        path: PathBuf,
        /// What it should name.
        what: &'static str,
    },
    /// The runtime override names a file with another name, which `-lcusafe_rt` cannot find.
    #[error("{var}={} must name a file called {RT_NAME} (the link uses -lcusafe_rt)", path.display())]
    BadRuntimeName {
        /// The variable.
        var: &'static str,
        /// Its value.
        path: PathBuf,
    },
    /// clang++ 19 is not installed where expected.
    #[error("clang++-19 not found at {}: run scripts/setup.sh (it installs clang-19 from apt), or set {CLANG_ENV} to a clang++ 19", .0.display())]
    Clang(PathBuf),
    /// No CUDA tree in any of the places looked at.
    #[error("no CUDA tree found (looked at {tried}): run scripts/setup.sh, or set {CUDA_PATH_ENV} to a --cuda-path tree")]
    CudaTree {
        /// The places looked at, comma-separated.
        tried: String,
    },
    /// The CUDA tree exists but lacks a piece this invocation needs.
    #[error("the CUDA tree {} lacks {piece}: {fix}", tree.display())]
    CudaPiece {
        /// The tree.
        tree: PathBuf,
        /// The missing path, relative to the tree.
        piece: &'static str,
        /// How to get it.
        fix: &'static str,
    },
    /// The pass plugin or the runtime is not built (or not installed beside the executable).
    #[error("{name} not found (looked at {tried}): run `cargo build --release` in the cusafe workspace, or set {var}{hint}")]
    Library {
        /// The library's file name.
        name: &'static str,
        /// Its override variable.
        var: &'static str,
        /// The places looked at, comma-separated.
        tried: String,
        /// Extra advice (for the plugin: the plain-build flag).
        hint: &'static str,
    },
}

/// When a piece of the CUDA tree is needed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// To compile CUDA sources.
    Compile,
    /// To link a program (cudart).
    Link,
    /// By `cusafe-fatbinary` (checked by `cusafe doctor` only; the tool reports it itself).
    Fatbinary,
}

/// One file the CUDA tree must hold.
#[derive(Debug, Clone, Copy)]
pub struct CudaPiece {
    /// Path relative to the tree.
    pub rel: &'static str,
    /// When it is needed.
    pub need: Need,
    /// How to get it when it is missing.
    pub fix: &'static str,
}

const SETUP_FIX: &str = "run scripts/setup.sh";
const FATBINARY_FIX: &str =
    "run `cargo build --release -p cusafe-cli`, then scripts/link-fatbinary.sh";

/// Everything cusafe uses from the CUDA tree.
pub const CUDA_PIECES: &[CudaPiece] = &[
    CudaPiece {
        rel: "include/cuda_runtime.h",
        need: Need::Compile,
        fix: SETUP_FIX,
    },
    CudaPiece {
        rel: "bin/ptxas",
        need: Need::Compile,
        fix: SETUP_FIX,
    },
    CudaPiece {
        rel: "nvvm/libdevice/libdevice.10.bc",
        need: Need::Compile,
        fix: SETUP_FIX,
    },
    CudaPiece {
        rel: "bin/fatbinary",
        need: Need::Compile,
        fix: FATBINARY_FIX,
    },
    CudaPiece {
        rel: "lib64/libcudart.so",
        need: Need::Link,
        fix: SETUP_FIX,
    },
    CudaPiece {
        rel: "lib64/libnvfatbin.so.12",
        need: Need::Fatbinary,
        fix: SETUP_FIX,
    },
];

/// Checks that `tree` holds every piece with one of the given needs.
pub fn check_cuda_tree(tree: &Path, needs: &[Need]) -> Result<(), LocateError> {
    for piece in CUDA_PIECES.iter().filter(|p| needs.contains(&p.need)) {
        if !tree.join(piece.rel).exists() {
            return Err(LocateError::CudaPiece {
                tree: tree.to_path_buf(),
                piece: piece.rel,
                fix: piece.fix,
            });
        }
    }
    Ok(())
}

/// Finds the toolchain pieces for an executable at a given path.
#[derive(Debug, Clone)]
pub struct Locator {
    exe_dir: PathBuf,
}

impl Locator {
    /// A locator for the running executable (symlinks resolved).
    pub fn for_current_exe() -> Result<Self, LocateError> {
        let exe = std::env::current_exe().map_err(LocateError::CurrentExe)?;
        let exe = exe.canonicalize().unwrap_or(exe);
        Ok(Self::for_exe(&exe))
    }

    /// A locator for an executable at `exe`.
    pub fn for_exe(exe: &Path) -> Self {
        let exe_dir = exe.parent().unwrap_or(Path::new("/")).to_path_buf();
        Self { exe_dir }
    }

    /// The clang++ to drive.
    pub fn clang(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(CLANG_ENV, "clang++ 19")? {
            return Ok(path);
        }
        let path = PathBuf::from(DEFAULT_CLANG);
        if path.exists() {
            Ok(path)
        } else {
            Err(LocateError::Clang(path))
        }
    }

    /// The CUDA tree (not yet checked for its pieces; see [`check_cuda_tree`]).
    pub fn cuda_tree(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(CUDA_PATH_ENV, "CUDA tree")? {
            return Ok(path);
        }
        if let Some(tree) = self
            .exe_dir
            .ancestors()
            .map(|a| a.join(".toolchain/cuda"))
            .find(|t| t.is_dir())
        {
            return Ok(tree);
        }
        let bundled = self.sibling("cuda");
        if bundled.is_dir() {
            return Ok(bundled);
        }
        Err(LocateError::CudaTree {
            tried: format!(
                "{}, .toolchain/cuda in every ancestor of {}, {}",
                CUDA_PATH_ENV,
                self.exe_dir.display(),
                bundled.display()
            ),
        })
    }

    /// The pass plugin.
    pub fn pass_plugin(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(PLUGIN_ENV, "pass plugin")? {
            return Ok(path);
        }
        self.beside_exe(
            PLUGIN_NAME,
            PLUGIN_ENV,
            "; or add --cusafe-no-instrument for a plain build",
        )
    }

    /// The runtime library.
    pub fn runtime(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(RT_ENV, RT_NAME)? {
            if path.file_name() != Some(RT_NAME.as_ref()) {
                return Err(LocateError::BadRuntimeName { var: RT_ENV, path });
            }
            return Ok(path);
        }
        self.beside_exe(RT_NAME, RT_ENV, "")
    }

    /// The fuzz archive (`--cusafe-fuzz` links it).
    pub fn fuzz_lib(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(FUZZ_LIB_ENV, FUZZ_LIB_NAME)? {
            return Ok(path);
        }
        self.beside_exe(
            FUZZ_LIB_NAME,
            FUZZ_LIB_ENV,
            "; build it with `cargo build --release -p cusafe-fuzz-rt`",
        )
    }

    /// The directory holding `cusafe/fuzz.h`.
    pub fn fuzz_include(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(FUZZ_INCLUDE_ENV, "fuzz header directory")? {
            return Ok(path);
        }
        let found = self
            .exe_dir
            .ancestors()
            .map(|a| a.join("fuzz-rt/include"))
            .chain(std::iter::once(self.sibling("include")))
            .find(|d| d.join("cusafe/fuzz.h").is_file());
        found.ok_or_else(|| LocateError::Library {
            name: "cusafe/fuzz.h",
            var: FUZZ_INCLUDE_ENV,
            tried: format!(
                "fuzz-rt/include in every ancestor of {}, {}",
                self.exe_dir.display(),
                self.sibling("include").display()
            ),
            hint: "",
        })
    }

    /// The ASan defaults archive (links with `-fsanitize=address` take it).
    pub fn asan_defaults(&self) -> Result<PathBuf, LocateError> {
        if let Some(path) = override_path(ASAN_DEFAULTS_ENV, ASAN_DEFAULTS_NAME)? {
            return Ok(path);
        }
        self.beside_exe(
            ASAN_DEFAULTS_NAME,
            ASAN_DEFAULTS_ENV,
            "; build it with `cargo build --release -p cusafe-asan-defaults`, or add \
             --cusafe-no-asan-defaults and set protect_shadow_gap=0 yourself (docs/cli.md)",
        )
    }

    /// `<exe dir>/../<name>`, written without `..` when the exe dir has a parent.
    fn sibling(&self, name: &str) -> PathBuf {
        match self.exe_dir.parent() {
            Some(parent) => parent.join(name),
            None => self.exe_dir.join("..").join(name),
        }
    }

    fn beside_exe(
        &self,
        name: &'static str,
        var: &'static str,
        hint: &'static str,
    ) -> Result<PathBuf, LocateError> {
        let candidates = [self.exe_dir.join(name), self.sibling("lib").join(name)];
        if let Some(found) = candidates.iter().find(|c| c.exists()) {
            return Ok(found.clone());
        }
        let tried = candidates
            .iter()
            .map(|c| c.display().to_string())
            .collect::<Vec<_>>()
            .join(", ");
        Err(LocateError::Library {
            name,
            var,
            tried,
            hint,
        })
    }
}

/// The lookups `cusafe-clang++` makes to plan its clang++ command
/// ([`crate::clangxx::CommandLine::plan`]). [`Locator`] is the real one; each method is
/// called only when the invocation needs that piece.
pub trait Lookup {
    /// The clang++ to drive ([`Locator::clang`]).
    fn clang(&self) -> Result<PathBuf, LocateError>;
    /// The CUDA tree ([`Locator::cuda_tree`]).
    fn cuda_tree(&self) -> Result<PathBuf, LocateError>;
    /// Checks that a CUDA tree holds what `needs` ask for ([`check_cuda_tree`]).
    fn check_cuda_tree(&self, tree: &Path, needs: &[Need]) -> Result<(), LocateError> {
        check_cuda_tree(tree, needs)
    }
    /// The pass plugin ([`Locator::pass_plugin`]).
    fn pass_plugin(&self) -> Result<PathBuf, LocateError>;
    /// The runtime ([`Locator::runtime`]).
    fn runtime(&self) -> Result<PathBuf, LocateError>;
    /// The fuzz archive ([`Locator::fuzz_lib`]).
    fn fuzz_lib(&self) -> Result<PathBuf, LocateError>;
    /// The fuzz header directory ([`Locator::fuzz_include`]).
    fn fuzz_include(&self) -> Result<PathBuf, LocateError>;
    /// The ASan defaults archive ([`Locator::asan_defaults`]).
    fn asan_defaults(&self) -> Result<PathBuf, LocateError>;
}

impl Lookup for Locator {
    fn clang(&self) -> Result<PathBuf, LocateError> {
        Locator::clang(self)
    }
    fn cuda_tree(&self) -> Result<PathBuf, LocateError> {
        Locator::cuda_tree(self)
    }
    fn pass_plugin(&self) -> Result<PathBuf, LocateError> {
        Locator::pass_plugin(self)
    }
    fn runtime(&self) -> Result<PathBuf, LocateError> {
        Locator::runtime(self)
    }
    fn fuzz_lib(&self) -> Result<PathBuf, LocateError> {
        Locator::fuzz_lib(self)
    }
    fn fuzz_include(&self) -> Result<PathBuf, LocateError> {
        Locator::fuzz_include(self)
    }
    fn asan_defaults(&self) -> Result<PathBuf, LocateError> {
        Locator::asan_defaults(self)
    }
}

/// Reads an override variable: unset or empty means "not overridden".
fn override_path(var: &'static str, what: &'static str) -> Result<Option<PathBuf>, LocateError> {
    match env_nonempty(var) {
        None => Ok(None),
        Some(value) => {
            let path = PathBuf::from(value);
            if path.exists() {
                Ok(Some(path))
            } else {
                Err(LocateError::BadOverride { var, path, what })
            }
        }
    }
}

/// The value of an environment variable, treating an empty value as unset.
pub fn env_nonempty(var: &str) -> Option<OsString> {
    std::env::var_os(var).filter(|v| !v.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bundle_layout_is_found_without_overrides() {
        let root = std::env::temp_dir().join(format!("cusafe-locate-{}", std::process::id()));
        let bin = root.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::create_dir_all(root.join("lib")).unwrap();
        std::fs::create_dir_all(root.join("cuda")).unwrap();
        std::fs::write(root.join("lib").join(PLUGIN_NAME), b"").unwrap();
        std::fs::write(bin.join(RT_NAME), b"").unwrap();
        std::fs::write(root.join("lib").join(ASAN_DEFAULTS_NAME), b"").unwrap();
        let loc = Locator::for_exe(&bin.join("cusafe-clang++"));
        if std::env::var_os(ASAN_DEFAULTS_ENV).is_none() {
            assert_eq!(
                loc.asan_defaults().unwrap(),
                root.join("lib").join(ASAN_DEFAULTS_NAME)
            );
        }
        // Only meaningful when no override and no ancestor .toolchain/cuda interferes.
        if std::env::var_os(PLUGIN_ENV).is_none() {
            assert_eq!(
                loc.pass_plugin().unwrap(),
                root.join("lib").join(PLUGIN_NAME)
            );
        }
        if std::env::var_os(RT_ENV).is_none() {
            assert_eq!(loc.runtime().unwrap(), bin.join(RT_NAME));
        }
        if std::env::var_os(CUDA_PATH_ENV).is_none()
            && !root.ancestors().any(|a| a.join(".toolchain/cuda").is_dir())
        {
            assert_eq!(loc.cuda_tree().unwrap(), root.join("cuda"));
        }
        std::fs::remove_dir_all(&root).unwrap();
    }

    #[test]
    fn missing_cuda_piece_names_the_fix() {
        let root = std::env::temp_dir().join(format!("cusafe-tree-{}", std::process::id()));
        std::fs::create_dir_all(root.join("include")).unwrap();
        std::fs::write(root.join("include/cuda_runtime.h"), b"").unwrap();
        let err = check_cuda_tree(&root, &[Need::Compile]).unwrap_err();
        assert!(err.to_string().contains("bin/ptxas"), "{err}");
        assert!(err.to_string().contains("scripts/setup.sh"), "{err}");
        // Link needs only cudart.
        let err = check_cuda_tree(&root, &[Need::Link]).unwrap_err();
        assert!(err.to_string().contains("lib64/libcudart.so"), "{err}");
        std::fs::remove_dir_all(&root).unwrap();
    }
}
