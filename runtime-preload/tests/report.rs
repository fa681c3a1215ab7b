//! Record → report text and JSON (golden strings), host reports, call-site filtering.

use cusafe_format::packed::{self, slab_bytes, sub_window_base, UNDERFLOW};
use cusafe_format::report::{
    DeviceKind, Record, ACCESS_RANGE, ACCESS_WRITE, NO_HEADER, OBJECT_DYNAMIC_SHARED,
    OBJECT_GLOBAL_VAR, OBJECT_LOCAL, OBJECT_SHARED,
};
use cusafe_rt::alloc::{BlockInfo, BlockTable};
use cusafe_rt::report::host::{free_report, leak_report};
use cusafe_rt::report::refine::refine;
use cusafe_rt::report::site::{parse, program_frames, render_frames, Frame};
use cusafe_rt::report::{json, text, Kind};

/// The test buffer's payload: the first block of the second slab of packed sub-window
/// (13, 2), where the allocator puts 400 bytes (768-byte blocks).
const PTR: u64 = sub_window_base(13, 2) + slab_bytes(13) + 256;
/// Its key in the block table (its tile start).
const BASE: u64 = PTR - UNDERFLOW;

#[test]
fn the_test_buffer_is_where_the_allocator_puts_400_bytes() {
    assert_eq!(packed::class_for(400), Some((13, 2)));
    assert_eq!(cusafe_format::block::block_base(PTR + 399, 13), BASE);
    assert_eq!(PTR, 0x0000_1a04_0040_0100);
}

fn table(freed: bool) -> BlockTable {
    let mut t = BlockTable::default();
    t.insert(
        BASE,
        BlockInfo {
            id: 3,
            ptr: PTR,
            size: 400,
            freed,
            device: 0,
            alloc_site: None,
            free_site: None,
        },
    );
    t
}

fn record(kind: DeviceKind, addr: u64, root: u64, header: u64, flags: u32) -> Record {
    Record {
        kind,
        addr,
        root,
        header_size: header,
        access_size: 4,
        flags,
        thread: [100, 0, 0],
        block: [0, 2, 0],
        kernel: "_Z7add_onePii".into(),
        file: "vec.cu".into(),
        line: 12,
        col: 5,
        object: String::new(),
    }
}

const HEAP_OVERFLOW: &str = "\
=================================================================
==4242==ERROR: cusafe: heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5
WRITE of size 4 at 0x00001a0400400290 by thread (100,0,0) in block (0,2,0)
0x00001a0400400290 is 0 bytes after the end of the 400-byte buffer #3 (live)
buffer #3: 400 bytes at [0x00001a0400400100, 0x00001a0400400290), live; the address is at offset 400 from its start
  allocated at: unknown (set CUSAFE_OPTIONS=alloc_backtrace=1 to record it)
HINT: the access is outside the buffer: check the index and the launch geometry against the buffer's element count
SUMMARY: cusafe: heap-buffer-overflow in kernel add_one(int*, int) at vec.cu:12:5
=================================================================
";

#[test]
fn heap_overflow_text() {
    let r = refine(
        &record(DeviceKind::OutOfBounds, PTR + 400, PTR, 400, ACCESS_WRITE),
        &table(false),
    );
    assert_eq!(text::render(&r, 4242), HEAP_OVERFLOW);
}

const USE_AFTER_FREE: &str = "\
=================================================================
==7==ERROR: cusafe: use-after-free in kernel add_one(int*, int) at vec.cu:12:5
READ of size 4 at 0x00001a0400400110 by thread (100,0,0) in block (0,2,0)
0x00001a0400400110 is at offset 16 inside the 400-byte buffer #3 (freed)
buffer #3: 400 bytes at [0x00001a0400400100, 0x00001a0400400290), freed; the address is at offset 16 from its start
  allocated at: unknown (set CUSAFE_OPTIONS=alloc_backtrace=1 to record it)
