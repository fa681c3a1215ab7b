//! What `cusafe-nvcc` does outside the mapping: finds `cusafe-clang++` beside itself,
//! runs it (or prints it), asks the machine for its GPUs (`-arch=native`) and reads the
//! CUDA version of cusafe's tree (`--version`).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use super::arch::Native;
use super::map::Context;
use super::Error;
use crate::locate::Locator;
use crate::shell;

/// The driver's names beside `cusafe-nvcc`: the symlink scripts/link-fatbinary.sh makes,
/// then the name cargo builds.
const DRIVER_NAMES: &[&str] = &["cusafe-clang++", "cusafe-clangxx"];

/// The machine, as [`Context`] sees it: the toolchain found from the running executable.
pub struct Machine {
    /// Finds clang and the CUDA tree.
    pub locator: Locator,
}

impl Native for Machine {
    /// Runs clang's `nvptx-arch` (beside clang++), which lists the GPUs of this machine
    /// through the CUDA driver.
    fn native_archs(&self) -> Result<Vec<String>, String> {
        let clang = self.locator.clang().map_err(|e| e.to_string())?;
        let tool = clang.with_file_name("nvptx-arch");
        let out = Command::new(&tool)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", tool.display()))?;
        let archs: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(str::trim)
            .filter(|l| l.starts_with("sm_"))
            .map(str::to_owned)
            .collect();
        if archs.is_empty() {
            let said = String::from_utf8_lossy(&out.stderr)
                .trim()
                .replace('\n', " ");
            let said = if said.is_empty() {
                "nothing".to_owned()
            } else {
                said
            };
            return Err(format!("{} found no GPU: {said}", tool.display()));
        }
        Ok(archs)
    }
}

impl Context for Machine {
    fn cuda_include(&self) -> Option<PathBuf> {
        let include = self.locator.cuda_tree().ok()?.join("include");
        include.is_dir().then_some(include)
    }
}

/// `cusafe-clang++` beside the running executable (symlinks resolved, so a `nvcc`
/// symlink to `cusafe-nvcc` in `PATH` works).
pub fn find() -> Result<PathBuf, Error> {
    let exe = std::env::current_exe()
        .and_then(|e| e.canonicalize())
        .map_err(|e| {
            Error::new(
                "cusafe-nvcc",
                format!("cannot tell where this executable lives ({e})"),
                "run it by its path",
            )
        })?;
    let dir = exe.parent().unwrap_or(Path::new("/"));
    let candidates: Vec<PathBuf> = DRIVER_NAMES.iter().map(|n| dir.join(n)).collect();
    candidates.iter().find(|c| c.is_file()).cloned().ok_or_else(|| {
        let tried: Vec<String> = candidates.iter().map(|c| c.display().to_string()).collect();
        Error::new(
            "cusafe-clang++",
            format!("not found beside cusafe-nvcc (looked at {})", tried.join(", ")),
            "run `cargo build --release -p cusafe-cli` (and scripts/link-fatbinary.sh), or install cusafe-nvcc beside cusafe-clang++",
        )
    })
}

/// The command as nvcc's `--dryrun` and `-v` print it: `#$ ` and the words, quoted.
pub fn display(driver: &Path, args: &[String]) -> String {
    let words = std::iter::once(driver.as_os_str()).chain(args.iter().map(|a| a.as_ref()));
    format!("#$ {}", shell::join(words))
}

/// Replaces this process with the driver; returns only if that fails.
pub fn exec(driver: &Path, args: &[String]) -> Error {
    let err = Command::new(driver).args(args).exec();
    Error::new(
        &driver.display().to_string(),
        format!("cannot run it ({err})"),
        "check the installation (cusafe doctor)",
    )
}

