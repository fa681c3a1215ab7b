//! Stream capture (`cudaStreamBeginCapture`/`cudaStreamEndCapture`) and `cudaFree`: while
//! a capture is in progress a device-wide wait fails and invalidates it (the fake driver
//! models this), so a tagged free is checked, deferred, and completed at the next free
//! or `cudaDeviceSynchronize` once no capture is in progress. End to end over the fake
//! CUDA (`scenario capture HOW`: thread A captures while the main thread frees).

mod common;
use common::*;

/// Recover mode, so that a run goes on after a report and ends with the exit check.
const RECOVER: &str = "halt_on_error=0:exitcode=7";

/// Runs `scenario capture HOW` with `options` and the fake driver's log; returns the run
/// and the log.
fn run_logged(how: &str, options: &str) -> (Run, String) {
    let log = scratch(&format!("capture-{how}.log"));
    let r = run_env(
        &["capture", how],
        options,
        &[("FAKE_CUDA_LOG", log.to_str().unwrap())],
    );
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    (r, text)
}

/// The log's lines from the capture's begin to its end, and those after the end.
fn split_at_capture(log: &str) -> (&str, &str) {
    let begin = log.find("begin capture").expect("capture begun");
    let end = log[begin..].find("end capture").expect("capture ended") + begin;
    (&log[begin..end], &log[end..])
}

/// The run ended with the recover-mode exit status after exactly one double-free report.
fn assert_one_double_free(r: &Run) {
    assert_eq!(r.code, 7, "{r:?}");
    let reports = r.stderr.matches("ERROR: cusafe: double-free in cudaFree");
    assert_eq!(reports.count(), 1, "{r:?}");
}

#[test]
fn a_free_during_a_capture_is_deferred_and_completes_at_the_next_free() {
    let (r, log) = run_logged("free", RECOVER);
    // Both frees during the capture succeeded and the capture ended well; the block was
    // really freed at the next free: freeing it again is a double free.
    assert_eq!(
        r.stdout, "free returned 0\nend capture returned 0\nagain returned 1\ncapture done\n",
        "{r:?}"
    );
    assert_one_double_free(&r);
    assert_has(&r.stderr, &["is the 400-byte buffer #1 (freed)"]);
    assert!(!r.stderr.contains("leak"), "{r:?}");
    // No device-wide wait while capturing; the completion waited (a kernel had run).
    let (during, after) = split_at_capture(&log);
    assert!(!during.contains("Synchronize"), "{log}");
    assert!(
        during.contains("begin capture") && during.contains(": 0"),
        "{log}"
    );
    assert_eq!(after.matches("cuCtxSynchronize").count(), 1, "{log}");
    // Plain, the program behaves the same (the fake's own free never waits).
    let plain = run_plain(&["capture", "free"]);
    assert_eq!(plain.stdout, r.stdout, "{plain:?}");
}

#[test]
fn the_deferral_and_the_completion_are_traced() {
    let (r, _) = run_logged("free", &format!("{RECOVER}:verbosity=2"));
    assert_has(
        &r.stderr,
        &[
            "(buffer #1, 400 bytes) deferred: a stream capture is in progress",
            "completing the deferred free",
        ],
    );
    let deferred = r.stderr.find("deferred: a stream").unwrap();
    let completed = r.stderr.find("completing the deferred free").unwrap();
    let double = r.stderr.find("double-free").unwrap();
    assert!(deferred < completed && completed < double, "{r:?}");
}

#[test]
fn cuda_device_synchronize_completes_deferred_frees() {
    let (r, log) = run_logged("sync", RECOVER);
    assert_eq!(
        r.stdout, "free returned 0\nend capture returned 0\nagain returned 1\ncapture done\n",
        "{r:?}"
    );
    assert_one_double_free(&r);
    assert!(!r.stderr.contains("leak"), "{r:?}");
    let (during, after) = split_at_capture(&log);
    assert!(!during.contains("Synchronize"), "{log}");
    assert!(after.contains("cudaDeviceSynchronize"), "{log}");
}

#[test]
fn a_double_free_of_a_deferred_block_is_reported_at_once() {
    let (r, log) = run_logged("double", &format!("{RECOVER}:alloc_backtrace=1"));
    assert_eq!(
        r.stdout, "free returned 0\nsecond free returned 1\nend capture returned 0\ncapture done\n",
        "{r:?}"
    );
    assert_one_double_free(&r);
    // The report shows the block as freed, with the deferred free's call site.
    assert_has(
        &r.stderr,
        &[
            "is the 400-byte buffer #1 (freed)",
            "freed at:",
            "s_capture at ",
        ],
    );
    // The deferred free completed once (at the free after the capture): no second report.
    assert!(!r.stderr.contains("leak"), "{r:?}");
    let (during, _) = split_at_capture(&log);
    assert!(!during.contains("Synchronize"), "{log}");
}

#[test]
fn blocks_still_deferred_at_exit_are_not_leaks() {
    let (r, log) = run_logged("exit", "");
    assert_eq!(
        r.stdout, "free returned 0\nfree returned 0\nend capture returned 0\ncapture done\n",
        "{r:?}"
    );
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert!(!log.contains("Synchronize"), "{log}");
}

#[test]
fn the_fake_driver_breaks_a_capture_at_a_device_wide_wait() {
    // What cusafe's free used to do to the capture: the wait fails with
    // cudaErrorStreamCaptureUnsupported and the end with cudaErrorStreamCaptureInvalidated.
    let expected = "sync returned 900\nend capture returned 901\ncapture done\n";
    let plain = run_plain(&["capture", "invalidate"]);
    assert_eq!(
        (plain.code, plain.stdout.as_str()),
        (0, expected),
        "{plain:?}"
    );
    // The runtime passes the program's own wait through, and its frees after the
    // (failed) capture wait as usual.
    let (r, log) = run_logged("invalidate", "");
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, expected, ""),
        "{r:?}"
    );
    let (_, after) = split_at_capture(&log);
    assert_eq!(after.matches("cuCtxSynchronize").count(), 1, "{log}");
}

#[test]
fn threads_freeing_while_another_captures_over_and_over_break_nothing() {
    // Four threads allocate, launch and free while a fifth begins and ends captures in a
    // loop (mostly capturing): no free fails, no capture is invalidated, nothing leaks.
    let r = run(&["capture_stress"], "verbosity=2");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout, "capture stress: worker fails=0 capture fails=0\n",
        "{}",
        r.stderr
    );
    assert!(!r.stderr.contains("ERROR"), "{}", r.stderr);
    assert!(!r.stderr.contains("warning"), "{}", r.stderr);
    // The runs overlapped: some frees were deferred.
    assert!(
        r.stderr.contains("deferred: a stream capture"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_device_heap_first_needed_inside_a_capture_is_mapped_after_it() {
    let r = run_env(
        &["capture_heap"],
        "verbosity=1",
        &[("FAKE_CUDA_DEVICE_HEAP", "1")],
    );
    assert_eq!(r.code, 0, "{r:?}");
    // Mapping the arena waits for the device: inside the capture it would invalidate it.
    assert!(r.stdout.contains("end capture: 0\n"), "{r:?}");
    assert!(r.stdout.ends_with("capture_heap done\n"), "{r:?}");
    // The launch after the capture maps it.
    assert_has(&r.stderr, &["device heap: 64 MiB arena"]);
    assert!(!r.stderr.contains("no device-heap arena"), "{r:?}");
}
