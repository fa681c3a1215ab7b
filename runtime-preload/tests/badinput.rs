//! Bad input and odd program behaviour (issue 19, part 5): the runtime gives a clear
//! one-line error or behaves as CUDA does, never crashes or hangs, and loses no report.
//!
//! * malformed `CUSAFE_OPTIONS` (bytes that are not UTF-8, numbers past any integer
//!   type, empty values and names, control characters);
//! * `cudaFree(NULL)`, `cudaFreeAsync(NULL, s)`, `cuMemFree(0)`, `cuMemFreeAsync(0, s)`;
//! * CUDA calls before any device is chosen, `cudaSetDevice` to an invalid ordinal, no
//!   device at all;
//! * `cudaDeviceReset` in the middle of a program;
//! * `fork` after CUDA initialisation;
//! * `exit` from another thread while a kernel runs and the main thread is inside a
//!   hooked call.
//!
//! The programs are `tests/fixtures/badinput.c` over the fake CUDA (see
//! `tests/common/mod.rs`); each run has a time limit, so a hang fails the test instead of
//! stalling it. The same cases on a GPU: `scripts/gpu/badinput/`.

mod common;
use common::*;

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use cusafe_format::block::{block_base, header_addr};
use cusafe_format::pointer::{is_cusafe, tag_of};
use cusafe_rt::alloc::{Access, Allocator, FreeError, HostBackend};
use cusafe_rt::options::{OptionError, Options};
use cusafe_rt::rng::Rng;

/// Longest a case may run (the exit cases wait 2 s for a busy lock).
const LIMIT: Duration = Duration::from_secs(30);

/// `badinput.c`, built once against the fake libcudart.
fn program() -> &'static PathBuf {
    static P: OnceLock<PathBuf> = OnceLock::new();
    P.get_or_init(|| {
        let f = fixtures();
        let manifest = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        let exe = f.dir.join("badinput");
        let out = Command::new("cc")
            .args(["-g", "-O0", "-Wall", "-Werror"])
            .arg(format!(
                "-I{}",
                manifest.join("../.toolchain/cuda/include").display()
            ))
            .arg("-o")
            .arg(&exe)
            .arg(manifest.join("tests/fixtures/badinput.c"))
            .arg(format!("-L{}", f.dir.display()))
            .args(["-lcudart", "-l:libcuda.so.1"])
            .arg(format!("-Wl,-rpath,{}", f.dir.display()))
            .args(["-lpthread", "-ldl"])
            .output()
            .expect("running cc");
        assert!(
            out.status.success(),
            "building badinput.c:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        exe
    })
}

/// Runs `badinput ARGS` with the runtime preloaded, `options` as `CUSAFE_OPTIONS` and
/// `env`; fails the test when it runs past [`LIMIT`] (a hang) or is killed by a signal
/// (a crash).
fn case(args: &[&str], options: &OsStr, env: &[(&str, &str)]) -> Run {
    let f = fixtures();
    let out = scratch(&format!("badinput-{}.out", args.join("-")));
    let err = scratch(&format!("badinput-{}.err", args.join("-")));
    let mut cmd = Command::new(program());
    cmd.args(args)
        .env("LD_LIBRARY_PATH", &f.dir)
        .env("LD_PRELOAD", runtime_lib())
        .env("CUSAFE_OPTIONS", options)
        .env_remove("FAKE_CUDART_NO_DEVICE")
        .env_remove("FAKE_CUDA_RESET_KEEPS_VMM")
        .env_remove("FAKE_CUDA_LOG")
        .stdin(Stdio::null())
        .stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("starting badinput");
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if start.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "badinput {args:?} hung (killed after {LIMIT:?}):\n{}\n{}",
                std::fs::read_to_string(&out).unwrap_or_default(),
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let r = Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
    };
    let _ = std::fs::remove_file(&out);
    let _ = std::fs::remove_file(&err);
    assert!(
        status.code().is_some(),
        "badinput {args:?} was killed by a signal ({status:?}): {r:?}"
    );
    assert!(!r.stderr.contains("panicked"), "{r:?}");
    r
}

fn run_case(args: &[&str], options: &str) -> Run {
    case(args, OsStr::new(options), &[])
}

