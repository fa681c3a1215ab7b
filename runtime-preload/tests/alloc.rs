//! The allocator frontend over the host backend: classes, headers, packed slabs and
//! their granules, address reuse, tombstones, failures, memory per block, leak list.

use std::collections::HashSet;

use cusafe_format::block::{
    backing, block_base, block_size, header_addr, is_slotted, slotted_class_for, tile_len, GRANULE,
    HEADER_BYTES,
};
use cusafe_format::packed::{
    self, capacity, extent, field_of, is_packed, slab_blocks, slab_bytes, sub_window_base,
    HEADER_GAP, LAST_PACKED_CLASS, POW2_FIELD, SUB_WINDOW, UNDERFLOW,
};
use cusafe_format::pointer::{is_cusafe, tag_of, window_base, WINDOW_SIZE};
use cusafe_rt::alloc::{
    Access, AllocError, Allocator, Backend, BlockInfo, FreeError, HostBackend, FIRST_REQUIRED_TAG,
    MAX_CACHED_CHUNKS, MAX_TOMBSTONES,
};
use cusafe_rt::rng::Rng;
use proptest::prelude::*;

fn allocator() -> Allocator<HostBackend> {
    Allocator::new(HostBackend::new(), Rng::new(0x5eed)).expect("windows reserve")
}

fn base_of(b: &BlockInfo) -> u64 {
    block_base(b.ptr, tag_of(b.ptr))
}

/// Where device code reads the block's header.
fn hdr_of(b: &BlockInfo) -> u64 {
    header_addr(base_of(b))
}

/// The tag a block of `size` bytes gets: its packed class, or else its slotted one.
fn class_of(size: u64) -> u32 {
    packed::class_for(size)
        .map(|(t, _)| t)
        .or(slotted_class_for(size))
        .expect("a class")
}

/// The mappings in sub-window `(t, f)`, as (address, access).
fn mapped_in(a: &Allocator<HostBackend>, t: u32, f: u32) -> Vec<(u64, Access)> {
    let start = sub_window_base(t, f);
    a.backend()
        .mappings_in(start, start + SUB_WINDOW)
        .into_iter()
        .map(|(va, bytes, access)| {
            assert_eq!(bytes, GRANULE, "slabs map granule by granule");
            (va, access)
        })
        .collect()
}

/// The read-write granules (chunks, not tombstones) in sub-window `(t, f)`.
fn chunks_in(a: &Allocator<HostBackend>, t: u32, f: u32) -> Vec<u64> {
    mapped_in(a, t, f)
        .into_iter()
        .filter(|&(_, access)| access == Access::ReadWrite)
        .map(|(va, _)| va)
        .collect()
}

/// The slab that the packed block `b` is in.
fn slab_of(b: &BlockInfo) -> u64 {
    b.ptr & !(slab_bytes(tag_of(b.ptr)) - 1)
}

#[test]
fn blocks_carry_their_class_tag_and_alignment() {
    let mut a = allocator();
    let last_packed = capacity(LAST_PACKED_CLASS, POW2_FIELD - 1);
    for size in [
        0u64,
        1,
        255,
        256,
        400,
        4096,
        1 << 20,
        last_packed,
        last_packed + 1,
        (2 << 20) - 257,
        2 << 20,
        3 << 20,
        5 << 30,
    ] {
        let b = a.alloc(size, None, 0).unwrap();
        let t = class_of(size);
        assert!(is_cusafe(b.ptr));
        assert_eq!(tag_of(b.ptr), t, "size {size}");
        assert_eq!(b.ptr % 256, 0);
        assert_eq!(is_packed(b.ptr), size <= last_packed, "size {size}");
        if let Some((_, f)) = packed::class_for(size) {
            assert_eq!(field_of(b.ptr), f, "size {size}: its sub-window");
            assert_eq!(b.ptr - UNDERFLOW, base_of(&b), "the key is the tile start");
            assert_eq!(hdr_of(&b), b.ptr - HEADER_GAP);
        } else {
            assert!(is_slotted(t));
            assert_eq!(
                b.ptr - GRANULE,
                base_of(&b),
                "payload a granule after the base"
            );
        }
        assert!(
            b.ptr + size < base_of(&b) + tile_len(b.ptr),
            "one-past-the-end stays in the block's tile"
        );
        assert_eq!(
            a.backend().read_u64(hdr_of(&b)),
            Some(size),
            "header of {size}"
        );
        assert_eq!(b.size, size);
    }
}

