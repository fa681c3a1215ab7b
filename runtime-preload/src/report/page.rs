//! Reading the report page (`cusafe_format::report`) while device code may still be
//! writing it, and after a trap has killed the context: plain volatile loads of pinned
//! host memory, no CUDA call. The claim counter lives in device memory (the runtime
//! page), so the host finds complete records by their state words alone.

use std::sync::atomic::{fence, Ordering};

use cusafe_format::report::{
    page_header, record_offset, Record, PAGE_BYTES, PAGE_CAPACITY, PAGE_HEADER_BYTES, RECORD_BYTES,
    STATE_COMPLETE, STATE_EMPTY,
};

/// Writes a fresh page (header filled, records empty) into `page`.
pub fn init_page(page: &mut [u8]) {
    page[..PAGE_BYTES].fill(0);
    page[..PAGE_HEADER_BYTES].copy_from_slice(&page_header());
}

/// Remembers which records were already reported.
#[derive(Debug, Default)]
pub struct PageReader {
    /// Bit `i`: record `i` was taken.
    taken: u64,
}

// One bit per record.
const _: () = assert!(PAGE_CAPACITY <= 64);

/// # Safety
/// `page` must be a valid report page and `off + 4 <= PAGE_BYTES`, 4-aligned.
unsafe fn load_u32(page: *const u8, off: usize) -> u32 {
    unsafe { std::ptr::read_volatile(page.add(off).cast::<u32>()) }
}

impl PageReader {
    /// A reader that has taken nothing yet.
    pub fn new() -> PageReader {
        PageReader::default()
    }

    /// Whether any record was ever taken.
    pub fn saw_any(&self) -> bool {
        self.taken != 0
    }

    /// Whether every record slot was taken: later findings are dropped by the device.
    pub fn is_full(&self) -> bool {
        self.taken.count_ones() as usize == PAGE_CAPACITY
    }

    /// Takes every complete record not taken before, in slot order. Records still
    /// being written are left for a later poll.
    ///
    /// # Safety
    /// `page` must point to [`PAGE_BYTES`] readable bytes laid out as a report page,
    /// 4-byte aligned, for the duration of the call.
    pub unsafe fn poll(&mut self, page: *const u8) -> Vec<Record> {
        // SAFETY: the caller's promise.
        unsafe { self.scan(page, false) }
    }

    /// Takes the complete records from the first slot not taken up to the first empty
    /// one: what a launch polls (a kernel just launched has rarely reported yet, and a
    /// full poll reads every slot). The device claims slots in order, so the slots after
    /// an empty one are empty too, unless that one's writer had not started or was
    /// stopped before it did (a trap ends the kernel); the next full [`PageReader::poll`]
    /// takes what lies behind such a slot.
    ///
    /// # Safety
    /// As for [`PageReader::poll`].
    pub unsafe fn poll_new(&mut self, page: *const u8) -> Vec<Record> {
        // SAFETY: the caller's promise.
        unsafe { self.scan(page, true) }
    }

    /// Takes the complete records not taken before, in slot order, stopping at the first
    /// empty slot when `until_empty`.
    ///
    /// # Safety
    /// As for [`PageReader::poll`].
    unsafe fn scan(&mut self, page: *const u8, until_empty: bool) -> Vec<Record> {
        let mut out = Vec::new();
        let first = (!self.taken).trailing_zeros() as usize;
        for i in first..PAGE_CAPACITY {
            if self.taken & (1 << i) != 0 {
                continue;
            }
            let off = record_offset(i);
            let state = unsafe { load_u32(page, off) };
            if state == STATE_EMPTY && until_empty {
                break;
            }
            if state != STATE_COMPLETE {
                continue;
            }
            // The device fenced before publishing the state: order our reads after it.
            fence(Ordering::Acquire);
            let mut bytes = [0u8; RECORD_BYTES];
            for (w, chunk) in bytes.chunks_exact_mut(4).enumerate() {
                let word = unsafe { load_u32(page, off + 4 * w) };
                chunk.copy_from_slice(&word.to_le_bytes());
            }
            self.taken |= 1 << i;
            if let Some(r) = Record::decode(&bytes) {
                out.push(r);
            }
        }
        out
    }
}