/// The two models of a reset: the driver takes the virtual memory objects and host
/// registrations with the context (the default), or they outlive it.
const RESETS: [&[(&str, &str)]; 2] = [&[], &[("FAKE_CUDA_RESET_KEEPS_VMM", "1")]];

fn run_reset(how: &str, options: &str, model: &[(&str, &str)]) -> Run {
    case(&["reset", how], OsStr::new(options), model)
}

// ---- 1. CUSAFE_OPTIONS ----

#[test]
fn options_that_are_not_utf8_are_an_error_not_the_defaults() {
    let raw = OsStr::from_bytes(b"exitcode=7:log_path=/tmp/\xff\xfe");
    let e = Options::parse_os(Some(raw)).unwrap_err();
    assert!(matches!(e, OptionError::NotUnicode(_)), "{e:?}");
    assert_eq!(
        e.to_string(),
        "CUSAFE_OPTIONS: the value is not valid UTF-8 ('exitcode=7:log_path=/tmp/\u{fffd}\u{fffd}', bad bytes shown as U+FFFD); options and paths must be UTF-8 text"
    );
    assert_eq!(Options::parse_os(None).unwrap(), Options::default());
    // In a process: one line, exit status 1, before the program's first CUDA call does
    // anything.
    let r = case(&["first", "malloc"], raw, &[]);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "");
    assert_eq!(r.stderr.lines().count(), 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("cusafe: error: CUSAFE_OPTIONS: the value is not valid UTF-8"),
        "{r:?}"
    );
}

#[test]
fn huge_numbers_empty_values_and_odd_names_name_the_option() {
    let cases: &[(&str, &str)] = &[
        (
            "exitcode=99999999999999999999999999",
            "bad value '99999999999999999999999999' for option 'exitcode' (accepted: an integer 0..=255)",
        ),
        ("exitcode=-1", "bad value '-1' for option 'exitcode'"),
        ("exitcode=", "bad value '' for option 'exitcode'"),
        (
            "device_heap_mb=18446744073709551616",
            "bad value '18446744073709551616' for option 'device_heap_mb' (accepted: 0 (no arena) or a power of two from 2 to 4096)",
        ),
        (
            "device_heap_mb=9223372036854775808",
            "for option 'device_heap_mb'",
        ),
        ("verbosity=1e100", "bad value '1e100' for option 'verbosity'"),
        ("halt_on_error=", "bad value '' for option 'halt_on_error'"),
        ("json_path=", "bad value '' for option 'json_path'"),
        ("detect_leaks=", "bad value '' for option 'detect_leaks'"),
        ("=1", "unknown option '' (known options: halt_on_error,"),
        (" exitcode=1", "unknown option ' exitcode'"),
        ("EXITCODE=1", "unknown option 'EXITCODE'"),
        (
            "exitcode=1\nverbosity=2",
            "bad value '1\\nverbosity=2' for option 'exitcode'",
        ),
        (
            "halt_on_error",
            "'halt_on_error' is not of the form name=value (options are separated by ':'",
        ),
        ("a\u{1b}[31m", "'a\\u{1b}[31m' is not of the form name=value"),
    ];
    for (given, want) in cases {
        let e = Options::parse(given).unwrap_err().to_string();
        assert!(e.contains(want), "{given:?}: {e}");
        assert!(!e.contains('\n'), "{given:?}: not one line: {e}");
    }
    assert_eq!(
        Options::parse(&"exitcode=3:".repeat(10_000))
            .unwrap()
            .exitcode,
        3
    );
    // A huge value and an escape sequence in a real process: one line, status 1.
    for opts in [
        "exitcode=99999999999999999999999999",
        "exitcode=1\nverbosity=2",
    ] {
        let r = run_case(&["first", "malloc"], opts);
        assert_eq!(r.code, 1, "{opts:?}: {r:?}");
        assert_eq!(r.stderr.lines().count(), 1, "{opts:?}: {r:?}");
        assert!(r.stderr.contains("for option 'exitcode'"), "{r:?}");
    }
}

// ---- 4. freeing null ----

#[test]
fn freeing_null_succeeds_silently_on_every_path() {
    // report_api_errors=1: not even an API error report.
    let r = run_case(&["free_null"], "report_api_errors=1:detect_leaks=1");
    assert_eq!(
        (r.code, r.stderr.as_str()),
        (0, ""),
        "freeing null must be a silent success: {r:?}"
    );
    assert_eq!(
        r.stdout,
        "cudaFree(NULL) = 0\ncudaFreeAsync(NULL, 0) = 0\ncudaFreeAsync(NULL, s) = 0\n\
         cudaFree(NULL) = 0\nmem_free(0) = 0\nmem_free_async(0, s) = 0\ndone\n"
    );
}

