//! Host AddressSanitizer and cusafe's device checks in one binary:
//! `cusafe-clang++ -fsanitize=address` on `fixtures/asan_loader.cu` (a host input loader
//! with a heap overflow, and a kernel) with the real toolchain. No GPU is needed: the
//! host overflow happens before the program's first CUDA call.
//!
//! Checked: the kernel went through the pass (its stats line), the executable has
//! ASan's runtime and cusafe's ASan defaults linked in and needs `libcusafe_rt.so`
//! before `libcudart.so.12`, ASan runs with the defaults (and `ASAN_OPTIONS` overrides
//! them), and ASan reports the overflow with the loader's source line; once built in
//! one step, once compiled with `-c` and linked separately.
//!
//! Without the toolchain or the built pieces these tests print why and pass, except
//! under CI (`CI=true`), where that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use object::{Object, ObjectSymbol};

use crate::build::{needed, ready_tree};
use crate::common::{output, tool, TempDir};

const CLANGXX: &str = env!("CARGO_BIN_EXE_cusafe-clangxx");
/// ASan's symbolizer, from the same LLVM as clang-19 (file:line in its reports).
const SYMBOLIZER: &str = "/usr/lib/llvm-19/bin/llvm-symbolizer";

/// The fixture, and the line of its marked overflow (`asan-expect:`).
fn fixture() -> (PathBuf, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/asan_loader.cu");
    let text = std::fs::read_to_string(&path).unwrap();
    let line = text
        .lines()
        .position(|l| l.contains("// asan-expect: heap-buffer-overflow"))
        .expect("the fixture marks its overflow")
        + 1;
    (path, line)
}

/// The CUDA tree with our fatbinary, or None (after saying why) when the toolchain or
/// one of the pieces built beside `cusafe-clang++` is missing.
fn ready(dir: &Path) -> Option<PathBuf> {
    let built = [
        "libcusafe_rt.so",
        "libcusafe_pass.so",
        "libcusafe_asan_defaults.a",
    ];
    ready_tree(dir, &built, &[SYMBOLIZER])
}

/// `cusafe-clang++ --cusafe-stats ARGS` through `tree`; returns its stderr.
fn build(tree: &Path, args: &[&std::ffi::OsStr]) -> String {
    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", tree)
            .arg("--cusafe-stats")
            .args(args),
    );
    assert_eq!(code, 0, "cusafe-clang++ {args:?}: {stderr}");
    stderr
}

/// Runs the program with `asan_options` as `ASAN_OPTIONS` (none when empty).
fn run(exe: &Path, args: &[&str], asan_options: &str) -> (i32, String, String) {
    let mut cmd = Command::new(exe);
    cmd.args(args)
        .env_remove("ASAN_OPTIONS")
        .env_remove("CUSAFE_OPTIONS")
        .env_remove("LD_PRELOAD")
        .env("ASAN_SYMBOLIZER_PATH", SYMBOLIZER);
    if !asan_options.is_empty() {
        cmd.env("ASAN_OPTIONS", asan_options);
    }
    output(&mut cmd)
}

/// The value ASan's `help=1` lists for `flag` ("true", "false", ...).
fn asan_flag(help: &str, flag: &str) -> String {
    let mut lines = help.lines();
    lines
        .by_ref()
        .find(|l| l.trim() == flag)
        .unwrap_or_else(|| panic!("{flag} not in ASan's help:\n{help}"));
    let description = lines.next().unwrap_or_default();
    let value = description
        .split("(Current Value: ")
        .nth(1)
        .unwrap_or_else(|| panic!("no current value for {flag}: {description}"));
    value.trim_end_matches(')').to_owned()
}

