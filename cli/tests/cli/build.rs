//! Real builds with the project's toolchain (`.toolchain/`, from scripts/setup.sh): a
//! small CUDA program built by `cusafe-clang++ --cusafe-no-instrument` through our
//! `fatbinary`, and ptxas output run through `cusafe-fatbinary` directly. The fatbins are
//! checked without cuobjdump, by reading their headers.
//!
//! Without the toolchain these tests print why and pass, except under CI (`CI=true`),
//! where the toolchain is installed first and its absence is a failure.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection};

use crate::common::{output, tool, write, TempDir};

const CLANGXX: &str = env!("CARGO_BIN_EXE_cusafe-clangxx");
const FATBINARY: &str = env!("CARGO_BIN_EXE_cusafe-fatbinary");
const CLANG: &str = "/usr/lib/llvm-19/bin/clang++";

const PROGRAM: &str = r#"#include <cstdio>
__global__ void add(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
int main() {
  int *d = nullptr;
  cudaMalloc(&d, 64 * sizeof(int));
  add<<<1, 64>>>(d, 64);
  printf("done: %s\n", cudaGetErrorString(cudaDeviceSynchronize()));
  return 0;
}
"#;

/// The project's CUDA tree, or None (after saying why) when it is not installed.
pub(crate) fn toolchain() -> Option<PathBuf> {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join("../.toolchain/cuda");
    let missing = [
        tree.join("bin/ptxas"),
        tree.join("lib64/libnvfatbin.so.12"),
        PathBuf::from(CLANG),
    ]
    .into_iter()
    .find(|p| !p.exists());
    match missing {
        None => Some(tree.canonicalize().unwrap()),
        Some(p) if std::env::var("CI").as_deref() == Ok("true") => {
            panic!(
                "{} is missing under CI: run scripts/setup.sh before the tests",
                p.display()
            )
        }
        Some(p) => {
            eprintln!(
                "skipping: {} is missing (run scripts/setup.sh to run this test)",
                p.display()
            );
            None
        }
    }
}

/// The CUDA tree with our fatbinary ([`tree_with_our_fatbinary`] in `dir`), or None
/// (after saying why) without the toolchain or without one of `built`, the pieces
/// cargo builds beside `cusafe-clang++` (the pass plugin, the runtime, ...), or one of
/// `tools`; under CI a missing piece is a failure.
pub(crate) fn ready_tree(dir: &Path, built: &[&str], tools: &[&str]) -> Option<PathBuf> {
    let real = toolchain()?;
    let beside = Path::new(CLANGXX).parent().unwrap();
    let missing = built
        .iter()
        .map(|name| beside.join(name))
        .chain(tools.iter().map(PathBuf::from))
        .find(|p| !p.exists());
    if let Some(p) = missing {
        let why = format!(
            "{} is missing (cargo build --release, or scripts/build.sh)",
            p.display()
        );
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "CI must have it: {why}"
        );
        eprintln!("skipping: {why}");
        return None;
    }
    Some(tree_with_our_fatbinary(&real, dir))
}

/// A CUDA tree like the project's, but whose bin/fatbinary is the cusafe-fatbinary
/// under test (so the test needs neither a release build nor scripts/link-fatbinary.sh).
pub(crate) fn tree_with_our_fatbinary(real: &Path, dir: &Path) -> PathBuf {
    let tree = dir.join("cuda");
    std::fs::create_dir_all(tree.join("bin")).unwrap();
    for entry in std::fs::read_dir(real).unwrap() {
        let entry = entry.unwrap();
        if entry.file_name() != "bin" {
            std::os::unix::fs::symlink(entry.path(), tree.join(entry.file_name())).unwrap();
        }
    }
    std::os::unix::fs::symlink(real.join("bin/ptxas"), tree.join("bin/ptxas")).unwrap();
    std::os::unix::fs::symlink(FATBINARY, tree.join("bin/fatbinary")).unwrap();
    tree
}