HINT: the buffer was freed before this use: free it only after the last kernel or copy that uses it, and drop stale copies of the pointer
SUMMARY: cusafe: use-after-free in kernel add_one(int*, int) at vec.cu:12:5
=================================================================
";

#[test]
fn use_after_free_text() {
    let r = refine(
        &record(DeviceKind::OutOfBounds, PTR + 16, PTR, 0, 0),
        &table(true),
    );
    assert_eq!(text::render(&r, 7), USE_AFTER_FREE);
}

#[test]
fn refinement_of_every_device_kind() {
    let live = table(false);
    let kind = |r: Record, t: &BlockTable| refine(&r, t).kind;
    assert_eq!(
        kind(record(DeviceKind::OutOfBounds, PTR - 4, PTR, 400, 0), &live),
        Kind::HeapBufferOverflow
    );
    assert_eq!(
        kind(
            record(DeviceKind::OutOfBounds, PTR, PTR, 0, 0),
            &table(true)
        ),
        Kind::UseAfterFree
    );
    // Another block of the same slab, never allocated.
    assert_eq!(
        kind(
            record(DeviceKind::OutOfBounds, PTR + 4096, PTR + 4096, 0, 0),
            &live
        ),
        Kind::WildAccess
    );
    let poisoned = (PTR + 5000) | 1 << 63;
    let r = refine(
        &record(
            DeviceKind::PoisonedPointer,
            poisoned,
            poisoned,
            NO_HEADER,
            0,
        ),
        &live,
    );
    assert_eq!(r.kind, Kind::PointerOverflow);
    assert_eq!(r.buffer.as_ref().unwrap().block.id, 3);
    assert_eq!(r.buffer.as_ref().unwrap().offset, 5000);
    assert_eq!(
        r.detail,
        "the pointer left its buffer; 0x00001a0400401488 is 4600 bytes after the end of the 400-byte buffer #3 (live), the nearest buffer"
    );
    let foreign = 0x7f26_8be0_0400;
    assert_eq!(
        kind(
            record(DeviceKind::OutOfBounds, foreign, foreign, NO_HEADER, 0),
            &live
        ),
        Kind::WildAccess
    );
}

#[test]
fn object_overflows_take_their_kind_from_the_space_and_name_the_object() {
    let live = BlockTable::default();
    let local = 0x7f26_9d00_0010;
    for (space, want) in [
        (OBJECT_LOCAL, Kind::StackBufferOverflow),
        (OBJECT_SHARED, Kind::SharedBufferOverflow),
        (OBJECT_DYNAMIC_SHARED, Kind::SharedBufferOverflow),
        (OBJECT_GLOBAL_VAR, Kind::GlobalBufferOverflow),
    ] {
        let mut rec = record(
            DeviceKind::ObjectOutOfBounds,
            local + 64,
            local,
            64,
            space | ACCESS_WRITE,
        );
        rec.object = "tile".into();
        let r = refine(&rec, &live);
        assert_eq!(r.kind, want);
        assert!(r.buffer.is_none());
        assert!(
            r.detail.contains("0 bytes after the end of the 64-byte"),
            "{}",
            r.detail
        );
        assert!(r.detail.ends_with("'tile'"), "{}", r.detail);
    }
    let under = refine(
        &record(
            DeviceKind::ObjectOutOfBounds,
            local - 4,
            local,
            64,
            OBJECT_LOCAL,
        ),
        &live,
    );
    assert_eq!(
        under.detail,
        "0x00007f269d00000c is 4 bytes before the start of the 64-byte local array"
    );
}

#[test]
fn a_jump_into_another_buffer_names_both() {
    let mut t = table(false);
    // Block 21 of the slab.
    let other = BASE + 21 * 768;
    t.insert(
        other,
        BlockInfo {
            id: 4,
            ptr: other + UNDERFLOW,
            size: 400,
            freed: false,
            device: 0,
            alloc_site: None,
            free_site: None,
        },
    );
    let r = refine(
        &record(DeviceKind::OutOfBounds, other + UNDERFLOW + 20, PTR, 400, 0),
        &t,
    );
    assert_eq!(r.kind, Kind::HeapBufferOverflow);
    assert_eq!(r.buffer.as_ref().unwrap().block.id, 3);
    assert_eq!(
        r.detail,
        "0x00001a0400404014 is 15748 bytes after the end of the 400-byte buffer #3 (live), inside the 400-byte buffer #4 (live)"
    );
}