// ---- 5. calls before a device is chosen ----

/// The tail every `first` case prints: the program went on tagged and checked.
fn then_checked(r: &Run) {
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(&r.stdout, &["then tag=13\n"]);
    assert_has(
        &r.stderr,
        &["ERROR: cusafe: heap-buffer-overflow in kernel past_end(int*, int) at bad.cu:20:9"],
    );
    assert!(!r.stderr.contains("warning"), "{r:?}");
}

#[test]
fn any_call_may_come_first() {
    for (how, said) in [
        (
            "memcpy",
            "cudaMemcpy(back, host, sizeof host, cudaMemcpyHostToHost) = 0\n",
        ),
        ("memset", "cudaMemset(host, 0, sizeof host) = 0\n"),
        ("sync", "cudaDeviceSynchronize() = 0\n"),
        ("last", "cudaGetLastError() = 0\n"),
        ("malloc", "cudaMalloc(&p, 400) = 0\ntag=13\n"),
    ] {
        let r = run_case(&["first", how], "");
        assert!(r.stdout.starts_with(said), "{how}: {r:?}");
        then_checked(&r);
    }
    // A launch first: the runtime page exists before the kernel runs.
    let r = run_case(&["first", "launch"], "");
    assert!(
        r.stdout.starts_with("magic=") && !r.stdout.starts_with("magic=00000000"),
        "{r:?}"
    );
    assert_has(&r.stdout, &["page=set\nlaunch(k_rtpage, NULL) = 0\n"]);
    then_checked(&r);
}

#[test]
fn an_invalid_device_ordinal_is_cudas_error_and_changes_nothing() {
    let r = run_case(&["first", "set_device_bad"], "");
    // cudaErrorInvalidDevice, as without cusafe; the runtime then starts on device 0.
    assert!(
        r.stdout
            .starts_with("cudaSetDevice(99) = 101\ncudaSetDevice(-1) = 101\n"),
        "{r:?}"
    );
    then_checked(&r);
}

#[test]
fn without_a_device_every_call_returns_cudas_error() {
    let r = case(
        &["no_device"],
        OsStr::new(""),
        &[("FAKE_CUDART_NO_DEVICE", "1")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    // cudaDeviceSynchronize used to answer 0 here: the hook waited for the runtime's
    // (missing) heap instead of calling the real function.
    assert_eq!(
        r.stdout,
        "cudaMalloc(&p, 400) = 100\ncudaMemcpy(host, host + 32, 16, cudaMemcpyHostToHost) = 100\n\
         launch(k_rtpage, NULL) = 100\ncudaDeviceSynchronize() = 100\ncudaGetLastError() = 100\n\
         cudaFree(NULL) = 100\ncudaDeviceReset() = 100\ndone\n"
    );
    assert_eq!(r.stderr.matches("cusafe: warning:").count(), 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "the CUDA runtime failed to initialise (error 100)",
            "cusafe is OFF",
        ],
    );
}

// ---- 6. cudaDeviceReset ----

/// What every reset case prints first: the runtime page is back (the kernel read it),
/// allocations are tagged again, pre- and post-reset addresses differ, kernels work.
fn set_up_again(r: &Run) {
    assert_has(
        &r.stdout,
        &[
            "cudaDeviceReset() = 0\n",
            "pre tag=13 post tag=13 distinct=1\n",
            "page=set\n",
            "post[99]=1\n",
        ],
    );
    assert!(
        r.stdout.contains("magic=") && !r.stdout.contains("magic=00000000"),
        "{r:?}"
    );
    assert!(!r.stderr.contains("warning"), "{r:?}");
}

#[test]
fn after_a_reset_the_program_allocates_and_launches_again_and_nothing_leaks() {
    for model in RESETS {
        for how in ["clean", "twice"] {
            let r = run_reset(how, "detect_leaks=1", model);
            assert_eq!(
                (r.code, r.stderr.as_str()),
                (0, ""),
                "{how} {model:?}: {r:?}"
            );
            set_up_again(&r);
            assert!(r.stdout.ends_with("done\n"), "{r:?}");
        }
    }
}

#[test]
fn a_device_report_after_a_reset_is_delivered() {
    for model in RESETS {
        let json = scratch("reset-report.json");
        let r = run_reset("report", &format!("json_path={}", json.display()), model);
        set_up_again(&r);
        assert_eq!(r.code, 1, "{r:?}");
        assert_has(
            &r.stderr,
            &[
                "ERROR: cusafe: heap-buffer-overflow in kernel past_end(int*, int) at bad.cu:20:9",
                "0 bytes after the end of the 400-byte buffer #2 (live)",
            ],
        );
        let lines = std::fs::read_to_string(&json).unwrap();
        assert_eq!(lines.lines().count(), 1, "{lines}");
        assert_has(&lines, &["\"kind\":\"heap-buffer-overflow\"", "\"id\":2"]);
        let _ = std::fs::remove_file(&json);
    }
}

#[test]
fn a_pre_reset_pointer_is_reported_not_mistaken_for_a_block() {
    let r = run_reset("stale_free", "halt_on_error=0", RESETS[1]);
    set_up_again(&r);
    assert_has(&r.stderr, &["ERROR: cusafe: double-free in cudaFree"]);
    let r = run_case(&["reset", "stale_free"], "halt_on_error=0");
    set_up_again(&r);
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(&r.stdout, &["cudaFree(pre) = 1\n", "done\n"]);
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: double-free in cudaFree",
            "buffer #1 (freed)",
        ],
    );
    let r = run_case(&["reset", "stale_copy"], "halt_on_error=0");
    set_up_again(&r);
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stdout,
        &[
            "cudaMemcpy(host, pre, 16, cudaMemcpyDeviceToHost) = 1\n",
            "done\n",
        ],
    );
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: use-after-free in cudaMemcpy (src)",
            "buffer #1 (freed)",
        ],
    );
}

