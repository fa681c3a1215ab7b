//! Packed blocks: blocks of any multiple of a class's step, packed in slabs, for the
//! allocations that power-of-two blocks would round up (docs/formats.md, "Packed
//! blocks").
//!
//! ```text
//!  63 | 62 .. 47 | 46 .. 41 | 40 .. 33        | 32 .. 0
//!  p  |    0     |  tag t   | field f (0..254) | address in sub-window (t, f)
//! ```
//! Tags [`FIRST_PACKED_CLASS`]`..=`[`LAST_PACKED_CLASS`] split their window into 256
//! sub-windows of 8 GiB by address bits 33..40. Sub-window `f < 255` holds packed
//! blocks of extent `L = (f + 1) << e`, `e = t - 5` (the class's *step*, 256 B .. 8 KiB);
//! sub-window [`POW2_FIELD`] keeps the power-of-two layout ([`crate::block`]), where the
//! device heap's arena lives.
//!
//! A sub-window is cut into slabs of `2^(e + 14)` bytes (4 MiB .. 128 MiB), aligned to
//! their size. Block `k` of a slab:
//! ```text
//!  slab        slab + step - 16     payload_k = slab + step + k L       payload_k + L
//!  | (unused) | header_0 | payload_0 ...  | header_1 | payload_1 ...  | ...
//!  header_k = payload_k - 16 (u64 exact size, u64 id), at the end of block k-1's span
//! ```
//! Its payload is 256-byte aligned and holds `size <= L - 256` bytes, so the
//! one-past-the-end pointer and [`UNDERFLOW`] bytes below the payload stay in the
//! block's *tile* `[payload_k - 255, payload_k - 255 + L)`: the tiles of a slab's blocks
//! follow each other, and the pointer-arithmetic rule poisons a pointer that leaves its
//! root's tile, as it does one that leaves a power-of-two block.
//!
//! The device finds the block of a pointer `p` without a division instruction (the
//! pass's root half, [`device_index`]):
//! ```text
//! x = ((p mod 2^(e+14)) + 255) >> e            (< 2^14 + 1)
//! k = trunc((float(x) - 0.5) / float(f + 1))   (div.approx.f32, two ulp)
//! ```
//! `x` counts whole steps from the slab to the tile's start plus one; for `x >= 1` the
//! quotient is `(x - 1) / (f + 1)` plus at least `0.5 / (f + 1)` and less than one
//! minus that, far more than the approximation's error, so truncating gives the exact
//! floor; for `x = 0` (the slab's first bytes, before tile 0) it gives 0.

use crate::pointer::{tag_of, window_base, POISON_MASK};

/// The first tag with packed sub-windows: steps of 256 bytes, extents up to 65280.
pub const FIRST_PACKED_CLASS: u32 = 13;
/// The last tag with packed sub-windows: steps of 8 KiB, extents up to 2 MiB - 8 KiB.
pub const LAST_PACKED_CLASS: u32 = 18;
/// Position of the sub-window field.
pub const FIELD_SHIFT: u32 = 33;
/// The field's mask after shifting right by [`FIELD_SHIFT`].
pub const FIELD_MASK: u64 = 255;
/// Bytes of one sub-window (8 GiB).
pub const SUB_WINDOW: u64 = 1 << FIELD_SHIFT;
/// The field of the sub-window that keeps power-of-two blocks (the device heap's arena
/// is at the top of it).
pub const POW2_FIELD: u32 = 255;
/// log2 of a slab's size in steps.
pub const SLAB_STEPS_SHIFT: u32 = 14;
/// Bytes below a payload that stay in its block's tile (pointer arithmetic may go there
/// and come back without the poison bit).
pub const UNDERFLOW: u64 = 255;
/// Bytes from a header to its payload.
pub const HEADER_GAP: u64 = 16;

/// The field of `p` (bits 33..40).
pub const fn field_of(p: u64) -> u32 {
    ((p >> FIELD_SHIFT) & FIELD_MASK) as u32
}

/// Whether `p` (poison bit ignored) is in a packed sub-window.
pub const fn is_packed(p: u64) -> bool {
    let t = tag_of(p);
    t >= FIRST_PACKED_CLASS && t <= LAST_PACKED_CLASS && field_of(p) != POW2_FIELD
}

/// log2 of the step of packed class `t`.
pub const fn step_shift(t: u32) -> u32 {
    t - 5
}

/// log2 of the slab size of packed class `t`.
pub const fn slab_shift(t: u32) -> u32 {
    step_shift(t) + SLAB_STEPS_SHIFT
}

