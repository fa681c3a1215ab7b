//! scripts/loop-mix.py without a GPU: the hottest loop and its adds' pipes read from a
//! hand-made nvdisasm listing, the PTX it would assemble with `--inject-alu` (which the
//! toolchain's ptxas must accept), and its errors.

mod common;

use std::path::Path;
use std::process::{Command, Output};

use common::repo;

/// A kernel `k` with no loop, in the PTX the toolchain's ptxas reads.
const KERNEL_PTX: &str = ".version 8.5
.target sm_90
.address_size 64

.visible .entry k(
\t.param .u64 k_param_0
)
{
\t.reg .b64 \t%rd<3>;
\tld.param.u64 \t%rd1, [k_param_0];
\tret;
}
";

/// An nvdisasm listing of `k`: a straight block, then a loop of six instructions (one
/// add on each pipe) and a shorter one.
const LISTING: &str = "\t.section\t.text.k,\"ax\",@progbits
.text.k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
.L_x_0:
        /*0010*/                   IADD3 R2, R2, R3, RZ ;
        /*0020*/                   IMAD.IADD R4, R4, 0x1, R3 ;
        /*0030*/                   IMAD.WIDE R6, R2, 0x4, R8 ;
        /*0040*/                   LDG.E R5, desc[UR4][R6.64] ;
        /*0050*/                   FFMA R9, R5, R5, R9 ;
        /*0060*/               @P0 BRA `(.L_x_0) ;
.L_x_1:
        /*0070*/                   LEA R2, R2, R3, 0x2 ;
        /*0080*/               @P1 BRA `(.L_x_1) ;
        /*0090*/                   EXIT ;
";

fn loop_mix(dir: &Path, args: &[&str]) -> Output {
    let ptx = dir.join("k.ptx");
    std::fs::write(&ptx, KERNEL_PTX).unwrap();
    Command::new(repo().join("scripts/loop-mix.py"))
        .arg(&ptx)
        .args(args)
        .env("CUSAFE_CUDA", repo().join(".toolchain/cuda"))
        .env(
            "CUSAFE_NVDISASM",
            repo().join(".toolchain/nvdisasm/nvidia/cu13/bin/nvdisasm"),
        )
        .output()
        .expect("run scripts/loop-mix.py")
}