/// `--dryrun`'s second line: the clang++ command the driver would run, from its
/// `--cusafe-print-command`, written to `err` as `#$ ...`. The driver's own errors
/// pass through with its exit status.
pub fn print_clang_command(
    driver: &Path,
    args: &[String],
    err: &mut impl Write,
) -> Result<ExitCode, Error> {
    let out = Command::new(driver)
        .arg("--cusafe-print-command")
        .args(args)
        .output()
        .map_err(|e| {
            Error::new(
                &driver.display().to_string(),
                format!("cannot run it ({e})"),
                "check the installation (cusafe doctor)",
            )
        })?;
    let write = |e: std::io::Error| {
        Error::new(
            "stderr",
            format!("cannot write ({e})"),
            "check where stderr goes",
        )
    };
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        writeln!(err, "#$ {line}").map_err(write)?;
    }
    err.write_all(&out.stderr).map_err(write)?;
    Ok(match out.status.code() {
        Some(0) => ExitCode::SUCCESS,
        Some(code) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        None => ExitCode::FAILURE,
    })
}

/// nvcc's version line for the CUDA tree `tree` (`Cuda compilation tools, release
/// 12.5, V12.5.82`), the line tools such as CMake's FindCUDAToolkit read: from
/// `version.json` (`cuda_nvcc`'s version, else `cuda`'s) if the tree has one, else from
/// `bin/ptxas --version`, which prints the same line.
pub fn cuda_version_line(tree: &Path) -> Result<String, Error> {
    if let Ok(text) = std::fs::read_to_string(tree.join("version.json")) {
        let json: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
            Error::new(
                &tree.join("version.json").display().to_string(),
                format!("not JSON ({e})"),
                "reinstall the CUDA tree (scripts/setup.sh)",
            )
        })?;
        let version = ["cuda_nvcc", "cuda"]
            .iter()
            .find_map(|key| json.get(key)?.get("version")?.as_str());
        if let Some(line) = version.and_then(release_line) {
            return Ok(line);
        }
    }
    let ptxas = tree.join("bin/ptxas");
    let out = Command::new(&ptxas).arg("--version").output();
    let text = out
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    text.lines()
        .find(|l| l.starts_with("Cuda compilation tools, release "))
        .map(str::to_owned)
        .ok_or_else(|| {
            Error::new(
                &tree.display().to_string(),
                "cannot tell its CUDA version (no version.json with a version, and bin/ptxas --version printed no release line)",
                "run scripts/setup.sh, or set CUSAFE_CUDA_PATH to a CUDA tree",
            )
        })
}

/// `Cuda compilation tools, release X.Y, VX.Y.Z` for a version `X.Y.Z`.
fn release_line(version: &str) -> Option<String> {
    let mut parts = version.split('.');
    let (major, minor) = (parts.next()?, parts.next()?);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(major) && numeric(minor))
        .then(|| format!("Cuda compilation tools, release {major}.{minor}, V{version}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn version_line_from_version_json() {
        let dir = std::env::temp_dir().join(format!("cusafe-nvcc-version-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let json = dir.join("version.json");
        std::fs::write(
            &json,
            r#"{"cuda": {"version": "12.5.1"}, "cuda_nvcc": {"version": "12.5.82"}}"#,
        )
        .unwrap();
        assert_eq!(
            cuda_version_line(&dir).unwrap(),
            "Cuda compilation tools, release 12.5, V12.5.82"
        );
        std::fs::write(&json, r#"{"cuda": {"version": "12.4.0"}}"#).unwrap();
        assert_eq!(
            cuda_version_line(&dir).unwrap(),
            "Cuda compilation tools, release 12.4, V12.4.0"
        );
        // Nothing usable: an error naming the tree, not a panic.
        std::fs::write(&json, r#"{"cuda": {"version": "twelve"}}"#).unwrap();
        let err = cuda_version_line(&dir).unwrap_err().to_string();
        assert!(err.contains("cannot tell its CUDA version"), "{err}");
        std::fs::write(&json, "{").unwrap();
        assert!(cuda_version_line(&dir)
            .unwrap_err()
            .to_string()
            .contains("not JSON"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
