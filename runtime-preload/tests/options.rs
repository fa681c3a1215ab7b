//! `CUSAFE_OPTIONS` parsing, and what a bad value does to a real process.

mod common;
use common::*;

use cusafe_rt::options::{expand_path, LeakCheck, OptionError, Options, StackSize};
use proptest::prelude::*;

#[test]
fn defaults() {
    let o = Options::parse("").unwrap();
    assert_eq!(o, Options::default());
    assert!(o.halt_on_error && o.alloc_backtrace && o.tagging);
    assert!(!Options::parse("alloc_backtrace=0").unwrap().alloc_backtrace);
    assert_eq!(o.detect_leaks, LeakCheck::Auto);
    assert!(!Options::parse("tagging=0").unwrap().tagging);
    assert_eq!((o.exitcode, o.verbosity), (1, 0));
    assert_eq!(
        (o.log_path.as_deref(), o.json_path.as_deref()),
        (None, None)
    );
    assert_eq!(o.device_flags(), 0);
}

#[test]
fn every_option() {
    let o = Options::parse(
        "halt_on_error=0:exitcode=66:log_path=/tmp/l.%p:json_path=/tmp/j:detect_leaks=false:alloc_backtrace=1:verbosity=2",
    )
    .unwrap();
    assert!(!o.halt_on_error && o.alloc_backtrace);
    assert_eq!(o.detect_leaks, LeakCheck::Off);
    assert_eq!(o.exitcode, 66);
    assert_eq!(o.log_path.as_deref(), Some("/tmp/l.%p"));
    assert_eq!(o.json_path.as_deref(), Some("/tmp/j"));
    assert_eq!(o.verbosity, 2);
    assert_eq!(o.device_flags(), cusafe_format::rtpage::FLAG_RECOVER);
}

#[test]
fn detection_options() {
    let o = Options::parse("").unwrap();
    assert!(!o.allocator_may_return_error && !o.report_api_errors);
    assert_eq!(o.device_heap_mb, 64);
    let o =
        Options::parse("allocator_may_return_error=1:report_api_errors=true:device_heap_mb=1024")
            .unwrap();
    assert!(o.allocator_may_return_error && o.report_api_errors);
    assert_eq!(o.device_heap_mb, 1024);
    assert_eq!(
        Options::parse("device_heap_mb=0").unwrap().device_heap_mb,
        0
    );
    for bad in [
        "device_heap_mb=3",
        "device_heap_mb=1",
        "device_heap_mb=8192",
        "device_heap_mb=x",
    ] {
        let e = Options::parse(bad).unwrap_err().to_string();
        assert!(e.contains("a power of two from 2 to 4096"), "{bad}: {e}");
    }
    assert_eq!(Options::parse("").unwrap().stack_size, StackSize::Auto);
    assert_eq!(
        Options::parse("stack_size=4096").unwrap().stack_size,
        StackSize::Bytes(4096)
    );
    assert_eq!(
        Options::parse("stack_size=0").unwrap().stack_size,
        StackSize::Driver
    );
    assert_eq!(
        Options::parse("stack_size=auto").unwrap().stack_size,
        StackSize::Auto
    );
    for bad in [
        "stack_size=8",
        "stack_size=2097152",
        "stack_size=4k",
        "stack_size=Auto",
    ] {
        let e = Options::parse(bad).unwrap_err().to_string();
        assert!(e.contains("bytes of stack per GPU thread"), "{bad}: {e}");
    }
}

#[test]
fn later_pairs_win_and_empty_pairs_are_skipped() {
    let o = Options::parse(":exitcode=3::exitcode=4:").unwrap();
    assert_eq!(o.exitcode, 4);
}

