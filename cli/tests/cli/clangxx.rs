//! `cusafe-clang++`: help, version, the rewritten command line, errors, exec.

use crate::common::{copy_to_bundle, output, tool, write, FakeToolchain, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_cusafe-clangxx");

/// The command `--cusafe-print-command` prints for `args` with a fake toolchain.
fn printed(tc: &FakeToolchain, args: &[&str]) -> String {
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    let (code, stdout, stderr) = output(cmd.arg("--cusafe-print-command").args(args));
    assert_eq!(code, 0, "stderr: {stderr}");
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    stdout.trim_end().to_owned()
}

fn rt_dir(tc: &FakeToolchain) -> String {
    tc.rt.parent().unwrap().display().to_string()
}

#[test]
fn help_lists_cusafe_flags_and_hands_the_rest_to_clang() {
    let (code, stdout, _) = output(tool(BIN).arg("--help"));
    assert_eq!(code, 0);
    for flag in [
        "--cusafe-no-instrument",
        "--cusafe-stats",
        "--cusafe-print-command",
    ] {
        assert!(stdout.contains(flag), "{flag} missing from:\n{stdout}");
    }
    assert!(
        stdout
            .trim_end()
            .ends_with("all other flags go to clang++-19"),
        "{stdout}"
    );
}

#[test]
fn version_prints_ours_then_clangs() {
    let tc = FakeToolchain::new("version");
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    let (code, stdout, _) = output(cmd.arg("--version"));
    assert_eq!(code, 0);
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(format!("cusafe-clang++ {} (cusafe)", env!("CARGO_PKG_VERSION")).as_str())
    );
    assert_eq!(lines.next(), Some("fake clang version 19.1.7"));
}

#[test]
fn instrumented_build_command() {
    let tc = FakeToolchain::new("instr");
    let cuda = tc.cuda.display();
    let rt = rt_dir(&tc);
    let expected = format!(
        "{clang} --cuda-path={cuda} -Wno-unknown-cuda-version -ffp-contract=on \
         --cuda-gpu-arch=sm_90 \
         -Xarch_device -gline-directives-only -Xarch_device -fpass-plugin={plugin} \
         -O2 -g a.cu b.cu -o app -L{rt} -Wl,--push-state,--no-as-needed -lcusafe_rt \
         -Wl,--pop-state -L{cuda}/lib64 -lcudart \
         -Wl,-rpath,{rt} '-Wl,-rpath,$ORIGIN' -Wl,-rpath,{cuda}/lib64 \
         -Wl,--undefined=__cusafe_rt_present",
        clang = tc.clang.display(),
        plugin = tc.plugin.display(),
    );
    assert_eq!(
        printed(&tc, &["-O2", "-g", "a.cu", "b.cu", "-o", "app"]),
        expected
    );
}

#[test]
fn asan_build_command_is_host_only_with_the_defaults() {
    let tc = FakeToolchain::new("asan");
    let cuda = tc.cuda.display();
    let rt = rt_dir(&tc);
    let expected = format!(
        "{clang} --cuda-path={cuda} -Wno-unknown-cuda-version -ffp-contract=on \
         --cuda-gpu-arch=sm_90 \
         -Xarch_device -gline-directives-only -Xarch_device -fpass-plugin={plugin} \
         -Xarch_host -fsanitize=address,undefined -O1 -g a.cu -o app -L{rt} \
         -Wl,--push-state,--no-as-needed -lcusafe_rt -Wl,--pop-state -L{cuda}/lib64 -lcudart \
         -Wl,-rpath,{rt} '-Wl,-rpath,$ORIGIN' -Wl,-rpath,{cuda}/lib64 \
         -Wl,--undefined=__cusafe_rt_present -Wl,--undefined=cusafe_asan_defaults {asan}",
        clang = tc.clang.display(),
        plugin = tc.plugin.display(),
        asan = tc.asan_defaults.display(),
    );
    assert_eq!(
        printed(
            &tc,
            &[
                "-fsanitize=address,undefined",
                "-O1",
                "-g",
                "a.cu",
                "-o",
                "app"
            ]
        ),
        expected
    );
    // Refused beside the runtime, naming the flag (exit 2).
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    let (code, _, stderr) = output(cmd.args(["-fsanitize=thread", "a.cu", "-o", "app"]));
    assert_eq!(code, 2);
    assert!(
        stderr.starts_with(
            "cusafe-clang++: error: -fsanitize=thread: the thread sanitizer cannot run \
             beside cusafe's runtime"
        ),
        "{stderr}"
    );
}

