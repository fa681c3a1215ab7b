//! `cudaLaunchKernel`: start-up before the first launch, device findings turned into
//! reports (halt and recover), launch ordering on non-blocking streams.

mod common;
use common::*;
use cusafe_format::pointer::FOREIGN_WINDOW;

#[test]
fn heap_overflow_in_a_kernel_is_reported_and_halts() {
    let r = run(&["oob_write"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5",
            "READ of size 4 at 0x",
            "by thread (100,0,0) in block (0,0,0)",
            "is 0 bytes after the end of the 400-byte buffer #1 (live)",
            "buffer #1: 400 bytes at [0x",
            "the address is at offset 400 from its start",
            "HINT: the access is outside the buffer",
            "SUMMARY: cusafe: heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5",
        ],
    );
    assert!(
        !r.stdout.contains("sync returned"),
        "halted before returning: {r:?}"
    );
}

#[test]
fn exitcode_option_sets_the_status() {
    let r = run(&["oob_write"], "exitcode=66");
    assert_eq!(r.code, 66, "{r:?}");
}

#[test]
fn recover_mode_reports_each_site_once_and_continues() {
    let r = run(&["recover"], "halt_on_error=0:exitcode=42:detect_leaks=0");
    assert_eq!(r.code, 42, "{r:?}");
    assert_eq!(r.stdout, "continued\n");
    assert_eq!(r.stderr.matches("ERROR: cusafe:").count(), 2, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "two_sites(int*, int) at vec.cu:30:9",
            "is 0 bytes after the end of the 400-byte buffer #1",
            "WRITE of size 4",
            "two_sites(int*, int) at vec.cu:31:9",
            "is 4 bytes before the start of the 400-byte buffer #1",
        ],
    );
}

#[test]
fn recover_mode_reports_within_sixteen_launches_without_a_sync() {
    // A launch polls the report page only now and then (every 16th launch, or when it
    // fails); the two findings of the first launch must still show before the 16th.
    let r = run(&["unsynced"], "halt_on_error=0:detect_leaks=0");
    assert_eq!(r.code, 1, "findings make the exit status 1: {r:?}");
    let first = r.stderr.find("ERROR: cusafe:").expect("a report");
    let sixteenth = r.stderr.find("launched 16\n").expect("the 16th launch");
    assert!(first < sixteenth, "{r:?}");
    assert_eq!(r.stderr.matches("ERROR: cusafe:").count(), 2, "{r:?}");
}

#[test]
fn a_one_device_process_does_not_ask_each_launch_for_its_device() {
    // `stream` launches twice; with one device neither launch asks `cudaGetDevice`.
    let asked = |devices: &str| {
        let log = scratch(&format!("devices-{devices}.log"));
        let r = run_env(
            &["stream"],
            "",
            &[
                ("FAKE_CUDA_LOG", log.to_str().unwrap()),
                ("FAKE_CUDA_DEVICES", devices),
            ],
        );
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
        let text = std::fs::read_to_string(&log).unwrap();
        text.lines().filter(|l| *l == "cudaGetDevice").count()
    };
    let (two, one) = (asked("2"), asked("1"));
    assert_eq!(
        two,
        one + 2,
        "two devices: {two} questions, one device: {one}"
    );
}

#[test]
fn recover_mode_names_the_build_flag_when_device_code_traps_anyway() {
    let r = run(&["trap_build"], "halt_on_error=0:detect_leaks=0");
    assert_eq!(r.stdout, "sync returned 719\n", "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: heap-buffer-overflow",
            "trap_build(int*, int) at vec.cu:50:9",
            "although halt_on_error=0",
            "rebuild it with `cusafe-clang++ --cusafe-recover`",
        ],
    );
    assert!(!r.stderr.contains("came without a cusafe finding"), "{r:?}");
}

