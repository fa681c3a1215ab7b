//! What `cusafe run -v` says about a program before it starts: how it reaches CUDA
//! (shared cudart, static cudart, the driver API, or a loader decided at run time), whether
//! its kernels were built by `cusafe-clang++`, and so what cusafe can and cannot check.
//! Read off the file alone; nothing is run.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use object::elf;
use object::read::elf::ElfFile64;
use object::{Object, ObjectSymbol};

/// How a program reaches CUDA, as far as its file shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Route {
    /// Links the shared runtime (`libcudart.so.N`, named).
    SharedCudart(String),
    /// Contains the static runtime (nvcc's and CMake's default).
    StaticCudart,
    /// Links the driver library directly.
    Driver,
    /// Names libcuda but links neither library: it loads the driver at run time.
    LoadsDriver,
    /// Links no CUDA library (a script, or a program whose libraries load CUDA).
    Unseen,
}

/// What the file shows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Sight {
    /// The file looked at.
    pub path: PathBuf,
    /// For a script: its interpreter line.
    pub interpreter: Option<String>,
    /// How it reaches CUDA.
    pub route: Route,
    /// Whether it contains device code (a `.nv_fatbin` section).
    pub kernels: bool,
    /// Whether it was linked by `cusafe-clang++` (it references `__cusafe_rt_present`).
    pub instrumented: bool,
}

/// The file `program` names: itself when it has a slash, else the first match in `PATH`.
pub fn resolve(program: &OsStr) -> Option<PathBuf> {
    let p = Path::new(program);
    if p.components().count() > 1 {
        return Some(p.to_path_buf());
    }
    std::env::split_paths(&std::env::var_os("PATH")?)
        .map(|d| d.join(p))
        .find(|c| c.is_file())
}

/// Looks at the file at `path` (`None` when it cannot be read).
pub fn inspect(path: &Path) -> Option<Sight> {
    let data = std::fs::read(path).ok()?;
    let mut sight = Sight {
        path: path.to_path_buf(),
        interpreter: None,
        route: Route::Unseen,
        kernels: false,
        instrumented: false,
    };
    if let Some(rest) = data.strip_prefix(b"#!") {
        let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
        sight.interpreter = Some(String::from_utf8_lossy(line).trim().to_string());
        return Some(sight);
    }
    let Ok(file) = ElfFile64::<object::Endianness>::parse(&*data) else {
        return Some(sight);
    };
    let needed = needed_libraries(&file);
    let defines = |name: &str| {
        file.symbols()
            .chain(file.dynamic_symbols())
            .any(|s| s.is_definition() && s.name() == Ok(name))
    };
    sight.instrumented = file
        .symbols()
        .chain(file.dynamic_symbols())
        .any(|s| s.name() == Ok("__cusafe_rt_present"));
    sight.kernels = file.section_by_name(".nv_fatbin").is_some();
    sight.route = if let Some(lib) = needed.iter().find(|l| l.starts_with("libcudart.so")) {
        Route::SharedCudart(lib.clone())
    } else if defines("cudaMalloc") || defines("__cudaRegisterFatBinary") {
        Route::StaticCudart
    } else if needed.iter().any(|l| l.starts_with("libcuda.so")) {
        Route::Driver
    } else if contains(&data, b"libcuda.so") {
        Route::LoadsDriver
    } else {
        Route::Unseen
    };
    Some(sight)
}

/// The `DT_NEEDED` entries of an ELF file.
fn needed_libraries(file: &ElfFile64<object::Endianness>) -> Vec<String> {
    let Ok(table) = file.elf_dynamic_table() else {
        return Vec::new();
    };
    table
        .iter()
        .filter(|d| d.tag == elf::DT_NEEDED)
        .filter_map(|d| table.string(d).ok())
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    hay.windows(needle.len()).any(|w| w == needle)
}

impl Sight {
    /// The lines `cusafe run -v` prints, each starting `cusafe run: `.
    pub fn describe(&self) -> Vec<String> {
        let name = self.path.display();
        let how = match (&self.interpreter, &self.route) {
            (Some(i), _) => format!(
                "a script run by `{i}`: what it loads is seen when it calls CUDA (PyTorch, \
                 CuPy and JAX are covered through the driver)"
            ),
            (None, Route::SharedCudart(lib)) => format!("links the shared CUDA runtime ({lib})"),
            (None, Route::StaticCudart) => {
                "contains the static CUDA runtime (nvcc's default): seen through the driver"
                    .to_string()
            }
            (None, Route::Driver) => "calls the CUDA driver API (links libcuda)".to_string(),
            (None, Route::LoadsDriver) => {
                "loads the CUDA driver at run time: seen through the driver".to_string()
            }
            (None, Route::Unseen) => "links no CUDA library: if a library it loads calls CUDA, \
                                      that is seen at run time"
                .to_string(),
        };
        let mut lines = vec![format!("cusafe run: {name}: {how}")];
        lines.push(
            "cusafe run: checked: device allocations (cudaMalloc*, cudaMallocAsync, cuMemAlloc*) \
             get exact bounds; frees (double, interior, never allocated); the byte ranges of \
             cudaMemcpy*/cudaMemset* and the driver's copies and sets; leaks at exit"
                .to_string(),
        );
        let device = if self.instrumented {
            "kernels were built by cusafe-clang++: their accesses are checked too".to_string()
        } else if self.kernels {
            "not checked: accesses inside its kernels (out of bounds, use after free), which \
             need the compiler pass: rebuild with cusafe-clang++"
                .to_string()
        } else {
            "not checked: accesses inside kernels not built by cusafe-clang++".to_string()
        };
        lines.push(format!("cusafe run: {device}"));
        lines.push(
            "cusafe run: passed through unchecked: managed, pinned host and IPC memory, pools \
             the program creates, 3D copies and copies to CUDA arrays"
                .to_string(),
        );
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_names_its_interpreter() {
        let dir = std::env::temp_dir().join(format!("cusafe-inspect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("train.py");
        std::fs::write(&script, "#!/usr/bin/env python3\nimport torch\n").unwrap();
        let s = inspect(&script).unwrap();
        assert_eq!(s.interpreter.as_deref(), Some("/usr/bin/env python3"));
        assert!(s.describe()[0].contains("a script run by `/usr/bin/env python3`"));
    }

    #[test]
    fn a_program_without_cuda_is_unseen() {
        let sh = resolve(OsStr::new("sh")).unwrap();
        let s = inspect(&sh).unwrap();
        assert_eq!(s.route, Route::Unseen);
        assert!(!s.instrumented && !s.kernels);
        assert_eq!(s.describe().len(), 4);
    }
}
