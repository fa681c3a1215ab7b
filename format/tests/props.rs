//! Property tests of the format math: tag <-> class <-> header, the XOR rule, and the
//! one-past-the-end guarantee, for blocks where the host allocator puts them (packed
//! sub-windows, slotted windows) and for power-of-two blocks.

use cusafe_format::block::*;
use cusafe_format::devheap::{arena_va, MIN_CLASS};
use cusafe_format::launch::{
    fits, fits_aligned, fits_index, index_bounds, launch_bounds, START_ALIGN,
};
use cusafe_format::packed;
use cusafe_format::pointer::*;
use cusafe_format::report::*;
use proptest::prelude::*;

/// A power-of-two block of class `t` at slot `slot` of its window (of its power-of-two
/// sub-window, for a class with packed ones).
fn block_at(t: u32, slot: u64) -> u64 {
    let (from, bytes) = if (packed::FIRST_PACKED_CLASS..=packed::LAST_PACKED_CLASS).contains(&t) {
        (
            packed::sub_window_base(t, packed::POW2_FIELD),
            packed::SUB_WINDOW,
        )
    } else {
        (window_base(t), WINDOW_SIZE)
    };
    from + (slot % (bytes / block_size(t))) * block_size(t)
}

/// The base of a block holding `size` bytes where the host allocator may put it: block
/// `slot mod n` of slab `slot / n mod slabs` of its packed sub-window, else a slotted
/// block at slot `slot` of its window.
fn placed(size: u64, slot: u64) -> u64 {
    match packed::class_for(size) {
        Some((t, f)) => {
            let n = packed::slab_blocks(t, f);
            let slabs = packed::SUB_WINDOW / packed::slab_bytes(t);
            let slab = packed::sub_window_base(t, f) + (slot / n % slabs) * packed::slab_bytes(t);
            packed::payload_at(slab, t, f, slot % n) - packed::UNDERFLOW
        }
        None => block_at(slotted_class_for(size).expect("fits"), slot),
    }
}

/// Sizes spread over every magnitude up to 16 GiB.
fn any_size() -> impl Strategy<Value = u64> {
    (0u32..=34).prop_flat_map(|b| 0u64..=(1u64 << b))
}

fn size_and_class() -> impl Strategy<Value = (u64, u32)> {
    any_size().prop_map(|s| (s, class_for(s).expect("fits")))
}