#[test]
fn no_instrument_is_the_plain_build() {
    let tc = FakeToolchain::new("plain");
    let cuda = tc.cuda.display();
    let expected = format!(
        "{clang} --cuda-path={cuda} -Wno-unknown-cuda-version -ffp-contract=on \
         --cuda-gpu-arch=sm_90 \
         -O2 a.cu -o app -L{cuda}/lib64 -lcudart '-Wl,-rpath,$ORIGIN' -Wl,-rpath,{cuda}/lib64",
        clang = tc.clang.display(),
    );
    assert_eq!(
        printed(&tc, &["--cusafe-no-instrument", "-O2", "a.cu", "-o", "app"]),
        expected
    );
}

#[test]
fn called_as_cusafe_plain_clangxx_it_builds_plain() {
    let tc = FakeToolchain::new("plainname");
    let dir = TempDir::new("plainname");
    let plain = dir.path().join("cusafe-plain-clang++");
    std::os::unix::fs::symlink(BIN, &plain).unwrap();
    let mut cmd = tool(plain.to_str().unwrap());
    tc.apply(&mut cmd);
    let (code, stdout, stderr) =
        output(cmd.args(["--cusafe-print-command", "-O2", "a.cu", "-o", "app"]));
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        stdout.trim_end(),
        printed(&tc, &["--cusafe-no-instrument", "-O2", "a.cu", "-o", "app"])
    );
    assert!(!stdout.contains("cusafe_rt"), "{stdout}");
}

#[test]
fn compile_only_adds_device_flags_but_no_link_flags() {
    let tc = FakeToolchain::new("compile");
    let line = printed(&tc, &["-c", "-O3", "k.cu", "-o", "k.o"]);
    assert!(line.contains("-Xarch_device -fpass-plugin="), "{line}");
    assert!(
        line.contains("-Xarch_device -gline-directives-only"),
        "{line}"
    );
    for absent in ["-lcusafe_rt", "-lcudart", "-rpath", "--undefined"] {
        assert!(!line.contains(absent), "{absent} in {line}");
    }
}

#[test]
fn stats_sets_the_pass_variable() {
    let tc = FakeToolchain::new("stats");
    let line = printed(&tc, &["--cusafe-stats", "-c", "k.cu"]);
    assert!(line.starts_with("CUSAFE_PASS_STATS=1 "), "{line}");
    let line = printed(&tc, &["-c", "k.cu"]);
    assert!(!line.contains("CUSAFE_PASS_STATS"), "{line}");
}

#[test]
fn recover_sets_the_pass_variable() {
    let tc = FakeToolchain::new("recover");
    let line = printed(&tc, &["--cusafe-recover", "--cusafe-stats", "-c", "k.cu"]);
    assert!(
        line.starts_with("CUSAFE_PASS_STATS=1 CUSAFE_PASS_RECOVER=1 "),
        "{line}"
    );
    let line = printed(&tc, &["-c", "k.cu"]);
    assert!(!line.contains("CUSAFE_PASS_RECOVER"), "{line}");
}

#[test]
fn no_launch_bounds_turns_the_pass_variable_off() {
    let tc = FakeToolchain::new("nolaunch");
    let line = printed(&tc, &["--cusafe-no-launch-bounds", "-c", "k.cu"]);
    assert!(line.starts_with("CUSAFE_PASS_LAUNCH_BOUNDS=0 "), "{line}");
    let line = printed(&tc, &["-c", "k.cu"]);
    assert!(!line.contains("CUSAFE_PASS_LAUNCH_BOUNDS"), "{line}");
}

#[test]
fn host_only_compile_is_passed_through_unchanged() {
    let tc = FakeToolchain::new("host");
    assert_eq!(
        printed(&tc, &["-c", "-O2", "x.cpp", "-o", "x.o"]),
        format!("{} -c -O2 x.cpp -o x.o", tc.clang.display())
    );
}