#[test]
fn unknown_location_and_range_access() {
    let mut rec = record(DeviceKind::OutOfBounds, PTR + 390, PTR, 400, ACCESS_RANGE);
    rec.access_size = 20;
    rec.file.clear();
    let t = text::render(&refine(&rec, &table(false)), 1);
    assert!(
        t.contains("in kernel add_one(int*, int) at <unknown location>\n"),
        "{t}"
    );
    assert!(
        t.contains("READ of range of 20 bytes at 0x00001a0400400286"),
        "{t}"
    );
    assert!(
        t.contains("is at offset 390, running 10 bytes past the end of the 400-byte buffer #3"),
        "{t}"
    );
}

const JSON: &str = r#"{"access":{"atomic":false,"range":false,"size":4,"write":true},"address":"0x00001a0400400290","api":null,"block":[0,2,0],"buffer":{"alloc_site":null,"device":0,"free_site":null,"freed":false,"id":3,"offset":400,"ptr":"0x00001a0400400100","size":400},"call_site":null,"col":5,"detail":"0x00001a0400400290 is 0 bytes after the end of the 400-byte buffer #3 (live)","device":null,"file":"vec.cu","hint":"the access is outside the buffer: check the index and the launch geometry against the buffer's element count","kernel":"add_one(int*, int)","kind":"heap-buffer-overflow","line":12,"operand":null,"pid":4242,"thread":[100,0,0],"where":"device"}
"#;

#[test]
fn heap_overflow_json() {
    let r = refine(
        &record(DeviceKind::OutOfBounds, PTR + 400, PTR, 400, ACCESS_WRITE),
        &table(false),
    );
    assert_eq!(json::render(&r, 4242), JSON);
}

const DOUBLE_FREE: &str = "\
=================================================================
==9==ERROR: cusafe: double-free in cudaFree
0x00001a0400400100 is the 400-byte buffer #3 (freed)
buffer #3: 400 bytes at [0x00001a0400400100, 0x00001a0400400290), freed; the address is at offset 0 from its start
  allocated at: unknown (set CUSAFE_OPTIONS=alloc_backtrace=1 to record it)
HINT: the buffer was already freed: free each allocation exactly once (reset the pointer after cudaFree, free or delete)
SUMMARY: cusafe: double-free in cudaFree
=================================================================
";

#[test]
fn host_reports() {
    let block = table(true).lookup(PTR).unwrap().clone();
    let r = free_report(
        "cudaFree",
        &cusafe_rt::alloc::FreeError::DoubleFree {
            block: block.clone(),
        },
    )
    .unwrap();
    assert_eq!(text::render(&r, 9), DOUBLE_FREE);
    let leak = leak_report(&BlockInfo {
        freed: false,
        ..block
    });
    let t = text::render(&leak, 9);
    assert!(t.contains("==9==ERROR: cusafe: leak in cudaMalloc\nthe 400-byte buffer #3 (live) was never freed\n"), "{t}");
    assert!(
        t.contains("HINT: cudaFree the buffer when done with it"),
        "{t}"
    );
}

const BACKTRACE: &str = "\
   0: cusafe_rt::runtime::Runtime::report
             at ./src/runtime.rs:200:20
   1: cusafe_rt::hooks::free::cudaFree::{{closure}}
   2: cudaFree
             at ./src/hooks/free.rs:40:5
   3: release
             at ./examples/double_free.cu:11:3
   4: main
             at ./examples/double_free.cu:19:3
   5: __libc_start_call_main
             at ./csu/../sysdeps/nptl/libc_start_call_main.h:58:16
   6: _start
";