proptest! {
    #[test]
    fn class_is_smallest_that_fits((size, t) in size_and_class()) {
        prop_assert!((MIN_TAG..=MAX_TAG).contains(&t));
        prop_assert!(prefix(t) + size < block_size(t));
        if t > MIN_TAG {
            prop_assert!(prefix(t - 1) + size + 1 > block_size(t - 1));
        }
    }

    #[test]
    fn headers_sit_below_the_payload_and_backing_covers_it(size in any_size(), slot: u64) {
        let base = placed(size, slot);
        let t = tag_of(base);
        let hdr = header_addr(base);
        prop_assert_eq!(hdr % HEADER_BYTES, 0);
        prop_assert_eq!(payload(base) % 256, 0);
        if packed::is_packed(base) {
            // The header is right below the payload, in the block's tile.
            prop_assert_eq!(hdr + HEADER_BYTES, payload(base));
            prop_assert!(hdr >= base);
            prop_assert!(size < tile_len(base) - packed::UNDERFLOW);
            // The memory target: at most max(256, size / 64) bytes over the payload
            // rounded up to 256 (what a plain cudaMalloc's blocks are cut in).
            prop_assert!(tile_len(base) - size.div_ceil(256) * 256 <= (size / 64).max(256));
        } else {
            prop_assert!(is_slotted(t));
            let (at, bytes) = backing(base, size);
            // Only the payload is backed: within a granule of its size.
            prop_assert_eq!(at, base + GRANULE);
            prop_assert_eq!(bytes % GRANULE, 0);
            prop_assert!(at <= payload(base) && payload(base) + size <= at + bytes);
            prop_assert!(bytes < size + GRANULE);
            // Neighbouring blocks of a class take different slots (2^17 in a row).
            let next = base + block_size(t);
            if tag_of(next) == t && t == FIRST_SLOTTED_CLASS {
                prop_assert_ne!(header_slot(next), header_slot(base));
            }
        }
    }

    #[test]
    fn power_of_two_headers_sit_in_the_prefix((size, t) in size_and_class(), slot: u64) {
        let base = block_at(t, slot);
        prop_assert!(!packed::is_packed(base));
        prop_assert_eq!(block_base(payload(base) + size, t), base);
        if !is_slotted(t) {
            prop_assert_eq!(header_addr(base), base);
            prop_assert_eq!(payload(base), base + PREFIX);
        }
    }

    #[test]
    fn pointers_into_a_block_find_its_base(size in any_size(), slot: u64, frac in 0.0f64..=1.0) {
        let base = placed(size, slot);
        let t = tag_of(base);
        let p = payload(base) + (size as f64 * frac) as u64;
        prop_assert!(is_cusafe(p));
        prop_assert_eq!(tag_of(p), t);
        prop_assert_eq!(block_base(p, t), base);
    }

    #[test]
    fn one_past_the_end_is_never_poisoned(size in any_size(), slot: u64) {
        let base = placed(size, slot);
        let t = tag_of(base);
        let p = payload(base);
        let end = gep(p, size as i64);
        prop_assert!(!is_poisoned(end));
        prop_assert_eq!(block_base(end, t), base);
        // ... and walking back from it to the start is fine too.
        prop_assert!(!is_poisoned(gep(end, -(size as i64))));
    }

    #[test]
    fn in_bounds_accesses_pass_and_others_fail(size in any_size(), slot: u64, off: i64, len in 1u64..=64) {
        let base = placed(size, slot);
        let t = tag_of(base);
        let p = gep(payload(base), off);
        let inside = off >= 0 && (off as u64).checked_add(len).is_some_and(|e| e <= size);
        if is_poisoned(p) {
            // Poisoned pointers are reported before any bounds check.
            prop_assert!(!inside);
        } else {
            prop_assert_eq!(access_ok(p, block_base(p, t), size, len), inside);
        }
    }

    // Power-of-two classes from the smallest that holds a payload (below it the prefix
    // is larger than the block).
    #[test]
    fn leaving_the_block_poisons(t in MIN_CLASS..=MAX_TAG, size in any_size(), pow2: bool, slot: u64, off in prop_oneof![any::<i64>(), -70000i64..70000]) {
        let base = if pow2 { block_at(t, slot) } else { placed(size, slot) };
        let p = payload(base);
        let q = gep(p, off);
        let target = p.wrapping_add(off as u64);
        let left = target < base || target >= base + tile_len(base);
        prop_assert_eq!(is_poisoned(q), left);
        // Poison sticks: further arithmetic never clears it.
        prop_assert!(!is_poisoned(q) || is_poisoned(gep(q, -off)));
    }

    #[test]
    fn freed_blocks_fail_every_access(size in any_size(), slot: u64, off in 0u64..1<<20, len in 1u64..=16) {
        let base = placed(size, slot);
        prop_assert!(!access_ok(payload(base) + off, base, 0, len));
    }

    #[test]
    fn foreign_pointers_are_never_poisoned(hi in prop_oneof![Just(0u64), 36u64..=63], lo in 0u64..WINDOW_SIZE, off: i64) {
        let p = (hi << TAG_SHIFT) | lo;
        prop_assert!(!is_cusafe(p));
        let q = gep(p, off);
        prop_assert_eq!(q, p.wrapping_add(off as u64));
    }

    #[test]
    fn records_round_trip(addr: u64, root: u64, hs: u64, acc: u32, flags: u32, th: [u32; 3], bl: [u32; 3],
                          kernel in "[A-Za-z0-9_]{1,80}", file in "[a-z/._]{1,80}", line: u32, col: u32,
                          object in "[A-Za-z0-9_]{0,40}", kind in 1u32..=7) {
        let kind = DeviceKind::from_u32(kind).expect("valid kind");
        let r = Record { kind, addr, root, header_size: hs, access_size: acc, flags,
                         thread: th, block: bl, kernel, file, line, col, object };
        prop_assert_eq!(Record::decode(&r.encode()), Some(r));
    }

    #[test]
    fn launch_bounds_of_any_argument_decide_like_the_header(size in any_size(), slot: u64, arg_frac in 0.0f64..=1.0, off: i64, len in 1u64..=64, freed: bool) {
        // The kernel gets an interior pointer; the access is anywhere relative to it.
        let base = placed(size, slot);
        let arg = payload(base) + (size as f64 * arg_frac) as u64;
        let header = if freed { 0 } else { size };
        let (start, limit) = launch_bounds(arg, |b| { assert_eq!(b, base); header }, |_| panic!("a cusafe pointer is never asked about"));
        let a = gep(arg, off);
        if is_poisoned(a) {
            prop_assert!(!fits(a, start, limit, len));
        } else {
            prop_assert_eq!(fits(a, start, limit, len), access_ok(a, base, header, len));
        }
    }

    #[test]
    fn aligned_accesses_decide_on_their_last_byte((size, t) in size_and_class(), slot: u64, arg_frac in 0.0f64..=1.0, off: i64, log_len in 0u32..=4, freed: bool, foreign: u64, which in 0u32..3) {
        // The window of a cusafe argument, a device-heap one, or a foreign one (the
        // root half's and launch_bounds' windows with a nonzero limit).
        let len = 1u64 << log_len;
        let base = placed(size, slot);
        let arg = payload(base) + (size as f64 * arg_frac) as u64;
        let header = if freed { 0 } else { size };
        let heap_arg = arena_va(t.clamp(MIN_CLASS, IN_BAND_LAST_CLASS)) + (slot % (1 << 20)) * 16;
        let (start, limit) = match which {
            0 => launch_bounds(arg, |_| header, |_| false),
            1 => launch_bounds(heap_arg, |_| panic!("device-heap headers are not read"), |_| false),
            _ => launch_bounds(NULL_PAGE + foreign % (WINDOW_SIZE - NULL_PAGE), |_| panic!("not cusafe"), |_| true),
        };
        prop_assert!(limit == 0 || start % START_ALIGN == 0, "start {start:#x} limit {limit}");
        // Any address aligned to the access's length.
        let a = gep(start, off) & !(len - 1);
        prop_assert_eq!(fits_aligned(a, start, limit, len), fits(a, start, limit, len), "a {:#x}", a);
    }

    #[test]
    fn index_bounds_pass_an_index_exactly_when_every_member_fits(members in proptest::collection::vec(((1u64..1 << 20), 0.0f64..=1.2, 0u32..3, 0u64..1 << 30), 2..5), log_scale in 0u32..=4, odd: bool, x_off in -70i64..70, pick: usize) {
        // Members: cusafe arguments anywhere in (or just past) blocks of their sizes,
        // some freed, some foreign; elements of 1 to 16 bytes or an odd 12.
        let scale = if odd { 12 } else { 1u64 << log_scale };
        let windows: Vec<(u64, u64, u64)> = members
            .iter()
            .enumerate()
            .map(|(k, &(size, frac, kind, foreign))| {
                let base = placed(size, k as u64 * 7 + 1);
                let p = payload(base) + (size as f64 * frac) as u64;
                let (start, limit) = match kind {
                    0 => launch_bounds(p, |_| size, |_| false),
                    1 => launch_bounds(p, |_| 0, |_| false),
                    _ => launch_bounds(NULL_PAGE + foreign, |_| panic!("not cusafe"), |_| true),
                };
                let p = if kind == 2 { NULL_PAGE + foreign } else { p };
                (p, start, limit)
            })
            .collect();
        let (lo, span) = index_bounds(scale, windows.iter().copied());
        // Near the ends of some member's range, where the verdict changes.
        let (p, start, limit) = windows[pick % windows.len()];
        let edge = if x_off % 2 == 0 { start } else { start + limit };
        let x = (edge as i64 - p as i64) / scale as i64 + x_off / 2;
        let every = windows.iter().all(|&(p, s, l)| fits(p.wrapping_add((scale as i64 * x) as u64), s, l, scale));
        prop_assert_eq!(fits_index(x, lo, span), every, "x {} lo {} span {}", x, lo as i64, span);
    }
}
