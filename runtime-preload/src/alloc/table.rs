//! The table of blocks: every live block and the most recently freed ones, keyed by
//! block base (`block::block_base`: a slotted block's base, a packed block's tile
//! start, 255 bytes below its payload), so that any address inside a block finds it.

use std::backtrace::Backtrace;
use std::collections::VecDeque;
use std::sync::Arc;

use cusafe_format::block::{block_base, tile_len};
use cusafe_format::packed::{self, FIRST_PACKED_CLASS, LAST_PACKED_CLASS};
use cusafe_format::pointer::{is_cusafe, tag_of, POISON_MASK};
use rustc_hash::FxHashMap;

/// How far (in blocks or tiles) [`BlockTable::nearest`] looks.
pub const NEAREST_SPAN: u64 = 64;

/// How many freed blocks the table remembers for use-after-free reports.
pub const FREED_HISTORY: usize = 1 << 18;

/// One block as the reports describe it.
#[derive(Clone, Debug)]
pub struct BlockInfo {
    /// Allocation id: 1 for the process's first block, then counting up.
    pub id: u64,
    /// The payload pointer handed to the program.
    pub ptr: u64,
    /// Exact payload size in bytes.
    pub size: u64,
    /// Whether the block was freed.
    pub freed: bool,
    /// The CUDA device its memory is on.
    pub device: i32,
    /// Where the block was allocated (with `alloc_backtrace=1`).
    pub alloc_site: Option<Arc<Backtrace>>,
    /// Where the block was freed (with `alloc_backtrace=1`).
    pub free_site: Option<Arc<Backtrace>>,
}

impl BlockInfo {
    /// Byte offset of `addr` from the payload start (negative below it).
    pub fn offset_of(&self, addr: u64) -> i64 {
        (addr & !POISON_MASK).wrapping_sub(self.ptr) as i64
    }
}

/// The block table.
#[derive(Debug, Default)]
pub struct BlockTable {
    /// Keyed by block base with rustc's hasher: this lookup is on every launch of an
    /// instrumented kernel (once per pointer argument) and every allocation and free.
    blocks: FxHashMap<u64, BlockInfo>,
    /// Freed blocks, oldest first, as (base, id); trimmed to [`FREED_HISTORY`].
    freed: VecDeque<(u64, u64)>,
}

impl BlockTable {
    /// Records a new live block whose header is at `base` (replacing whatever the
    /// table remembered at that base).
    pub fn insert(&mut self, base: u64, info: BlockInfo) {
        self.blocks.insert(base, info);
    }

    /// The block whose header is at `base`.
    pub fn at_base(&self, base: u64) -> Option<&BlockInfo> {
        self.blocks.get(&base)
    }

    /// The header word device code loads at block base `base`, as the table knows it:
    /// the live block's size, else 0 (freed, or no block there). Launch-time windows
    /// pass this instead of letting each thread load it.
    pub fn header_word(&self, base: u64) -> u64 {
        self.at_base(base)
            .filter(|b| !b.freed)
            .map_or(0, |b| b.size)
    }

    /// Marks the live block at `base` freed and returns it.
    pub fn mark_freed(&mut self, base: u64, site: Option<Arc<Backtrace>>) -> Option<BlockInfo> {
        let b = self.blocks.get_mut(&base)?;
        b.freed = true;
        b.free_site = site;
        let out = b.clone();
        self.freed.push_back((base, out.id));
        while self.freed.len() > FREED_HISTORY {
            let (old_base, old_id) = self.freed.pop_front().expect("non-empty");
            if self.blocks.get(&old_base).is_some_and(|b| b.id == old_id) {
                self.blocks.remove(&old_base);
            }
        }
        Some(out)
    }

    /// The block (live or remembered freed) that contains `addr`, poison bit ignored.
    pub fn lookup(&self, addr: u64) -> Option<&BlockInfo> {
        let a = addr & !POISON_MASK;
        if !is_cusafe(a) {
            return None;
        }
        self.blocks.get(&block_base(a, tag_of(a)))
    }

    /// For a pointer that left its buffer: the block containing `addr` or else the
    /// nearest block of the same sub-window within [`NEAREST_SPAN`] blocks or tiles
    /// (below first at equal distance), poison bit ignored. It steps by
    /// `block::tile_len(addr)`: the block size, or a packed block's extent, and then
    /// looks up the block whose tile holds the address reached, so that among packed
    /// blocks it finds the neighbours in the slab and in the slabs next to it. Candidates
    /// must have the tag of `addr` and, in the packed classes' windows, its field: blocks
    /// of another size are never named.
    pub fn nearest(&self, addr: u64) -> Option<&BlockInfo> {
        let a = addr & !POISON_MASK;
        if !is_cusafe(a) {
            return None;
        }
        let t = tag_of(a);
        let same = |b: u64| {
            tag_of(b) == t
                && (!(FIRST_PACKED_CLASS..=LAST_PACKED_CLASS).contains(&t)
                    || packed::field_of(b) == packed::field_of(a))
        };
        let (base, len) = (block_base(a, t), tile_len(a));
        (0..=NEAREST_SPAN).find_map(|k| {
            let below = base.checked_sub(k * len).filter(|&b| same(b));
            let above = base.checked_add(k * len).filter(|&b| same(b));
            [below, above]
                .into_iter()
                .flatten()
                .find_map(|b| self.blocks.get(&block_base(b, t)))
        })
    }

    /// Live blocks in allocation order.
    pub fn live(&self) -> Vec<BlockInfo> {
        let mut v: Vec<BlockInfo> = self.blocks.values().filter(|b| !b.freed).cloned().collect();
        v.sort_by_key(|b| b.id);
        v
    }
}