#[test]
fn use_after_free_after_2000_reallocations() {
    let r = run(&["uaf"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(!r.stdout.contains("address reused"), "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: use-after-free in kernel inc(int*, int) at vec.cu:20:3",
            "is at offset 0 inside the 4096-byte buffer #1 (freed)",
            "4096 bytes at [0x",
        ],
    );
}

#[test]
fn immediate_use_after_free() {
    let r = run(&["uaf_immediate"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: use-after-free",
            "the 4096-byte buffer #1 (freed)",
        ],
    );
}

#[test]
fn poisoned_pointer_names_its_buffer() {
    let r = run(&["pointer_overflow"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: pointer-overflow in kernel deref(int*) at vec.cu:40:11",
            "the pointer left its buffer; 0x",
            "is 4600 bytes after the end of the 400-byte buffer #1 (live), the nearest buffer",
        ],
    );
}

#[test]
fn stray_pointer_into_a_slab_is_a_wild_access() {
    let r = run(&["wild"], "");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "ERROR: cusafe: wild-access",
            "in no buffer allocated so far",
        ],
    );
}

#[test]
fn json_lines_go_to_json_path() {
    let json = scratch("launch.json");
    let r = run(&["oob_write"], &format!("json_path={}", json.display()));
    assert_eq!(r.code, 1, "{r:?}");
    let text = std::fs::read_to_string(&json).unwrap();
    let v: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(v["kind"], "heap-buffer-overflow");
    assert_eq!(v["where"], "device");
    assert_eq!(v["kernel"], "add_one(int*, int)");
    assert_eq!(v["line"], 12);
    assert_eq!(v["thread"], serde_json::json!([100, 0, 0]));
    assert_eq!(v["buffer"]["size"], 400);
    assert_eq!(v["buffer"]["offset"], 400);
    assert_eq!(v["access"]["write"], false);
}

#[test]
fn log_path_takes_the_text_with_pid() {
    let dir = scratch("logdir");
    std::fs::create_dir_all(&dir).unwrap();
    let r = run(
        &["oob_write"],
        &format!("log_path={}/log.%p", dir.display()),
    );
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stderr, "");
    let logs: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    assert_eq!(logs.len(), 1);
    let text = std::fs::read_to_string(logs[0].as_ref().unwrap().path()).unwrap();
    assert_has(&text, &["ERROR: cusafe: heap-buffer-overflow"]);
}