#[test]
fn headers_zero_on_free_and_for_unallocated_slab_blocks() {
    let mut a = allocator();
    let b = a.alloc(400, None, 0).unwrap();
    let bs = tile_len(b.ptr);
    assert_eq!(bs, 768);
    // The slab's other blocks read size 0 (header words zeroed when their granule was
    // mapped).
    for k in 1..8 {
        assert_eq!(a.backend().read_u64(hdr_of(&b) + k * bs), Some(0));
        assert_eq!(
            a.backend().read_u32(hdr_of(&b) + k * bs + HEADER_BYTES - 4),
            Some(0)
        );
    }
    let c = a.alloc(400, None, 0).unwrap();
    assert_eq!(c.ptr, b.ptr + bs, "bump allocation inside the slab");
    a.free(b.ptr, None).unwrap();
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(0));
    assert_eq!(a.backend().read_u64(hdr_of(&c)), Some(400));
}

#[test]
fn the_tables_header_word_is_what_the_device_reads() {
    // Launch-time windows carry `header_word` instead of the header in device memory:
    // they must agree for live, freed and never-used blocks of every kind.
    let mut a = allocator();
    let blocks: Vec<BlockInfo> = [0u64, 1, 400, 5000, 3 << 20, (1 << 30) + 7]
        .iter()
        .map(|&s| a.alloc(s, None, 0).unwrap())
        .collect();
    for b in blocks.iter().step_by(2) {
        a.free(b.ptr, None).unwrap();
    }
    let slab_neighbour = base_of(&blocks[2]) + 4 * tile_len(blocks[2].ptr);
    let bases = blocks.iter().map(base_of).chain([slab_neighbour]);
    for base in bases {
        let device = a
            .backend()
            .read_u64(header_addr(base))
            .expect("header mapped");
        assert_eq!(a.table().header_word(base), device, "base {base:#x}");
    }
}

#[test]
fn slotted_blocks_map_only_their_payload_and_keep_a_zero_slot_when_freed() {
    let mut a = allocator();
    let size = (5u64 << 30) + 12345;
    let b = a.alloc(size, None, 0).unwrap();
    assert!(is_slotted(tag_of(b.ptr)));
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(size));
    let (at, backed) = backing(base_of(&b), size);
    assert_eq!(at, b.ptr);
    assert!(a.backend().is_mapped(at + backed - 1));
    assert!(!a.backend().is_mapped(at + backed));
    a.free(b.ptr, None).unwrap();
    // The header granule stays: the slot reads 0, the payload is gone.
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(0));
    assert!(!a.backend().is_mapped(b.ptr));
}

#[test]
fn whole_granule_payloads_take_no_granule_more() {
    // The case of PyTorch's 2 MiB and 20 MiB segments: with an in-band header each would
    // take one more granule.
    let mut a = allocator();
    let first = a.alloc(2 << 20, None, 0).unwrap();
    let created = a.backend().ops().creates;
    for size in [2u64 << 20, 4 << 20, 20 << 20, 64 << 20] {
        let b = a.alloc(size, None, 0).unwrap();
        assert_eq!(backing(base_of(&b), size).1, size, "size {size}");
        assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(size));
    }
    // One physical allocation each: the first block's header granule serves them all.
    assert_eq!(a.backend().ops().creates, created + 4);
    assert_eq!(a.stats().header_granules, 1);
    assert_eq!(a.backend().read_u64(hdr_of(&first)), Some(2 << 20));
}

#[test]
fn blocks_whose_slots_collide_get_another_header_granule() {
    // 5 GiB blocks are 8 GiB apart: 2048 slots, so bases 64 blocks apart share a slot,
    // and 100 of them (of the window's 255) must collide somewhere.
    let mut a = allocator();
    let blocks: Vec<BlockInfo> = (0..100u64)
        .map(|i| a.alloc((5 << 30) + i, None, 0).unwrap())
        .collect();
    assert!(a.stats().header_granules >= 2);
    for b in &blocks {
        assert_eq!(a.backend().read_u64(hdr_of(b)), Some(b.size));
    }
    for b in &blocks {
        a.free(b.ptr, None).unwrap();
        assert_eq!(a.backend().read_u64(hdr_of(b)), Some(0));
    }
}