/// The standard output of a run that must have succeeded.
fn succeeded(out: Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "loop-mix.py failed: {stderr}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn temp(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("cusafe-loop-mix-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_largest_loop_and_the_pipes_of_its_adds_are_read_from_a_listing() {
    let dir = temp("listing");
    std::fs::write(dir.join("k.sass"), LISTING).unwrap();
    let sass = dir.join("k.sass");
    let text = succeeded(loop_mix(&dir, &["k", "--sass", sass.to_str().unwrap()]));
    assert!(
        text.contains("k: hottest loop 6 instructions; integer adds on the ALU pipe (IADD3, LEA, VIADD) 1, on the FMA pipe (IMAD.IADD) 1"),
        "{text}"
    );
    assert!(
        text.contains("1 BRA, 1 FFMA, 1 IADD3, 1 IMAD.IADD, 1 IMAD.WIDE, 1 LDG.E"),
        "{text}"
    );
}

/// An nvdisasm listing of `k` with no loop of its own, then a called function's body
/// (after the kernel's last EXIT, no label between) that loops.
const CALLEE_LOOP: &str = "\t.section\t.text.k,\"ax\",@progbits
.text.k:
        /*0000*/                   MOV R1, c[0x0][0x28] ;
        /*0010*/                   EXIT ;
        /*0020*/                   IADD3 R2, R2, R3, RZ ;
.L_x_7:
        /*0030*/                   IADD3 R2, R2, R3, RZ ;
        /*0040*/               @P0 BRA `(.L_x_7) ;
        /*0050*/                   RET.REL.NODEC R20 `(k) ;
";

#[test]
fn loops_of_called_functions_placed_after_the_kernel_are_not_the_kernels() {
    let dir = temp("callee");
    let sass = dir.join("k.sass");
    std::fs::write(&sass, CALLEE_LOOP).unwrap();
    let out = loop_mix(&dir, &["k", "--sass", sass.to_str().unwrap()]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("loop-mix.py: k has no loop"));
    // With no kernel named, a kernel without a loop prints nothing.
    let all = succeeded(loop_mix(&dir, &["--sass", sass.to_str().unwrap()]));
    assert_eq!(all, "");
    std::fs::write(&sass, LISTING).unwrap();
    let all = succeeded(loop_mix(&dir, &["--sass", sass.to_str().unwrap()]));
    assert!(
        all.starts_with("k: hottest loop 6 instructions;") && all.lines().count() == 1,
        "{all}"
    );
}

#[test]
fn injected_alu_work_sits_behind_a_branch_no_thread_takes_and_ptxas_accepts_it() {
    let dir = temp("inject");
    let ptx = succeeded(loop_mix(&dir, &["k", "--inject-alu", "3", "--emit-ptx"]));
    assert!(
        ptx.contains("setp.eq.u32 \t%mixp0, %mixt0, -1;\n\t@%mixp0 bra \t$MIX_COLD;"),
        "{ptx}"
    );
    let injected = ["xor.b64 \t%mixd1", "max.u64 \t%mixd2", "add.s64 \t%mixd3"];
    assert!(injected.iter().all(|op| ptx.contains(op)), "{ptx}");
    assert!(
        !ptx.contains("%mixd4,"),
        "three instructions, not more: {ptx}"
    );
    // The block comes after the kernel's last instruction and jumps back.
    let cold = ptx.find("$MIX_COLD:").expect("the cold block");
    assert!(ptx.find("\tret;").unwrap() < cold && ptx[cold..].contains("bra.uni \t$MIX_BACK;"));
    let file = dir.join("injected.ptx");
    std::fs::write(&file, &ptx).unwrap();
    let ptxas = repo().join(".toolchain/cuda/bin/ptxas");
    assert!(
        ptxas.exists(),
        "{} is missing: run scripts/setup.sh",
        ptxas.display()
    );
    let asm = Command::new(&ptxas)
        .args(["-arch=sm_90", file.to_str().unwrap(), "-o"])
        .arg(dir.join("injected.cubin"))
        .output()
        .expect("run ptxas");
    assert!(
        asm.status.success(),
        "{}",
        String::from_utf8_lossy(&asm.stderr)
    );
}

#[test]
fn a_missing_kernel_and_a_missing_toolchain_are_named() {
    let dir = temp("errors");
    let out = loop_mix(&dir, &["nosuch", "--inject-alu", "1", "--emit-ptx"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no .entry nosuch in the PTX"));
    let out = loop_mix(&dir, &["--inject-alu", "1", "--emit-ptx"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--inject-alu needs the KERNEL"));
    let out = loop_mix(&dir, &["k", "--inject-alu", "1", "--sass", "k.sass"]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sass reads a listing as it is"));
    // A ptxas that fails is named with what it printed, no traceback (a stand-in
    // nvdisasm: CI has none).
    let (fails, nvdisasm) = (dir.join("ptxas"), dir.join("nvdisasm"));
    common::script(&fails, "echo 'ptxas fatal: bad input' >&2; exit 1");
    common::script(&nvdisasm, "exit 0");
    let out = Command::new(repo().join("scripts/loop-mix.py"))
        .args([dir.join("k.ptx").to_str().unwrap(), "k", "--ptxas"])
        .arg(&fails)
        .env("CUSAFE_CUDA", repo().join(".toolchain/cuda"))
        .env("CUSAFE_NVDISASM", &nvdisasm)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && !err.contains("Traceback"), "{err}");
    assert!(
        err.contains("ptxas failed on") && err.contains("ptxas fatal: bad input"),
        "{err}"
    );
    let out = Command::new(repo().join("scripts/loop-mix.py"))
        .args([dir.join("k.ptx").to_str().unwrap(), "k"])
        .env_remove("CUSAFE_CUDA")
        .env_remove("CUSAFE_NVDISASM")
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("run `source scripts/env.sh` first"));
}