#[test]
fn host_link_gets_only_the_runtime() {
    let tc = FakeToolchain::new("hostlink");
    let line = printed(&tc, &["x.cpp", "-o", "x"]);
    assert!(line.contains("-lcusafe_rt"), "{line}");
    for absent in [
        "--cuda-path",
        "-Xarch_device",
        "--cuda-gpu-arch",
        "-Wno-unknown-cuda-version",
    ] {
        assert!(!line.contains(absent), "{absent} in {line}");
    }
}

#[test]
fn link_only_invocation_adds_the_runtime_before_cudart() {
    let tc = FakeToolchain::new("linkonly");
    let line = printed(&tc, &["a.o", "b.o", "-o", "app"]);
    let rt = line.find("-lcusafe_rt").expect(&line);
    let cudart = line.find("-lcudart").expect(&line);
    assert!(rt < cudart, "{line}");
    assert!(
        line.contains("-Wl,--undefined=__cusafe_rt_present"),
        "{line}"
    );
    assert!(!line.contains("-Xarch_device"), "{line}");
}

#[test]
fn users_cudart_keeps_its_place_after_the_runtime() {
    let tc = FakeToolchain::new("usercudart");
    let line = printed(&tc, &["a.o", "-lfoo", "-lcudart", "-o", "app"]);
    let expected = format!(
        "a.o -lfoo -L{} -Wl,--push-state,--no-as-needed -lcusafe_rt -Wl,--pop-state \
         -lcudart -o app -L{}/lib64 ",
        rt_dir(&tc),
        tc.cuda.display()
    );
    assert!(line.contains(&expected), "{line}");
    assert_eq!(line.matches("-lcudart").count(), 1, "{line}");
}

#[test]
fn given_gpu_arch_and_cuda_path_are_respected() {
    let tc = FakeToolchain::new("arch");
    let line = printed(&tc, &["--cuda-gpu-arch=sm_80", "-c", "k.cu"]);
    assert!(!line.contains("sm_90"), "{line}");
    let other = TempDir::new("othercuda");
    for piece in [
        "include/cuda_runtime.h",
        "bin/ptxas",
        "bin/fatbinary",
        "nvvm/libdevice/libdevice.10.bc",
    ] {
        write(&other.path().join(piece), "");
    }
    let own = format!("--cuda-path={}", other.path().display());
    let line = printed(&tc, &[&own, "-c", "k.cu"]);
    assert_eq!(line.matches("--cuda-path=").count(), 1, "{line}");
    assert!(line.contains(&own), "{line}");
}

#[test]
fn x_cuda_makes_any_file_cuda() {
    let tc = FakeToolchain::new("xcuda");
    let line = printed(&tc, &["-x", "cuda", "k.cpp", "-c"]);
    assert!(line.contains("-Xarch_device -fpass-plugin="), "{line}");
}

#[test]
fn cuda_host_only_gets_no_device_flags() {
    let tc = FakeToolchain::new("hostonly");
    let line = printed(&tc, &["--cuda-host-only", "-c", "k.cu"]);
    assert!(!line.contains("-Xarch_device"), "{line}");
    assert!(line.contains("--cuda-path="), "{line}");
}

#[test]
fn runs_clang_with_the_arguments_and_passes_its_exit_code() {
    let tc = FakeToolchain::new("exec");
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    let (code, stdout, _) = output(cmd.args(["--cusafe-stats", "-c", "k.cu", "-DX=a b"]));
    assert_eq!(code, 3, "the fake clang exits 3");
    assert!(stdout.contains("stats=1\n"), "{stdout}");
    assert!(stdout.contains("arg=-DX=a b\n"), "{stdout}");
    assert!(stdout.contains("arg=-Xarch_device\n"), "{stdout}");
}

#[test]
fn unknown_cusafe_flag_is_an_error() {
    let (code, _, stderr) = output(tool(BIN).args(["--cusafe-bogus", "k.cu"]));
    assert_eq!(code, 2);
    assert!(stderr.contains("--cusafe-bogus"), "{stderr}");
}

#[test]
fn missing_clang_says_how_to_fix_it() {
    let (code, _, stderr) = output(
        tool(BIN)
            .env("CUSAFE_CLANG", "/nonexistent/clang++")
            .args(["-c", "k.cu"]),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("CUSAFE_CLANG=/nonexistent/clang++ does not exist"),
        "{stderr}"
    );
}