#[test]
fn two_thousand_cycles_never_return_a_freed_address() {
    let mut a = allocator();
    let mut seen = HashSet::new();
    for i in 0..2000u64 {
        let size = 256u64 << (i % 13);
        let b = a.alloc(size, None, 0).unwrap();
        assert!(
            seen.insert(b.ptr),
            "address {:#x} came back (cycle {i})",
            b.ptr
        );
        a.free(b.ptr, None).unwrap();
    }
}

#[test]
fn a_full_slab_retires_when_its_last_block_is_freed() {
    let mut a = allocator();
    let size = 100_000;
    let (t, f) = packed::class_for(size).unwrap();
    assert_eq!((t, f, slab_bytes(t)), (14, 195, 8 << 20));
    let per_slab = slab_blocks(t, f);
    let blocks: Vec<_> = (0..per_slab)
        .map(|_| a.alloc(size, None, 0).unwrap())
        .collect();
    let slab = slab_of(&blocks[0]);
    assert!(blocks.iter().all(|b| slab_of(b) == slab), "one slab");
    assert_eq!(
        a.stats().granules_mapped,
        4,
        "the 8 MiB slab, granule by granule"
    );
    for b in &blocks[..per_slab as usize - 1] {
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(a.stats().slabs_retired, 0, "a block is still live");
    assert_eq!(
        a.stats().granules_retired,
        3,
        "the granules the last block does not touch"
    );
    let unmaps = a.backend().ops().unmaps;
    a.free(blocks.last().unwrap().ptr, None).unwrap();
    assert_eq!(a.stats().slabs_retired, 1);
    assert_eq!(a.stats().granules_retired, 4);
    assert_eq!(a.backend().ops().unmaps, unmaps + 1);
    // The slab keeps reading zero headers through the tombstones.
    for b in &blocks {
        assert_eq!(a.backend().read_u64(hdr_of(b)), Some(0));
    }
    assert_eq!(mapped_in(&a, t, f).len(), 4);
    assert!(chunks_in(&a, t, f).is_empty());
    // The next slab reuses a cached chunk, with fresh zero headers, at another slot.
    let creates = a.backend().ops().creates;
    let n = a.alloc(size, None, 0).unwrap();
    assert_eq!(
        a.backend().ops().creates,
        creates,
        "chunk came from the cache"
    );
    assert_eq!(a.stats().chunks_reused, 1);
    assert_ne!(slab_of(&n), slab);
    assert_eq!(a.backend().read_u64(hdr_of(&n)), Some(size));
    assert_eq!(a.backend().read_u64(hdr_of(&n) + tile_len(n.ptr)), Some(0));
}

#[test]
fn a_partly_used_slab_stays_even_when_empty() {
    let mut a = allocator();
    for _ in 0..100 {
        let b = a.alloc(400, None, 0).unwrap();
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(a.stats().slabs_mapped, 1);
    assert_eq!(a.stats().slabs_retired, 0);
    // Malloc/free loops cost no mapping: the granule holding the bump point stays.
    assert_eq!(a.stats().granules_mapped, 1);
    assert_eq!(a.stats().granules_retired, 0);
}

#[test]
fn small_sizes_live_in_their_own_sub_windows() {
    let mut a = allocator();
    let mut places = HashSet::new();
    for size in [1u64, 300, 1000, 3000, 9000, 70_000, 300_000, 1 << 20] {
        let b = a.alloc(size, None, 0).unwrap();
        let (t, f) = (tag_of(b.ptr), field_of(b.ptr));
        assert_eq!(packed::class_for(size), Some((t, f)));
        assert!(places.insert((t, f)), "size {size}");
        let start = sub_window_base(t, f);
        assert!(b.ptr >= start && b.ptr < start + SUB_WINDOW);
        assert!(f != POW2_FIELD, "never in the device heap's sub-window");
        assert!(b.size + 256 <= extent(t, f));
    }
    assert_eq!(places.len(), 8);
}

#[test]
fn double_interior_and_unknown_frees_are_refused() {
    let mut a = allocator();
    let b = a.alloc(1000, None, 0).unwrap();
    assert!(
        matches!(a.free(b.ptr + 4, None), Err(FreeError::Interior { ptr, .. }) if ptr == b.ptr + 4)
    );
    assert!(matches!(
        a.free(b.ptr + 4096, None),
        Err(FreeError::NotAllocated { .. })
    ));
    assert!(matches!(
        a.free(0x7f00_0000_0000, None),
        Err(FreeError::NotAllocated { .. })
    ));
    assert!(matches!(
        a.free(b.ptr | 1 << 63, None),
        Err(FreeError::NotAllocated { .. })
    ));
    a.free(b.ptr, None).unwrap();
    match a.free(b.ptr, None) {
        Err(FreeError::DoubleFree { block }) => assert_eq!((block.id, block.size), (b.id, 1000)),
        other => panic!("{other:?}"),
    }
    assert_eq!(a.stats().frees, 1);
}

#[test]
fn leak_list_is_live_blocks_in_allocation_order() {
    let mut a = allocator();
    let ids: Vec<_> = [10u64, 20, 30, 40]
        .iter()
        .map(|&s| a.alloc(s, None, 0).unwrap())
        .collect();
    a.free(ids[1].ptr, None).unwrap();
    let live: Vec<_> = a.live_blocks().iter().map(|b| (b.id, b.size)).collect();
    assert_eq!(live, vec![(1, 10), (3, 30), (4, 40)]);
    assert_eq!(a.stats().live_bytes, 80);
    assert_eq!(a.stats().peak_live_bytes, 100);
}

#[test]
fn lookup_finds_live_and_freed_blocks_from_any_address_inside() {
    let mut a = allocator();
    let b = a.alloc(5000, None, 0).unwrap();
    assert_eq!(a.table().lookup(b.ptr + 4999).unwrap().id, b.id);
    assert_eq!(a.table().lookup(base_of(&b)).unwrap().id, b.id);
    a.free(b.ptr, None).unwrap();
    assert!(a.table().lookup(b.ptr + 10).unwrap().freed);
    // Nearest: a poisoned pointer 3 blocks past the end still names the block.
    let far = (b.ptr + 3 * tile_len(b.ptr)) | 1 << 63;
    assert_eq!(a.table().nearest(far).unwrap().id, b.id);
    // So does one below it, but not a block of another size next to it in the window.
    let below = (b.ptr - 10 * tile_len(b.ptr)) | 1 << 63;
    assert_eq!(a.table().nearest(below).unwrap().id, b.id);
    let other = a.alloc(5300, None, 0).unwrap();
    assert_eq!(tag_of(other.ptr), tag_of(b.ptr));
    assert_ne!(field_of(other.ptr), field_of(b.ptr));
    let beside = (other.ptr + 3 * tile_len(other.ptr)) | 1 << 63;
    assert_eq!(a.table().nearest(beside).unwrap().id, other.id);
}

#[test]
fn failed_physical_allocation_leaves_no_trace() {
    let mut a = allocator();
    a.backend_mut().fail_next("create");
    assert!(matches!(
        a.alloc(3 << 20, None, 0),
        Err(AllocError::Backend(_))
    ));
    a.backend_mut().fail_next("map");
    assert!(matches!(a.alloc(400, None, 0), Err(AllocError::Backend(_))));
    assert_eq!(a.backend().mapping_count(), 0);
    assert_eq!(a.backend().live_handles(), 1, "the chunk went to the cache");
    // The header zeroing of a new granule fails: the granule is unmapped again.
    a.backend_mut().fail_next("fill32");
    assert!(matches!(a.alloc(400, None, 0), Err(AllocError::Backend(_))));
    assert_eq!(a.backend().mapping_count(), 0);
    assert_eq!(a.backend().live_handles(), 1, "the chunk went to the cache");
    assert_eq!(a.stats().granules_mapped, 0);
    let b = a.alloc(400, None, 0).unwrap();
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(400));
    assert_eq!(b.id, 1, "failed allocations take no id");
    assert_eq!(
        (b.ptr - sub_window_base(13, 2)) % slab_bytes(13),
        256,
        "the failed attempts handed nothing out: this is the slab's first block"
    );
    assert!(matches!(
        a.alloc(u64::MAX, None, 0),
        Err(AllocError::TooLarge(_))
    ));
}

#[test]
fn chunk_cache_is_bounded() {
    let mut a = allocator();
    let blocks: Vec<_> = (0..MAX_CACHED_CHUNKS + 8)
        .map(|_| a.alloc(3 << 20, None, 0).unwrap())
        .collect();
    let live = a.backend().live_handles();
    for b in &blocks {
        a.free(b.ptr, None).unwrap();
    }
    // 4 MiB payloads do not go to the 2 MiB chunk cache: all released; the header
    // granule stays, their tombstone.
    assert_eq!(a.backend().live_handles(), live - blocks.len());
    assert_eq!(a.stats().header_granules, 1);
    // Payloads of one granule come from the chunk cache and go back to it.
    let small: Vec<_> = (0..MAX_CACHED_CHUNKS + 8)
        .map(|_| a.alloc((2 << 20) - 300, None, 0).unwrap())
        .collect();
    assert!(small.iter().all(|b| is_slotted(tag_of(b.ptr))));
    let before = a.backend().live_handles();
    for b in &small {
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(
        a.backend().live_handles(),
        before - 8,
        "cache holds MAX_CACHED_CHUNKS"
    );
}

#[test]
fn tombstones_are_capped() {
    let mut a = allocator();
    // Slotted, one granule of payload each: the header granule stays as the tombstone.
    let size = (2 << 20) - 300;
    for _ in 0..MAX_TOMBSTONES + 10 {
        let b = a.alloc(size, None, 0).unwrap();
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(a.backend().mapping_count(), MAX_TOMBSTONES);
}

#[test]
fn a_full_window_reuses_the_oldest_freed_slot() {
    let mut a = allocator();
    let size = 200u64 << 30; // class 35: 8 slots of 256 GiB
    let t = class_of(size);
    assert_eq!(WINDOW_SIZE / block_size(t), 8);
    let blocks: Vec<_> = (0..8).map(|_| a.alloc(size, None, 0).unwrap()).collect();
    assert!(
        matches!(a.alloc(size, None, 0), Err(AllocError::OutOfAddressSpace { class, field: None }) if class == t)
    );
    a.free(blocks[5].ptr, None).unwrap();
    a.free(blocks[2].ptr, None).unwrap();
    assert_eq!(
        a.alloc(size, None, 0).unwrap().ptr,
        blocks[5].ptr,
        "oldest freed first"
    );
    assert_eq!(a.alloc(size, None, 0).unwrap().ptr, blocks[2].ptr);
    assert_eq!(a.window(t).unused(), 0);
}

#[test]
fn a_full_sub_window_sends_blocks_to_the_next_one_that_holds_them() {
    let mut a = allocator();
    // Sub-window (18, 200): 64 slabs of 128 MiB, 81 blocks each.
    let (t, f) = (LAST_PACKED_CLASS, 200);
    let size = capacity(t, f);
    assert_eq!(packed::class_for(size), Some((t, f)));
    let n = (SUB_WINDOW / slab_bytes(t)) * slab_blocks(t, f);
    assert_eq!(n, 64 * 81);
    let blocks: Vec<_> = (0..n).map(|_| a.alloc(size, None, 0).unwrap()).collect();
    assert!(blocks
        .iter()
        .all(|b| tag_of(b.ptr) == t && field_of(b.ptr) == f));
    assert_eq!(a.sub_window(t, f).unwrap().unused(), 0);
    // The next one takes the next field: a larger extent, the same exact size.
    let next = a.alloc(size, None, 0).unwrap();
    assert_eq!((tag_of(next.ptr), field_of(next.ptr)), (t, f + 1));
    assert_eq!(a.table().lookup(next.ptr).unwrap().size, size);
    // The largest packed size has no other sub-window: once its own is full, it takes a
    // slotted block.
    let (t, f) = (LAST_PACKED_CLASS, POW2_FIELD - 1);
    let size = capacity(t, f);
    let n = (SUB_WINDOW / slab_bytes(t)) * slab_blocks(t, f);
    for _ in 0..n {
        assert_eq!(field_of(a.alloc(size, None, 0).unwrap().ptr), f);
    }
    let slotted = a.alloc(size, None, 0).unwrap();
    assert_eq!(Some(tag_of(slotted.ptr)), slotted_class_for(size));
    assert!(!is_packed(slotted.ptr));
}

/// Allocates `size`-byte blocks until one maps a second granule of its slab; returns
/// them all (the last one is the first whose span reaches granule 1).
fn up_to_granule_one(a: &mut Allocator<HostBackend>, size: u64) -> Vec<BlockInfo> {
    let (t, f) = packed::class_for(size).unwrap();
    let mut blocks = vec![a.alloc(size, None, 0).unwrap()];
    while chunks_in(a, t, f).len() < 2 {
        blocks.push(a.alloc(size, None, 0).unwrap());
    }
    blocks
}

#[test]
fn granules_are_mapped_as_the_blocks_reach_them() {
    let mut a = allocator();
    let size = 100_000; // (14, 195): spans of 100352 bytes, 8 MiB slabs
    let (t, f) = packed::class_for(size).unwrap();
    let first = a.alloc(size, None, 0).unwrap();
    let slab = slab_of(&first);
    assert_eq!(
        chunks_in(&a, t, f),
        vec![slab],
        "the first block maps one granule"
    );
    assert_eq!(a.stats().granules_mapped, 1);
    let l = tile_len(first.ptr);
    for k in 1.. {
        let fills = a.backend().ops().fills;
        let b = a.alloc(size, None, 0).unwrap();
        assert_eq!(hdr_of(&b), hdr_of(&first) + k * l, "bump allocation");
        let (start, end) = (hdr_of(&b), hdr_of(&b) + l);
        if end <= slab + GRANULE {
            assert_eq!(
                chunks_in(&a, t, f),
                vec![slab],
                "block {k} stays in granule 0"
            );
            assert_eq!(
                a.backend().ops().fills,
                fills + 2,
                "its two header words only"
            );
            continue;
        }
        // Its span crosses into granule 1: mapped now, the headers there zeroed by one
        // fill before its own header is written.
        assert!(start < slab + GRANULE, "spans follow each other");
        assert_eq!(chunks_in(&a, t, f), vec![slab, slab + GRANULE], "block {k}");
        assert_eq!(a.stats().granules_mapped, 2);
        assert_eq!(a.backend().ops().fills, fills + 3);
        // The next block's header there reads 0; the payload after it is not written
        // (a fresh chunk reads 0xdeadbeef in the host backend).
        assert_eq!(a.backend().read_u64(end), Some(0));
        assert_eq!(a.backend().read_u32(end + HEADER_BYTES), Some(0xdead_beef));
        break;
    }
}

#[test]
fn a_new_granule_zeroes_the_headers_of_the_blocks_to_come() {
    let mut a = allocator();
    // A full slab of another size, freed: its chunks go to the cache with the old
    // headers in them (a retiring granule's last header is not zeroed).
    let old = 100_000;
    let (ot, of) = packed::class_for(old).unwrap();
    let olds: Vec<_> = (0..slab_blocks(ot, of))
        .map(|_| a.alloc(old, None, 0).unwrap())
        .collect();
    let last_hdr = hdr_of(olds.last().unwrap());
    let offset = last_hdr % GRANULE;
    for b in &olds {
        a.free(b.ptr, None).unwrap();
    }
    // The cache gives the last chunk freed (the one that held `last_hdr`) first.
    let size = 4096; // (13, 16): spans of 4352 bytes
    let blocks = up_to_granule_one(&mut a, size);
    let slab = slab_of(&blocks[0]);
    assert_eq!(
        a.backend().read_u32(slab + offset),
        Some(old as u32),
        "granule 0 is the dirty chunk"
    );
    let l = tile_len(blocks[0].ptr);
    // Every block after the ones handed out reads size 0, in granule 0 (zeroed when
    // block 0 mapped it) and in granule 1 (when the last block did).
    let (t, f) = packed::class_for(size).unwrap();
    let mut later = 0;
    for k in 1..slab_blocks(t, f) {
        let h = hdr_of(&blocks[0]) + k * l;
        assert!(h + HEADER_BYTES <= slab + 2 * GRANULE, "a 4 MiB slab");
        let want = if (k as usize) < blocks.len() { size } else { 0 };
        assert_eq!(a.backend().read_u64(h), Some(want), "block {k}");
        assert_eq!(a.backend().read_u64(h + 8), Some(0), "block {k}'s id word");
        later += u64::from(h >= slab + GRANULE);
    }
    assert!(later > 400, "granule 1 holds {later} headers");
}

#[test]
fn a_granule_retires_when_no_block_can_touch_it_any_more() {
    let mut a = allocator();
    let size = 100_000;
    let (t, f) = packed::class_for(size).unwrap();
    let blocks = up_to_granule_one(&mut a, size);
    let slab = slab_of(&blocks[0]);
    let crossing = blocks.last().unwrap();
    // Blocks 1..=last freed: block 0 still holds granule 0.
    for b in &blocks[1..] {
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(chunks_in(&a, t, f), vec![slab, slab + GRANULE]);
    assert_eq!(a.stats().granules_retired, 0);
    let handles = a.backend().live_handles();
    a.free(blocks[0].ptr, None).unwrap();
    // Granule 0 is behind the bump point and empty: retired, the zero tombstone over it
    // (read-only: a store through a dangling pointer faults). Granule 1 holds the bump
    // point: the next block goes there.
    assert_eq!(a.stats().granules_retired, 1);
    assert_eq!(chunks_in(&a, t, f), vec![slab + GRANULE]);
    assert_eq!(
        mapped_in(&a, t, f),
        vec![
            (slab, Access::ReadOnly),
            (slab + GRANULE, Access::ReadWrite)
        ]
    );
    for b in &blocks {
        assert_eq!(a.backend().read_u64(hdr_of(b)), Some(0), "dangling header");
    }
    assert!(a
        .backend_mut()
        .fill32(cusafe_rt::alloc::Fill::word(hdr_of(&blocks[0]), 1))
        .is_err());
    // The chunk went to the cache; the tombstone chunk was made.
    assert_eq!(a.backend().live_handles(), handles + 1);
    let next = a.alloc(size, None, 0).unwrap();
    assert_eq!(hdr_of(&next), hdr_of(crossing) + tile_len(next.ptr));
    assert_eq!(a.stats().chunks_reused, 0, "granule 1 was mapped already");
}

#[test]
fn a_quarantined_slab_slot_comes_back_without_its_tombstones() {
    let mut a = allocator();
    // The largest extent: 64 blocks of about 2 MiB a slab, 64 slab slots.
    let (t, f) = (LAST_PACKED_CLASS, POW2_FIELD - 1);
    let size = capacity(t, f);
    let (per_slab, slots) = (slab_blocks(t, f), SUB_WINDOW / slab_bytes(t));
    assert_eq!((per_slab, slots), (64, 64));
    let mut slabs = Vec::new();
    for i in 0..slots {
        let blocks: Vec<_> = (0..per_slab)
            .map(|_| a.alloc(size, None, 0).unwrap())
            .collect();
        let slab = slab_of(&blocks[0]);
        assert!(blocks.iter().all(|b| slab_of(b) == slab));
        for b in &blocks {
            a.free(b.ptr, None).unwrap();
        }
        assert_eq!(a.stats().slabs_retired, i + 1, "a full slab, all freed");
        slabs.push(slab);
    }
    assert_eq!(slabs.iter().collect::<HashSet<_>>().len(), 64);
    assert_eq!(a.sub_window(t, f).unwrap().unused(), 0);
    let first = slabs[0];
    let in_first = |a: &Allocator<HostBackend>| {
        mapped_in(a, t, f)
            .into_iter()
            .filter(|&(va, _)| va >= first && va < first + slab_bytes(t))
            .collect::<Vec<_>>()
    };
    // Every granule of every slab has its tombstone (4096: the cap).
    assert_eq!(in_first(&a).len(), 64);
    assert!(in_first(&a).iter().all(|&(_, acc)| acc == Access::ReadOnly));
    assert_eq!(a.backend().mapping_count(), MAX_TOMBSTONES);
    // Every slot was used once: the slab retired first comes back, its 64 tombstones
    // gone, and its first granule mapped afresh.
    let b = a.alloc(size, None, 0).unwrap();
    assert_eq!(slab_of(&b), first);
    assert_eq!(in_first(&a), vec![(first, Access::ReadWrite)]);
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(size));
    assert_eq!(a.backend().mapping_count(), MAX_TOMBSTONES - 64 + 1);
    // The next slab slot is the second slab retired.
    let more: Vec<_> = (0..per_slab)
        .map(|_| a.alloc(size, None, 0).unwrap())
        .collect();
    assert_eq!(slab_of(more.last().unwrap()), slabs[1]);
}

#[test]
fn live_blocks_take_about_their_extent_of_physical_memory() {
    let n = 1000u64;
    for size in [256u64, 1024, 4096, 65536, 1 << 20] {
        let mut a = allocator();
        let (t, f) = packed::class_for(size).unwrap();
        let l = extent(t, f);
        // The extent's rounding: at most max(256, size / 64) over the payload rounded
        // up to 256 bytes.
        assert!(
            l - size.div_ceil(256) * 256 <= (size / 64).max(256),
            "size {size}"
        );
        let blocks: Vec<_> = (0..n).map(|_| a.alloc(size, None, 0).unwrap()).collect();
        let slabs = blocks.iter().map(slab_of).collect::<HashSet<_>>().len() as u64;
        let granules = chunks_in(&a, t, f).len() as u64;
        let least = (n * l).div_ceil(GRANULE);
        assert!(
            granules >= least && granules < least + slabs,
            "size {size}: {granules} granules for {n} blocks of {l} bytes in {slabs} slabs"
        );
        if size == 4096 {
            assert_eq!(granules, 3, "4 352 000 bytes");
        }
        // One chunk a granule, and nothing else.
        assert_eq!(a.backend().live_handles() as u64, granules, "size {size}");
        // Freed, they give it back but for the granule the next block goes to.
        for b in &blocks {
            a.free(b.ptr, None).unwrap();
        }
        assert!(chunks_in(&a, t, f).len() <= 1, "size {size}");
        assert!(
            a.backend().live_handles() <= MAX_CACHED_CHUNKS + 2,
            "size {size}"
        );
    }
}

#[derive(Clone, Debug)]
enum Op {
    Alloc(u64),
    Free(usize),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => prop_oneof![0u64..5000, 5000u64..(3 << 20)].prop_map(Op::Alloc),
        2 => any::<usize>().prop_map(Op::Free),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Against a model: addresses never repeat, headers match live sizes and read 0
    /// once freed, blocks never overlap, the leak list is the model's live set.
    #[test]
    fn allocator_matches_a_model(ops in prop::collection::vec(op(), 1..200)) {
        let mut a = allocator();
        let mut live: Vec<BlockInfo> = Vec::new();
        let mut freed: Vec<BlockInfo> = Vec::new();
        let mut seen = HashSet::new();
        for o in ops {
            match o {
                Op::Alloc(size) => {
                    let b = a.alloc(size, None, 0).unwrap();
                    prop_assert!(seen.insert(b.ptr));
                    for l in &live {
                        let (s1, e1) = (base_of(l), base_of(l) + tile_len(l.ptr));
                        let (s2, e2) = (base_of(&b), base_of(&b) + tile_len(b.ptr));
                        prop_assert!(e1 <= s2 || e2 <= s1, "overlap");
                    }
                    live.push(b);
                }
                Op::Free(i) if !live.is_empty() => {
                    let b = live.swap_remove(i % live.len());
                    a.free(b.ptr, None).unwrap();
                    freed.push(b);
                }
                Op::Free(_) => {}
            }
        }
        for b in &live {
            prop_assert_eq!(a.backend().read_u64(hdr_of(b)), Some(b.size));
        }
        for b in &freed {
            prop_assert_eq!(a.backend().read_u64(hdr_of(b)), Some(0));
            let is_double = matches!(a.free(b.ptr, None), Err(FreeError::DoubleFree { .. }));
            prop_assert!(is_double);
        }
        let mut ids: Vec<u64> = live.iter().map(|b| b.id).collect();
        ids.sort();
        let listed: Vec<u64> = a.live_blocks().iter().map(|b| b.id).collect();
        prop_assert_eq!(listed, ids);
    }
}

/// A host-ASan build: the shadow covers windows 1..=8, which cannot be reserved.
fn asan_like_backend() -> HostBackend {
    let mut b = HostBackend::new();
    let start = window_base(1);
    let end = window_base(FIRST_REQUIRED_TAG);
    b.reserve(start, end - start)
        .expect("the stand-in for ASan's shadow");
    b
}

#[test]
fn windows_taken_by_the_process_are_left_out() {
    let mut a = Allocator::new(asan_like_backend(), Rng::new(7)).expect("starts without 1..=8");
    assert_eq!(
        a.missing_windows(),
        (1..FIRST_REQUIRED_TAG).collect::<Vec<_>>()
    );
    // The host allocator never needed them: every size keeps its class.
    for size in [1u64, 100, 255, 1000, 1791, 5000, 3 << 20] {
        let b = a.alloc(size, None, 0).unwrap();
        assert_eq!(tag_of(b.ptr), class_of(size), "size {size}");
        assert_eq!(b.size, size, "exact bounds kept");
        assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(size), "header");
    }
}

#[test]
fn a_required_window_that_fails_stops_the_allocator() {
    let mut b = HostBackend::new();
    b.reserve(window_base(FIRST_REQUIRED_TAG), WINDOW_SIZE)
        .unwrap();
    assert!(Allocator::new(b, Rng::new(7)).is_err());
}