/// The host overflow is reported by ASan with the loader's function and line, before
/// any CUDA call.
fn assert_host_overflow_reported(exe: &Path, line: usize) {
    let (code, stdout, stderr) = run(exe, &["--bad-input"], "");
    assert_ne!(code, 0, "{stderr}");
    assert!(
        stderr.contains("ERROR: AddressSanitizer: heap-buffer-overflow"),
        "{stderr}"
    );
    assert!(stderr.contains("WRITE of size"), "{stderr}");
    let frame = stderr
        .lines()
        .find(|l| l.trim_start().starts_with("#0 ") && l.contains("in load(char const*, int*) "))
        .unwrap_or_else(|| panic!("frame #0 is not the loader: {stderr}"));
    assert!(
        frame.contains(&format!("asan_loader.cu:{line}:")),
        "frame #0 names the marked line {line}: {frame}"
    );
    assert!(
        stderr.contains(&format!(
            "SUMMARY: AddressSanitizer: heap-buffer-overflow {}",
            fixture().0.display()
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("cusafe: error"), "{stderr}");
    assert!(
        !stdout.contains("loaded"),
        "it stops at the overflow: {stdout}"
    );
}

#[test]
fn asan_host_and_cusafe_device_in_one_binary() {
    let dir = TempDir::new("asan");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    let (src, line) = fixture();
    let exe = dir.path().join("asan_loader");
    let common = ["-fsanitize=address".as_ref(), "-O1".as_ref(), "-g".as_ref()];

    // The command: ASan on the host side only, the defaults archive at the link.
    let (code, printed, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &tree)
            .arg("--cusafe-print-command")
            .args(common)
            .arg(&src)
            .arg("-o")
            .arg(&exe),
    );
    assert_eq!(code, 0, "{stderr}");
    assert!(
        printed.contains(" -Xarch_host -fsanitize=address -O1 -g "),
        "{printed}"
    );
    assert!(
        printed.contains(" -Wl,--undefined=cusafe_asan_defaults ")
            && printed.contains("libcusafe_asan_defaults.a"),
        "{printed}"
    );

    // The build: the kernel goes through the pass.
    let stats = build(
        &tree,
        &[
            &common[..],
            &[src.as_os_str(), "-o".as_ref(), exe.as_os_str()],
        ]
        .concat(),
    );
    assert!(
        stats.contains("cusafe: kernel _Z5scaleP6Recordif: ") && stats.contains(" checks ("),
        "the device code is instrumented: {stats}"
    );

    // The executable: ASan's runtime and our defaults inside, a fatbin, and the cusafe
    // runtime needed before cudart.
    let bytes = std::fs::read(&exe).unwrap();
    let file = object::File::parse(&*bytes).unwrap();
    let defined = |name: &str| {
        file.symbols()
            .chain(file.dynamic_symbols())
            .any(|s| s.name() == Ok(name) && !s.is_undefined())
    };
    for symbol in [
        "__asan_init",
        "__asan_default_options",
        "cusafe_asan_defaults",
    ] {
        assert!(defined(symbol), "{symbol} is not defined in the executable");
    }
    assert!(
        file.section_by_name(".nv_fatbin").is_some(),
        "no device code"
    );
    let needed = needed(&exe);
    let rt_at = needed.iter().position(|n| n == "libcusafe_rt.so");
    let cudart_at = needed.iter().position(|n| n == "libcudart.so.12");
    assert!(
        matches!((rt_at, cudart_at), (Some(r), Some(c)) if r < c),
        "{needed:?}"
    );

    // ASan runs with our defaults; ASAN_OPTIONS overrides one and keeps the other.
    // (`help=1` lists the flags and lets the program go on; without a GPU it then stops
    // at its first CUDA call.)
    let (_, _, help) = run(&exe, &[], "help=1");
    assert_eq!(asan_flag(&help, "protect_shadow_gap"), "false", "{help}");
    assert_eq!(asan_flag(&help, "detect_leaks"), "false");
    let (_, _, help) = run(&exe, &[], "help=1:detect_leaks=1");
    assert_eq!(asan_flag(&help, "detect_leaks"), "true");
    assert_eq!(asan_flag(&help, "protect_shadow_gap"), "false");

    assert_host_overflow_reported(&exe, line);
}

#[test]
fn asan_compile_and_link_in_two_steps() {
    let dir = TempDir::new("asan2");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    let (src, line) = fixture();
    let obj = dir.path().join("asan_loader.o");
    let exe = dir.path().join("asan_loader");
    let stats = build(
        &tree,
        &[
            "-fsanitize=address".as_ref(),
            "-O1".as_ref(),
            "-g".as_ref(),
            "-c".as_ref(),
            src.as_os_str(),
            "-o".as_ref(),
            obj.as_os_str(),
        ],
    );
    assert!(
        stats.contains("cusafe: kernel _Z5scaleP6Recordif: "),
        "{stats}"
    );
    // The link names the flag plainly (no CUDA compile: nothing to keep it from).
    build(
        &tree,
        &[
            "-fsanitize=address".as_ref(),
            obj.as_os_str(),
            "-o".as_ref(),
            exe.as_os_str(),
        ],
    );
    assert_host_overflow_reported(&exe, line);
}