/// Bytes of a slab of packed class `t`.
pub const fn slab_bytes(t: u32) -> u64 {
    1 << slab_shift(t)
}

/// The extent `L` of the blocks of sub-window `(t, f)`.
pub const fn extent(t: u32, f: u32) -> u64 {
    (f as u64 + 1) << step_shift(t)
}

/// The largest payload a block of sub-window `(t, f)` holds.
pub const fn capacity(t: u32, f: u32) -> u64 {
    extent(t, f) - UNDERFLOW - 1
}

/// Base address of sub-window `(t, f)`.
pub const fn sub_window_base(t: u32, f: u32) -> u64 {
    window_base(t) + ((f as u64) << FIELD_SHIFT)
}

/// The packed sub-window `(t, f)` with the least extent that holds `size` bytes, or
/// `None` when `size` needs more than the last packed class's largest extent.
pub const fn class_for(size: u64) -> Option<(u32, u32)> {
    let need = match size.checked_add(UNDERFLOW + 1) {
        Some(n) => n,
        None => return None,
    };
    let mut t = FIRST_PACKED_CLASS;
    while t <= LAST_PACKED_CLASS {
        let units = need.div_ceil(1 << step_shift(t));
        if units <= POW2_FIELD as u64 {
            return Some((t, units as u32 - 1));
        }
        t += 1;
    }
    None
}

/// Every packed sub-window that holds `size` bytes: of each tag from the first, the
/// least extent that holds it first; [`class_for`]'s sub-window comes first. Where the
/// allocator looks when a sub-window has no slab slot left.
pub fn holding(size: u64) -> impl Iterator<Item = (u32, u32)> {
    let need = size.saturating_add(UNDERFLOW + 1);
    (FIRST_PACKED_CLASS..=LAST_PACKED_CLASS).flat_map(move |t| {
        let units = need.div_ceil(1 << step_shift(t));
        (units..=POW2_FIELD as u64).map(move |u| (t, u as u32 - 1))
    })
}

/// Blocks in one slab of sub-window `(t, f)`: those whose span (header to the next
/// header) ends inside the slab.
pub const fn slab_blocks(t: u32, f: u32) -> u64 {
    let step = 1u64 << step_shift(t);
    (slab_bytes(t) - (step - HEADER_GAP)) / extent(t, f)
}

/// Payload address of block `k` of the slab at `slab` (class `t`, field `f`).
pub const fn payload_at(slab: u64, t: u32, f: u32, k: u64) -> u64 {
    slab + (1 << step_shift(t)) + k * extent(t, f)
}

/// The index of the block whose tile holds `p` (a packed pointer, poison bit ignored)
/// in its slab: exact integer arithmetic (what [`device_index`] computes).
pub const fn block_index(p: u64) -> u64 {
    let t = tag_of(p);
    let y = (p & (slab_bytes(t) - 1)) + UNDERFLOW;
    let step = 1u64 << step_shift(t);
    if y < step {
        0
    } else {
        (y - step) / extent(t, field_of(p))
    }
}

/// The device's block index (the pass's root half): `x` = the slab offset plus
/// [`UNDERFLOW`], in steps; `units` = `f + 1`; `quotient` computes `a / b` in `f32`
/// the way the device does (`div.approx.f32`), which tests perturb by its error.
pub fn device_index(x: u32, units: u32, quotient: impl Fn(f32, f32) -> f32) -> u32 {
    // `as` truncates toward zero and saturates negative values at 0, as cvt.rzi does.
    quotient(x as f32 - 0.5, units as f32) as u32
}

