//! Global pointer format.
//!
//! ```text
//!  63      | 62 .. 47 | 46 .. 41 | 40 .. 0
//!  poison  |    0     |  tag t   | address inside window t
//! ```
//! Window `t` is `[t << 41, (t + 1) << 41)`. Tags `1..=35` are cusafe size classes
//! ([`crate::block`]); every other tag is a *foreign* pointer that the checks skip.

/// Bit set on a pointer whose arithmetic left its block (never dereference it).
pub const POISON_BIT: u32 = 63;
/// The poison bit as a mask.
pub const POISON_MASK: u64 = 1 << POISON_BIT;
/// Position of the lowest tag bit.
pub const TAG_SHIFT: u32 = 41;
/// Tag mask after shifting right by [`TAG_SHIFT`].
pub const TAG_MASK: u64 = 0x3f;
/// Size of one tag window in bytes (2 TiB).
pub const WINDOW_SIZE: u64 = 1 << TAG_SHIFT;
/// Smallest cusafe tag.
pub const MIN_TAG: u32 = 1;
/// Largest cusafe tag.
pub const MAX_TAG: u32 = 35;
/// End of the addresses real memory can have: every host, device, managed, shared and
/// local generic address lies below it (bit 47 and above are cusafe's own bits).
pub const ADDRESS_END: u64 = 1 << 47;
/// Addresses below this are the null page: nothing is mapped there on the host (Linux's
/// default `vm.mmap_min_addr`) nor on the device, so an access there is a null-pointer
/// dereference (a null pointer, or one plus a small offset).
pub const NULL_PAGE: u64 = 1 << 16;
/// The window `(start, limit)` of a foreign root: every real address from the end of the
/// null page to [`ADDRESS_END`]. An access through an untagged pointer fails only in the
/// null page or past the end of the address space (a wild pointer with high bits).
pub const FOREIGN_WINDOW: (u64, u64) = (NULL_PAGE, ADDRESS_END - NULL_PAGE);

/// The tag field of `p` (ignores the poison bit).
pub const fn tag_of(p: u64) -> u32 {
    ((p >> TAG_SHIFT) & TAG_MASK) as u32
}

/// Whether `p` carries a cusafe tag (`1..=35`). This is the device check's
/// `(t - 1) < 35` test, done unsigned.
pub const fn is_cusafe(p: u64) -> bool {
    (tag_of(p).wrapping_sub(MIN_TAG)) < (MAX_TAG - MIN_TAG + 1)
}

/// Whether `p` is a real address in the null page (below [`NULL_PAGE`]).
pub const fn in_null_page(p: u64) -> bool {
    p < NULL_PAGE
}

/// Whether `p` has the poison bit set.
pub const fn is_poisoned(p: u64) -> bool {
    p & POISON_MASK != 0
}

/// Base address of window `t`.
pub const fn window_base(t: u32) -> u64 {
    (t as u64) << TAG_SHIFT
}

/// The pointer-arithmetic rule: `q = p + off` gets the poison bit when it leaves the
/// block `p` points into: its `2^(t+3)`-byte block, or for a packed pointer its tile
/// (`block::tile_len` bytes from `block::block_base`, 255 below the payload to one
/// past its room). Foreign pointers are never poisoned by this rule; a poisoned `p`
/// stays poisoned whatever `off` is (even when the addition carries into bit 63).
/// Never traps.
pub const fn gep(p: u64, off: i64) -> u64 {
    let q = p.wrapping_add(off as u64);
    let sticky = p & POISON_MASK;
    if !is_cusafe(p) {
        return q | sticky;
    }
    let base = crate::block::block_base(p, tag_of(p));
    if (q & !POISON_MASK).wrapping_sub(base) >= crate::block::tile_len(p & !POISON_MASK) {
        q | POISON_MASK
    } else {
        q | sticky
    }
}