/// One entry of a fatbinary.
#[derive(Debug)]
struct FatEntry {
    /// 1: PTX, 2: ELF (cubin).
    kind: u16,
    arch: u32,
    payload: Vec<u8>,
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes(b[at..at + 2].try_into().unwrap())
}
fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().unwrap())
}
fn u64_at(b: &[u8], at: usize) -> usize {
    u64::from_le_bytes(b[at..at + 8].try_into().unwrap()) as usize
}

/// Parses one or more concatenated fatbinaries: header (magic 0xBA55ED50, version,
/// header size, size of the entries), then entries (kind, header size, payload size, ...,
/// arch at offset 28), each followed by its payload.
fn parse_fatbins(data: &[u8]) -> Vec<FatEntry> {
    let mut entries = Vec::new();
    let mut at = 0;
    while at + 16 <= data.len() {
        if u32_at(data, at) == 0 {
            at += 8; // padding between fatbins
            continue;
        }
        assert_eq!(u32_at(data, at), 0xBA55_ED50, "fatbin magic at {at}");
        let header = u16_at(data, at + 6) as usize;
        let end = at + header + u64_at(data, at + 8);
        assert!(end <= data.len(), "fatbin size past the data");
        let mut e = at + header;
        while e < end {
            let kind = u16_at(data, e);
            let entry_header = u32_at(data, e + 4) as usize;
            let size = u64_at(data, e + 8);
            let compressed = u32_at(data, e + 16);
            assert_eq!(compressed, 0, "entry at {e} is compressed");
            let arch = u32_at(data, e + 28);
            let payload = data[e + entry_header..e + entry_header + size].to_vec();
            entries.push(FatEntry {
                kind,
                arch,
                payload,
            });
            e += entry_header + size;
        }
        at = end;
    }
    entries
}

fn assert_cubin_and_ptx(entries: &[FatEntry], arch: u32) {
    let cubin = entries.iter().find(|e| e.kind == 2).expect("a cubin entry");
    assert_eq!(cubin.arch, arch);
    assert_eq!(&cubin.payload[..4], b"\x7fELF");
    let ptx = entries.iter().find(|e| e.kind == 1).expect("a PTX entry");
    assert_eq!(ptx.arch, arch);
    let text = String::from_utf8_lossy(&ptx.payload);
    assert!(text.contains(&format!(".target sm_{arch}")), "{text}");
    assert!(text.contains(".entry _Z3addPii"), "{text}");
}

#[test]
fn plain_build_embeds_cubin_and_ptx_and_runs() {
    let Some(real) = toolchain() else { return };
    let dir = TempDir::new("build");
    let tree = tree_with_our_fatbinary(&real, dir.path());
    let src = dir.path().join("k.cu");
    write(&src, PROGRAM);
    let exe = dir.path().join("k");

    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &tree)
            .args([
                "--cusafe-no-instrument".as_ref(),
                "-O2".as_ref(),
                src.as_os_str(),
            ])
            .args(["-o".as_ref(), exe.as_os_str()]),
    );
    assert_eq!(code, 0, "build failed: {stderr}");

    let bytes = std::fs::read(&exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let section = file
        .section_by_name(".nv_fatbin")
        .expect(".nv_fatbin section");
    let entries = parse_fatbins(section.data().unwrap());
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_cubin_and_ptx(&entries, 90);

    // It runs (libcudart found through the rpath); without a GPU cudart reports that.
    let (code, stdout, stderr) = output(&mut std::process::Command::new(&exe));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.starts_with("done: "), "{stdout}");

    // -g at -O0 makes clang pass -g to fatbinary as well.
    let obj = dir.path().join("kg.o");
    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &tree)
            .args([
                "--cusafe-no-instrument".as_ref(),
                "-g".as_ref(),
                "-c".as_ref(),
                src.as_os_str(),
            ])
            .args(["-o".as_ref(), obj.as_os_str()]),
    );
    assert_eq!(code, 0, "-g build failed: {stderr}");
}

