//! The device heap: `malloc`, `free`, `new` and `delete` in kernels.
//!
//! The pass sends every device `malloc` to device-rt's `__cusafe_malloc` and every
//! `free` to `__cusafe_free`. Their blocks are ordinary cusafe blocks of the in-band
//! classes ([`crate::block`]: header with the exact size at the base, payload at base + 256),
//! so the checks need nothing new. They come from an *arena*: one piece of physical
//! memory of [`arena_bytes`](State) that the runtime maps at the top of every window
//! whose class the arena serves, at [`arena_va`]`(t)`. A class-`t` block at arena
//! offset `o` (aligned to its size) is then the tagged address `arena_va(t) + o`; the
//! arena offsets a class uses are never used by another class (blocks are cut from the
//! arena with a bump pointer and go back to their class's queue when freed).
//!
//! The host allocator never hands out slots in the last [`ARENA_SPAN`] bytes of a
//! window of a class whose slots fit there ([`host_slots`]), so a tagged pointer in
//! that range is a device-heap pointer ([`in_arena`]).
//!
//! The arena's state lives in the runtime page at [`STATE_OFFSET`] (little endian):
//!
//! | offset | type | meaning |
//! |---|---|---|
//! | 0 | u64 | arena bytes (0: no arena; every device `malloc` goes to the real one) |
//! | 8 | u64 | bump: arena bytes handed out so far (device `atomicCAS`) |
//! | 16 | u32 | smallest class served |
//! | 20 | u32 | largest class served |
//! | 24 | u32 | allocations the arena could not serve (given to the real `malloc`) |
//! | 64 + 32 t | u32, u64, u64 | class `t`'s queue of freed blocks: lock, head, tail |
//!
//! A freed block's header size is 0 (so a use after free fails its check) and the word
//! at base + 8 links it to the next freed block of its class. Freed blocks are reused
//! oldest first and only once the bump pointer has reached the end of the arena: the
//! longest quarantine the arena allows.

use crate::block::{class_for, IN_BAND_LAST_CLASS};
use crate::pointer::{is_cusafe, tag_of, window_base, ADDRESS_END, WINDOW_SIZE};

/// Address space at the top of every served window kept for the arena (the largest
/// arena there can be).
pub const ARENA_SPAN: u64 = 1 << 32;
/// Offset of the arena from the base of a window.
pub const ARENA_OFFSET: u64 = WINDOW_SIZE - ARENA_SPAN;
/// The smallest class the arena serves: 512-byte blocks (header and one byte fit).
pub const MIN_CLASS: u32 = 6;
/// Offset from the runtime page's address of the arena's state.
pub const STATE_OFFSET: u64 = 64 << 10;
/// Offset in the state of the arena's size in bytes (u64).
pub const ARENA_BYTES: u64 = 0;
/// Offset in the state of the bump pointer (u64).
pub const BUMP: u64 = 8;
/// Offset in the state of the smallest class served (u32).
pub const FIRST_CLASS: u64 = 16;
/// Offset in the state of the largest class served (u32).
pub const LAST_CLASS: u64 = 20;
/// Offset in the state of the count of allocations the arena could not serve (u32).
pub const FALLBACKS: u64 = 24;
/// Offset in the state of class 0's queue; class `t`'s is `QUEUES + t * QUEUE_BYTES`.
pub const QUEUES: u64 = 64;
/// Bytes of one class's queue: u32 lock at 0, u64 head at 8, u64 tail at 16.
pub const QUEUE_BYTES: u64 = 32;
/// Bytes of the state.
pub const STATE_BYTES: u64 = QUEUES + QUEUE_BYTES * (crate::pointer::MAX_TAG as u64 + 1);
/// Offset in a freed block of the link to the next freed block of its class.
pub const NEXT_OFFSET: u64 = 8;
/// The device global a module that allocates in device code defines (one byte), by
/// which the runtime learns at a kernel's first launch that the arena must be mapped.
pub const MARKER_SYMBOL: &str = "__cusafe_device_heap";
/// The arena's default size (`CUSAFE_OPTIONS=device_heap_mb`).
pub const DEFAULT_ARENA_BYTES: u64 = 64 << 20;

/// Where class `t`'s view of the arena starts.
pub const fn arena_va(t: u32) -> u64 {
    window_base(t) + ARENA_OFFSET
}

/// Whether `p` is a device-heap pointer: tagged, below bit 47 and in the arena span of
/// its window.
pub const fn in_arena(p: u64) -> bool {
    is_cusafe(p) && p < ADDRESS_END && p - window_base(tag_of(p)) >= ARENA_OFFSET
}