/// The tile start of the block that packed pointer `p` is in (the block table's key):
/// 255 bytes below its payload.
pub const fn tile_start(p: u64) -> u64 {
    let p = p & !POISON_MASK;
    let t = tag_of(p);
    let slab = p & !(slab_bytes(t) - 1);
    payload_at(slab, t, field_of(p), block_index(p)) - UNDERFLOW
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_meet_the_memory_target_at_the_edges() {
        // 4 KiB: one 256-byte step more than the payload.
        assert_eq!(class_for(4096), Some((13, 16)));
        assert_eq!(extent(13, 16), 4352);
        // The smallest sizes share the 512-byte extent.
        assert_eq!(class_for(0), Some((13, 0)));
        assert_eq!(class_for(256), Some((13, 1)));
        assert_eq!(class_for(257), Some((13, 2)));
        // 64 KiB: steps of 512 bytes.
        assert_eq!(class_for(64 << 10), Some((14, 128)));
        assert_eq!(extent(14, 128), (64 << 10) + 512);
        // 1 MiB: steps of 8 KiB, 1/128 of the size.
        assert_eq!(extent(18, 128), (1 << 20) + (8 << 10));
        assert_eq!(class_for(1 << 20), Some((18, 128)));
        // The largest packed payload; one more byte takes a slotted block.
        let last = capacity(LAST_PACKED_CLASS, POW2_FIELD - 1);
        assert_eq!(last, (2 << 20) - (8 << 10) - 256);
        assert_eq!(class_for(last), Some((18, 254)));
        assert_eq!(class_for(last + 1), None);
        assert_eq!(class_for(u64::MAX), None);
    }

    #[test]
    fn holding_starts_at_the_class_and_every_one_holds() {
        for size in [
            0,
            1,
            4096,
            65024,
            65025,
            1 << 20,
            capacity(LAST_PACKED_CLASS, 254),
        ] {
            let all: Vec<_> = holding(size).collect();
            assert_eq!(all.first().copied(), class_for(size), "size {size}");
            assert!(all
                .iter()
                .all(|&(t, f)| capacity(t, f) >= size && f < POW2_FIELD));
        }
        assert_eq!(holding(capacity(LAST_PACKED_CLASS, 254) + 1).count(), 0);
    }

    #[test]
    fn slabs_hold_their_blocks() {
        assert_eq!(slab_bytes(13), 4 << 20);
        assert_eq!(slab_bytes(18), 128 << 20);
        assert_eq!(slab_blocks(13, 0), 16383);
        let (t, f) = (18, 254);
        let n = slab_blocks(t, f);
        let slab = sub_window_base(t, f);
        // The last block's span ends in the slab; the next one's would not.
        assert!(payload_at(slab, t, f, n) - HEADER_GAP <= slab + slab_bytes(t));
        assert!(payload_at(slab, t, f, n + 1) - HEADER_GAP > slab + slab_bytes(t));
    }

    /// `f32` division perturbed by `ulps` units in the last place (div.approx.f32 is
    /// within two of the exact quotient).
    fn nudged(ulps: i32) -> impl Fn(f32, f32) -> f32 {
        move |a, b| {
            let q = a / b;
            if q == 0.0 || !q.is_finite() {
                return q;
            }
            f32::from_bits((q.to_bits() as i64 + ulps as i64) as u32)
        }
    }

    #[test]
    fn the_device_index_is_exact_for_every_offset_and_field() {
        for units in 1..=POW2_FIELD {
            for x in 0..=(1u32 << SLAB_STEPS_SHIFT) {
                let want = x.saturating_sub(1) / units;
                for ulps in [-3, -2, -1, 0, 1, 2, 3] {
                    assert_eq!(
                        device_index(x, units, nudged(ulps)),
                        want,
                        "x {x} units {units} ulps {ulps}"
                    );
                }
            }
        }
    }

    #[test]
    fn block_index_agrees_with_the_device() {
        let (t, f) = (16, 200);
        let slab = sub_window_base(t, f) + 3 * slab_bytes(t);
        for off in (0..slab_bytes(t)).step_by(997) {
            let p = slab + off;
            let x = ((off + UNDERFLOW) >> step_shift(t)) as u32;
            assert_eq!(
                block_index(p),
                device_index(x, f + 1, nudged(0)) as u64,
                "off {off}"
            );
        }
    }

    #[test]
    fn tiles_reach_below_the_payload() {
        let (t, f) = (14, 170);
        let slab = sub_window_base(t, f) + 5 * slab_bytes(t);
        let p = payload_at(slab, t, f, 9);
        assert_eq!(tile_start(p), p - UNDERFLOW);
        assert_eq!(tile_start(p - UNDERFLOW), p - UNDERFLOW);
        assert_eq!(tile_start(p - UNDERFLOW - 1), p - UNDERFLOW - extent(t, f));
        // One past the end of the largest payload is the tile's last byte.
        assert_eq!(tile_start(p + capacity(t, f)), p - UNDERFLOW);
        assert_eq!(
            tile_start(p + capacity(t, f) + 1),
            p - UNDERFLOW + extent(t, f)
        );
        // The slab's first bytes belong to block 0.
        assert_eq!(block_index(slab), 0);
        assert!(is_packed(p) && !is_packed(sub_window_base(t, POW2_FIELD)));
    }
}
