//! NAME.ptxas.tsv: registers, stack and spill bytes per kernel and build, from the
//! `ptxas -v` output of each build (scripts/lib/ptxas.sh parses it).

use std::path::Path;

/// One kernel of one build.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Kernel {
    /// The build: plain, cusafe or noopt.
    pub build: String,
    /// The kernel's (mangled) name.
    pub kernel: String,
    /// Registers per thread.
    pub registers: u32,
    /// Stack frame bytes.
    pub stack_bytes: u32,
    /// Spill stores plus spill loads, bytes.
    pub spill_bytes: u32,
}

/// The most any kernel of one build uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Usage {
    /// Kernels in the build.
    pub kernels: usize,
    /// Registers of the kernel that uses the most.
    pub max_registers: u32,
    /// Largest stack frame, bytes.
    pub max_stack_bytes: u32,
    /// Largest spill (stores plus loads) of any kernel, bytes.
    pub max_spill_bytes: u32,
}

/// Parses a ptxas.tsv (header `build kernel registers stack_bytes spill_bytes`).
pub fn parse(tsv: &str) -> Result<Vec<Kernel>, String> {
    let mut out = Vec::new();
    for (i, line) in tsv.lines().enumerate() {
        if line.trim().is_empty() || (i == 0 && line.starts_with("build\t")) {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        let num = |k: usize| -> Result<u32, String> {
            let s = f.get(k).copied().unwrap_or("");
            s.trim()
                .parse()
                .map_err(|_| format!("line {}: '{s}' is not a count: {line}", i + 1))
        };
        if f.len() < 5 {
            return Err(format!("line {}: expected 5 columns: {line}", i + 1));
        }
        out.push(Kernel {
            build: f[0].to_string(),
            kernel: f[1].to_string(),
            registers: num(2)?,
            stack_bytes: num(3)?,
            spill_bytes: num(4)?,
        });
    }
    Ok(out)
}

/// The maxima over `build`'s kernels; `None` when it has none.
pub fn usage(kernels: &[Kernel], build: &str) -> Option<Usage> {
    let mine: Vec<&Kernel> = kernels.iter().filter(|k| k.build == build).collect();
    if mine.is_empty() {
        return None;
    }
    Some(Usage {
        kernels: mine.len(),
        max_registers: mine.iter().map(|k| k.registers).max().unwrap_or(0),
        max_stack_bytes: mine.iter().map(|k| k.stack_bytes).max().unwrap_or(0),
        max_spill_bytes: mine.iter().map(|k| k.spill_bytes).max().unwrap_or(0),
    })
}

/// Reads a ptxas.tsv; an empty list when it does not exist.
pub fn load(path: &Path) -> Result<Vec<Kernel>, String> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}
