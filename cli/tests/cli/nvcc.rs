//! `cusafe-nvcc`: the printed commands (`--dryrun`, `-v`), help and version, errors and
//! warnings, and real builds through the project's toolchain: a program in one step, a
//! `-c` + link two-step build with a host `.cpp`, dependency files and a shared library.
//!
//! The real builds need the toolchain (`.toolchain/`) and the pass plugin and runtime
//! built beside `cusafe-clang++`; without them they print why and pass, except under CI
//! (`CI=true`), where that is a failure. No GPU is needed.

use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSection};

use crate::build::{needed, ready_tree, toolchain};
use crate::common::{output, tool, write, FakeToolchain, TempDir};

const NVCC: &str = env!("CARGO_BIN_EXE_cusafe-nvcc");

/// `cusafe-nvcc ARGS` with the fake toolchain, run in `dir`.
fn nvcc(tc: &FakeToolchain, dir: &Path, args: &[&str]) -> (i32, String, String) {
    let mut cmd = tool(NVCC);
    tc.apply(&mut cmd);
    output(cmd.current_dir(dir).args(args))
}

/// The two `#$ ` lines `--dryrun` prints for `args` (the cusafe-clang++ command and the
/// clang++ command), without the `#$ ` and the program.
fn dryrun(tc: &FakeToolchain, args: &[&str]) -> (String, String) {
    let dir = TempDir::new("nvcc-dry");
    let mut all = vec!["--dryrun"];
    all.extend_from_slice(args);
    let (code, stdout, stderr) = nvcc(tc, dir.path(), &all);
    assert_eq!(code, 0, "{args:?}: {stderr}");
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("#$ ")).collect();
    assert_eq!(lines.len(), 2, "{stderr}");
    let rest = |line: &str| {
        line.split_once(' ')
            .unwrap()
            .1
            .split_once(' ')
            .map_or(String::new(), |r| r.1.to_owned())
    };
    let driver = lines[0].split(' ').nth(1).unwrap();
    assert!(
        driver.ends_with("/cusafe-clang++") || driver.ends_with("/cusafe-clangxx"),
        "{driver}"
    );
    let clang = lines[1].split(' ').nth(1).unwrap();
    assert_eq!(clang, tc.clang.display().to_string());
    (rest(lines[0]), rest(lines[1]))
}

#[test]
fn help_lists_the_flags() {
    let (code, stdout, _) = output(tool(NVCC).arg("--help"));
    assert_eq!(code, 0);
    for flag in [
        "-gencode",
        "-Xcompiler",
        "--use_fast_math",
        "-rdc",
        "--dryrun",
        "--cusafe-*",
    ] {
        assert!(stdout.contains(flag), "{flag} missing from:\n{stdout}");
    }
    let (code, short, _) = output(tool(NVCC).arg("-h"));
    assert_eq!((code, short), (0, stdout));
}

#[test]
fn version_is_in_nvccs_format_for_tools_that_parse_it() {
    let tc = FakeToolchain::new("nvcc-version");
    write(
        &tc.cuda.join("version.json"),
        r#"{"cuda": {"name": "CUDA SDK", "version": "12.5.1"}, "cuda_nvcc": {"name": "CUDA NVCC", "version": "12.5.82"}}"#,
    );
    let dir = TempDir::new("nvcc-version");
    let (code, stdout, stderr) = nvcc(&tc, dir.path(), &["--version"]);
    assert_eq!(code, 0, "{stderr}");
    let lines: Vec<&str> = stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "cusafe-nvcc {} (cusafe): nvcc's command line, built by cusafe-clang++ with clang++-19",
                env!("CARGO_PKG_VERSION")
            )
            .as_str(),
            "Cuda compilation tools, release 12.5, V12.5.82",
        ]
    );
    // What CMake's FindCUDAToolkit matches (V<major>.<minor>.<patch>) is there once.
    let versions = stdout.match_indices('V').filter(|(at, _)| {
        stdout[at + 1..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    });
    assert_eq!(versions.count(), 1, "{stdout}");
    // The real tree has no version.json: its ptxas says the same.
    if let Some(real) = toolchain() {
        let (code, stdout, stderr) = output(tool(NVCC).env("CUSAFE_CUDA_PATH", &real).arg("-V"));
        assert_eq!(code, 0, "{stderr}");
        assert!(
            stdout
                .lines()
                .nth(1)
                .is_some_and(|l| l.starts_with("Cuda compilation tools, release 12.")),
            "{stdout}"
        );
    }
}

