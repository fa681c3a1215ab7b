//! Builds the C++ plugin shim against LLVM 19 and the device runtime bitcode
//! (device-rt/cusafe_rt.c) with clang-19.

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

/// The format constants device-rt needs, from the one source of truth.
fn format_defines() -> Vec<String> {
    use cusafe_format::{devheap as h, pointer as pt, pseudo as ps, report as r, rtpage as p};
    [
        ("RTPAGE_ADDR", p::RTPAGE_ADDR),
        ("RTPAGE_REPORT_PTR", p::RTPAGE_REPORT_PTR),
        ("RTPAGE_FLAGS", p::RTPAGE_FLAGS),
        ("RTPAGE_CLAIMED", p::RTPAGE_CLAIMED),
        ("FLAG_RECOVER", p::FLAG_RECOVER.into()),
        ("PAGE_HEADER_BYTES", r::PAGE_HEADER_BYTES as u64),
        ("RECORD_BYTES", r::RECORD_BYTES as u64),
        ("PAGE_CAPACITY", r::PAGE_CAPACITY as u64),
        ("LOC_OFFSET", r::LOC_OFFSET as u64),
        ("LOC_BYTES", r::LOC_BYTES as u64),
        ("STATE_COMPLETE", r::STATE_COMPLETE.into()),
        ("KIND_POISONED", r::DeviceKind::PoisonedPointer as u64),
        ("KIND_OUT_OF_BOUNDS", r::DeviceKind::OutOfBounds as u64),
        ("KIND_OBJECT", r::DeviceKind::ObjectOutOfBounds as u64),
        ("KIND_STALE_LOCAL", r::DeviceKind::StaleLocal as u64),
        (
            "KIND_LOCAL_OUT_OF_SCOPE",
            r::DeviceKind::LocalOutOfScope as u64,
        ),
        ("OUT_OF_SCOPE", ps::OUT_OF_SCOPE),
        ("OBJECT_LOCAL", r::OBJECT_LOCAL.into()),
        ("OBJECT_SPACES", r::OBJECT_SPACES.into()),
        ("NO_HEADER", r::NO_HEADER),
        ("SITE_FLAGS_OFFSET", r::SITE_FLAGS_OFFSET.into()),
        ("SITE_LOC_OFFSET", r::SITE_LOC_OFFSET.into()),
        ("TAG_SHIFT", pt::TAG_SHIFT.into()),
        ("MIN_TAG", pt::MIN_TAG.into()),
        ("MAX_TAG", pt::MAX_TAG.into()),
        ("PSEUDO_BIT", ps::PSEUDO_BIT.into()),
        ("CLASS_SHIFT", ps::CLASS_SHIFT.into()),
        ("CLASS_MASK", ps::CLASS_MASK),
        ("SPACE_SHIFT", ps::SPACE_SHIFT.into()),
        ("OBJECT_SHARED", r::OBJECT_SHARED.into()),
        ("DEPTH_SHIFT", ps::DEPTH_SHIFT.into()),
        ("DEPTH_MASK", ps::DEPTH_MASK),
        ("GEN_SHIFT", ps::GEN_SHIFT.into()),
        ("GEN_MASK", ps::GEN_MASK),
        ("LOCAL_PREFIX", ps::LOCAL_PREFIX),
        ("EPOCH_DEPTH_OFFSET", p::EPOCH_DEPTH_OFFSET),
        ("EPOCH_GEN_OFFSET", p::EPOCH_GEN_OFFSET),
        ("EPOCH_GENS_PER_SLOT", p::EPOCH_GENS_PER_SLOT),
        ("PREFIX", cusafe_format::block::PREFIX),
        ("KIND_DOUBLE_FREE", r::DeviceKind::DeviceDoubleFree as u64),
        ("KIND_INVALID_FREE", r::DeviceKind::DeviceInvalidFree as u64),
        ("DH_STATE_OFFSET", h::STATE_OFFSET),
        ("DH_ARENA_OFFSET", h::ARENA_OFFSET),
        ("DH_ARENA_BYTES", h::ARENA_BYTES),
        ("DH_BUMP", h::BUMP),
        ("DH_FIRST_CLASS", h::FIRST_CLASS),
        ("DH_LAST_CLASS", h::LAST_CLASS),
        ("DH_FALLBACKS", h::FALLBACKS),
        ("DH_QUEUES", h::QUEUES),
        ("DH_QUEUE_BYTES", h::QUEUE_BYTES),
        ("DH_NEXT_OFFSET", h::NEXT_OFFSET),
    ]
    .iter()
    .map(|(k, v)| format!("-DCUSAFE_{k}={v}ULL"))
    .collect()
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
    let src = PathBuf::from("../device-rt/cusafe_rt.c");
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR")).join("cusafe_rt.bc");
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
        .args(format_defines())
        .arg(&src)
        .arg("-o")
        .arg(&out)
        .status()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}; run scripts/setup.sh", clang.display()));
    assert!(status.success(), "compiling {} failed", src.display());
    println!("cargo:rerun-if-changed=../device-rt/cusafe_rt.c");
}
