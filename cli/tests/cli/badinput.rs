//! Bad input to `cusafe-clang++` (issue 19, part 5): unknown and misspelt `--cusafe-*`
//! flags, garbage values of the pass's `CUSAFE_PASS_*` variables, corrupt IR inputs.
//! Each is one clear error (ours or clang's), never a crash: no panic, no signal, no
//! LLVM stack dump.
//!
//! The flag cases need nothing; the others run the real toolchain and the plugin built
//! beside `cusafe-clang++`, and print why and pass without them (fail under `CI=true`).

use std::path::{Path, PathBuf};

use crate::build::ready_tree;
use crate::common::{output, tool, write, TempDir};

const CLANGXX: &str = env!("CARGO_BIN_EXE_cusafe-clangxx");

const KERNEL: &str = r#"__global__ void add(int *a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) a[i] += 1;
}
"#;

/// Asserts that `stderr` shows no crash of clang, the pass or our tools.
fn no_crash(code: i32, stderr: &str) {
    assert!(code > 0 && code < 128, "exit {code} (a signal?): {stderr}");
    for sign in [
        "panicked",
        "Stack dump",
        "PLEASE submit a bug report",
        "Segmentation fault",
    ] {
        assert!(!stderr.contains(sign), "{sign}: {stderr}");
    }
}

#[test]
fn unknown_and_misspelt_flags_name_the_known_ones() {
    for (flag, meant) in [
        ("--cusafe-bogus", None),
        ("--cusafe-stat", Some("--cusafe-stats")),
        ("--cusafe-stats=1", Some("--cusafe-stats")),
        ("-cusafe-recover", Some("--cusafe-recover")),
        ("--cusafe_no_instrument", Some("--cusafe-no-instrument")),
    ] {
        let (code, stdout, stderr) = output(tool(CLANGXX).args([flag, "-c", "x.cu"]));
        assert_eq!(code, 2, "{flag}: {stderr}");
        assert_eq!(stdout, "");
        assert_eq!(stderr.lines().count(), 1, "{flag}: one line: {stderr}");
        assert!(
            stderr.starts_with(&format!(
                "cusafe-clang++: error: unknown cusafe flag '{flag}'"
            )),
            "{stderr}"
        );
        assert!(
            stderr.contains("the cusafe flags are --cusafe-no-instrument, --cusafe-stats,"),
            "{stderr}"
        );
        match meant {
            Some(m) => assert!(stderr.contains(&format!("(did you mean {m}?)")), "{stderr}"),
            None => assert!(!stderr.contains("did you mean"), "{stderr}"),
        }
    }
    // A flag that needs another one says which.
    let (code, _, stderr) = output(tool(CLANGXX).args(["--cusafe-fuzz-no-asan", "x.cu"]));
    assert_eq!(code, 2);
    assert_eq!(
        stderr,
        "cusafe-clang++: error: --cusafe-fuzz-no-asan and --cusafe-fuzz-no-device-edges need --cusafe-fuzz (add it)\n"
    );
}

/// The CUDA tree with our fatbinary, or None (after saying why) without the toolchain
/// or the plugin built beside `cusafe-clang++`.
fn ready(dir: &Path) -> Option<PathBuf> {
    ready_tree(dir, &["libcusafe_pass.so"], &[])
}

#[test]
fn a_garbage_pass_variable_stops_the_compile_with_one_line() {
    let dir = TempDir::new("badinput-env");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    let src = dir.path().join("k.cu");
    write(&src, KERNEL);
    for (var, value) in [
        ("CUSAFE_PASS_CHECKS", "off"),
        ("CUSAFE_PASS_RECOVER", "sometimes"),
        ("CUSAFE_PASS_COVERAGE", "yes"),
        ("CUSAFE_PASS_OPT", "2"),
    ] {
        let (code, _, stderr) = output(
            tool(CLANGXX)
                .env("CUSAFE_CUDA_PATH", &tree)
                .env(var, value)
                .current_dir(dir.path())
                .args(["-c", "k.cu", "-o", "k.o"]),
        );
        no_crash(code, &stderr);
        let ours: Vec<&str> = stderr
            .lines()
            .filter(|l| l.starts_with("cusafe: error:"))
            .collect();
        assert_eq!(ours.len(), 1, "{var}={value}: {stderr}");
        assert!(
            ours[0].starts_with(&format!(
                "cusafe: error: {var}={value}: accepted values are"
            )),
            "{stderr}"
        );
        assert!(!dir.path().join("k.o").exists());
    }
    // Accepted spellings build.
    let (code, _, stderr) = output(
        tool(CLANGXX)
            .env("CUSAFE_CUDA_PATH", &tree)
            .env("CUSAFE_PASS_CHECKS", "true")
            .env("CUSAFE_PASS_OPT", "")
            .current_dir(dir.path())
            .args(["-c", "k.cu", "-o", "k.o"]),
    );
    assert_eq!(code, 0, "{stderr}");
}

#[test]
fn corrupt_ir_inputs_are_clangs_error_not_a_crash() {
    let dir = TempDir::new("badinput-ir");
    let Some(tree) = ready(dir.path()) else {
        return;
    };
    let d = dir.path();
    write(&d.join("junk.ll"), "this is not IR\n");
    // Bytes that are not UTF-8 text, not bitcode.
    let noise: Vec<u8> = (0u32..4096)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
        .collect();
    std::fs::write(d.join("noise.bc"), &noise).unwrap();
    // A bitcode magic, then garbage; and real bitcode cut short.
    let mut magic = b"BC\xc0\xde\x35\x14\x00\x00\x05\x00\x00\x00\x62\x0c\x30\x24".to_vec();
    magic.extend_from_slice(&noise[..512]);
    std::fs::write(d.join("magic.bc"), &magic).unwrap();
    let ll = d.join("good.ll");
    write(
        &ll,
        "target triple = \"x86_64-pc-linux-gnu\"\ndefine i32 @f(i32 %x) {\n  ret i32 %x\n}\n",
    );
    let (code, _, stderr) = output(tool("/usr/lib/llvm-19/bin/clang++").current_dir(d).args([
        "-c",
        "-emit-llvm",
        "good.ll",
        "-o",
        "good.bc",
    ]));
    assert_eq!(code, 0, "{stderr}");
    let good = std::fs::read(d.join("good.bc")).unwrap();
    std::fs::write(d.join("trunc.bc"), &good[..good.len() / 2]).unwrap();
    let cases: &[&[&str]] = &[
        &["-c", "junk.ll", "-o", "x.o"],
        &["-c", "noise.bc", "-o", "x.o"],
        &["-c", "magic.bc", "-o", "x.o"],
        &["-c", "trunc.bc", "-o", "x.o"],
        // Linked as an instrumented program: clang still reads it first.
        &["junk.ll", "-o", "app"],
        // Read as CUDA source (the device side goes through the pass only if it parses).
        &["-x", "cuda", "-c", "noise.bc", "-o", "x.o"],
    ];
    for args in cases {
        let (code, _, stderr) = output(
            tool(CLANGXX)
                .env("CUSAFE_CUDA_PATH", &tree)
                .current_dir(d)
                .args(*args),
        );
        no_crash(code, &stderr);
        assert!(stderr.contains("error"), "{args:?}: {stderr}");
        assert!(
            !d.join("x.o").exists() && !d.join("app").exists(),
            "{args:?}"
        );
    }
}
