//! The `dlsym` hook (`hooks/dlsym.rs`) under a library preloaded before the runtime that
//! interposes `dlopen` and looks up the real one with `dlsym(RTLD_NEXT, ..)` from its
//! constructor, as a profiler's injected library does.

mod common;

use common::{cc, fixtures, run_env, runtime_lib};

/// Builds `tests/fixtures/dlopen_interposer.c` as a shared library; returns its path.
fn interposer() -> String {
    let out = fixtures().dir.join("libdlopen_interposer.so");
    let out = out.to_string_lossy().into_owned();
    let src = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/dlopen_interposer.c"
    );
    cc(&[
        "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", &out, src, "-ldl",
    ]);
    out
}

#[test]
fn an_interposers_next_dlopen_is_glibcs_and_the_program_runs() {
    let preload = format!("{}:{}", interposer(), runtime_lib().display());
    let r = run_env(&["ok"], "", &[("LD_PRELOAD", &preload)]);
    // Before: the hook searched the objects after the interposer by dlopen-ing each,
    // which reached the interposer's own dlopen before it was ready (status 70).
    assert_eq!(r.code, 0, "{r:?}");
    let line = common::the_line_with(&r.stderr, "interposer: next dlopen in ");
    assert!(
        line.contains("libc.so") || line.contains("libdl.so"),
        "{r:?}"
    );
}
