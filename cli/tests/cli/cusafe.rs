//! `cusafe run`, `cusafe doctor`, `cusafe fuzz`.

use crate::common::{copy_to_bundle, output, tool, FakeToolchain, TempDir};

const BIN: &str = env!("CARGO_BIN_EXE_cusafe");

#[test]
fn run_preloads_the_runtime_first_and_passes_the_exit_code() {
    let tc = FakeToolchain::new("run");
    let show = "printf '%s' \"$LD_PRELOAD\"; exit 7";

    let (code, stdout, _) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.rt)
            .args(["run", "--", "sh", "-c", show]),
    );
    assert_eq!(code, 7);
    assert_eq!(stdout, tc.rt.display().to_string());

    // An existing LD_PRELOAD is kept, after the runtime. (The fake runtime and the
    // missing /nonexistent.so make ld.so print warnings on stderr; they are ignored.)
    let (code, stdout, _) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.rt)
            .env("LD_PRELOAD", "/nonexistent.so")
            .args(["run", "--", "sh", "-c", show]),
    );
    assert_eq!(code, 7);
    assert_eq!(stdout, format!("{}:/nonexistent.so", tc.rt.display()));

    // Flags after the program belong to the program.
    let (code, stdout, _) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.rt)
            .args(["run", "--", "echo", "-n", "--help"]),
    );
    assert_eq!((code, stdout.as_str()), (0, "--help"));
}

#[test]
fn run_verbose_says_once_what_it_can_and_cannot_check() {
    let tc = FakeToolchain::new("run-verbose");
    let show = "printf '%s' \"$CUSAFE_OPTIONS\"";
    let (code, stdout, stderr) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.rt)
            .env("CUSAFE_OPTIONS", "halt_on_error=0")
            .args(["run", "-v", "--", "sh", "-c", show]),
    );
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "halt_on_error=0:verbosity=1");
    let ours: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("cusafe run: "))
        .collect();
    assert_eq!(ours.len(), 4, "{stderr}");
    assert!(ours[0].contains("/sh: links no CUDA library"), "{stderr}");
    assert!(
        ours[1].starts_with("cusafe run: checked: device allocations"),
        "{stderr}"
    );
    assert!(ours[2].contains("not built by cusafe-clang++"), "{stderr}");
    assert!(
        ours[3].contains("managed, pinned host and IPC memory"),
        "{stderr}"
    );

    // Without -v: not a word, and the options are the user's.
    let (_, stdout, stderr) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.rt)
            .env_remove("CUSAFE_OPTIONS")
            .args(["run", "--", "sh", "-c", show]),
    );
    assert_eq!(stdout, "");
    assert!(!stderr.contains("cusafe run:"), "{stderr}");
}

#[test]
fn run_errors() {
    // No runtime beside a copied binary: exit 2 with the fix.
    let bundle = TempDir::new("run-bundle");
    let exe = copy_to_bundle(BIN, bundle.path());
    let (code, _, stderr) = output(tool(exe.to_str().unwrap()).args(["run", "--", "true"]));
    assert_eq!(code, 2);
    assert!(
        stderr.contains("libcusafe_rt.so not found") && stderr.contains("cargo build --release"),
        "{stderr}"
    );

    // A program that does not exist: 127, like a shell.
    let tc = FakeToolchain::new("run-missing");
    let (code, _, stderr) =
        output(
            tool(BIN)
                .env("CUSAFE_RT_LIB", &tc.rt)
                .args(["run", "--", "/nonexistent/program"]),
        );
    assert_eq!(code, 127);
    assert!(stderr.contains("/nonexistent/program"), "{stderr}");

    // A runtime override with another file name cannot be linked as -lcusafe_rt.
    let (code, _, stderr) = output(
        tool(BIN)
            .env("CUSAFE_RT_LIB", &tc.plugin)
            .args(["run", "--", "true"]),
    );
    assert_eq!(code, 2);
    assert!(
        stderr.contains("must name a file called libcusafe_rt.so"),
        "{stderr}"
    );

    // No program at all is a usage error.
    let (code, _, _) = output(tool(BIN).arg("run"));
    assert_eq!(code, 2);
}

#[test]
fn doctor_passes_with_everything_present() {
    let tc = FakeToolchain::new("doctor-ok");
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    let (code, stdout, _) = output(cmd.arg("doctor"));
    assert_eq!(code, 0, "{stdout}");
    assert!(stdout.contains("fake clang version 19.1.7"), "{stdout}");
    for piece in [
        "bin/ptxas",
        "nvvm/libdevice/libdevice.10.bc",
        "lib64/libcudart.so",
        "bin/fatbinary",
    ] {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with("ok") && l.contains(piece)),
            "{piece}: {stdout}"
        );
    }
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("info") && l.contains("GPU")),
        "{stdout}"
    );
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("info") && l.contains("VMM")),
        "{stdout}"
    );
    for piece in ["fuzz archive", "fuzz header"] {
        assert!(
            stdout
                .lines()
                .any(|l| (l.starts_with("ok") || l.starts_with("info")) && l.contains(piece)),
            "{piece}: {stdout}"
        );
    }
    assert!(
        stdout.lines().any(|l| l.starts_with("ok")
            && l.contains("ASan defaults")
            && l.contains(&tc.asan_defaults.display().to_string())),
        "{stdout}"
    );
    assert!(
        stdout.contains("everything cusafe needs is in place"),
        "{stdout}"
    );
}

#[test]
fn doctor_fails_and_says_how_to_fix() {
    let tc = FakeToolchain::new("doctor-bad");
    std::fs::remove_file(tc.cuda.join("bin/fatbinary")).unwrap();
    let mut cmd = tool(BIN);
    tc.apply(&mut cmd);
    cmd.env("CUSAFE_PASS_PLUGIN", "/nonexistent/libcusafe_pass.so");
    // Only -fsanitize=address builds need this one: information, not MISSING.
    cmd.env(
        "CUSAFE_ASAN_DEFAULTS_LIB",
        "/nonexistent/libcusafe_asan_defaults.a",
    );
    let (code, stdout, _) = output(cmd.arg("doctor"));
    assert_eq!(code, 1, "{stdout}");
    assert!(
        stdout.lines().any(|l| l.starts_with("info")
            && l.contains("ASan defaults")
            && l.contains("needed only by -fsanitize=address builds")),
        "{stdout}"
    );
    let missing: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("MISSING"))
        .collect();
    assert_eq!(missing.len(), 2, "{stdout}");
    assert!(
        missing
            .iter()
            .any(|l| l.contains("scripts/link-fatbinary.sh")),
        "{stdout}"
    );
    assert!(
        missing.iter().any(|l| l.contains("CUSAFE_PASS_PLUGIN")),
        "{stdout}"
    );
}

#[test]
fn help_and_version() {
    let (code, stdout, _) = output(tool(BIN).arg("--help"));
    assert_eq!(code, 0);
    for sub in ["run", "doctor", "fuzz"] {
        assert!(stdout.contains(sub), "{stdout}");
    }
    let (code, stdout, _) = output(tool(BIN).arg("--version"));
    assert_eq!(
        (code, stdout.trim_end()),
        (0, format!("cusafe {}", env!("CARGO_PKG_VERSION")).as_str())
    );
}
