//! The compile-time half of the launch-resource help: `cusafe-fatbinary` reads each
//! cubin it packs, and for an instrumented one (it has `__cusafe` symbols) finds every
//! kernel that uses more than 64 registers per thread and declares no launch bounds: a
//! block of 1024 threads (or fewer, the more registers) then cannot launch ("too many
//! resources requested for launch"), and the checks are what takes the registers a
//! plain build does not. Run under `cusafe-clang++` (which sets [`REPORT_ENV`]) it
//! writes them to a file; `cusafe-clang++` then compiles the device code once more
//! without instrumentation to name the plain build's count in the warning. The
//! runtime's half explains a launch that failed so (`runtime-preload`,
//! `runtime/resources.rs`).
//!
//! Read from the cubin's `.nv.info` sections (attribute records: a format byte, an
//! attribute byte, then a 16-bit value or a 16-bit size and that many bytes):
//! `EIATTR_REGCOUNT` (symbol index and registers) in the global section, and per kernel
//! `EIATTR_KPARAM_INFO` (it is a kernel) and `EIATTR_MAX_THREADS` (`__launch_bounds__`).

use std::collections::{HashMap, HashSet};

use object::read::elf::ElfFile64;
use object::{Object, ObjectSection, ObjectSymbol, SymbolIndex};

/// Registers per thread above which a block of 1024 threads cannot launch.
pub const REGISTER_LIMIT: u32 = 64;
const EIATTR_MAX_THREADS: u8 = 0x05;
const EIATTR_KPARAM_INFO: u8 = 0x17;
const EIATTR_REGCOUNT: u8 = 0x2f;
/// Registers of a block on every GPU cusafe supports (sm_70 and newer).
const BLOCK_REGISTERS: u32 = 65536;

/// Where `cusafe-fatbinary` writes the kernels to warn about instead of warning itself
/// (one `MANGLED REGISTERS` line each): set by `cusafe-clang++`, which warns after the
/// compile with the plain build's counts.
pub const REPORT_ENV: &str = "CUSAFE_RESOURCE_REPORT";

/// A kernel the warning is about.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Heavy {
    /// Its symbol.
    pub mangled: String,
    /// Registers per thread in the instrumented build.
    pub registers: u32,
    /// Registers per thread in the plain build, when it was compiled.
    pub plain: Option<u32>,
}

impl Heavy {
    /// The most threads a block of this kernel can have: a thread's registers are
    /// rounded up to a multiple of 8, and a block's warps are spread over the 4
    /// partitions of the register file, each holding a quarter of the block's registers.
    /// Checked on an H100: 152 registers give 384 (`cudaFuncGetAttributes`).
    pub fn max_threads(&self) -> u32 {
        let per_warp = self.registers.div_ceil(8) * 8 * 32;
        ((BLOCK_REGISTERS / 4 / per_warp.max(1)) * 4 * 32).min(1024)
    }

    /// Its name, demangled.
    pub fn kernel(&self) -> String {
        demangle(&self.mangled)
    }

    /// The warning, one line.
    pub fn warning(&self) -> String {
        let plain = match self.plain {
            Some(n) => format!(" (the plain build: {n})"),
            None => String::new(),
        };
        format!(
            "cusafe-clang++: warning: kernel {} uses {} registers per thread in this cusafe \
             build{plain} and declares no __launch_bounds__: a launch of more than {} threads \
             per block fails with \"too many resources requested for launch\". Give it \
             __launch_bounds__(THREADS_PER_BLOCK), or build with -Xcuda-ptxas \
             -maxrregcount={REGISTER_LIMIT}",
            self.kernel(),
            self.registers,
            self.max_threads()
        )
    }

    /// Its line in the [`REPORT_ENV`] file.
    pub fn report_line(&self) -> String {
        format!("{} {}\n", self.mangled, self.registers)
    }

    /// Reads a [`REPORT_ENV`] file's lines (unreadable lines are skipped).
    pub fn read_report(text: &str) -> Vec<Heavy> {
        text.lines()
            .filter_map(|l| {
                let (mangled, registers) = l.rsplit_once(' ')?;
                Some(Heavy {
                    mangled: mangled.to_owned(),
                    registers: registers.parse().ok()?,
                    plain: None,
                })
            })
            .collect()
    }
}

/// `name` demangled (itself when it is not a mangled C++ name).
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_owned())
}

/// The attribute records of an `.nv.info` section: (attribute, value bytes). Stops at
/// a record it cannot read.
fn records(data: &[u8]) -> Vec<(u8, &[u8])> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 4 <= data.len() {
        let (format, attribute) = (data[at], data[at + 1]);
        let word = &data[at + 2..at + 4];
        match format {
            // A 16-bit value.
            3 => {
                out.push((attribute, word));
                at += 4;
            }
            // A size, then that many bytes.
            4 => {
                let size = usize::from(u16::from_le_bytes([word[0], word[1]]));
                let Some(value) = data.get(at + 4..at + 4 + size) else {
                    break;
                };
                out.push((attribute, value));
                at += 4 + size;
            }
            _ => break,
        }
    }
    out
}

fn u32_at(b: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(at..at + 4)?.try_into().ok()?))
}

