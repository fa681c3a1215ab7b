//! Size classes, block layout and the header.
//!
//! Two layouts, by class:
//! ```text
//! in-band (classes up to IN_BAND_LAST_CLASS: blocks of 16 B .. 2 MiB)
//!  base                     base + PREFIX              base + PREFIX + size     base + 2^(t+3)
//!  | header | (unused)      | payload ...              | slack (>= 1 byte)      |
//!
//! slotted (classes from FIRST_SLOTTED_CLASS: blocks of 4 MiB .. 256 GiB)
//!  base                           base + GRANULE        base + GRANULE + size    base + 2^(t+3)
//!  | header granule (shared)      | payload ...         | slack (>= 1 byte, unmapped) |
//!    header at base + 16 * ((base >> SLOT_SHIFT) mod HEADER_SLOTS)
//! ```
//! A block of class `t` is `2^(t+3)` bytes and aligned to its size. The header's first
//! u64 is the exact payload size; 0 means freed (or never allocated). PREFIX keeps
//! payloads 256-byte aligned like cudaMalloc's.
//!
//! Classes [`FIRST_PACKED_CLASS`](crate::packed::FIRST_PACKED_CLASS) to 18 also have
//! *packed* sub-windows ([`crate::packed`]), where blocks of any multiple of the class's
//! step are packed in slabs; that is where the host allocator puts every allocation a
//! slotted block does not take. [`block_base`], [`payload`], [`header_addr`] and
//! [`tile_len`] handle both layouts, by the pointer's bits.
//!
//! A slotted block's first granule holds no payload: the allocator maps there a physical
//! *header granule* that up to [`HEADER_SLOTS`] blocks share, each reading its own
//! 16-byte slot, so a payload of a whole number of granules takes exactly that many
//! (with the header in-band, one more: a 2 MiB buffer would take 4 MiB).

use crate::packed;
use crate::pointer::{tag_of, MAX_TAG, MIN_TAG, POISON_MASK};

/// Bytes between an in-band block's base (its header) and its payload.
pub const PREFIX: u64 = 256;
/// Byte offset of the exact payload size (u64) in the header.
pub const HEADER_SIZE_OFFSET: u64 = 0;
/// Byte offset of the allocation id (u64) in the header (host side only uses it;
/// device checks read only the size).
pub const HEADER_ID_OFFSET: u64 = 8;
/// Bytes of the header that carry meaning (and of one header slot).
pub const HEADER_BYTES: u64 = 16;
/// Physical mapping granularity of the driver's VMM API.
pub const GRANULE: u64 = 2 << 20;
/// The largest class with the in-band layout (2 MiB blocks).
pub const IN_BAND_LAST_CLASS: u32 = 18;
/// The smallest class with the slotted layout (4 MiB blocks).
pub const FIRST_SLOTTED_CLASS: u32 = IN_BAND_LAST_CLASS + 1;
/// log2 of the smallest slotted block: a slotted block's header slot is taken from the
/// base's bits from here up.
pub const SLOT_SHIFT: u32 = class_shift(FIRST_SLOTTED_CLASS);
/// Header slots in one header granule.
pub const HEADER_SLOTS: u64 = GRANULE / HEADER_BYTES;

/// log2 of the block size of class `t`.
pub const fn class_shift(t: u32) -> u32 {
    t + 3
}

/// Block size of class `t` in bytes.
pub const fn block_size(t: u32) -> u64 {
    1u64 << class_shift(t)
}

/// Whether class `t` has the slotted layout (header in a shared header granule,
/// payload at base + [`GRANULE`]).
pub const fn is_slotted(t: u32) -> bool {
    t >= FIRST_SLOTTED_CLASS
}

/// Bytes from a class-`t` block's base to its payload.
pub const fn prefix(t: u32) -> u64 {
    if is_slotted(t) {
        GRANULE
    } else {
        PREFIX
    }
}

/// The smallest class whose layout holds the prefix, `size` payload bytes and one byte
/// of slack (so a one-past-the-end pointer stays in the block), or `None` when `size`
/// is too large for any class.
pub const fn class_for(size: u64) -> Option<u32> {
    match smallest_holding(PREFIX, size) {
        Some(t) if t <= IN_BAND_LAST_CLASS => Some(t),
        Some(_) => match smallest_holding(GRANULE, size) {
            Some(t) if t <= MAX_TAG => Some(t),
            _ => None,
        },
        None => None,
    }
}

/// The class the host allocator gives `size` bytes that no packed sub-window holds
/// ([`crate::packed::class_for`]): the smallest slotted class whose block holds a
/// granule, `size` payload bytes and one byte of slack.
pub const fn slotted_class_for(size: u64) -> Option<u32> {
    match smallest_holding(GRANULE, size) {
        Some(t) if t > MAX_TAG => None,
        Some(t) if t < FIRST_SLOTTED_CLASS => Some(FIRST_SLOTTED_CLASS),
        other => other,
    }
}

/// The smallest class (at least [`MIN_TAG`]) whose block holds `prefix + size + 1` bytes.
const fn smallest_holding(prefix: u64, size: u64) -> Option<u32> {
    let need = match prefix.checked_add(size) {
        Some(n) => match n.checked_add(1) {
            Some(n) => n,
            None => return None,
        },
        None => return None,
    };
    // ceil(log2(need)), at least 4 (16 bytes = class 1).
    let bits = 64 - (need - 1).leading_zeros();
    let bits = if bits < MIN_TAG + 3 {
        MIN_TAG + 3
    } else {
        bits
    };
    Some(bits - 3)
}