#[test]
fn first_launch_starts_the_runtime_and_fills_the_runtime_page() {
    let r = run(&["launch_first"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout, "magic=46535543 flags=0 claimed=0 page=set\n");
    let r = run(&["launch_first"], "halt_on_error=0");
    assert_eq!(r.stdout, "magic=46535543 flags=1 claimed=0 page=set\n");
}

#[test]
fn non_blocking_streams_wait_for_header_writes_once() {
    let log = scratch("stream.log");
    let r = run_env(&["stream"], "", &[("FAKE_CUDA_LOG", log.to_str().unwrap())]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let stream = r.stdout.trim().trim_start_matches("stream ").to_string();
    let text = std::fs::read_to_string(&log).unwrap();
    let waits = text
        .lines()
        .filter(|l| *l == format!("cuStreamWaitEvent {stream}"))
        .count();
    assert_eq!(waits, 1, "{text}");
}

/// The windows the runtime appended: `(p, q)` as printed, then the three windows.
fn windows_of(stdout: &str) -> (u64, u64, Vec<(u64, u64)>) {
    let hex = |s: &str| u64::from_str_radix(s.trim_start_matches("0x"), 16).expect("hex");
    let first = stdout.lines().next().expect("p= q= line");
    let (p, q) = first.split_once(' ').expect("two words");
    let w = stdout
        .lines()
        .filter_map(|l| l.strip_prefix("window "))
        .map(|l| {
            let (s, e) = l.split_once(' ').expect("two words");
            (hex(s), hex(e))
        })
        .collect();
    (hex(&p[2..]), hex(&q[2..]), w)
}

#[test]
fn instrumented_kernels_get_each_pointer_arguments_window_at_launch() {
    for how in ["launch", "ex", "graph"] {
        let r = run(&["windows", how], "detect_leaks=0");
        assert_eq!(r.code, 0, "{how}: {r:?}");
        assert!(r.stdout.contains("n=5\n"), "{how}: {r:?}");
        let (p, q, w) = windows_of(&r.stdout);
        // An interior pointer gets its whole block: the payload start and exact size;
        // a freed block an empty window at its payload; memory the process maps (a host
        // pointer here: the fake device reads pageable memory) the foreign window.
        assert_eq!(w, vec![(p, 400), (q, 0), FOREIGN_WINDOW], "{how}: {r:?}");
    }
}

#[test]
fn a_launch_after_a_free_gets_the_freed_blocks_empty_window() {
    // Each launch reads the windows off the block table as it is then: relaunching the
    // same arguments after a free must not reuse the earlier launch's windows.
    let r = run(&["windows", "relaunch"], "detect_leaks=0");
    assert_eq!(r.code, 0, "{r:?}");
    let (p, q, w) = windows_of(&r.stdout);
    let live = [(p, 400), (q, 64), FOREIGN_WINDOW];
    let freed = [(p, 400), (q, 0), FOREIGN_WINDOW];
    assert_eq!(w, [live, live, freed].concat(), "{r:?}");
}

#[test]
fn an_index_groups_bounds_follow_the_windows_at_launch() {
    let r = run(&["windows", "grouped"], "detect_leaks=0");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    let (p, q, w) = windows_of(&r.stdout);
    assert_eq!(&w[..2], &[(p, 400), (q, 64)], "{r:?}");
    // The group's index runs over both ints: p + 10 allows -10..=89, q 0..=15.
    assert!(r.stdout.contains("index 0 16\n"), "{r:?}");
}

#[test]
fn an_instrumented_kernel_launched_on_another_device_runs_silently() {
    let r = run(&["windows", "other_device"], "detect_leaks=0");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(r.stdout.matches("n=5\n").count(), 2, "{r:?}");
}

#[test]
fn an_instrumented_kernel_launched_on_a_device_that_cannot_be_served_says_so_once() {
    let r = run_env(
        &["windows", "other_device"],
        "detect_leaks=0",
        &[("FAKE_CUDA_NO_VMM1", "1")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(r.stdout.matches("n=5\n").count(), 2, "{r:?}");
    let said = the_line_with(&r.stderr, " launched on device 1: ");
    assert!(
        said.starts_with("cusafe: warning: windows(int*, int, int*, float*) launched on device 1: cusafe does not serve it")
            && said.contains("CUDA_VISIBLE_DEVICES=N"),
        "{r:?}"
    );
    assert_eq!(
        r.stderr.matches(" launched on device 1").count(),
        1,
        "{r:?}"
    );
    // Launches on the runtime's own device say nothing.
    let r = run(&["windows", "launch"], "detect_leaks=0");
    assert!(!r.stderr.contains("launched on device"), "{r:?}");
}

#[test]
fn null_and_unknown_pointer_arguments_get_windows_that_fail_every_access() {
    let r = run(&["windows", "null"], "detect_leaks=0");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(windows_of(&r.stdout).2[2], (0, 0), "{r:?}");
    let r = run(&["windows", "wild"], "detect_leaks=0");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(windows_of(&r.stdout).2[2], (0xdead_0000, 0), "{r:?}");
}

#[test]
fn a_kernel_whose_parameters_do_not_match_its_marker_is_not_launched() {
    let r = run(&["windows", "mismatch"], "detect_leaks=0");
    assert_eq!(r.code, 3, "{r:?}");
    assert!(!r.stdout.contains("n=5"), "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "cusafe: error: cannot pass the bounds of a kernel's arguments at launch",
            "kernel _Z7windowsPiiS_Pf",
            "should have 6 hidden 8-byte parameters for 3 windows",
            "--cusafe-no-launch-bounds",
        ],
    );
}

#[test]
fn a_launch_refused_for_its_registers_names_the_kernel_and_the_fixes_once() {
    let r = run_env(
        &["windows", "resources"],
        "detect_leaks=0",
        &[("FAKE_CUDA_MAX_THREADS", "512")],
    );
    // The program still gets the error (701) from both launches.
    assert_eq!(r.stdout.matches("launch: 701\n").count(), 2, "{r:?}");
    assert_has(
        &r.stderr,
        &[
            "cusafe: error: kernel windows(int*, int, int*, float*) could not launch: too many resources requested for launch (CUDA error 701)",
            "uses 128 registers per thread, so a block can have at most 512 threads; this launch asks for 1024",
            "__launch_bounds__(1024)",
            "-maxrregcount=64",
        ],
    );
    assert_eq!(r.stderr.matches("could not launch").count(), 1, "{r:?}");
    // Blocks that fit launch as before, without the message.
    let r = run(&["windows", "resources"], "detect_leaks=0");
    assert_eq!(r.stdout.matches("launch: 0\n").count(), 2, "{r:?}");
    assert!(!r.stderr.contains("could not launch"), "{r:?}");
}
