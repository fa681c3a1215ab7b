//! The fuzzing hooks (`cusafe_rt_fuzz_attach`, `cusafe_rt_fuzz_collect`) over the fake
//! CUDA: the device coverage map reaches the attached map after each input and at exit,
//! is zeroed between inputs, and a dead context is reported as such; a fault without a
//! finding is written to the JSON sink with the last kernel launched.

mod common;
use common::*;

#[test]
fn each_input_gets_its_own_edges() {
    // Input 2 does not see input 1's edge 101 (the device map was zeroed); a second
    // collection adds nothing and loses nothing; detached, the map is left alone and
    // the device map still zeroed (edge 105 never shows).
    let r = run(&["fuzz", "inputs"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_eq!(
        r.stdout,
        "collect before start: 0\n\
         attach: 0\n\
         collect: 0\n\
         input 1: 7=1 101=1\n\
         collect: 0\n\
         input 2: 7=1 102=1\n\
         collect: 0\n\
         input 2 again: 7=1 102=1\n\
         detach: 0\n\
         collect: 0\n\
         detached: 7=1 102=1\n\
         attach: 0\n\
         collect: 0\n\
         input 3 (nothing ran):\n",
        "{r:?}"
    );
    assert!(!r.stderr.contains("cusafe"), "{r:?}");
}

#[test]
fn a_short_map_gets_its_length_only() {
    let r = run(&["fuzz", "short"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_has(&r.stdout, &["input 1: 7=1\n", "input 2: 7=1\n"]);
}

#[test]
fn the_exit_collects_the_last_input() {
    let r = run(&["fuzz", "exit"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_has(&r.stdout, &["at exit: 7=1 103=1\n"]);
    let r = run_linked(&["fuzz", "exit"], "");
    assert_eq!(r.code, 0, "{r:?}");
    assert_has(&r.stdout, &["at exit: 7=1 103=1\n"]);
}

#[test]
fn a_dead_context_is_a_negative_status_and_a_json_line() {
    let json = scratch("fuzz-fault.json");
    let r = run(&["fuzz", "fault"], &format!("json_path={}", json.display()));
    assert_eq!(r.code, 0, "{r:?}");
    // The context died: nothing can be copied (not even the edges of the input's
    // first kernel); the caller ends the process.
    assert_has(&r.stdout, &["collect: -719\n", "after fault:\n"]);
    assert_has(
        &r.stderr,
        &["cusafe: note: CUDA error 719 (cudaErrorLaunchFailure) came without a cusafe finding; the faulting kernel is one of those launched since the last successful synchronisation: cov(int), fault() (last: fault()); run with CUDA_LAUNCH_BLOCKING=1 to name the one: the fault is in uninstrumented code"],
    );
    let lines = std::fs::read_to_string(&json).unwrap();
    assert_eq!(
        lines,
        "{\"code\":719,\"detail\":\"DETAIL\",\"kernel\":\"fault()\",\"kind\":\"cuda-error-without-finding\",\"name\":\"cudaErrorLaunchFailure\",\"pid\":PID,\"suspects\":[\"cov(int)\",\"fault()\"],\"where\":\"device\"}\n"
            .replace("PID", &pid_of(&lines))
            .replace("DETAIL", cusafe_rt::report::json::FAULT_WITHOUT_FINDING),
    );
}

/// The pid field of a JSON line.
fn pid_of(line: &str) -> String {
    let v: serde_json::Value = serde_json::from_str(line.trim()).expect("one JSON line");
    v["pid"].to_string()
}
