//! The pass's compile-time cost: `opt -passes=cusafe` against `opt -passes=verify` on the
//! same generated device module (kernels with loops of loads and stores through
//! pointer arguments, stencils and pointer tables), so that the difference over the
//! instruction count is the pass's time per instruction (criterion prints both with
//! their throughput in instructions). Needs the plugin built
//! (`cargo build --release -p cusafe-pass`) and LLVM 19's `opt`.

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

/// One kernel: a rotated loop over `i` with `accesses` stencil loads and a store.
fn kernel(out: &mut String, k: usize, accesses: usize) -> usize {
    let mut body = String::new();
    let mut n = 0;
    for a in 0..accesses {
        let _ = writeln!(body, "  %x{a} = add nsw i64 %i, {a}");
        let _ = writeln!(
            body,
            "  %p{a} = getelementptr inbounds float, ptr %in, i64 %x{a}"
        );
        let _ = writeln!(body, "  %v{a} = load float, ptr %p{a}, align 4");
        n += 3;
        if a > 0 {
            let _ = writeln!(body, "  %s{a} = fadd float %s{}, %v{a}", a - 1);
        } else {
            let _ = writeln!(body, "  %s0 = fadd float 0.0, %v0");
        }
        n += 1;
    }
    let last = accesses - 1;
    let _ = write!(
        out,
        "define void @k{k}(ptr %in, ptr %out, i64 %n) {{
entry:
  %c = icmp sgt i64 %n, 0
  br i1 %c, label %ph, label %exit
ph:
  br label %loop
loop:
  %i = phi i64 [ 0, %ph ], [ %i1, %loop ]
{body}  %q = getelementptr inbounds float, ptr %out, i64 %i
  store float %s{last}, ptr %q, align 4
  %i1 = add i64 %i, 1
  %d = icmp slt i64 %i1, %n
  br i1 %d, label %loop, label %exit
exit:
  ret void
}}
"
    );
    n + 12
}

/// A module of `kernels` kernels; returns its text and instruction count.
fn module(kernels: usize, accesses: usize) -> (String, usize) {
    let mut text = String::from(
        "target datalayout = \"e-i64:64-i128:128-v16:16-v32:32-n16:32:64\"\ntarget triple = \"nvptx64-nvidia-cuda\"\n",
    );
    let mut n = 0;
    for k in 0..kernels {
        n += kernel(&mut text, k, accesses);
    }
    let names: Vec<String> = (0..kernels).map(|k| format!("!{k}")).collect();
    let _ = writeln!(text, "!nvvm.annotations = !{{{}}}", names.join(", "));
    for k in 0..kernels {
        let _ = writeln!(text, "!{k} = !{{ptr @k{k}, !\"kernel\", i32 1}}");
    }
    (text, n)
}

fn tool_paths() -> (PathBuf, PathBuf) {
    let llvm = std::env::var("CUSAFE_LLVM_BIN").unwrap_or_else(|_| "/usr/lib/llvm-19/bin".into());
    let opt = PathBuf::from(llvm).join("opt");
    let plugin = std::env::var_os("CUSAFE_PASS_PLUGIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../target/release/libcusafe_pass.so")
        });
    assert!(
        opt.exists(),
        "{} is missing: install LLVM 19 (scripts/setup.sh) or set CUSAFE_LLVM_BIN",
        opt.display()
    );
    assert!(
        plugin.exists(),
        "{} is missing: run `cargo build --release -p cusafe-pass` first, or set CUSAFE_PASS_PLUGIN",
        plugin.display()
    );
    (opt, plugin)
}

fn run_opt(opt: &PathBuf, args: &[&str], input: &PathBuf) {
    let status = Command::new(opt)
        .args(args)
        .arg(input)
        .args(["-S", "-o", "/dev/null"])
        .env("CUSAFE_PASS_STATS", "0")
        .status()
        .expect("opt runs");
    assert!(status.success(), "opt {args:?} failed");
}

fn pass(c: &mut Criterion) {
    let (opt, plugin) = tool_paths();
    let (text, insts) = module(200, 24);
    let dir = std::env::temp_dir().join(format!("cusafe-pass-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let input = dir.join("module.ll");
    std::fs::write(&input, text).expect("write module");
    let load = format!("-load-pass-plugin={}", plugin.display());
    let mut g = c.benchmark_group(format!("opt on {insts} IR instructions"));
    g.sample_size(10)
        .throughput(Throughput::Elements(insts as u64));
    g.bench_function("verify only (baseline)", |b| {
        b.iter(|| run_opt(&opt, &["-passes=verify"], &input))
    });
    g.bench_function("cusafe", |b| {
        b.iter(|| run_opt(&opt, &[&load, "-passes=cusafe"], &input))
    });
    g.finish();
    let _ = std::fs::remove_dir_all(&dir);
}

criterion_group!(benches, pass);
criterion_main!(benches);
