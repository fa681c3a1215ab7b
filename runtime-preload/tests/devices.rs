//! Several devices in one process, end to end over the fake CUDA's two devices: tagged
//! memory on the second device (payload, header and header granule there), its own
//! runtime page told to the kernel's module there, frees from another device's
//! context, reports that name the device, and the devices that cannot be served.

mod common;
use common::*;

/// Device 1's runtime page: the second page in window 36 (format `device_page(1)`).
const DEVICE1_PAGE: &str = "480001000000";

#[test]
fn a_second_device_gets_tagged_memory_on_itself_and_its_own_runtime_page() {
    let r = run(&["two_devices", "alloc"], "");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_has(
        &r.stdout,
        &[
            // 400 bytes: packed (class 13), in a slab of device 1, header in-band.
            "small tag=13 dev=1 header dev=1",
            // 5 MiB: a slotted class, payload and header granule on device 1.
            "large tag=20 dev=1 header dev=1",
            // The launch on device 1 wrote device 1's page into the module there only.
            &format!("rtpage dev0=480000000000 dev1={DEVICE1_PAGE}"),
            // Freed from device 0's context without complaint; device 0 still tags.
            "device 0 tag=13 dev=0",
        ],
    );
}

#[test]
fn a_device_report_from_the_second_device_names_it() {
    let r = run(&["two_devices", "overflow"], "");
    assert_ne!(r.code, 0, "{r:?}");
    let head = the_line_with(&r.stderr, "ERROR: cusafe: heap-buffer-overflow");
    assert!(
        head.ends_with("in kernel add_one(int*, int) on device 1 at vec.cu:12:5"),
        "{r:?}"
    );
    assert!(r.stderr.contains("by thread (100,0,0)"), "{r:?}");
    assert!(r.stderr.contains("buffer #1: 400 bytes"), "{r:?}");
}

#[test]
fn a_double_free_across_devices_is_reported_with_the_buffers_device() {
    let r = run(&["two_devices", "double"], "halt_on_error=0");
    let head = the_line_with(&r.stderr, "ERROR: cusafe: double-free");
    assert!(head.ends_with("in cudaFree"), "{r:?}");
    assert!(r.stderr.contains("(buffer #1 is on device 1)"), "{r:?}");
    assert!(r.stdout.contains("second free: 1"), "{r:?}");
}

#[test]
fn a_device_without_vmm_passes_through_untagged_and_says_so_once() {
    let r = run_env(&["other_device"], "", &[("FAKE_CUDA_NO_VMM1", "1")]);
    assert_eq!(r.code, 0, "{r:?}");
    let tag: u32 = r.stdout.trim().trim_start_matches("tag=").parse().unwrap();
    assert!(!(1..=35).contains(&tag), "{r:?}");
    let said = the_line_with(&r.stderr, "cusafe: warning: cudaMalloc on device 1: ");
    assert!(
        said.contains("does not support virtual memory management")
            && said.contains("CUDA_VISIBLE_DEVICES=N"),
        "{r:?}"
    );
    assert_eq!(r.stderr.matches("warning").count(), 1, "{r:?}");
}

#[test]
fn without_peer_access_each_device_maps_its_blocks_for_itself() {
    let r = run_env(&["two_devices", "alloc"], "", &[("FAKE_CUDA_NO_PEER", "1")]);
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert!(
        r.stdout.contains("small tag=13 dev=1 header dev=1"),
        "{r:?}"
    );
}

#[test]
fn a_reset_second_device_frees_its_blocks_and_is_not_served_after() {
    let r = run(&["two_devices", "reset"], "detect_leaks=1");
    assert_eq!(r.code, 0, "{r:?}");
    let tag: u32 = r
        .stdout
        .trim()
        .trim_start_matches("after reset tag=")
        .parse()
        .unwrap();
    assert!(!(1..=35).contains(&tag), "{r:?}");
    // The block live at the reset was freed by it: no leak.
    assert!(!r.stderr.contains("leak"), "{r:?}");
    let said = the_line_with(&r.stderr, "cusafe: warning: cudaMalloc on device 1: ");
    assert!(said.contains("a reset of device 1 destroyed"), "{r:?}");
}

#[test]
fn a_graph_node_made_on_the_second_device_learns_its_runtime_page() {
    let r = run(&["two_devices", "graph"], "detect_leaks=0");
    assert_eq!((r.code, r.stderr.as_str()), (0, ""), "{r:?}");
    assert_eq!(r.stdout, format!("rtpage dev1={DEVICE1_PAGE}\n"), "{r:?}");
}

#[test]
fn an_allocation_is_judged_against_its_own_devices_memory() {
    // Device 0 has 1 GiB, device 1 16 GiB: 1.5 GiB fits device 1 only.
    let r = run_env(
        &["two_devices", "big"],
        "halt_on_error=0:detect_leaks=0",
        &[("FAKE_CUDA_TOTAL_MEM0", "1073741824")],
    );
    assert_eq!(r.stdout, "device 1: 0\ndevice 0: 2\n", "{r:?}");
    assert_eq!(
        r.stderr
            .matches("ERROR: cusafe: allocation-size-too-big")
            .count(),
        1,
        "{r:?}"
    );
    assert!(
        r.stderr.contains("exceeds the device's 1073741824 bytes"),
        "{r:?}"
    );
}