#[test]
fn call_sites_keep_only_the_program_frames() {
    let frames = parse(BACKTRACE);
    assert_eq!(frames.len(), 7);
    assert_eq!(
        program_frames(&frames),
        &[
            Frame {
                function: "release".into(),
                location: Some("./examples/double_free.cu:11:3".into())
            },
            Frame {
                function: "main".into(),
                location: Some("./examples/double_free.cu:19:3".into())
            },
        ]
    );
    assert_eq!(
        render_frames(program_frames(&frames)),
        "    #0 release at ./examples/double_free.cu:11:3\n    #1 main at ./examples/double_free.cu:19:3\n"
    );
    // Without a hook frame (inlined away), everything after the runtime's own frames.
    let no_hook: String = BACKTRACE.replace("   2: cudaFree\n", "   2: cusafe_rt::x\n");
    assert_eq!(program_frames(&parse(&no_hook))[0].function, "release");
    assert_eq!(
        render_frames(&[]),
        "    (no frames: build the program with -g for source locations)\n"
    );
    // The CUDA header's `cudaMalloc<T>` and a kernel's launch stub are skipped (as
    // measured on the GPU: clang -O2 -g keeps both as frames).
    let glue = BACKTRACE.replace(
        "   3: release\n",
        "   3: _ZL10cudaMallocIfE9cudaErrorPPT_m\n             at /opt/cuda/include/cuda_runtime.h:766:10\n   3: _Z29__device_stub__normalize_rowsPKfPfi\n             at ./k.cu:10:71\n   3: release\n",
    );
    assert_eq!(program_frames(&parse(&glue))[0].function, "release");
}

#[test]
fn stale_local_pointers_are_use_after_return() {
    let live = BlockTable::default();
    let start = 0x7f26_9d00_0010;
    let r = refine(
        &record(DeviceKind::StaleLocal, start + 8, start, 32, OBJECT_LOCAL),
        &live,
    );
    assert_eq!(r.kind, Kind::StackUseAfterReturn);
    assert_eq!(r.kind.name(), "stack-use-after-return");
    assert_eq!(
        r.detail,
        "0x00007f269d000018 is at offset 8 of a 32-byte local array whose function has returned"
    );
}

#[test]
fn out_of_scope_locals_are_use_after_scope() {
    let live = BlockTable::default();
    let start = 0x7f26_9d00_0010;
    let r = refine(
        &record(
            DeviceKind::LocalOutOfScope,
            start + 4,
            start,
            36,
            OBJECT_LOCAL,
        ),
        &live,
    );
    assert_eq!(r.kind, Kind::StackUseAfterScope);
    assert_eq!(r.kind.name(), "stack-use-after-scope");
    assert_eq!(
        r.detail,
        "0x00007f269d000014 is at offset 4 of a 36-byte local array whose scope has ended"
    );
}

#[test]
fn a_fault_without_a_finding_as_json() {
    let suspects = [
        "scale(float*)".to_string(),
        "add_one(int*, int)".to_string(),
    ];
    assert_eq!(
        json::cuda_error_without_finding(700, "cudaErrorIllegalAddress", &suspects, 4242),
        "{\"code\":700,\"detail\":\"DETAIL\",\"kernel\":\"add_one(int*, int)\",\"kind\":\"cuda-error-without-finding\",\"name\":\"cudaErrorIllegalAddress\",\"pid\":4242,\"suspects\":[\"scale(float*)\",\"add_one(int*, int)\"],\"where\":\"device\"}\n".replace("DETAIL", json::FAULT_WITHOUT_FINDING)
    );
    let unknown = json::cuda_error_without_finding(719, "cudaErrorLaunchFailure", &[], 1);
    assert!(unknown.contains("\"kernel\":null"), "{unknown}");
}