#[test]
fn bundle_without_toolchain_explains_each_missing_piece() {
    let tc = FakeToolchain::new("bundle-tc");
    let bundle = TempDir::new("bundle");
    let exe = copy_to_bundle(BIN, bundle.path());
    let run = |args: &[&str]| {
        let mut cmd = tool(exe.to_str().unwrap());
        cmd.env("CUSAFE_CLANG", &tc.clang);
        output(cmd.arg("--cusafe-print-command").args(args))
    };

    // No CUDA tree beside the bundle.
    let (code, _, stderr) = run(&["k.cu", "-o", "k"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("no CUDA tree found") && stderr.contains("scripts/setup.sh"),
        "{stderr}"
    );

    // A CUDA tree at <bundle>/cuda without fatbinary.
    let cuda = bundle.path().join("cuda");
    for piece in [
        "include/cuda_runtime.h",
        "bin/ptxas",
        "nvvm/libdevice/libdevice.10.bc",
        "lib64/libcudart.so",
    ] {
        write(&cuda.join(piece), "");
    }
    let (code, _, stderr) = run(&["k.cu", "-o", "k"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("bin/fatbinary") && stderr.contains("scripts/link-fatbinary.sh"),
        "{stderr}"
    );

    // Complete tree: now the plugin is missing.
    write(&cuda.join("bin/fatbinary"), "");
    let (code, _, stderr) = run(&["k.cu", "-o", "k"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("libcusafe_pass.so not found") && stderr.contains("cargo build --release"),
        "{stderr}"
    );

    // Plugin in <bundle>/lib: now the runtime is missing.
    write(&bundle.path().join("lib/libcusafe_pass.so"), "");
    let (code, _, stderr) = run(&["k.cu", "-o", "k"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("libcusafe_rt.so not found"), "{stderr}");

    // The plain build needs neither.
    let (code, stdout, stderr) = run(&["--cusafe-no-instrument", "k.cu", "-o", "k"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.contains(&format!("--cuda-path={}", cuda.display())),
        "{stdout}"
    );

    // Runtime beside the executable: the instrumented build is complete.
    write(&bundle.path().join("bin/libcusafe_rt.so"), "");
    let (code, stdout, stderr) = run(&["k.cu", "-o", "k"]);
    assert_eq!(code, 0, "{stderr}");
    let plugin = bundle.path().join("lib/libcusafe_pass.so");
    assert!(
        stdout.contains(&format!("-fpass-plugin={}", plugin.display())),
        "{stdout}"
    );
    let rt_dir = bundle.path().join("bin");
    assert!(
        stdout.contains(&format!("-L{} -Wl,--push-state", rt_dir.display())),
        "{stdout}"
    );

    // -fsanitize=address links need the ASan defaults archive; compiles do not, and
    // --cusafe-no-asan-defaults does without it.
    let (code, _, stderr) = run(&["-fsanitize=address", "k.cu", "-o", "k"]);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("libcusafe_asan_defaults.a not found")
            && stderr.contains("cargo build --release -p cusafe-asan-defaults")
            && stderr.contains("--cusafe-no-asan-defaults"),
        "{stderr}"
    );
    let (code, _, stderr) = run(&["-fsanitize=address", "-c", "k.cu"]);
    assert_eq!(code, 0, "{stderr}");
    let (code, stdout, stderr) = run(&[
        "--cusafe-no-asan-defaults",
        "-fsanitize=address",
        "k.cu",
        "-o",
        "k",
    ]);
    assert_eq!(code, 0, "{stderr}");
    assert!(!stdout.contains("asan_defaults"), "{stdout}");
    let lib = bundle.path().join("lib/libcusafe_asan_defaults.a");
    write(&lib, "");
    let (code, stdout, stderr) = run(&["-fsanitize=address", "k.cu", "-o", "k"]);
    assert_eq!(code, 0, "{stderr}");
    assert!(
        stdout.ends_with(&format!(
            "-Wl,--undefined=cusafe_asan_defaults {}\n",
            lib.display()
        )),
        "{stdout}"
    );
}
