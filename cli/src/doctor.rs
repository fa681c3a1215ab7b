//! `cusafe doctor`: checks that everything cusafe needs is in place and says how to fix
//! what is not.
//!
//! Needed (a missing one makes the exit status 1): clang++ 19, the CUDA tree and its
//! pieces (headers, ptxas, libdevice, fatbinary, libnvfatbin, libcudart), the pass plugin
//! and the runtime. Shown as `ok`, or for information when absent: the pieces only some
//! builds need (the fuzz archive and header, the ASan defaults archive of
//! `-fsanitize=address` links). Shown for information only: the GPU (via nvidia-smi) and
//! a note on the driver's virtual memory management API, which the runtime relies on.

use std::io::Write;
use std::path::Path;
use std::process::Command;

use crate::fatbinary::NVFATBIN_ENV;
use crate::locate::{env_nonempty, Locator, CUDA_PIECES};

/// How a check came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Present.
    Ok,
    /// Needed and missing (the detail says how to fix it).
    Missing,
    /// Not needed to build; shown for information.
    Info,
}

/// One line of the report.
#[derive(Debug, Clone)]
pub struct Check {
    /// The outcome.
    pub status: Status,
    /// What was checked.
    pub what: String,
    /// Where it was found, or what is wrong and how to fix it.
    pub detail: String,
}

impl Check {
    fn new(status: Status, what: impl Into<String>, detail: impl Into<String>) -> Self {
        Self {
            status,
            what: what.into(),
            detail: detail.into(),
        }
    }
}

/// Runs every check.
pub fn run_checks(locator: &Locator) -> Vec<Check> {
    let mut checks = vec![check_clang(locator)];
    checks.extend(check_cuda(locator));
    checks.push(match locator.pass_plugin() {
        Ok(p) => Check::new(Status::Ok, "pass plugin", p.display().to_string()),
        Err(e) => Check::new(Status::Missing, "pass plugin", e.to_string()),
    });
    checks.push(match locator.runtime() {
        Ok(p) => Check::new(Status::Ok, "runtime", p.display().to_string()),
        Err(e) => Check::new(Status::Missing, "runtime", e.to_string()),
    });
    // Needed only by some builds: a missing piece is information, not a failure.
    for (what, found, only) in [
        ("fuzz archive", locator.fuzz_lib(), "--cusafe-fuzz builds"),
        (
            "fuzz header",
            locator.fuzz_include(),
            "--cusafe-fuzz builds",
        ),
        (
            "ASan defaults",
            locator.asan_defaults(),
            "-fsanitize=address builds",
        ),
    ] {
        checks.push(match found {
            Ok(p) => Check::new(Status::Ok, what, p.display().to_string()),
            Err(e) => Check::new(Status::Info, what, format!("needed only by {only}: {e}")),
        });
    }
    checks.push(check_gpu());
    checks.push(Check::new(
        Status::Info,
        "VMM",
        "libcusafe_rt.so allocates through the driver's virtual memory management API \
         (cuMemAddressReserve/cuMemCreate/cuMemMap, one 2 TiB window per size class); the GPU \
         and driver must support it, which is checked when a program starts, not here",
    ));
    checks
}

/// True when no needed piece is missing.
pub fn all_present(checks: &[Check]) -> bool {
    checks.iter().all(|c| c.status != Status::Missing)
}

/// Prints the checks, one per line: `ok`/`MISSING`/`info`, what, detail.
pub fn print(checks: &[Check], out: &mut impl Write) -> std::io::Result<()> {
    for check in checks {
        let tag = match check.status {
            Status::Ok => "ok",
            Status::Missing => "MISSING",
            Status::Info => "info",
        };
        writeln!(out, "{tag:<8} {:<32} {}", check.what, check.detail)?;
    }
    if all_present(checks) {
        writeln!(out, "everything cusafe needs is in place")
    } else {
        writeln!(out, "some needed pieces are missing: see the MISSING lines")
    }
}

fn check_clang(locator: &Locator) -> Check {
    let clang = match locator.clang() {
        Ok(c) => c,
        Err(e) => return Check::new(Status::Missing, "clang-19", e.to_string()),
    };
    let version = Command::new(&clang)
        .arg("--version")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .unwrap_or("")
                .to_owned()
        });
    match version {
        Some(v) if v.contains("version 19.") => {
            Check::new(Status::Ok, "clang-19", format!("{} ({v})", clang.display()))
        }
        Some(v) => Check::new(
            Status::Missing,
            "clang-19",
            format!(
                "{} is not clang 19 ('{v}'): run scripts/setup.sh, or set CUSAFE_CLANG to a clang++ 19",
                clang.display()
            ),
        ),
        None => Check::new(
            Status::Missing,
            "clang-19",
            format!(
                "{} --version failed: reinstall clang-19 (scripts/setup.sh), or set CUSAFE_CLANG",
                clang.display()
            ),
        ),
    }
}

fn check_cuda(locator: &Locator) -> Vec<Check> {
    let tree = match locator.cuda_tree() {
        Ok(t) => t,
        Err(e) => return vec![Check::new(Status::Missing, "CUDA tree", e.to_string())],
    };
    let mut checks = vec![Check::new(
        Status::Ok,
        "CUDA tree",
        tree.display().to_string(),
    )];
    for piece in CUDA_PIECES {
        let what = format!("  {}", piece.rel);
        let path = tree.join(piece.rel);
        if piece.rel.ends_with("libnvfatbin.so.12") {
            if let Some(lib) = env_nonempty(NVFATBIN_ENV) {
                let status = if Path::new(&lib).exists() {
                    Status::Ok
                } else {
                    Status::Missing
                };
                let detail = format!("{NVFATBIN_ENV}={} (used instead)", lib.to_string_lossy());
                checks.push(Check::new(status, what, detail));
                continue;
            }
        }
        let check = if path.exists() {
            let shown = path.canonicalize().unwrap_or(path);
            Check::new(Status::Ok, what, shown.display().to_string())
        } else {
            Check::new(
                Status::Missing,
                what,
                format!("{} missing: {}", path.display(), piece.fix),
            )
        };
        checks.push(check);
    }
    checks
}

fn check_gpu() -> Check {
    let output = Command::new("nvidia-smi")
        .args(["--query-gpu=name,driver_version", "--format=csv,noheader"])
        .output();
    match output {
        Ok(o) if o.status.success() => {
            let gpus = String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty())
                .collect::<Vec<_>>()
                .join("; ");
            Check::new(Status::Info, "GPU", format!("{gpus} (name, driver)"))
        }
        Ok(o) => {
            Check::new(
                Status::Info,
                "GPU",
                format!(
                "nvidia-smi failed ({}): no usable GPU here; building works, running needs a GPU",
                String::from_utf8_lossy(&o.stderr).lines().next().unwrap_or("no message")
            ),
            )
        }
        Err(_) => Check::new(
            Status::Info,
            "GPU",
            "no nvidia-smi: no GPU here; building works, run the programs on a GPU machine",
        ),
    }
}