#[test]
fn untagged_roots_fail_as_null_dereferences_or_wild_accesses() {
    use cusafe_format::pointer::FOREIGN_WINDOW;
    let t = BlockTable::default();
    // In a kernel: a null root plus 16 bytes fails the foreign window.
    let r = refine(
        &record(
            DeviceKind::OutOfBounds,
            0x10,
            FOREIGN_WINDOW.0,
            NO_HEADER,
            0,
        ),
        &t,
    );
    assert_eq!(r.kind, Kind::NullDereference);
    assert!(r.detail.contains("is in the null page"), "{}", r.detail);
    // At launch: a null argument's window (0, 0) fails any offset.
    let r = refine(
        &record(DeviceKind::OutOfBounds, 0x61a80, 0, NO_HEADER, 0),
        &t,
    );
    assert_eq!(r.kind, Kind::NullDereference);
    // At launch: an argument nothing maps.
    let r = refine(
        &record(
            DeviceKind::OutOfBounds,
            0xdead_0010,
            0xdead_0000,
            NO_HEADER,
            0,
        ),
        &t,
    );
    assert_eq!(r.kind, Kind::WildAccess);
    assert_eq!(
        r.detail,
        "0x00000000dead0010 is at offset 16 from the kernel argument 0x00000000dead0000, which is in no allocation, registered or managed memory the driver knows (a host pointer, a stale or uninitialised value)"
    );
    // A garbage pointer with high bits looks poisoned to the device.
    let junk = 0xcdcd_cdcd_cdcd_cdcd;
    let r = refine(
        &record(DeviceKind::PoisonedPointer, junk, junk, NO_HEADER, 0),
        &t,
    );
    assert_eq!(r.kind, Kind::WildAccess);
    assert!(r.detail.contains("bits 47..62 set"), "{}", r.detail);
}

#[test]
fn device_heap_blocks_are_described_without_the_host_table() {
    use cusafe_format::devheap::arena_va;
    let t = BlockTable::default();
    let payload = arena_va(7) + 3 * 1024 + 256;
    let r = refine(
        &record(
            DeviceKind::OutOfBounds,
            payload + 100,
            payload,
            100,
            ACCESS_WRITE,
        ),
        &t,
    );
    assert_eq!(r.kind, Kind::HeapBufferOverflow);
    assert_eq!(
        r.detail,
        format!("{:#018x} is 0 bytes after the end of the 100-byte device-heap block at {payload:#018x} (malloc/new in device code)", payload + 100)
    );
    let r = refine(
        &record(DeviceKind::OutOfBounds, payload + 8, payload, 0, 0),
        &t,
    );
    assert_eq!(r.kind, Kind::UseAfterFree);
    assert!(r.detail.contains("that was freed"), "{}", r.detail);
}

#[test]
fn frees_in_device_code_are_reported_with_thread_and_block() {
    use cusafe_format::devheap::arena_va;
    let t = BlockTable::default();
    let payload = arena_va(7) + 256;
    let mut rec = record(DeviceKind::DeviceDoubleFree, payload, payload, 0, 0);
    rec.access_size = 0;
    let r = refine(&rec, &t);
    assert_eq!(r.kind, Kind::DoubleFree);
    assert!(r.access.is_none());
    let text = text::render(&r, 1);
    assert!(
        text.contains(&format!(
            "FREE at {payload:#018x} by thread (100,0,0) in block (0,2,0)"
        )),
        "{text}"
    );
    let r = refine(
        &record(DeviceKind::DeviceInvalidFree, payload + 8, payload, 64, 0),
        &t,
    );
    assert_eq!(r.kind, Kind::InvalidFree);
    assert_eq!(
        r.detail,
        format!("free of {:#018x}, at offset 8 inside the 64-byte device-heap block at {payload:#018x}: free takes exactly the pointer malloc returned", payload + 8)
    );
    let r = refine(
        &record(DeviceKind::DeviceInvalidFree, PTR, 0, NO_HEADER, 0),
        &table(false),
    );
    assert!(
        r.detail.contains(
            "inside the 400-byte buffer #3 (live): memory from cudaMalloc is freed with cudaFree"
        ),
        "{}",
        r.detail
    );
}
