//! Shared by the end-to-end tests: builds the fake CUDA (driver and runtime, against the
//! real CUDA headers) and the scenario program once per test binary, and runs scenarios
//! with `libcusafe_rt.so` preloaded (or linked before libcudart).

#![allow(dead_code)] // each test binary uses a different part

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// The built fixtures.
pub struct Fixtures {
    /// Directory holding libcuda.so.1, libcudart.so.12 and the programs.
    pub dir: PathBuf,
    /// The scenario program, linked against the fake libcudart only.
    pub scenario: PathBuf,
    /// The scenario program linked with libcusafe_rt.so before libcudart (no preload).
    pub linked: PathBuf,
    /// The driver-API program that links no CUDA library (`driver_app.c`).
    pub driver_app: PathBuf,
    /// The driver-API program linked with libcuda (`-DLINKED`).
    pub driver_app_linked: PathBuf,
}

/// The result of one run.
#[derive(Debug)]
pub struct Run {
    /// Exit status (-1 if killed by a signal).
    pub code: i32,
    /// Standard output.
    pub stdout: String,
    /// Standard error.
    pub stderr: String,
}

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The library under test: `target/<profile>/deps/libcusafe_rt.so`, which `cargo test`
/// builds next to the test executables (the copy one level up is only refreshed by
/// `cargo build`).
pub fn runtime_lib() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let lib = exe.parent().expect("deps dir").join("libcusafe_rt.so");
    assert!(lib.exists(), "{} not built", lib.display());
    lib
}

/// Runs the C compiler with `args`; panics with its diagnostics when it fails.
pub fn cc(args: &[&str]) {
    let out = Command::new("cc")
        .args(args)
        .output()
        .expect("running cc (a C compiler is needed)");
    assert!(
        out.status.success(),
        "cc {}\n{}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Builds (once per test binary) and returns the fixtures.
pub fn fixtures() -> &'static Fixtures {
    static F: OnceLock<Fixtures> = OnceLock::new();
    F.get_or_init(|| {
        let include = manifest().join("../.toolchain/cuda/include");
        assert!(
            include.join("cuda.h").exists(),
            "{} is missing: run scripts/setup.sh first (the fake CUDA is compiled against the real headers)",
            include.display()
        );
        let exe = std::env::current_exe().unwrap();
        let name = exe.file_name().unwrap().to_string_lossy().into_owned();
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("fake-cuda-{name}"));
        std::fs::create_dir_all(&dir).unwrap();
        let src = manifest().join("tests/fixtures");
        let p = |f: &str| dir.join(f).to_string_lossy().into_owned();
        let s = |f: &str| src.join(f).to_string_lossy().into_owned();
        let inc = format!("-I{}", include.display());
        let rpath = format!("-Wl,-rpath,{}", dir.display());
        let ldir = format!("-L{}", dir.display());
        cc(&["-shared", "-fPIC", "-O1", "-Wall", "-Werror", &inc, "-Wl,-soname,libcuda.so.1", "-o", &p("libcuda.so.1"), &s("fake_cuda.c")]);
        let _ = std::fs::remove_file(dir.join("libcuda.so"));
        std::os::unix::fs::symlink("libcuda.so.1", dir.join("libcuda.so")).unwrap();
        // The fake runtime's CUSAFE_* constants: the formats crate's C header.
        std::fs::write(dir.join("cusafe_format.h"), cusafe_format::c_header()).unwrap();
        cc(&["-shared", "-fPIC", "-O1", "-Wall", "-Werror", &inc, "-include", &p("cusafe_format.h"), "-Wl,-soname,libcudart.so.12", "-o", &p("libcudart.so.12"), &s("fake_cudart.c"), &ldir, "-l:libcuda.so.1", &rpath]);
        let _ = std::fs::remove_file(dir.join("libcudart.so"));
        std::os::unix::fs::symlink("libcudart.so.12", dir.join("libcudart.so")).unwrap();
        cc(&["-g", "-O0", "-Wall", "-Werror", &inc, "-include", &p("cusafe_format.h"), "-o", &p("scenario"), &s("scenario.c"), &ldir, "-lcudart", &rpath, "-lpthread", "-ldl"]);
        let rtlib = runtime_lib();
        let rtdir = rtlib.parent().unwrap();
        let rtl = format!("-L{}", rtdir.display());
        let rtr = format!("-Wl,-rpath,{}", rtdir.display());
        cc(&["-g", "-O0", "-Wall", "-Werror", &inc, "-include", &p("cusafe_format.h"), "-o", &p("scenario_linked"), &s("scenario.c"), &rtl, "-Wl,--no-as-needed", "-lcusafe_rt", &ldir, "-lcudart", &rtr, &rpath, "-Wl,--undefined=__cusafe_rt_present", "-lpthread", "-ldl"]);
        cc(&["-g", "-O0", "-Wall", "-Werror", &inc, "-o", &p("driver_app"), &s("driver_app.c"), "-ldl"]);
        cc(&["-g", "-O0", "-Wall", "-Werror", "-DLINKED", &inc, "-o", &p("driver_app_linked"), &s("driver_app.c"), &ldir, "-l:libcuda.so.1", &rpath]);
        Fixtures {
            driver_app: dir.join("driver_app"),
            driver_app_linked: dir.join("driver_app_linked"),
            scenario: dir.join("scenario"),
            linked: dir.join("scenario_linked"),
            dir,
        }
    })
}

