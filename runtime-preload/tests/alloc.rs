//! The allocator frontend over the host backend: classes, headers, slab rules,
//! address reuse, tombstones, failures, leak list.

use std::collections::{HashMap, HashSet};

use cusafe_format::block::{
    backing, block_base, block_size, class_for, header_addr, is_slotted, GRANULE, HEADER_BYTES,
    PREFIX,
};
use cusafe_format::pointer::{is_cusafe, tag_of, window_base, WINDOW_SIZE};
use cusafe_rt::alloc::{
    is_slab_class, slot_bytes, Access, AllocError, Allocator, Backend, BlockInfo, FreeError,
    HostBackend, FIRST_REQUIRED_TAG, MAX_CACHED_CHUNKS, MAX_TOMBSTONES,
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

#[test]
fn blocks_carry_their_class_tag_and_alignment() {
    let mut a = allocator();
    for size in [
        0u64,
        1,
        255,
        256,
        400,
        4096,
        1 << 20,
        (2 << 20) - 257,
        2 << 20,
        3 << 20,
        5 << 30,
    ] {
        let b = a.alloc(size, None, 0).unwrap();
        let t = class_for(size).unwrap();
        assert!(is_cusafe(b.ptr));
        assert_eq!(tag_of(b.ptr), t, "size {size}");
        assert_eq!(b.ptr % 256, 0);
        let prefix = if is_slotted(t) { GRANULE } else { PREFIX };
        assert_eq!(
            b.ptr - prefix,
            base_of(&b),
            "payload sits PREFIX (slotted: a granule) after the block base"
        );
        assert!(
            b.ptr + size < base_of(&b) + block_size(t),
            "one-past-the-end stays in the block"
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
    let t = tag_of(b.ptr);
    let bs = block_size(t);
    // The slab's other blocks read size 0 (header words zeroed when the slab was mapped).
    for k in 1..8 {
        assert_eq!(a.backend().read_u64(base_of(&b) + k * bs), Some(0));
        assert_eq!(
            a.backend()
                .read_u32(base_of(&b) + k * bs + HEADER_BYTES - 4),
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
    let slab_neighbour = base_of(&blocks[2]) + 4 * block_size(tag_of(blocks[2].ptr));
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
fn two_mebibyte_blocks_map_header_and_payload_and_leave_a_read_only_tombstone() {
    let mut a = allocator();
    let size = (2 << 20) - 300;
    let b = a.alloc(size, None, 0).unwrap();
    assert!(!is_slotted(tag_of(b.ptr)));
    assert_eq!(backing(base_of(&b), size), (base_of(&b), GRANULE));
    assert_eq!(a.backend().read_u64(base_of(&b)), Some(size));
    a.free(b.ptr, None).unwrap();
    // A read-only tombstone now answers at the header: size 0, not an unmapped page.
    assert_eq!(a.backend().read_u64(base_of(&b)), Some(0));
    assert_eq!(a.backend().access(base_of(&b)), Some(Access::ReadOnly));
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
    let size = 100_000; // class 14: 128 KiB blocks, 16 per slab
    let t = class_for(size).unwrap();
    let per_slab = GRANULE / block_size(t);
    let blocks: Vec<_> = (0..per_slab)
        .map(|_| a.alloc(size, None, 0).unwrap())
        .collect();
    let slot = base_of(&blocks[0]) & !(GRANULE - 1);
    assert!(
        blocks.iter().all(|b| base_of(b) & !(GRANULE - 1) == slot),
        "one slab"
    );
    for b in &blocks[..per_slab as usize - 1] {
        a.free(b.ptr, None).unwrap();
    }
    assert_eq!(a.stats().slabs_retired, 0, "a block is still live");
    let unmaps = a.backend().ops().unmaps;
    a.free(blocks.last().unwrap().ptr, None).unwrap();
    assert_eq!(a.stats().slabs_retired, 1);
    assert_eq!(a.backend().ops().unmaps, unmaps + 1);
    // The slot keeps reading zero headers through the tombstone.
    for b in &blocks {
        assert_eq!(a.backend().read_u64(hdr_of(b)), Some(0));
    }
    // The next slab reuses the cached chunk, with fresh zero headers, at another slot.
    let creates = a.backend().ops().creates;
    let n = a.alloc(size, None, 0).unwrap();
    assert_eq!(
        a.backend().ops().creates,
        creates,
        "chunk came from the cache"
    );
    assert_eq!(a.stats().chunks_reused, 1);
    assert_ne!(base_of(&n) & !(GRANULE - 1), slot);
    assert_eq!(a.backend().read_u64(hdr_of(&n)), Some(size));
    assert_eq!(a.backend().read_u64(base_of(&n) + block_size(t)), Some(0));
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
}

#[test]
fn small_classes_live_in_their_own_windows() {
    let mut a = allocator();
    let mut windows = HashMap::new();
    for size in [1u64, 300, 1000, 3000, 9000] {
        let b = a.alloc(size, None, 0).unwrap();
        windows.insert(tag_of(b.ptr), b.ptr);
        let t = tag_of(b.ptr);
        assert!(b.ptr >= window_base(t) && b.ptr < window_base(t) + WINDOW_SIZE);
        assert!(is_slab_class(t));
    }
    assert_eq!(windows.len(), 5);
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
    let t = tag_of(b.ptr);
    let far = (b.ptr + 3 * block_size(t)) | 1 << 63;
    assert_eq!(a.table().nearest(far).unwrap().id, b.id);
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
    let b = a.alloc(400, None, 0).unwrap();
    assert_eq!(a.backend().read_u64(hdr_of(&b)), Some(400));
    assert_eq!(b.id, 1, "failed allocations take no id");
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
    let small: Vec<_> = (0..MAX_CACHED_CHUNKS + 8)
        .map(|_| a.alloc((2 << 20) - 300, None, 0).unwrap())
        .collect();
    let before = a.backend().live_handles();
    for b in &small {
        a.free(b.ptr, None).unwrap();
    }
    // The first free made the read-only zero tombstone of 2 MiB blocks.
    assert_eq!(
        a.backend().live_handles(),
        before - 8 + 1,
        "cache holds MAX_CACHED_CHUNKS"
    );
}

#[test]
fn tombstones_are_capped() {
    let mut a = allocator();
    let size = (2 << 20) - 300; // one granule each, own slot
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
    let t = class_for(size).unwrap();
    assert_eq!(WINDOW_SIZE / slot_bytes(t), 8);
    let blocks: Vec<_> = (0..8).map(|_| a.alloc(size, None, 0).unwrap()).collect();
    assert!(
        matches!(a.alloc(size, None, 0), Err(AllocError::OutOfAddressSpace { class }) if class == t)
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
                        let (s1, e1) = (base_of(l), base_of(l) + block_size(tag_of(l.ptr)));
                        let (s2, e2) = (base_of(&b), base_of(&b) + block_size(tag_of(b.ptr)));
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
fn windows_taken_by_the_process_promote_their_sizes() {
    let mut a = Allocator::new(asan_like_backend(), Rng::new(7)).expect("starts without 1..=8");
    assert_eq!(
        a.missing_windows(),
        (1..FIRST_REQUIRED_TAG).collect::<Vec<_>>()
    );
    for size in [1u64, 100, 255, 1000, 1791] {
        let b = a.alloc(size, None, 0).unwrap();
        assert_eq!(tag_of(b.ptr), FIRST_REQUIRED_TAG, "size {size}");
        assert_eq!(b.size, size, "exact bounds kept");
        assert_eq!(
            a.backend()
                .read_u64(header_addr(block_base(b.ptr, FIRST_REQUIRED_TAG))),
            Some(size),
            "header"
        );
    }
    let big = a.alloc(5000, None, 0).unwrap();
    assert_eq!(
        tag_of(big.ptr),
        class_for(5000).unwrap(),
        "larger sizes unchanged"
    );
}

#[test]
fn a_required_window_that_fails_stops_the_allocator() {
    let mut b = HostBackend::new();
    b.reserve(window_base(FIRST_REQUIRED_TAG), WINDOW_SIZE)
        .unwrap();
    assert!(Allocator::new(b, Rng::new(7)).is_err());
}