#[test]
fn ptxas_output_through_fatbinary() {
    let Some(real) = toolchain() else { return };
    let dir = TempDir::new("fatbin");
    let src = dir.path().join("k.cu");
    write(&src, PROGRAM);
    let ptx = dir.path().join("k.s");
    let cubin = dir.path().join("k.cubin");
    let fatbin = dir.path().join("k.fatbin");

    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &real)
            .args([
                "--cusafe-no-instrument",
                "-O2",
                "--cuda-gpu-arch=sm_90a",
                "--cuda-device-only",
                "-S",
            ])
            .args([src.as_os_str(), "-o".as_ref(), ptx.as_os_str()]),
    );
    assert_eq!(code, 0, "PTX: {stderr}");
    let (code, _, stderr) = output(std::process::Command::new(real.join("bin/ptxas")).args([
        "-arch=sm_90a".as_ref(),
        ptx.as_os_str(),
        "-o".as_ref(),
        cubin.as_os_str(),
    ]));
    assert_eq!(code, 0, "ptxas: {stderr}");

    let (code, _, stderr) = output(
        tool(FATBINARY)
            .env("CUSAFE_NVFATBIN", real.join("lib64/libnvfatbin.so.12"))
            .args(["-64", "--create"])
            .arg(&fatbin)
            .arg(format!("--image=profile=sm_90a,file={}", cubin.display()))
            .arg(format!(
                "--image=profile=compute_90a,file={}",
                ptx.display()
            )),
    );
    assert_eq!(code, 0, "fatbinary: {stderr}");

    let entries = parse_fatbins(&std::fs::read(&fatbin).unwrap());
    assert_eq!(entries.len(), 2, "{entries:?}");
    assert_cubin_and_ptx(&entries, 90);
    let cubin_entry = entries.iter().find(|e| e.kind == 2).unwrap();
    assert_eq!(
        cubin_entry.payload,
        std::fs::read(&cubin).unwrap(),
        "cubin stored verbatim"
    );
    // libnvfatbin stores PTX with comments and indentation stripped (as NVIDIA's
    // fatbinary does), so compare the instructions only.
    let ptx_entry = entries.iter().find(|e| e.kind == 1).unwrap();
    let stored = String::from_utf8_lossy(&ptx_entry.payload);
    let source = std::fs::read_to_string(&ptx).unwrap();
    for line in source
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("ld.") || l.starts_with("st."))
    {
        let words = line.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(
            stored.contains(&words),
            "{words} missing from stored PTX:\n{stored}"
        );
    }
}

/// The `DT_NEEDED` entries of an ELF file, in order (via `readelf -d`, from binutils,
/// which clang's link step needs anyway).
pub(crate) fn needed(elf: &Path) -> Vec<String> {
    let (code, stdout, stderr) = output(std::process::Command::new("readelf").arg("-d").arg(elf));
    assert_eq!(code, 0, "readelf: {stderr}");
    stdout
        .lines()
        .filter(|l| l.contains("(NEEDED)"))
        .filter_map(|l| Some(l.split('[').nth(1)?.trim_end_matches(']').to_owned()))
        .collect()
}