fn run_program(
    program: &Path,
    preload: bool,
    args: &[&str],
    options: &str,
    env: &[(&str, &str)],
) -> Run {
    let f = fixtures();
    let mut cmd = Command::new(program);
    cmd.args(args)
        .env("LD_LIBRARY_PATH", &f.dir)
        .env("CUSAFE_OPTIONS", options)
        .env_remove("LD_PRELOAD");
    for v in [
        "FAKE_CUDA_NO_VMM",
        "FAKE_CUDA_BAD_WINDOW",
        "FAKE_CUDA_MEM_LIMIT",
        "FAKE_CUDA_LOG",
        "FAKE_CUDART_NO_DEVICE",
        "FAKE_CUDA_DEVICES",
    ] {
        cmd.env_remove(v);
    }
    if preload {
        cmd.env("LD_PRELOAD", runtime_lib());
    }
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("running the scenario");
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// Builds a C++ program from `runtime-preload/SRC` against the fake libcudart and
/// runs it with the runtime preloaded (`preload`) or not.
pub fn run_cxx(src: &str, preload: bool) -> Run {
    let f = fixtures();
    let exe = f.dir.join(Path::new(src).file_stem().unwrap());
    let include = manifest().join("../.toolchain/cuda/include");
    let status = Command::new("c++")
        .args(["-x", "c++", "-O1", "-o"])
        .arg(&exe)
        .arg(manifest().join(src))
        .arg(format!("-I{}", include.display()))
        .arg(format!("-L{}", f.dir.display()))
        .arg("-lcudart")
        .arg(format!("-Wl,-rpath,{}", f.dir.display()))
        .status()
        .expect("running c++");
    assert!(status.success(), "building {src}");
    run_program(&exe, preload, &[], "", &[])
}

/// Runs `scenario ARGS` with the runtime preloaded.
pub fn run(args: &[&str], options: &str) -> Run {
    run_env(args, options, &[])
}

/// Runs `scenario ARGS` with the runtime preloaded and extra environment.
pub fn run_env(args: &[&str], options: &str, env: &[(&str, &str)]) -> Run {
    run_program(&fixtures().scenario, true, args, options, env)
}

/// Runs the scenario program that links the runtime before libcudart (no preload).
pub fn run_linked(args: &[&str], options: &str) -> Run {
    run_program(&fixtures().linked, false, args, options, &[])
}

/// Runs the driver-API program (`driver_app HOW SCENARIO`; HOW `linked` runs the copy
/// linked with libcuda), with the runtime preloaded or not.
pub fn run_driver_app(how: &str, scenario: &str, preload: bool, options: &str) -> Run {
    driver_app(how, scenario, preload, options, &[])
}

/// [`run_driver_app`] with the runtime preloaded and extra environment variables.
pub fn run_driver_app_env(how: &str, scenario: &str, options: &str, env: &[(&str, &str)]) -> Run {
    driver_app(how, scenario, true, options, env)
}

fn driver_app(
    how: &str,
    scenario: &str,
    preload: bool,
    options: &str,
    env: &[(&str, &str)],
) -> Run {
    let f = fixtures();
    let exe = if how == "linked" {
        &f.driver_app_linked
    } else {
        &f.driver_app
    };
    run_program(exe, preload, &[how, scenario], options, env)
}

/// Runs `scenario ARGS` without the runtime (the fake CUDA alone).
pub fn run_plain(args: &[&str]) -> Run {
    run_program(&fixtures().scenario, false, args, "", &[])
}

/// A fresh path under the tests' scratch directory.
pub fn scratch(name: &str) -> PathBuf {
    let p =
        PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(format!("{name}-{}", std::process::id()));
    let _ = std::fs::remove_file(&p);
    p
}

/// Asserts that `hay` contains every needle, showing `hay` otherwise.
/// The one line of `text` that contains `needle` (a warning said once); fails when
/// there is none or more than one.
pub fn the_line_with<'a>(text: &'a str, needle: &str) -> &'a str {
    let lines: Vec<&str> = text.lines().filter(|l| l.contains(needle)).collect();
    assert_eq!(lines.len(), 1, "want one line with {needle:?} in:\n{text}");
    lines[0]
}

pub fn assert_has(hay: &str, needles: &[&str]) {
    for n in needles {
        assert!(hay.contains(n), "missing {n:?} in:\n{hay}");
    }
}
