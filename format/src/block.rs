//! Size classes, block layout and the in-band header.
//!
//! ```text
//!  base                     base + PREFIX              base + PREFIX + size     base + 2^(t+3)
//!  | header | (unused)      | payload ...              | slack (>= 1 byte)      |
//! ```
//! A block of class `t` is `2^(t+3)` bytes and aligned to its size. The header's first
//! u64 is the exact payload size; 0 means freed (or never allocated). PREFIX keeps
//! payloads 256-byte aligned like cudaMalloc's.

use crate::pointer::{MAX_TAG, MIN_TAG, POISON_MASK};

/// Bytes between a block's base (its header) and its payload.
pub const PREFIX: u64 = 256;
/// Byte offset of the exact payload size (u64) in the header.
pub const HEADER_SIZE_OFFSET: u64 = 0;
/// Byte offset of the allocation id (u64) in the header (host side only uses it;
/// device checks read only the size).
pub const HEADER_ID_OFFSET: u64 = 8;
/// Bytes of the header that carry meaning.
pub const HEADER_BYTES: u64 = 16;
/// Physical mapping granularity of the driver's VMM API.
pub const GRANULE: u64 = 2 << 20;

/// log2 of the block size of class `t`.
pub const fn class_shift(t: u32) -> u32 {
    t + 3
}

/// Block size of class `t` in bytes.
pub const fn block_size(t: u32) -> u64 {
    1u64 << class_shift(t)
}

/// The smallest class whose block holds the header prefix, `size` payload bytes and
/// one byte of slack (so a one-past-the-end pointer stays in the block), or `None`
/// when `size` is too large for any class.
pub const fn class_for(size: u64) -> Option<u32> {
    let need = match PREFIX.checked_add(size) {
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
    let t = bits - 3;
    if t > MAX_TAG {
        None
    } else {
        Some(t)
    }
}

/// Largest payload a cusafe block can hold.
pub const fn max_payload() -> u64 {
    block_size(MAX_TAG) - PREFIX - 1
}

/// Base (header address) of the block that the unpoisoned pointer `p` of class `t` is in.
pub const fn block_base(p: u64, t: u32) -> u64 {
    (p & !POISON_MASK) & !(block_size(t) - 1)
}

/// Payload address of a block whose header is at `base`.
pub const fn payload(base: u64) -> u64 {
    base + PREFIX
}

/// Bytes of physical memory backing a block with `size` payload bytes: header prefix
/// plus payload, rounded up to [`GRANULE`] (what large blocks map; slabs share one granule).
pub const fn backed_bytes(size: u64) -> u64 {
    (PREFIX + size).div_ceil(GRANULE) * GRANULE
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
}