#[test]
fn runtime_is_needed_before_cudart_even_with_as_needed() {
    let Some(real) = toolchain() else { return };
    let dir = TempDir::new("rtlink");
    let tree = tree_with_our_fatbinary(&real, dir.path());
    // A stand-in runtime: just the marker symbol.
    let stub_src = dir.path().join("rt.c");
    write(&stub_src, "int __cusafe_rt_present = 1;\n");
    let rt = dir.path().join("rt/libcusafe_rt.so");
    std::fs::create_dir_all(rt.parent().unwrap()).unwrap();
    let (code, _, stderr) = output(
        std::process::Command::new(CLANG)
            .args(["-x", "c", "-shared", "-fPIC"])
            .arg(&stub_src)
            .arg("-o")
            .arg(&rt),
    );
    assert_eq!(code, 0, "stub runtime: {stderr}");

    let src = dir.path().join("k.cu");
    write(&src, PROGRAM);
    let obj = dir.path().join("k.o");
    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &tree)
            .args([
                "--cusafe-no-instrument".as_ref(),
                "-O2".as_ref(),
                "-c".as_ref(),
                src.as_os_str(),
            ])
            .args(["-o".as_ref(), obj.as_os_str()]),
    );
    assert_eq!(code, 0, "compile: {stderr}");

    // Link-only, instrumented: the runtime is added, before cudart, and survives
    // --as-needed.
    for extra in [&[][..], &["-Wl,--as-needed"][..]] {
        let exe = dir.path().join("app");
        let (code, _, stderr) = output(
            tool(CLANGXX)
                .env("CUSAFE_CUDA_PATH", &tree)
                .env("CUSAFE_RT_LIB", &rt)
                .args(extra)
                .args([obj.as_os_str(), "-o".as_ref(), exe.as_os_str()]),
        );
        assert_eq!(code, 0, "link {extra:?}: {stderr}");
        let needed = needed(&exe);
        let rt_at = needed.iter().position(|n| n == "libcusafe_rt.so");
        let cudart_at = needed.iter().position(|n| n == "libcudart.so.12");
        assert!(
            matches!((rt_at, cudart_at), (Some(r), Some(c)) if r < c),
            "{extra:?}: {needed:?}"
        );
    }
}

/// The GPU program of the launch-resource check (`heavy` needs more than 64 registers
/// per thread instrumented: 152 with ptxas 12.5 at -O2, 64 plain; `bounded` declares
/// launch bounds), and two more kernels: a heavy one with launch bounds and a light one.
fn heavy_source() -> String {
    let gpu_program = include_str!("../../../runtime-preload/tests/gpu/launch_resources.cu");
    format!(
        "{gpu_program}{}",
        r#"
__global__ void __launch_bounds__(128) bounded_heavy(float *out, const float *in, int n) {
  float acc[48];
#pragma unroll
  for (int j = 0; j < 48; j++) acc[j] = in[threadIdx.x + j * 7];
  for (int it = 0; it < n; it++) {
#pragma unroll
    for (int j = 0; j < 48; j++) acc[j] = acc[j] * acc[(j + 1) % 48] + in[(it + j) & 1023];
  }
  out[threadIdx.x] = acc[0] + acc[47];
}
__global__ void light(float *out) { out[threadIdx.x] = 1.0f; }
"#
    )
}