#[test]
fn errors_name_the_option_and_the_accepted_values() {
    let e = Options::parse("halt_on_eror=0").unwrap_err();
    assert_eq!(e, OptionError::Unknown("halt_on_eror".into()));
    assert_eq!(
        e.to_string(),
        "CUSAFE_OPTIONS: unknown option 'halt_on_eror' (known options: halt_on_error, exitcode, log_path, json_path, detect_leaks, alloc_backtrace, tagging, verbosity, allocator_may_return_error, report_api_errors, device_heap_mb, stack_size)"
    );
    assert_eq!(
        Options::parse("exitcode=300").unwrap_err().to_string(),
        "CUSAFE_OPTIONS: bad value '300' for option 'exitcode' (accepted: an integer 0..=255)"
    );
    assert_eq!(
        Options::parse("detect_leaks=yes").unwrap_err().to_string(),
        "CUSAFE_OPTIONS: bad value 'yes' for option 'detect_leaks' (accepted: 0, 1 or auto (0 and 1 also as false, true))"
    );
    assert_eq!(
        Options::parse("detect_leaks=auto").unwrap().detect_leaks,
        LeakCheck::Auto
    );
    assert_eq!(
        Options::parse("detect_leaks=1").unwrap().detect_leaks,
        LeakCheck::On
    );
    assert_eq!(
        Options::parse("verbosity=9").unwrap_err().to_string(),
        "CUSAFE_OPTIONS: bad value '9' for option 'verbosity' (accepted: 0, 1 or 2)"
    );
    assert!(matches!(
        Options::parse("log_path="),
        Err(OptionError::BadValue { .. })
    ));
    assert_eq!(
        Options::parse("halt_on_error").unwrap_err().to_string(),
        "CUSAFE_OPTIONS: 'halt_on_error' is not of the form name=value (options are separated by ':', e.g. halt_on_error=0:exitcode=66)"
    );
}

#[test]
fn pid_expansion() {
    assert_eq!(expand_path("/tmp/r.%p.json", 42), "/tmp/r.42.json");
    assert_eq!(expand_path("/tmp/plain", 42), "/tmp/plain");
}

#[test]
fn a_bad_option_stops_the_program_at_its_first_cuda_call() {
    let r = run(&["ok"], "exitcode=abc");
    assert_eq!(r.code, 1, "{r:?}");
    assert_eq!(r.stdout, "");
    assert_eq!(
        r.stderr,
        "cusafe: error: CUSAFE_OPTIONS: bad value 'abc' for option 'exitcode' (accepted: an integer 0..=255)\n"
    );
}

#[test]
fn an_unopenable_log_path_is_an_error() {
    let r = run(&["ok"], "log_path=/nonexistent-dir/x");
    assert_eq!(r.code, 1, "{r:?}");
    assert!(
        r.stderr
            .starts_with("cusafe: error: log_path=/nonexistent-dir/x: cannot open"),
        "{r:?}"
    );
}

proptest! {
    #[test]
    fn exitcode_round_trips(code in 0u8..=255) {
        prop_assert_eq!(Options::parse(&format!("exitcode={code}")).unwrap().exitcode, i32::from(code));
    }

    #[test]
    fn parse_never_panics(s in "[a-z_=:0-9/%.]{0,40}") {
        let _ = Options::parse(&s);
    }
}

#[test]
fn stack_size_sets_the_context_limit_at_start() {
    let log = scratch("options-stack.log");
    let r = run_env(
        &["ok"],
        "stack_size=4096",
        &[("FAKE_CUDA_LOG", log.to_str().unwrap())],
    );
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    // CU_LIMIT_STACK_SIZE is 0.
    assert!(text.contains("cuCtxSetLimit 0 4096"), "{text}");
    // Without the option the driver's limit stays.
    let _ = std::fs::remove_file(&log);
    let r = run_env(&["ok"], "", &[("FAKE_CUDA_LOG", log.to_str().unwrap())]);
    assert_eq!(r.code, 0, "{r:?}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(!text.contains("cuCtxSetLimit"), "{text}");
}

/// The `cuCtxSetLimit` lines of the fake driver's log for scenario `stack`, with
/// `options` and every module marked (or not) for its dynamic stack; `|` marks the reset.
fn stack_limits(options: &str, marked: bool) -> String {
    let log = scratch(&format!("options-stack-{marked}-{options}.log"));
    let mut env = vec![("FAKE_CUDA_LOG", log.to_str().unwrap())];
    if marked {
        env.push(("FAKE_CUDA_DYNAMIC_STACK", "1"));
    }
    let r = run_env(&["stack"], options, &env);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(r.stdout.contains("stack done"), "{r:?}");
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    text.lines()
        .filter_map(|l| match l {
            "scenario: reset" => Some("|"),
            _ => l.strip_prefix("cuCtxSetLimit 0 "),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn a_module_the_driver_cannot_size_raises_the_stack_once_per_context() {
    // Default (auto): the first launch multiplies the driver's 1 KiB by 4, the second
    // launch changes nothing, and after the reset the first launch raises it again.
    assert_eq!(stack_limits("", true), "4096 | 4096");
    // Unmarked modules keep the driver's limit.
    assert_eq!(stack_limits("", false), "|");
    // 0 leaves the limit alone; a size is set at start and after the reset, and wins.
    assert_eq!(stack_limits("stack_size=0", true), "|");
    assert_eq!(stack_limits("stack_size=2048", true), "2048 | 2048");
}
