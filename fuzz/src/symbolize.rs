//! Host frames to function and file:line, from the target's own DWARF (addr2line), so
//! that ASan findings dedup and read well without an `llvm-symbolizer` on the machine.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use object::{Object, ObjectKind};

/// A resolved frame.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Location {
    /// Function name (demangled when possible).
    pub function: String,
    /// Source file.
    pub file: String,
    /// Line.
    pub line: u32,
}

impl Location {
    /// A frame of a sanitizer or fuzzing runtime rather than of the program.
    pub fn is_runtime(&self) -> bool {
        let f = &self.function;
        let file = &self.file;
        f.starts_with("__asan")
            || f.starts_with("__sanitizer")
            || f.starts_with("__interceptor")
            || f.starts_with("__interception")
            || f.starts_with("cusafe_fuzz")
            || f.contains("cusafe_fuzz::")
            || f.starts_with("_ZN11cusafe_fuzz")
            || f.starts_with("_ZN3std")
            || f.starts_with("_ZN4core")
            || f.starts_with("_ZN5alloc")
            || f.starts_with("__libc")
            || f == "backtrace"
            || f.starts_with("std::")
            || f.starts_with("core::")
            || file.contains("compiler-rt")
            || file.contains("/rustc/")
            || file.contains("fuzz-rt/src")
            || (file.is_empty() && f.is_empty())
    }
}

struct Loaded {
    loader: addr2line::Loader,
    is_exec: bool,
}

/// Caches one loader per binary.
#[derive(Default)]
pub struct Symbolizer {
    loaded: HashMap<PathBuf, Option<Loaded>>,
}

impl std::fmt::Debug for Symbolizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Symbolizer({} binaries)", self.loaded.len())
    }
}

impl Symbolizer {
    /// The location of `offset` (from the module's load base) or `pc` (absolute, for
    /// non-PIE executables) in `binary`.
    pub fn locate(&mut self, binary: &Path, offset: u64, pc: u64) -> Option<Location> {
        let entry = self.loaded.entry(binary.to_path_buf()).or_insert_with(|| {
            let is_exec = std::fs::read(binary)
                .ok()
                .and_then(|b| {
                    object::File::parse(&*b)
                        .ok()
                        .map(|f| f.kind() == ObjectKind::Executable)
                })
                .unwrap_or(false);
            addr2line::Loader::new(binary)
                .ok()
                .map(|loader| Loaded { loader, is_exec })
        });
        let l = entry.as_ref()?;
        let addr = if l.is_exec { pc } else { offset };
        let function = l
            .loader
            .find_frames(addr)
            .ok()
            .and_then(|mut frames| {
                // The innermost frame: the function whose line find_location gives.
                let fr = frames.next().ok().flatten()?;
                fr.function
                    .and_then(|f| f.demangle().ok().map(|s| s.into_owned()))
            })
            .or_else(|| l.loader.find_symbol(addr).map(str::to_string))
            .unwrap_or_default();
        let (file, line) = l
            .loader
            .find_location(addr)
            .ok()
            .flatten()
            .map(|loc| (loc.file.unwrap_or("").to_string(), loc.line.unwrap_or(0)))
            .unwrap_or_default();
        Some(Location {
            function,
            file,
            line,
        })
    }
}