#[test]
fn dryrun_prints_the_driver_command_and_the_clang_command() {
    let tc = FakeToolchain::new("nvcc-dryrun");
    let (ours, clang) = dryrun(
        &tc,
        &[
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-gencode",
            "arch=compute_90,code=[sm_90,compute_90]",
            "-O2",
            "-g",
            "-lineinfo",
            "-std=c++17",
            "-Xcompiler",
            "-fPIC,-Wall",
            "-DN=4",
            "-I",
            "inc",
            "-c",
            "k.cu",
            "-o",
            "k.o",
        ],
    );
    assert_eq!(
        ours,
        "--cuda-gpu-arch=sm_80 --cuda-gpu-arch=sm_90 -Xarch_device -O3 -Xarch_device \
         -gline-directives-only -O2 -Xarch_host -g -std=c++17 -Xarch_host -fPIC -Xarch_host \
         -Wall -DN=4 -Iinc -c k.cu -o k.o"
    );
    assert_eq!(
        clang,
        format!(
            "--cuda-path={} -Wno-unknown-cuda-version -ffp-contract=on -Xarch_device \
             -gline-directives-only -Xarch_device -fpass-plugin={} {ours}",
            tc.cuda.display(),
            tc.plugin.display()
        )
    );
    // A link of objects: cusafe-clang++ adds the runtime and cudart.
    let (ours, clang) = dryrun(&tc, &["a.o", "b.o", "-o", "app", "-lm"]);
    assert_eq!(ours, "a.o b.o -o app -lm");
    assert!(
        clang.contains("-lcusafe_rt") && clang.ends_with("--undefined=__cusafe_rt_present"),
        "{clang}"
    );
    // cusafe's own flags pass through.
    let (ours, clang) = dryrun(&tc, &["--cusafe-no-instrument", "k.cu"]);
    assert_eq!(ours, "--cusafe-no-instrument -Xarch_device -O3 k.cu");
    assert!(
        !clang.contains("pass-plugin") && !clang.contains("cusafe_rt"),
        "{clang}"
    );
}

#[test]
fn verbose_prints_the_command_then_runs_it_with_its_exit_status() {
    let tc = FakeToolchain::new("nvcc-verbose");
    let dir = TempDir::new("nvcc-verbose");
    let (code, stdout, stderr) = nvcc(&tc, dir.path(), &["-v", "-c", "k.cu", "--cusafe-stats"]);
    // The fake clang prints its arguments and exits 3: the status reaches us.
    assert_eq!(code, 3, "{stderr}");
    assert!(
        stderr.starts_with("#$ ")
            && stderr.contains(" --cusafe-stats -Xarch_device -O3 -v -c k.cu"),
        "{stderr}"
    );
    assert!(stdout.contains("stats=1\n"), "{stdout}");
    assert!(stdout.contains("arg=-v\narg=-c\narg=k.cu\n"), "{stdout}");
}