#[test]
fn the_leak_check_after_a_reset_lists_only_later_blocks() {
    let r = run_case(&["reset", "leak"], "");
    set_up_again(&r);
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr.matches("ERROR: cusafe: leak").count(), 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "the 400-byte buffer #2 (live) was never freed",
            "400 bytes leaked in 1 allocation(s)",
        ],
    );
}

#[test]
fn the_allocator_starts_over_after_a_reset() {
    // Whether the driver's reset took the virtual memory objects with it (the fake's
    // and `reset_device`'s model) or left them (then they are given back): either way
    // the allocator starts over in the same windows.
    for driver_kept_them in [false, true] {
        let mut a = Allocator::new(HostBackend::new(), Rng::new(7)).unwrap();
        let small = a.alloc(400, None, 0).unwrap();
        let large = a.alloc(3 << 20, None, 0).unwrap();
        let freed = a.alloc(100, None, 0).unwrap();
        a.free(freed.ptr, None).unwrap();
        let freed_large = a.alloc(5 << 20, None, 0).unwrap();
        a.free(freed_large.ptr, None).unwrap(); // leaves a tombstone
                                                // Packed blocks over two granules of a slab; those of the first freed: it retires
                                                // under the zero tombstone, the second stays mapped.
        let run: Vec<_> = (0..25)
            .map(|_| a.alloc(100_000, None, 0).unwrap())
            .collect();
        for b in &run[..21] {
            a.free(b.ptr, None).unwrap();
        }
        assert_eq!(a.stats().granules_retired, 1);
        assert_eq!(a.backend().access(run[0].ptr), Some(Access::ReadOnly));
        assert_eq!(a.backend().access(run[24].ptr), Some(Access::ReadWrite));
        if !driver_kept_them {
            a.backend_mut().reset_device();
        }
        a.after_reset().unwrap();
        assert_eq!(a.backend().mapping_count(), 0, "kept={driver_kept_them}");
        assert_eq!(a.backend().live_handles(), 0, "kept={driver_kept_them}");
        assert!(a.live_blocks().is_empty());
        assert_eq!(a.stats().live_bytes, 0);
        for b in [&small, &large, &run[24]] {
            assert!(a.table().lookup(b.ptr).unwrap().freed);
            assert!(matches!(
                a.free(b.ptr, None),
                Err(FreeError::DoubleFree { .. })
            ));
        }
        // New blocks: fresh addresses, headers written, ids going on.
        let old: Vec<u64> = [&small, &large, &freed, &freed_large]
            .into_iter()
            .chain(&run)
            .map(|b| b.ptr)
            .collect();
        for size in [400u64, 3 << 20, 100, 5 << 20, 100_000] {
            let b = a.alloc(size, None, 0).unwrap();
            assert!(b.id > run[24].id);
            assert!(is_cusafe(b.ptr));
            assert!(!old.contains(&b.ptr));
            let hdr = header_addr(block_base(b.ptr, tag_of(b.ptr)));
            assert_eq!(a.backend().read_u64(hdr), Some(size));
            a.free(b.ptr, None).unwrap();
        }
    }
}