/// The classes an arena of `bytes` (a power of two, at most [`ARENA_SPAN`]) serves:
/// from [`MIN_CLASS`] (or `first_available`, the smallest class whose window the runtime
/// holds, if larger) to the class of blocks as large as the arena, at most
/// [`IN_BAND_LAST_CLASS`] (device-heap blocks keep their header in-band; a larger
/// device `malloc` goes to the real one).
pub fn served_classes(bytes: u64, first_available: u32) -> std::ops::RangeInclusive<u32> {
    let last = bytes
        .trailing_zeros()
        .saturating_sub(3)
        .min(IN_BAND_LAST_CLASS);
    MIN_CLASS.max(first_available)..=last
}

/// The class a device `malloc(size)` gets from an arena serving `classes`, or `None`
/// when it must go to the real `malloc` (too large, or no class).
pub fn class_of(size: u64, classes: &std::ops::RangeInclusive<u32>) -> Option<u32> {
    let t = class_for(size)?.max(*classes.start());
    (t <= *classes.end()).then_some(t)
}

/// The first [`FALLBACKS`] bytes of the state as the runtime writes them once the arena
/// is mapped: its size, a zero bump pointer and the classes it serves.
pub fn state(
    arena_bytes: u64,
    classes: &std::ops::RangeInclusive<u32>,
) -> [u8; FALLBACKS as usize] {
    let mut b = [0u8; FALLBACKS as usize];
    let at = |off: u64| off as usize;
    b[at(ARENA_BYTES)..at(ARENA_BYTES) + 8].copy_from_slice(&arena_bytes.to_le_bytes());
    b[at(FIRST_CLASS)..at(FIRST_CLASS) + 4].copy_from_slice(&classes.start().to_le_bytes());
    b[at(LAST_CLASS)..at(LAST_CLASS) + 4].copy_from_slice(&classes.end().to_le_bytes());
    b
}

/// Slots of window `t` the host allocator may hand out when its slots are
/// `slot_bytes` each: all but those in the arena span, for the classes whose slots fit
/// in it.
pub const fn host_slots(slot_bytes: u64) -> u64 {
    if slot_bytes <= ARENA_SPAN {
        ARENA_OFFSET / slot_bytes
    } else {
        WINDOW_SIZE / slot_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::block::{block_base, block_size, payload};

    #[test]
    fn arena_pointers_are_tagged_and_known() {
        for t in MIN_CLASS..=IN_BAND_LAST_CLASS {
            let base = arena_va(t) + 3 * block_size(t);
            let p = payload(base);
            assert_eq!(tag_of(p), t);
            assert!(in_arena(p));
            assert_eq!(block_base(p, t), base);
        }
        assert!(!in_arena(window_base(9) + 4096));
        assert!(!in_arena(0x7f00_0000_0000));
    }

    #[test]
    fn the_host_never_hands_out_arena_slots() {
        for t in 1..=35u32 {
            let slot = if block_size(t) < 2 << 20 {
                2 << 20
            } else {
                block_size(t)
            };
            let slots = host_slots(slot);
            let last_end = window_base(t) + slots * slot;
            assert!(last_end <= arena_va(t) || slot > ARENA_SPAN, "class {t}");
            assert!(slots >= 1);
        }
    }

    #[test]
    fn state_layout() {
        let b = state(64 << 20, &(6..=18));
        assert_eq!(u64::from_le_bytes(b[0..8].try_into().unwrap()), 64 << 20);
        assert_eq!(u64::from_le_bytes(b[8..16].try_into().unwrap()), 0);
        assert_eq!(u32::from_le_bytes(b[16..20].try_into().unwrap()), 6);
        assert_eq!(u32::from_le_bytes(b[20..24].try_into().unwrap()), 18);
        const _: () = assert!(STATE_OFFSET + STATE_BYTES <= crate::rtpage::COVERAGE_OFFSET);
    }

    #[test]
    fn classes_of_device_mallocs() {
        let c = served_classes(64 << 20, 1);
        assert_eq!(c, 6..=IN_BAND_LAST_CLASS);
        assert_eq!(class_of(1, &c), Some(6));
        assert_eq!(class_of(255, &c), Some(6));
        assert_eq!(class_of(256, &c), Some(7));
        // The largest in-band block; beyond it (slotted classes), the real malloc.
        assert_eq!(class_of((2 << 20) - 257, &c), Some(IN_BAND_LAST_CLASS));
        assert_eq!(class_of((2 << 20) - 256, &c), None);
        assert_eq!(served_classes(1 << 20, 1), 6..=17);
        // Windows below 9 missing (host ASan): small blocks take class 9.
        assert_eq!(class_of(1, &served_classes(64 << 20, 9)), Some(9));
    }
}