#[test]
fn errors_name_the_flag_say_why_and_exit_2() {
    let tc = FakeToolchain::new("nvcc-errors");
    let dir = TempDir::new("nvcc-errors");
    for (args, starts) in [
        (
            &["-rdc=true", "-c", "k.cu"][..],
            "-rdc=true: relocatable device code needs a device link by NVIDIA's nvlink",
        ),
        (&["-dc", "k.cu"], "-dc: relocatable device code"),
        (
            &["-Wall", "k.cu"],
            "-Wall: not an nvcc option; host compiler flags go through -Xcompiler",
        ),
        (
            &["--gpu-arch=sm_80", "k.cu"],
            "--gpu-arch=sm_80: not an nvcc option (did you mean --gpu-architecture?)",
        ),
        (
            &["-arch=all", "k.cu"],
            "-arch=all: building for every architecture is not supported",
        ),
        (&[], "no input files: nothing to compile or link; "),
        (&["k.cu", "-o"], "-o: needs a value; "),
        (&["@missing.rsp"], "@missing.rsp: cannot read missing.rsp"),
        (&["-std=c++17", "x.c"], "-std=c++17: x.c is C"),
    ] {
        let (code, _, stderr) = nvcc(&tc, dir.path(), args);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        assert!(
            stderr.starts_with(&format!("cusafe-nvcc: error: {starts}")),
            "{args:?}: {stderr}"
        );
        assert_eq!(stderr.lines().count(), 1, "{stderr}");
    }
    // Arguments that are not UTF-8: an error, not a panic.
    use std::os::unix::ffi::OsStrExt;
    let mut cmd = tool(NVCC);
    tc.apply(&mut cmd);
    let (code, _, stderr) = output(cmd.arg(std::ffi::OsStr::from_bytes(b"k\xff.cu")));
    assert_eq!(code, 2);
    assert!(stderr.contains("not valid UTF-8"), "{stderr}");
    // cusafe-clang++'s own errors pass through with its status.
    let (code, _, stderr) = nvcc(&tc, dir.path(), &["--dryrun", "--cusafe-stat", "k.cu"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cusafe-clang++: error: unknown cusafe flag '--cusafe-stat' (did you mean --cusafe-stats?)"), "{stderr}");
}

#[test]
fn ignored_flags_warn_in_one_line_each() {
    let tc = FakeToolchain::new("nvcc-warn");
    let dir = TempDir::new("nvcc-warn");
    let (code, _, stderr) = nvcc(
        &tc,
        dir.path(),
        &[
            "--dryrun",
            "-ccbin",
            "/usr/bin/g++-12",
            "--expt-relaxed-constexpr",
            "--extended-lambda",
            "k.cu",
            "-cudart",
            "static",
        ],
    );
    assert_eq!(code, 0, "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("cusafe-nvcc: warning: "))
        .collect();
    assert_eq!(warnings.len(), 2, "{stderr}");
    assert!(warnings[0].starts_with("cusafe-nvcc: warning: -ccbin /usr/bin/g++-12: ignored: host code is compiled by clang++-19"), "{stderr}");
    assert!(
        warnings[1].starts_with(
            "cusafe-nvcc: warning: -cudart static: linking the shared libcudart.so.12 instead"
        ),
        "{stderr}"
    );
}

/// The CUDA tree with our fatbinary, or None (after saying why) when the toolchain or the
/// pass plugin and runtime beside `cusafe-clang++` are missing.
fn ready(dir: &Path) -> Option<PathBuf> {
    ready_tree(dir, &["libcusafe_rt.so", "libcusafe_pass.so"], &[])
}

/// Runs the real `cusafe-nvcc ARGS` in `dir` through `tree`; returns its stderr.
fn build(tree: &Path, dir: &Path, args: &[&str]) -> (String, String) {
    let (code, stdout, stderr) = output(
        tool(NVCC)
            .env("CUSAFE_CUDA_PATH", tree)
            .current_dir(dir)
            .args(args),
    );
    assert_eq!(code, 0, "cusafe-nvcc {args:?}: {stderr}");
    (stdout, stderr)
}

/// The `.nv_fatbin` section of an ELF file.
fn fatbin(path: &Path) -> Vec<u8> {
    let data = std::fs::read(path).unwrap();
    let file = object::File::parse(&*data).unwrap();
    let section = file
        .section_by_name(".nv_fatbin")
        .expect("a .nv_fatbin section");
    section.data().unwrap().to_vec()
}

fn contains(haystack: &[u8], needle: &str) -> bool {
    haystack
        .windows(needle.len())
        .any(|w| w == needle.as_bytes())
}

const KERNEL: &str = r#"#include "scale.h"
__global__ void scale(float *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] *= FACTOR;
}
void launch(float *a, int n) { scale<<<(n + 255) / 256, 256>>>(a, n); }
"#;

const MAIN: &str = r#"#include <cuda_runtime.h>
#include <cstdio>
void launch(float *a, int n);
int main() {
  float *d = nullptr;
  cudaMalloc(&d, 1024 * sizeof(float));
  launch(d, 1024);
  printf("%s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
"#;

#[test]
fn builds_a_program_in_one_step() {
    let dir = TempDir::new("nvcc-one");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    write(&dir.path().join("scale.h"), "#define FACTOR 2.0f\n");
    write(
        &dir.path().join("app.cu"),
        &format!(
            "{KERNEL}{}",
            MAIN.replace("void launch(float *a, int n);\n", "")
        ),
    );
    let (_, stderr) = build(
        &tree,
        dir.path(),
        &[
            "-arch=sm_90",
            "-O2",
            "-lineinfo",
            "-std=c++17",
            "--cusafe-stats",
            "app.cu",
            "-o",
            "app",
        ],
    );
    assert!(
        stderr.contains("scale") && stderr.contains("checks"),
        "the pass saw the kernel: {stderr}"
    );
    let app = dir.path().join("app");
    let libs = needed(&app);
    let rt = libs.iter().position(|l| l == "libcusafe_rt.so");
    let cudart = libs.iter().position(|l| l == "libcudart.so.12");
    assert!(rt.is_some() && rt < cudart, "{libs:?}");
    assert!(
        contains(&fatbin(&app), ".target sm_90"),
        "sm_90 PTX in the fatbin"
    );
}

#[test]
fn builds_in_two_steps_with_a_host_source() {
    let dir = TempDir::new("nvcc-two");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    write(&dir.path().join("scale.h"), "#define FACTOR 2.0f\n");
    write(&dir.path().join("scale.cu"), KERNEL);
    write(&dir.path().join("main.cpp"), MAIN);
    build(
        &tree,
        dir.path(),
        &[
            "-gencode",
            "arch=compute_80,code=sm_80",
            "-gencode",
            "arch=compute_90,code=[sm_90,compute_90]",
            "-O3",
            "-c",
            "scale.cu",
            "-o",
            "scale.o",
            "-MMD",
        ],
    );
    // main.cpp includes cuda_runtime.h: nvcc's include path is there for host sources too.
    build(
        &tree,
        dir.path(),
        &[
            "-O2",
            "-std=c++17",
            "-Xcompiler",
            "-Wall,-fno-strict-aliasing",
            "-c",
            "main.cpp",
            "-o",
            "main.o",
        ],
    );
    build(
        &tree,
        dir.path(),
        &["scale.o", "main.o", "-o", "app", "-lm"],
    );
    let object = fatbin(&dir.path().join("scale.o"));
    assert!(
        contains(&object, ".target sm_80") && contains(&object, ".target sm_90"),
        "both architectures"
    );
    let libs = needed(&dir.path().join("app"));
    assert!(
        libs.contains(&"libcusafe_rt.so".to_owned())
            && libs.contains(&"libcudart.so.12".to_owned()),
        "{libs:?}"
    );
    let deps = std::fs::read_to_string(dir.path().join("scale.d")).unwrap();
    assert!(deps.starts_with("scale.o: scale.cu scale.h"), "{deps}");
}

#[test]
fn dependency_output_and_a_shared_library() {
    let dir = TempDir::new("nvcc-deps");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    write(&dir.path().join("scale.h"), "#define FACTOR 2.0f\n");
    write(&dir.path().join("scale.cu"), KERNEL);
    // nvcc -M prints the dependencies of the .cu once (clang alone would print host and
    // device both), on stdout or into -o.
    let (stdout, _) = build(&tree, dir.path(), &["-MM", "scale.cu"]);
    assert_eq!(stdout, "scale.o: scale.cu scale.h\n");
    build(
        &tree,
        dir.path(),
        &["-M", "scale.cu", "-o", "scale.dep", "-MT", "obj/scale.o"],
    );
    let deps = std::fs::read_to_string(dir.path().join("scale.dep")).unwrap();
    assert!(
        deps.starts_with("obj/scale.o: scale.cu") && deps.contains("cuda_runtime.h"),
        "{deps}"
    );
    build(
        &tree,
        dir.path(),
        &[
            "-shared",
            "-Xcompiler",
            "-fPIC",
            "scale.cu",
            "-o",
            "libscale.so",
        ],
    );
    let lib = dir.path().join("libscale.so");
    assert!(needed(&lib).contains(&"libcusafe_rt.so".to_owned()));
    let (code, stdout, _) = output(Command::new("readelf").arg("-h").arg(&lib));
    assert_eq!(code, 0);
    assert!(stdout.contains("DYN (Shared object file)"), "{stdout}");
}