// ---- 7. fork ----

#[test]
fn a_forked_child_that_does_not_use_cuda_exits_quietly() {
    let r = run_case(&["fork", "quiet"], "detect_leaks=1");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(
        r.stdout,
        "child exits\nchild status 0\nparent a[99]=2\nparent done\n"
    );
}

#[test]
fn a_forked_child_that_uses_cuda_gets_cudas_own_error() {
    let r = run_case(&["fork", "cuda"], "detect_leaks=1:report_api_errors=1");
    // cudaErrorInitializationError (3) from every call, as without cusafe (the child's
    // cudaMalloc used to come back 2, out of memory, from cusafe's allocator); no
    // report about the parent's blocks from the child.
    assert_eq!(
        r.stdout,
        "cudaMalloc(&p, 400) = 3\ncudaMemcpy(host, a, 16, cudaMemcpyDeviceToHost) = 3\n\
         launch(k_inc, args) = 3\ncudaDeviceSynchronize() = 3\ncudaFree(a) = 3\nchild exits\n\
         child status 0\nparent a[99]=2\nparent done\n",
        "{r:?}"
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
}

#[test]
fn the_parent_keeps_reporting_after_a_fork() {
    let r = run_case(&["fork", "report"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(
        r.stderr
            .matches("ERROR: cusafe: heap-buffer-overflow in kernel past_end(int*, int)")
            .count(),
        1,
        "{r:?}"
    );
    assert_has(&r.stdout, &["child status 0\n", "parent a[99]=2\n"]);
}

// ---- 8. exit from another thread ----

#[test]
fn exit_while_the_main_thread_waits_inside_a_hooked_call_does_not_deadlock() {
    let start = Instant::now();
    let r = run_case(&["exit_thread", "idle"], "detect_leaks=1");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "freeing\nexiting\n");
    assert_eq!(
        r.stderr,
        "cusafe: leak check skipped: another thread was inside a CUDA call holding cusafe's allocator when the process exited (let the threads doing CUDA work finish before exit to get the leak check)\n"
    );
    assert!(start.elapsed() < Duration::from_secs(20), "{r:?}");
}

#[test]
fn a_device_report_written_before_exit_from_another_thread_is_delivered() {
    // The main thread is inside cudaFree (holding the block table) when another thread
    // exits: the report comes out all the same, without its buffer, text and JSON.
    let json = scratch("exit-thread.json");
    let r = run_case(
        &["exit_thread", "report"],
        &format!("json_path={}", json.display()),
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "freeing\nexiting\n");
    assert_eq!(r.stderr.matches("ERROR: cusafe:").count(), 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "in kernel report_forever(int*, int) at bad.cu:30:7",
            "another thread held cusafe's block table when the process exited",
        ],
    );
    let lines = std::fs::read_to_string(&json).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    assert!(lines.ends_with("}\n"), "{lines}");
    assert_has(&lines, &["\"where\":\"device\"", "\"line\":30"]);
    let _ = std::fs::remove_file(&json);
    // The main thread in no CUDA call: the report names its buffer.
    let json = scratch("exit-thread-outside.json");
    let r = run_case(
        &["exit_thread", "outside"],
        &format!("json_path={}", json.display()),
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: heap-buffer-overflow in kernel report_forever(int*, int) at bad.cu:30:7",
            "the 400-byte buffer #1 (live)",
        ],
    );
    let lines = std::fs::read_to_string(&json).unwrap();
    assert_eq!(lines.lines().count(), 1, "{lines}");
    assert_has(&lines, &["\"kind\":\"heap-buffer-overflow\""]);
    let _ = std::fs::remove_file(&json);
}
