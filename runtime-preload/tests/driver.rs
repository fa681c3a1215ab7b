//! The driver-level hooks, through a program that reaches the (fake) driver the way
//! static cudart and the frameworks do: `dlopen` of libcuda, then `cuGetProcAddress`
//! (CUDA 12 and 11 forms) or `dlsym` of each export, or ordinary linking. Every route
//! must see the same bugs with the right kind and API, and correct code must pass
//! untouched.

mod common;

use common::{assert_has, run_driver_app, run_driver_app_env, run_env, the_line_with, Run};

/// Every way `driver_app` can reach the driver.
const ROUTES: [&str; 4] = ["procaddr", "procaddr-v1", "dlsym", "linked"];

fn app(how: &str, scenario: &str) -> Run {
    run_driver_app(how, scenario, true, "detect_leaks=1")
}

#[test]
fn correct_driver_api_code_runs_unreported_on_every_route() {
    for how in ROUTES {
        let r = app(how, "ok");
        assert_eq!(r.code, 0, "{how}: {r:?}");
        assert_eq!(r.stdout, "ok 7\n", "{how}: {r:?}");
        assert!(!r.stderr.contains("ERROR"), "{how}: {r:?}");
    }
}

#[test]
fn allocations_through_the_driver_are_tagged_on_every_route() {
    for how in ROUTES {
        let r = run_driver_app(how, "ok", true, "verbosity=2");
        assert_has(
            &r.stderr,
            &["cusafe: ready on device 0", "cuMemAlloc(100) = 0x"],
        );
        assert!(r.stderr.contains("cuMemFree(0x"), "{how}: {r:?}");
    }
}

#[test]
fn copy_and_set_overflows_through_the_driver_are_reported_on_every_route() {
    let cases = [
        (
            "htod-overflow",
            "cuMemcpyHtoD",
            "WRITE of range of 101 bytes",
        ),
        ("dtoh-overflow", "cuMemcpyDtoH", "READ of range of 64 bytes"),
        (
            "memset-overflow",
            "cuMemsetD8",
            "WRITE of range of 112 bytes",
        ),
    ];
    for how in ROUTES {
        for (scenario, api, access) in cases {
            let r = app(how, scenario);
            assert_eq!(r.code, 1, "{how} {scenario}: {r:?}");
            assert_has(&r.stderr, &["api-out-of-bounds", api, access, "100-byte"]);
            // Without the runtime the same program notices nothing.
            let plain = run_driver_app(how, scenario, false, "");
            assert!(
                !plain.stderr.contains("cusafe"),
                "{how} {scenario}: {plain:?}"
            );
        }
    }
}

#[test]
fn double_and_interior_frees_through_the_driver_are_reported_on_every_route() {
    for how in ROUTES {
        let r = app(how, "double-free");
        assert_eq!(r.code, 1, "{how}: {r:?}");
        assert_has(&r.stderr, &["ERROR: cusafe: double-free", "cuMemFree"]);
        let r = app(how, "interior-free");
        assert_eq!(r.code, 1, "{how}: {r:?}");
        assert_has(
            &r.stderr,
            &[
                "ERROR: cusafe: invalid-free",
                "cuMemFree",
                "interior pointer",
            ],
        );
    }
}

#[test]
fn stream_ordered_allocations_are_tagged_and_their_free_is_checked() {
    let r = app("procaddr", "async");
    assert_eq!(r.code, 1, "{r:?}");
    assert_has(&r.stderr, &["cuMemsetD8", "use-after-free"]);
}

#[test]
fn the_address_range_of_a_tagged_block_is_the_programs_buffer() {
    for how in ROUTES {
        let r = app(how, "range");
        assert_eq!(r.code, 0, "{how}: {r:?}");
        assert_has(&r.stdout, &["range starts at the pointer 100\n"]);
    }
}

#[test]
fn driver_launches_of_instrumented_kernels_get_windows_on_every_route() {
    for how in ROUTES {
        let r = app(how, "launch");
        assert_eq!(r.code, 0, "{how}: {r:?}");
        let p = r
            .stdout
            .lines()
            .find_map(|l| l.strip_prefix("p="))
            .unwrap_or_else(|| panic!("{how}: {r:?}"));
        // Once as a function, once as a library kernel handle (CUkernel): both get it.
        let line = format!("window {p} 0x64\n");
        assert_eq!(r.stdout.matches(&line).count(), 2, "{how}: {r:?}");
    }
}

#[test]
fn cudart_reaching_the_driver_is_hooked_once() {
    // The fake cudart, like the real one, calls cuMemAlloc_v2 / cuMemFree_v2 /
    // cuLaunchKernel through cuGetProcAddress: the runtime API hooks did the work, so
    // the driver hooks must pass those calls through (one allocation, one window set).
    let r = run_env(&["ok"], "verbosity=2", &[]);
    assert_eq!(r.code, 0, "{r:?}");
    assert!(!r.stderr.contains("cuMemAlloc"), "{r:?}");
    assert!(!r.stderr.contains("cuMemFree"), "{r:?}");
    assert_has(&r.stderr, &["allocs: 3, frees: 3"]);
}

#[test]
fn a_free_during_a_capture_begun_through_the_driver_is_deferred_and_the_capture_survives() {
    for how in ["procaddr", "dlsym", "linked"] {
        let r = run_driver_app(how, "capture", true, "detect_leaks=1");
        assert_eq!(r.code, 0, "{how}: {r:?}");
        assert!(r.stdout.contains("end capture: 0\n"), "{how}: {r:?}");
        assert!(r.stdout.ends_with("done\n"), "{how}: {r:?}");
        assert!(!r.stderr.contains("ERROR"), "{how}: {r:?}");
    }
}

#[test]
fn driver_allocations_and_launches_in_another_devices_primary_context_are_tagged() {
    for how in ROUTES {
        let r = run_driver_app(how, "other-device", true, "detect_leaks=1");
        assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{how}: {r:?}");
        assert!(r.stdout.contains("device 1 tag=13"), "{how}: {r:?}");
        assert!(r.stdout.contains("device 0 tag="), "{how}: {r:?}");
        assert_eq!(r.stdout.matches("window ").count(), 2, "{how}: {r:?}");
    }
}

#[test]
fn driver_work_on_a_device_that_cannot_be_served_runs_unchecked_and_says_so_once() {
    for how in ROUTES {
        let r = run_driver_app_env(
            how,
            "other-device",
            "detect_leaks=1",
            &[("FAKE_CUDA_NO_VMM1", "1")],
        );
        assert_eq!(r.code, 0, "{how}: {r:?}");
        let tag = |dev: &str| -> u32 {
            let line = r
                .stdout
                .lines()
                .find(|l| l.starts_with(&format!("device {dev} tag=")))
                .unwrap_or_else(|| panic!("{how}: no device {dev} line: {r:?}"));
            line.rsplit('=').next().unwrap().parse().unwrap()
        };
        assert!(!(1..=35).contains(&tag("1")), "{how}: {r:?}");
        assert!((1..=35).contains(&tag("0")), "{how}: {r:?}");
        let said = the_line_with(&r.stderr, "on device 1: cusafe cannot tag memory there");
        assert!(
            said.starts_with("cusafe: warning: cuMemAlloc"),
            "{how}: {r:?}"
        );
        // The instrumented kernel launched there runs, and its first launch says so.
        assert_eq!(r.stdout.matches("window ").count(), 2, "{how}: {r:?}");
        the_line_with(
            &r.stderr,
            "window(char*) launched on device 1: cusafe does not serve it",
        );
    }
}
