//! Helpers shared by the CLI tests: temporary directories, fake toolchains and running
//! the real binaries with a clean cusafe environment.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Every variable the tools read; removed from each child's environment.
pub const CUSAFE_VARS: &[&str] = &[
    "CUSAFE_CLANG",
    "CUSAFE_CUDA_PATH",
    "CUSAFE_PASS_PLUGIN",
    "CUSAFE_RT_LIB",
    "CUSAFE_NVFATBIN",
    "CUSAFE_PASS_STATS",
    "CUSAFE_PASS_RECOVER",
    "CUSAFE_PASS_LAUNCH_BOUNDS",
    "CUSAFE_PASS_COVERAGE",
    "CUSAFE_PASS_CHECKS",
    "CUSAFE_PASS_LOOP_SETS",
    "CUSAFE_FUZZ_LIB",
    "CUSAFE_FUZZ_INCLUDE",
    "CUSAFE_ASAN_DEFAULTS_LIB",
    "LD_PRELOAD",
];

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(name: &str) -> Self {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "cusafe-cli-{name}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        Self(path.canonicalize().unwrap())
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes `contents` to `path`, creating parent directories.
pub fn write(path: &Path, contents: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, contents).unwrap();
}

/// Writes an executable shell script.
pub fn script(path: &Path, body: &str) {
    write(path, &format!("#!/bin/sh\n{body}\n"));
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// A fake toolchain: a clang++ that prints its arguments, a CUDA tree with empty stand-ins
/// for every piece, a pass plugin, a runtime and the ASan defaults archive (empty files).
pub struct FakeToolchain {
    /// Removes the files when the toolchain is dropped.
    _dir: TempDir,
    pub clang: PathBuf,
    pub cuda: PathBuf,
    pub plugin: PathBuf,
    pub rt: PathBuf,
    pub asan_defaults: PathBuf,
}

impl FakeToolchain {
    pub fn new(name: &str) -> Self {
        let dir = TempDir::new(name);
        let root = dir.path().to_path_buf();
        let clang = root.join("clang/clang++");
        script(
            &clang,
            r#"if [ "$1" = --version ]; then echo "fake clang version 19.1.7"; exit 0; fi
echo "stats=${CUSAFE_PASS_STATS:-unset}"
for a in "$@"; do echo "arg=$a"; done
exit 3"#,
        );
        let cuda = root.join("cuda");
        for piece in [
            "include/cuda_runtime.h",
            "bin/ptxas",
            "bin/fatbinary",
            "nvvm/libdevice/libdevice.10.bc",
            "lib64/libcudart.so",
            "lib64/libnvfatbin.so.12",
        ] {
            write(&cuda.join(piece), "");
        }
        let plugin = root.join("lib/libcusafe_pass.so");
        let rt = root.join("rt/libcusafe_rt.so");
        let asan_defaults = root.join("lib/libcusafe_asan_defaults.a");
        write(&plugin, "");
        write(&rt, "");
        write(&asan_defaults, "");
        Self {
            _dir: dir,
            clang,
            cuda,
            plugin,
            rt,
            asan_defaults,
        }
    }

    /// Sets the five override variables on `cmd`.
    pub fn apply(&self, cmd: &mut Command) {
        cmd.env("CUSAFE_CLANG", &self.clang)
            .env("CUSAFE_CUDA_PATH", &self.cuda)
            .env("CUSAFE_PASS_PLUGIN", &self.plugin)
            .env("CUSAFE_RT_LIB", &self.rt)
            .env("CUSAFE_ASAN_DEFAULTS_LIB", &self.asan_defaults);
    }
}

/// A command for one of this crate's binaries, with the cusafe variables removed.
pub fn tool(path: &str) -> Command {
    let mut cmd = Command::new(path);
    for var in CUSAFE_VARS {
        cmd.env_remove(var);
    }
    cmd
}

/// Runs and returns (status code, stdout, stderr); fails the test on a Rust panic.
///
/// A binary just copied or written (`copy_to_bundle`, `script`) can be "busy" for a
/// moment: a process another test forked while the file was open for writing holds the
/// descriptor until it execs (ETXTBSY); the start is retried then.
pub fn output(cmd: &mut Command) -> (i32, String, String) {
    let mut tries = 0;
    let Output {
        status,
        stdout,
        stderr,
    } = loop {
        match cmd.output() {
            Err(e) if e.kind() == std::io::ErrorKind::ExecutableFileBusy && tries < 50 => {
                tries += 1;
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            r => break r.expect("run tool"),
        }
    };
    let stdout = String::from_utf8_lossy(&stdout).into_owned();
    let stderr = String::from_utf8_lossy(&stderr).into_owned();
    assert!(!stderr.contains("panicked"), "tool panicked: {stderr}");
    (status.code().unwrap_or(-1), stdout, stderr)
}

/// Copies a binary into `<dir>/bin/` so it runs away from the workspace (no
/// `.toolchain` among its ancestors, nothing built beside it).
pub fn copy_to_bundle(bin: &str, dir: &Path) -> PathBuf {
    let target = dir.join("bin").join(Path::new(bin).file_name().unwrap());
    std::fs::create_dir_all(target.parent().unwrap()).unwrap();
    std::fs::copy(bin, &target).unwrap();
    target
}