#[test]
fn instrumented_kernels_without_launch_bounds_past_64_registers_are_named_at_compile_time() {
    let Some(real) = toolchain() else { return };
    let dir = TempDir::new("resources");
    let tree = tree_with_our_fatbinary(&real, dir.path());
    let src = dir.path().join("heavy.cu");
    write(&src, &heavy_source());
    let build = |plain: bool| {
        let mut cmd = tool(CLANGXX);
        cmd.env("CUSAFE_CUDA_PATH", &tree);
        if plain {
            cmd.arg("--cusafe-no-instrument");
        }
        let obj = dir.path().join(if plain { "plain.o" } else { "cusafe.o" });
        let (code, _, stderr) = output(
            cmd.args(["-O2".as_ref(), "-c".as_ref(), src.as_os_str()])
                .args(["-o".as_ref(), obj.as_os_str()]),
        );
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    let stderr = build(false);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains("warning: kernel"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    let w = warnings[0];
    assert!(
        w.starts_with("cusafe-clang++: warning: kernel heavy(float*, float const*, int) uses "),
        "{w}"
    );
    assert!(
        w.contains("declares no __launch_bounds__") && w.contains("-maxrregcount=64"),
        "{w}"
    );
    // Both counts, from the two builds' ptxas: the instrumented one above 64, the plain
    // one (compiled again, device code only) below it.
    let count = |after: &str| -> u32 {
        let rest = &w[w.find(after).unwrap_or_else(|| panic!("{w}")) + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit())
            .next()
            .unwrap()
            .parse()
            .unwrap()
    };
    let (instrumented, plain) = (count(") uses "), count("(the plain build: "));
    assert!(plain < instrumented && instrumented > 64, "{w}");
    // The plain build of the same kernels is not this tool's concern.
    assert!(!build(true).contains("warning: kernel"));
}

#[test]
fn a_loop_clean_kernel_above_its_plain_occupancy_is_rebuilt_with_a_register_cap() {
    let Some(real) = toolchain() else { return };
    let dir = TempDir::new("register-cap");
    let tree = tree_with_our_fatbinary(&real, dir.path());
    // hotspot3d's kernel: its loop runs no check once instrumented (its accesses are loop
    // ranges, checked before the loop), but the checks before the loop raise its
    // registers above 32 (48 with ptxas 12.5 at -O3; plain 32).
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../perf-suite/workloads/hotspot3d.cu");
    // Objects next to their sources (no -o: a second source may be among `extra`).
    let build = |extra: &[&str]| {
        let (code, _, stderr) = output(
            tool(CLANGXX)
                .env("CUSAFE_CUDA_PATH", &tree)
                .current_dir(dir.path())
                .args(extra)
                .args(["-O3".as_ref(), "-c".as_ref(), src.as_os_str()]),
        );
        assert_eq!(code, 0, "{stderr}");
        stderr
    };
    // ptxas's count of the kernel in each compile, in order.
    let counts = |stderr: &str| -> Vec<u32> {
        let mut out = Vec::new();
        let mut ours = false;
        for line in stderr.lines() {
            if line.contains("Compiling entry function") {
                ours = line.contains("hotspot_opt1");
            } else if let (true, Some(at)) = (ours, line.find("Used ")) {
                let n = line[at + 5..].split(' ').next().unwrap();
                out.push(n.parse().unwrap());
                ours = false;
            }
        }
        out
    };
    let stderr = build(&["-Xcuda-ptxas", "-v"]);
    let notes: Vec<&str> = stderr.lines().filter(|l| l.contains("note:")).collect();
    assert_eq!(notes.len(), 1, "{stderr}");
    let note = notes[0];
    assert!(
        note.starts_with("cusafe-clang++: note: the loops of (anonymous namespace)::hotspot_opt1(")
            && note.contains("run no check")
            && note.contains("rebuilt with -Xcuda-ptxas -maxrregcount=32")
            && note.contains("--cusafe-no-register-cap keeps the uncapped build"),
        "{note}"
    );
    // The first compile above 32, the rebuild at 32 at most.
    let got = counts(&stderr);
    assert_eq!(got.len(), 2, "{stderr}");
    assert!(got[0] > 32 && got[1] <= 32, "{got:?}");
    // Two CUDA sources in one command: no cap, and a note says why.
    let other = dir.path().join("other.cu");
    write(
        &other,
        "__global__ void other(float *p) { p[threadIdx.x] = 0.0f; }\n",
    );
    let stderr = build(&[other.to_str().unwrap()]);
    assert!(
        stderr.contains("note: no register cap: this command compiles 2 CUDA sources"),
        "{stderr}"
    );
    // The flag keeps the uncapped build; a limit of the user's own stands.
    for extra in [
        &["--cusafe-no-register-cap", "-Xcuda-ptxas", "-v"][..],
        &["-Xcuda-ptxas", "-maxrregcount=64", "-Xcuda-ptxas", "-v"][..],
    ] {
        let stderr = build(extra);
        assert!(!stderr.contains("note:"), "{extra:?}: {stderr}");
        let got = counts(&stderr);
        assert_eq!(got.len(), 1, "{extra:?}: {stderr}");
        assert!(got[0] > 32, "{extra:?}: {got:?}");
    }
}
