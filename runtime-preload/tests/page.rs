//! The report page reader: complete records are taken once, in slot order; records
//! still being written wait for a later poll; a launch's poll stops at the first empty
//! slot, and a full poll takes what lies behind it.

use cusafe_format::report::{
    record_offset, DeviceKind, Record, PAGE_BYTES, PAGE_CAPACITY, PAGE_MAGIC,
};
use cusafe_rt::report::page::{init_page, PageReader};

fn record(line: u32) -> Record {
    Record {
        kind: DeviceKind::OutOfBounds,
        addr: 0x0000_0e00_0000_0290,
        root: 0x0000_0e00_0000_0100,
        header_size: 400,
        access_size: 4,
        flags: 1,
        thread: [1, 2, 3],
        block: [4, 5, 6],
        kernel: "_Z1kPi".into(),
        file: "a.cu".into(),
        line,
        col: 7,
        object: String::new(),
    }
}

/// A 4-byte aligned page.
fn page() -> Vec<u32> {
    let mut words = vec![0u32; PAGE_BYTES / 4];
    let bytes =
        unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), PAGE_BYTES) };
    init_page(bytes);
    words
}

fn put(page: &mut [u32], slot: usize, bytes: &[u8]) {
    let off = record_offset(slot) / 4;
    for (i, w) in bytes.chunks_exact(4).enumerate() {
        page[off + i] = u32::from_le_bytes(w.try_into().unwrap());
    }
}

fn poll(r: &mut PageReader, page: &[u32]) -> Vec<Record> {
    unsafe { r.poll(page.as_ptr().cast()) }
}

fn poll_new(r: &mut PageReader, page: &[u32]) -> Vec<Record> {
    unsafe { r.poll_new(page.as_ptr().cast()) }
}

fn lines(records: &[Record]) -> Vec<u32> {
    records.iter().map(|r| r.line).collect()
}

#[test]
fn fresh_page_has_header_and_no_records() {
    let p = page();
    assert_eq!(p[0], PAGE_MAGIC);
    let mut r = PageReader::new();
    assert!(poll(&mut r, &p).is_empty());
    assert!(!r.saw_any());
}

#[test]
fn complete_records_are_taken_once_incomplete_ones_later() {
    let mut p = page();
    let mut r = PageReader::new();
    put(&mut p, 0, &record(10).encode());
    let mut writing = record(11).encode();
    writing[0] = 1; // state: being written
    put(&mut p, 1, &writing);
    put(&mut p, 2, &record(12).encode());
    let got: Vec<u32> = poll(&mut r, &p).iter().map(|r| r.line).collect();
    assert_eq!(got, vec![10, 12]);
    assert!(poll(&mut r, &p).is_empty());
    put(&mut p, 1, &record(11).encode());
    assert_eq!(poll(&mut r, &p), vec![record(11)]);
    assert!(r.saw_any() && !r.is_full());
}

#[test]
fn a_full_page_is_noticed() {
    let mut p = page();
    let mut r = PageReader::new();
    for i in 0..PAGE_CAPACITY {
        put(&mut p, i, &record(i as u32).encode());
    }
    assert_eq!(poll(&mut r, &p).len(), PAGE_CAPACITY);
    assert!(r.is_full());
}

#[test]
fn a_launch_poll_stops_at_the_first_empty_slot() {
    let mut p = page();
    let mut r = PageReader::new();
    assert!(poll_new(&mut r, &p).is_empty());
    // Slot 0 complete, slot 1 being written, slot 2 complete: a slot being written does
    // not stop the scan.
    put(&mut p, 0, &record(10).encode());
    let mut writing = record(11).encode();
    writing[0] = 1;
    put(&mut p, 1, &writing);
    put(&mut p, 2, &record(12).encode());
    assert_eq!(lines(&poll_new(&mut r, &p)), vec![10, 12]);
    // Slot 3 claimed by a writer that never started (still empty), slot 4 complete: the
    // launch's poll stops at slot 3; the full poll takes slot 4 (and slot 1, now done).
    put(&mut p, 4, &record(14).encode());
    assert!(poll_new(&mut r, &p).is_empty());
    put(&mut p, 1, &record(11).encode());
    assert_eq!(lines(&poll_new(&mut r, &p)), vec![11]);
    assert_eq!(lines(&poll(&mut r, &p)), vec![14]);
    assert!(poll(&mut r, &p).is_empty() && poll_new(&mut r, &p).is_empty());
}