/// Largest payload a cusafe block can hold.
pub const fn max_payload() -> u64 {
    block_size(MAX_TAG) - prefix(MAX_TAG) - 1
}

/// Base of the block that pointer `p` of class `t` is in (poison bit ignored): for a
/// power-of-two block its aligned base, for a packed one its tile's start
/// ([`packed::tile_start`], 255 bytes below the payload). The block table's key.
pub const fn block_base(p: u64, t: u32) -> u64 {
    if packed::is_packed(p) {
        packed::tile_start(p)
    } else {
        (p & !POISON_MASK) & !(block_size(t) - 1)
    }
}

/// Bytes of the block (power of two) or tile (packed) that `p` is in: the
/// pointer-arithmetic rule's range from [`block_base`].
pub const fn tile_len(p: u64) -> u64 {
    let t = tag_of(p);
    if packed::is_packed(p) {
        packed::extent(t, packed::field_of(p))
    } else {
        block_size(t)
    }
}

/// The header slot of the slotted block at `base`.
pub const fn header_slot(base: u64) -> u64 {
    (base >> SLOT_SHIFT) & (HEADER_SLOTS - 1)
}

/// Address of the header of the block at `base` (its class is its tag): the base for
/// in-band blocks, the block's slot in the header granule for slotted ones, 16 bytes
/// below the payload for packed ones.
pub const fn header_addr(base: u64) -> u64 {
    if packed::is_packed(base) {
        base + packed::UNDERFLOW - packed::HEADER_GAP
    } else if is_slotted(tag_of(base)) {
        base + header_slot(base) * HEADER_BYTES
    } else {
        base
    }
}

/// Payload address of the block at `base` (its class is its tag).
pub const fn payload(base: u64) -> u64 {
    if packed::is_packed(base) {
        base + packed::UNDERFLOW
    } else {
        base + prefix(tag_of(base))
    }
}

/// Where the physical memory of the block at `base` that holds `size` bytes is mapped
/// and how many bytes it is (a multiple of [`GRANULE`]): for in-band blocks the prefix
/// and payload from the base (what blocks outside slabs map; slabs share one granule),
/// for slotted ones the payload alone from base + [`GRANULE`].
pub const fn backing(base: u64, size: u64) -> (u64, u64) {
    if is_slotted(tag_of(base)) {
        (base + GRANULE, size.div_ceil(GRANULE) * GRANULE)
    } else {
        (base, (PREFIX + size).div_ceil(GRANULE) * GRANULE)
    }
}

/// The device check (the bounds comparison against the header, docs/pass.md) in host terms: does an access of `len` bytes
/// at `p`, inside a block whose header says `size`, stay in bounds? `p` must be an
/// unpoisoned cusafe pointer and `base` its block base. Freed blocks (`size == 0`)
/// fail every access; addresses below the payload fail through unsigned wrap-around.
pub const fn access_ok(p: u64, base: u64, size: u64, len: u64) -> bool {
    let off = p.wrapping_sub(payload(base));
    match off.checked_add(len) {
        Some(end) => end <= size,
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_at_the_edges() {
        assert_eq!(class_for(0), Some(6)); // 257 bytes -> 512-byte block
        assert_eq!(class_for(255), Some(6)); // 512 exactly
        assert_eq!(class_for(256), Some(7));
        assert_eq!(block_size(1), 16);
        assert_eq!(block_size(35), 256 << 30);
        assert_eq!(class_for(max_payload()), Some(MAX_TAG));
        assert_eq!(class_for(max_payload() + 1), None);
        assert_eq!(class_for(u64::MAX), None);
    }

    #[test]
    fn the_layouts_meet_at_two_mebibytes() {
        // The largest in-band payload fills a 2 MiB block but for one byte of slack.
        assert_eq!(class_for(GRANULE - PREFIX - 1), Some(IN_BAND_LAST_CLASS));
        assert_eq!(class_for(GRANULE - PREFIX), Some(FIRST_SLOTTED_CLASS));
        // 2 MiB of payload after the header granule, plus one byte: an 8 MiB block.
        assert_eq!(class_for(GRANULE), Some(20));
        assert_eq!(class_for(GRANULE - 1), Some(19));
        assert_eq!(SLOT_SHIFT, 22);
        assert_eq!(HEADER_SLOTS, 1 << 17);
    }

    #[test]
    fn slotted_blocks_back_only_their_payload() {
        let base = crate::pointer::window_base(20) + 5 * block_size(20);
        assert_eq!(payload(base), base + GRANULE);
        assert_eq!(header_addr(base), base + 5 * 2 * HEADER_BYTES);
        assert_eq!(backing(base, GRANULE), (base + GRANULE, GRANULE));
        assert_eq!(backing(base, GRANULE + 1), (base + GRANULE, 2 * GRANULE));
        let small = crate::pointer::window_base(10) + 3 * block_size(10);
        assert_eq!(header_addr(small), small);
        assert_eq!(payload(small), small + PREFIX);
        let two = crate::pointer::window_base(18);
        assert_eq!(backing(two, GRANULE - PREFIX - 1), (two, GRANULE));
    }
}
