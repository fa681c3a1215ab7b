//! Builds the C++ plugin shim against LLVM 19 and the device runtime bitcode
//! (device-rt/cusafe_rt.c) with clang-19, its constants from the formats crate's C
//! header (`cusafe_format::c_header`).

use std::path::PathBuf;
use std::process::Command;

fn llvm_config(arg: &str) -> String {
    let prefix = std::env::var("LLVM_SYS_191_PREFIX").unwrap_or_else(|_| "/usr/lib/llvm-19".into());
    let exe = PathBuf::from(&prefix).join("bin/llvm-config");
    let out = Command::new(&exe).arg(arg).output().unwrap_or_else(|e| {
        panic!(
            "cannot run {}: {e}; run scripts/setup.sh to install LLVM 19",
            exe.display()
        )
    });
    assert!(out.status.success(), "{} {arg} failed", exe.display());
    String::from_utf8(out.stdout)
        .expect("utf-8")
        .trim()
        .to_string()
}

fn main() {
    let mut build = cc::Build::new();
    build.cpp(true).file("shim/plugin.cpp").warnings(false);
    for flag in llvm_config("--cxxflags").split_whitespace() {
        build.flag(flag);
    }
    build.compile("cusafe_shim");
    println!("cargo:rerun-if-changed=shim/plugin.cpp");

    // Device runtime: freestanding C compiled straight to NVPTX bitcode (no CUDA headers).
    // Its CUSAFE_* constants come from the formats crate's generated header, included
    // before the source. A change to that crate rebuilds and reruns this script (it is
    // a build dependency), so the header follows it.
    let src = PathBuf::from("../device-rt/cusafe_rt.c");
    let out_dir = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let header = out_dir.join("cusafe_format.h");
    std::fs::write(&header, cusafe_format::c_header())
        .unwrap_or_else(|e| panic!("cannot write {}: {e}", header.display()));
    let out = out_dir.join("cusafe_rt.bc");
    let clang = PathBuf::from(llvm_config("--bindir")).join("clang");
    let status = Command::new(&clang)
        .args([
            "--target=nvptx64-nvidia-cuda",
            "-O2",
            "-emit-llvm",
            "-c",
            "-ffreestanding",
            "-nostdlib",
        ])
        .arg("-include")
        .arg(&header)
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; run scripts/setup.sh", clang.display()));
    assert!(status.success(), "compiling {} failed", src.display());
    println!("cargo:rerun-if-changed=../device-rt/cusafe_rt.c");
}