/// What a cubin's `.nv.info` sections say about its kernels.
#[derive(Default)]
struct Info {
    /// Registers per thread of every function, by symbol.
    registers: HashMap<String, u32>,
    /// The kernels (functions with parameter info).
    kernels: HashSet<String>,
    /// The kernels with `__launch_bounds__`.
    bounded: HashSet<String>,
    /// It has `__cusafe` symbols: an instrumented build.
    instrumented: bool,
}

/// Reads a cubin; `None` for a file that is not one.
fn info(cubin: &[u8]) -> Option<Info> {
    let file = ElfFile64::<object::Endianness>::parse(cubin).ok()?;
    let mut out = Info {
        instrumented: file
            .symbols()
            .any(|s| s.name().is_ok_and(|n| n.starts_with("__cusafe"))),
        ..Info::default()
    };
    for section in file.sections() {
        let (Ok(name), Ok(data)) = (section.name(), section.data()) else {
            continue;
        };
        if name == ".nv.info" {
            for (attribute, value) in records(data) {
                if let (EIATTR_REGCOUNT, Some(symbol), Some(count)) =
                    (attribute, u32_at(value, 0), u32_at(value, 4))
                {
                    let name = file
                        .symbol_by_index(SymbolIndex(symbol as usize))
                        .and_then(|s| s.name().map(str::to_owned));
                    if let Ok(name) = name {
                        out.registers.insert(name, count);
                    }
                }
            }
        } else if let Some(function) = name.strip_prefix(".nv.info.") {
            for (attribute, _) in records(data) {
                match attribute {
                    EIATTR_KPARAM_INFO => out.kernels.insert(function.to_owned()),
                    EIATTR_MAX_THREADS => out.bounded.insert(function.to_owned()),
                    _ => false,
                };
            }
        }
    }
    Some(out)
}

/// The kernels of `cubin` to warn about; none for a plain build or a file that is not
/// a cubin.
pub fn heavy_kernels(cubin: &[u8]) -> Vec<Heavy> {
    let Some(info) = info(cubin).filter(|i| i.instrumented) else {
        return Vec::new();
    };
    let mut out: Vec<Heavy> = info
        .registers
        .into_iter()
        .filter(|(name, count)| {
            *count > REGISTER_LIMIT && info.kernels.contains(name) && !info.bounded.contains(name)
        })
        .map(|(mangled, registers)| Heavy {
            mangled,
            registers,
            plain: None,
        })
        .collect();
    out.sort_by_key(|h| h.kernel());
    out
}

/// Registers per thread of each kernel of an instrumented `cubin`, by symbol (empty for
/// a plain build or a file that is not a cubin).
pub fn instrumented_registers(cubin: &[u8]) -> HashMap<String, u32> {
    match info(cubin) {
        Some(i) if i.instrumented => kernel_registers(cubin),
        _ => HashMap::new(),
    }
}

/// Registers per thread of each kernel of `cubin`, by symbol (empty for a file that is
/// not a cubin).
pub fn kernel_registers(cubin: &[u8]) -> HashMap<String, u32> {
    let Some(info) = info(cubin) else {
        return HashMap::new();
    };
    info.registers
        .into_iter()
        .filter(|(name, _)| info.kernels.contains(name))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_values_and_sized_payloads_and_stop_at_unknown_formats() {
        let data = [
            4, 0x2f, 8, 0, 0x7a, 0, 0, 0, 0x98, 0, 0, 0, // REGCOUNT: symbol 0x7a, 152
            3, 0x1b, 0xff, 0, // a 16-bit value
            9, 1, 2, 3, // unknown format: stop
            3, 0x1b, 1, 0,
        ];
        let r = records(&data);
        assert_eq!(r.len(), 2);
        assert_eq!((r[0].0, u32_at(r[0].1, 4)), (0x2f, Some(152)));
        assert_eq!(r[1], (0x1b, &[0xff, 0][..]));
        // A size running past the end stops too.
        assert!(records(&[4, 0x2f, 200, 0, 1]).is_empty());
    }

    #[test]
    fn the_block_limit_follows_the_register_count() {
        let h = |registers| Heavy {
            mangled: "_Z1kv".into(),
            registers,
            plain: None,
        };
        assert_eq!(h(64).max_threads(), 1024);
        assert_eq!(h(65).max_threads(), 896);
        assert_eq!(h(152).max_threads(), 384);
        assert_eq!(h(255).max_threads(), 256);
        let w = h(152).warning();
        assert!(w.contains("kernel k() uses 152 registers"), "{w}");
        assert!(!w.contains("plain build"), "{w}");
        let w = Heavy {
            plain: Some(40),
            ..h(152)
        }
        .warning();
        assert!(
            w.contains("152 registers per thread in this cusafe build (the plain build: 40)"),
            "{w}"
        );
        assert!(w.contains("more than 384 threads"), "{w}");
        assert!(
            w.contains("__launch_bounds__") && w.contains("-maxrregcount=64"),
            "{w}"
        );
    }

    #[test]
    fn other_files_give_nothing() {
        assert!(heavy_kernels(b"not an ELF file").is_empty());
        assert!(heavy_kernels(&[]).is_empty());
        assert!(kernel_registers(b"not an ELF file").is_empty());
    }

    #[test]
    fn report_lines_read_back() {
        let h = Heavy {
            mangled: "_Z5heavyPfPKfi".into(),
            registers: 152,
            plain: None,
        };
        let text = format!("{}garbage\n_Z1kv many\n", h.report_line());
        assert_eq!(Heavy::read_report(&text), vec![h]);
    }
}
