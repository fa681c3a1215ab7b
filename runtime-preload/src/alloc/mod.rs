//! The tagged allocator (docs/runtime.md, "Allocator"): pure Rust over a [`Backend`].
//!
//! * A block of class `t` (`cusafe_format::block::class_for`) lives in window `t`, so
//!   its pointer carries the tag; its header (exact size) sits at the block base, or for
//!   the slotted classes (blocks of 4 MiB and up) in the block's slot of a shared
//!   header granule mapped over the block's first granule (`headers.rs`).
//! * Blocks smaller than a granule come from *slabs*: one 2 MiB physical chunk mapped
//!   at a random never-used 2 MiB slot of the window, blocks bump-allocated and never
//!   handed out twice. A slab whose blocks were all handed out and all freed is
//!   *retired*: its chunk is unmapped (and cached for another slab, which zeroes the
//!   block headers when it maps it), and its slot is quarantined.
//! * Larger blocks get their own random `2^(t+3)`-aligned slot with the physical memory
//!   `block::backing` names (prefix and payload for 2 MiB blocks, the payload alone
//!   for slotted ones); the rest of the slot stays unmapped.
//! * A freed block's header reads 0: slab blocks get it zeroed; retired slabs and freed
//!   2 MiB blocks get a shared all-zero, read-only *tombstone* chunk mapped over their
//!   first granule, and freed slotted blocks keep their header granule mapped with a
//!   zero in their slot (up to [`MAX_TOMBSTONES`] of them all), so a dangling pointer
//!   still meets a zero header (a use-after-free report) instead of an unmapped page,
//!   and an uninstrumented store through it faults (the payload is unmapped, the
//!   tombstone read-only) instead of un-zeroing the header.
//! * Slots: a used slot never comes back while unused ones remain (`slots.rs`).
//! * Devices: the windows and slots are the process's (the address space is unified);
//!   physical memory is the allocating device's. Slabs, cached chunks, tombstones and
//!   header granules are kept per device, so a block's header, payload and tombstone
//!   all live on the block's device.

mod backend;
mod headers;
mod host;
mod slots;
mod table;

pub use backend::{Access, Backend, BackendError, Fill};
pub use host::HostBackend;
pub use slots::{Picked, SlotMap};
pub use table::{BlockInfo, BlockTable, FREED_HISTORY, NEAREST_SPAN};

use std::backtrace::Backtrace;
use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::sync::Arc;

use cusafe_format::block::{
    backing, block_base, block_size, class_for, header_addr, header_slot, is_slotted, payload,
    GRANULE, HEADER_BYTES,
};
use cusafe_format::pointer::{
    is_cusafe, is_poisoned, tag_of, window_base, MAX_TAG, MIN_TAG, WINDOW_SIZE,
};

use crate::rng::Rng;
use cusafe_format::devheap::host_slots;
use headers::HeaderGranules;

/// Physical chunks kept for reuse after their slab retired (beyond: released).
pub const MAX_CACHED_CHUNKS: usize = 16;
/// Freed slots that keep the zero tombstone mapped (beyond: the oldest is unmapped, and
/// a dangling access there faults instead of being reported).
pub const MAX_TOMBSTONES: usize = 4096;

/// Whether class `t` is served from slabs (its blocks are smaller than a granule).
pub const fn is_slab_class(t: u32) -> bool {
    block_size(t) < GRANULE
}

/// Bytes of one slot of window `t`: a granule for slab classes, the block otherwise.
pub const fn slot_bytes(t: u32) -> u64 {
    let b = block_size(t);
    if b < GRANULE {
        GRANULE
    } else {
        b
    }
}

/// Why an allocation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// No class holds this many bytes.
    TooLarge(u64),
    /// Every slot of the class's window holds a live block.
    OutOfAddressSpace {
        /// The class.
        class: u32,
    },
    /// The backend failed (e.g. out of device memory).
    Backend(BackendError),
}

impl From<BackendError> for AllocError {
    fn from(e: BackendError) -> Self {
        AllocError::Backend(e)
    }
}

impl fmt::Display for AllocError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AllocError::TooLarge(n) => write!(f, "{n} bytes is larger than any cusafe class"),
            AllocError::OutOfAddressSpace { class } => {
                write!(f, "every slot of window {class} holds a live block")
            }
            AllocError::Backend(e) => e.fmt(f),
        }
    }
}

/// Why a free was refused, or what went wrong after it.
#[derive(Clone, Debug)]
pub enum FreeError {
    /// No block was ever allocated at this pointer (or it is poisoned).
    NotAllocated {
        /// The pointer passed to free.
        ptr: u64,
    },
    /// The pointer points inside a block, not at its start.
    Interior {
        /// The pointer passed to free.
        ptr: u64,
        /// The block it points into.
        block: BlockInfo,
    },
    /// The block was already freed.
    DoubleFree {
        /// The block.
        block: BlockInfo,
    },
    /// The block is now freed, but unmapping or zeroing its memory failed.
    Backend {
        /// The freed block.
        block: BlockInfo,
        /// The failure.
        error: BackendError,
    },
}

/// Counters for the exit summary.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    /// Successful allocations.
    pub allocs: u64,
    /// Successful frees.
    pub frees: u64,
    /// Payload bytes now allocated.
    pub live_bytes: u64,
    /// Largest `live_bytes` seen.
    pub peak_live_bytes: u64,
    /// Slabs mapped.
    pub slabs_mapped: u64,
    /// Slabs retired.
    pub slabs_retired: u64,
    /// Large blocks mapped.
    pub large_mapped: u64,
    /// Physical allocations made (chunks and large blocks).
    pub physical_created: u64,
    /// Cached chunks reused.
    pub chunks_reused: u64,
    /// Header granules made (for slotted blocks).
    pub header_granules: u64,
}

#[derive(Debug)]
struct Slab<H> {
    class: u32,
    device: i32,
    next: u64,
    cap: u64,
    live: u64,
    handle: H,
}

#[derive(Debug)]
struct Large<H> {
    device: i32,
    /// Where its own physical memory is mapped, and how many bytes.
    backing: (u64, u64),
    handle: H,
    /// For a slotted block, the header granule mapped over its first granule.
    header: Option<usize>,
}

/// What keeps a freed block's header reading 0 over its first granule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tomb {
    /// The shared all-zero, read-only tombstone chunk.
    Zero,
    /// A slotted block's header granule (this device's, this index), its slot zeroed
    /// and still taken.
    Header(i32, usize),
}

/// Windows below this tag may be missing (see [`Allocator::new`]); from it on every
/// window must be reserved. AddressSanitizer's high shadow on x86-64 ends at
/// 0x1000_7fff_7fff, inside window 8.
pub const FIRST_REQUIRED_TAG: u32 = 9;

/// The allocator frontend.
#[derive(Debug)]
pub struct Allocator<B: Backend> {
    backend: B,
    rng: Rng,
    /// Whether each class's window is reserved (index 0 unused).
    available: Vec<bool>,
    /// Slot maps indexed by class (index 0 unused).
    windows: Vec<SlotMap>,
    slabs: HashMap<u64, Slab<B::Handle>>,
    /// The slab each (device, class) bump-allocates from.
    current: HashMap<(i32, u32), u64>,
    large: HashMap<u64, Large<B::Handle>>,
    table: BlockTable,
    /// Cached chunks per device.
    chunks: HashMap<i32, Vec<B::Handle>>,
    /// The zero tombstone chunk per device.
    tomb: HashMap<i32, B::Handle>,
    tombstones: VecDeque<u64>,
    tombstoned: HashMap<u64, Tomb>,
    /// Header granules per device.
    headers: HashMap<i32, HeaderGranules<B::Handle>>,
    next_id: u64,
    stats: Stats,
}

impl<B: Backend> Allocator<B> {
    /// Reserves windows [`MIN_TAG`]`..=`[`MAX_TAG`] through `backend` and returns an
    /// empty allocator. A window whose range the process already uses (AddressSanitizer's
    /// shadow covers windows 1..=8 in a host-ASan build) is left out: its sizes take the
    /// next reserved class (exact bounds still, a larger block). Fails with the first
    /// reservation's error when a window at or above [`FIRST_REQUIRED_TAG`] fails.
    pub fn new(mut backend: B, rng: Rng) -> Result<Self, BackendError> {
        let mut available = vec![false; MAX_TAG as usize + 1];
        for t in MIN_TAG..=MAX_TAG {
            match backend.reserve(window_base(t), WINDOW_SIZE) {
                Ok(()) => available[t as usize] = true,
                Err(_) if t < FIRST_REQUIRED_TAG => {}
                Err(e) => return Err(e),
            }
        }
        let windows = (0..=MAX_TAG)
            .map(|t| {
                SlotMap::new(if available[t as usize] {
                    host_slots(slot_bytes(t))
                } else {
                    0
                })
            })
            .collect();
        Ok(Allocator {
            backend,
            rng,
            available,
            windows,
            slabs: HashMap::new(),
            current: HashMap::new(),
            large: HashMap::new(),
            table: BlockTable::default(),
            chunks: HashMap::new(),
            tomb: HashMap::new(),
            tombstones: VecDeque::new(),
            tombstoned: HashMap::new(),
            headers: HashMap::new(),
            next_id: 1,
            stats: Stats::default(),
        })
    }

    /// The backend.
    pub fn backend(&self) -> &B {
        &self.backend
    }

    /// The backend, mutably.
    pub fn backend_mut(&mut self) -> &mut B {
        &mut self.backend
    }

    /// Counters so far.
    pub fn stats(&self) -> Stats {
        self.stats
    }

    /// The windows that could not be reserved (their sizes use a larger class).
    pub fn missing_windows(&self) -> Vec<u32> {
        (MIN_TAG..=MAX_TAG)
            .filter(|&t| !self.available[t as usize])
            .collect()
    }

    /// Slot bookkeeping of window `t`.
    pub fn window(&self, t: u32) -> &SlotMap {
        &self.windows[t as usize]
    }

    /// Allocates a block with `size` payload bytes on `device` and writes its header.
    pub fn alloc(
        &mut self,
        size: u64,
        site: Option<Arc<Backtrace>>,
        device: i32,
    ) -> Result<BlockInfo, AllocError> {
        let t = class_for(size)
            .and_then(|t| (t..=MAX_TAG).find(|&c| self.available[c as usize]))
            .ok_or(AllocError::TooLarge(size))?;
        let base = if is_slab_class(t) {
            self.alloc_in_slab(t, size, device)?
        } else {
            self.alloc_large(t, size, device)?
        };
        let info = BlockInfo {
            id: self.next_id,
            ptr: payload(base),
            size,
            freed: false,
            device,
            alloc_site: site,
            free_site: None,
        };
        self.next_id += 1;
        self.table.insert(base, info.clone());
        self.stats.allocs += 1;
        self.stats.live_bytes += size;
        self.stats.peak_live_bytes = self.stats.peak_live_bytes.max(self.stats.live_bytes);
        Ok(info)
    }

    /// Whether [`Allocator::free`] would accept `ptr`, without freeing anything: the live
    /// block it starts, or the error `free` would return (never `Backend`).
    pub fn check_free(&self, ptr: u64) -> Result<&BlockInfo, FreeError> {
        if is_poisoned(ptr) || !is_cusafe(ptr) {
            return Err(FreeError::NotAllocated { ptr });
        }
        match self.table.at_base(block_base(ptr, tag_of(ptr))) {
            None => Err(FreeError::NotAllocated { ptr }),
            Some(b) if b.ptr != ptr => Err(FreeError::Interior {
                ptr,
                block: b.clone(),
            }),
            Some(b) if b.freed => Err(FreeError::DoubleFree { block: b.clone() }),
            Some(b) => Ok(b),
        }
    }

    /// Frees the block whose payload starts at `ptr`: its header reads 0 afterwards
    /// and its address is never handed out again while unused ones remain.
    pub fn free(&mut self, ptr: u64, site: Option<Arc<Backtrace>>) -> Result<BlockInfo, FreeError> {
        self.check_free(ptr)?;
        let t = tag_of(ptr);
        let base = block_base(ptr, t);
        let block = self.table.mark_freed(base, site).expect("live block");
        self.stats.frees += 1;
        self.stats.live_bytes -= block.size;
        let done = if is_slab_class(t) {
            self.free_in_slab(base)
        } else {
            self.free_large(t, base)
        };
        match done {
            Ok(()) => Ok(block),
            Err(error) => Err(FreeError::Backend { block, error }),
        }
    }

    /// Starts over after a reset of the device's context (`cudaDeviceReset`, or its
    /// destruction), which destroys every allocation: whatever of the old state may
    /// have outlived it (mappings, physical handles, the windows' reservations: drivers
    /// differ on whether the virtual memory API's objects belong to the context) is
    /// given back, errors ignored (they mean it is gone already); every block still live
    /// is marked freed (a later use or free of a pre-reset pointer is reported as
    /// use-after-free or double-free, never mistaken for a new block); the slots of those
    /// blocks and of the old slabs are quarantined like freed ones (old addresses are not
    /// handed out again while unused slots remain); and the windows that were reserved
    /// are reserved again. Ids keep counting up.
    pub fn after_reset(&mut self) -> Result<(), BackendError> {
        for (va, slab) in std::mem::take(&mut self.slabs) {
            let t = slab.class;
            self.windows[t as usize].retire((va - window_base(t)) / GRANULE);
            let _ = self.backend.unmap(va, GRANULE);
            let _ = self.backend.release(slab.handle);
        }
        for (va, l) in std::mem::take(&mut self.large) {
            let t = tag_of(va);
            self.windows[t as usize].retire((va - window_base(t)) / slot_bytes(t));
            let _ = self.backend.unmap(l.backing.0, l.backing.1);
            let _ = self.backend.release(l.handle);
            if l.header.is_some() {
                let _ = self.backend.unmap(va, GRANULE);
            }
        }
        for va in std::mem::take(&mut self.tombstoned).into_keys() {
            let _ = self.backend.unmap(va, GRANULE);
        }
        let chunks = std::mem::take(&mut self.chunks).into_values().flatten();
        let tombs = std::mem::take(&mut self.tomb).into_values();
        let headers = std::mem::take(&mut self.headers)
            .into_values()
            .flat_map(|mut h| h.drain());
        for h in chunks.chain(tombs).chain(headers).collect::<Vec<_>>() {
            let _ = self.backend.release(h);
        }
        self.current.clear();
        self.tombstones.clear();
        for b in self.table.live() {
            self.table
                .mark_freed(block_base(b.ptr, tag_of(b.ptr)), None);
        }
        self.stats.live_bytes = 0;
        for t in MIN_TAG..=MAX_TAG {
            if self.available[t as usize] {
                let _ = self.backend.unreserve(window_base(t), WINDOW_SIZE);
                self.backend.reserve(window_base(t), WINDOW_SIZE)?;
            }
        }
        Ok(())
    }

    /// After a reset of `device`'s context destroyed its memory while the other devices'
    /// lives on: every live block of `device` is marked freed (a later use or free of it
    /// is reported, and it is not a leak), and its slabs take no more blocks. Nothing is
    /// unmapped: the addresses stay out of use.
    pub fn forget_device(&mut self, device: i32) {
        self.current.retain(|&(d, _), _| d != device);
        for b in self.table.live().into_iter().filter(|b| b.device == device) {
            let base = block_base(b.ptr, tag_of(b.ptr));
            if let Some(b) = self.table.mark_freed(base, None) {
                self.stats.live_bytes -= b.size;
            }
        }
    }

    /// The table of live and recently freed blocks.
    pub fn table(&self) -> &BlockTable {
        &self.table
    }

    /// Blocks not freed yet, in allocation order.
    pub fn live_blocks(&self) -> Vec<BlockInfo> {
        self.table.live()
    }

    fn alloc_in_slab(&mut self, t: u32, size: u64, device: i32) -> Result<u64, AllocError> {
        let slot_va = match self.current.get(&(device, t)) {
            Some(&va) if self.slabs[&va].next < self.slabs[&va].cap => va,
            _ => self.new_slab(t, device)?,
        };
        let slab = self.slabs.get_mut(&slot_va).expect("current slab");
        let base = slot_va + slab.next * block_size(t);
        slab.next += 1;
        slab.live += 1;
        if let Err(e) = self.backend.fill32(Fill::word(base, size as u32)) {
            // The block's address is spent either way; only the live count goes back.
            let _ = self.drop_slab_block(slot_va);
            return Err(e.into());
        }
        Ok(base)
    }

    fn new_slab(&mut self, t: u32, device: i32) -> Result<u64, AllocError> {
        let (va, slot) = self.take_slot(t)?;
        let handle = match self.chunk(device) {
            Ok(h) => h,
            Err(e) => {
                self.windows[t as usize].retire(slot);
                return Err(e.into());
            }
        };
        let bs = block_size(t);
        let headers = Fill {
            va,
            value: 0,
            words: HEADER_BYTES / 4,
            rows: GRANULE / bs,
            pitch: bs,
        };
        self.map_or_undo(t, slot, va, GRANULE, (handle, device), &[headers])?;
        self.slabs.insert(
            va,
            Slab {
                class: t,
                device,
                next: 0,
                cap: GRANULE / bs,
                live: 0,
                handle,
            },
        );
        self.current.insert((device, t), va);
        self.stats.slabs_mapped += 1;
        Ok(va)
    }

    fn alloc_large(&mut self, t: u32, size: u64, device: i32) -> Result<u64, AllocError> {
        let (va, slot) = self.take_slot(t)?;
        let (at, bytes) = backing(va, size);
        let handle = if bytes == GRANULE {
            self.chunk(device)
        } else {
            self.stats.physical_created += 1;
            self.backend.create(bytes, device)
        };
        let handle = match handle {
            Ok(h) => h,
            Err(e) => {
                self.windows[t as usize].retire(slot);
                return Err(e.into());
            }
        };
        let header = if is_slotted(t) {
            match self.map_header_granule(va, device) {
                Ok(i) => Some(i),
                Err(e) => {
                    let _ = self.dispose(handle, bytes, device);
                    self.windows[t as usize].retire(slot);
                    return Err(e.into());
                }
            }
        } else {
            None
        };
        // Large blocks' memory is not zeroed: write both words of the size.
        let hdr = header_addr(va);
        let fills = [
            Fill::word(hdr, size as u32),
            Fill::word(hdr + 4, (size >> 32) as u32),
        ];
        if let Err(e) = self.map_or_undo(t, slot, at, bytes, (handle, device), &fills) {
            if let Some(i) = header {
                let _ = self.backend.unmap(va, GRANULE);
                self.granules(device).give_back(i, header_slot(va));
            }
            return Err(e);
        }
        self.large.insert(
            va,
            Large {
                device,
                backing: (at, bytes),
                handle,
                header,
            },
        );
        self.stats.large_mapped += 1;
        Ok(va)
    }

    /// Makes a header granule on `device` ahead of the first slotted block there, so
    /// that the block's allocation pays only for its payload (the runtime does this when
    /// it starts serving a device, with its runtime page: a fixed 2 MiB per device).
    pub fn make_header_granule(&mut self, device: i32) -> Result<(), BackendError> {
        let h = self.backend.create(GRANULE, device)?;
        self.stats.physical_created += 1;
        self.stats.header_granules += 1;
        self.granules(device).add(h);
        Ok(())
    }

    /// The header granules of `device`.
    fn granules(&mut self, device: i32) -> &mut HeaderGranules<B::Handle> {
        self.headers.entry(device).or_default()
    }

    /// Maps a header granule of `device` with the slot of the slotted block at `va`
    /// free over the block's first granule (making one when every granule has that slot
    /// taken; zeroing it at its first mapping) and takes the slot. Returns the granule's
    /// index.
    fn map_header_granule(&mut self, va: u64, device: i32) -> Result<usize, BackendError> {
        let slot = header_slot(va);
        if self.granules(device).with_free(slot).is_none() {
            self.make_header_granule(device)?;
        }
        let (index, h, zeroed) = self
            .granules(device)
            .with_free(slot)
            .expect("a granule was made");
        self.backend.map(va, GRANULE, h, Access::ReadWrite)?;
        if !zeroed {
            if let Err(e) = self.backend.fill32(Fill::span(va, GRANULE, 0)) {
                let _ = self.backend.unmap(va, GRANULE);
                return Err(e);
            }
            self.granules(device).set_zeroed(index);
        }
        self.granules(device).take(index, slot);
        Ok(index)
    }

    /// Picks a slot of window `t`; a reused slot loses its tombstone first.
    fn take_slot(&mut self, t: u32) -> Result<(u64, u64), AllocError> {
        let p = self.windows[t as usize]
            .pick(&mut self.rng)
            .ok_or(AllocError::OutOfAddressSpace { class: t })?;
        let va = window_base(t) + p.slot * slot_bytes(t);
        if p.reused {
            if let Some(tomb) = self.tombstoned.remove(&va) {
                if let Err(e) = self.drop_tombstone(va, tomb) {
                    self.tombstoned.insert(va, tomb);
                    self.windows[t as usize].retire(p.slot);
                    return Err(e.into());
                }
            }
        }
        Ok((va, p.slot))
    }

    /// Maps `handle` (memory of `device`) at `va` and runs `fills`; on failure undoes
    /// the mapping, gives the memory back and quarantines the slot.
    fn map_or_undo(
        &mut self,
        t: u32,
        slot: u64,
        va: u64,
        bytes: u64,
        (handle, device): (B::Handle, i32),
        fills: &[Fill],
    ) -> Result<(), AllocError> {
        let mut mapped = false;
        let mut result = self.backend.map(va, bytes, handle, Access::ReadWrite);
        if result.is_ok() {
            mapped = true;
            result = fills.iter().try_for_each(|f| self.backend.fill32(*f));
        }
        if let Err(e) = result {
            if mapped {
                let _ = self.backend.unmap(va, bytes);
            }
            let _ = self.dispose(handle, bytes, device);
            self.windows[t as usize].retire(slot);
            return Err(e.into());
        }
        Ok(())
    }

    /// A 2 MiB chunk on `device`: a cached one, or a new one.
    fn chunk(&mut self, device: i32) -> Result<B::Handle, BackendError> {
        if let Some(h) = self.chunks.get_mut(&device).and_then(Vec::pop) {
            self.stats.chunks_reused += 1;
            return Ok(h);
        }
        self.stats.physical_created += 1;
        self.backend.create(GRANULE, device)
    }

    /// Gives physical memory of `bytes` on `device` back: a chunk goes to the device's
    /// cache while it has room.
    fn dispose(&mut self, handle: B::Handle, bytes: u64, device: i32) -> Result<(), BackendError> {
        let cache = self.chunks.entry(device).or_default();
        if bytes == GRANULE && cache.len() < MAX_CACHED_CHUNKS {
            cache.push(handle);
            Ok(())
        } else {
            self.backend.release(handle)
        }
    }

    fn free_in_slab(&mut self, base: u64) -> Result<(), BackendError> {
        let slot_va = base & !(GRANULE - 1);
        if self.drop_slab_block(slot_va)? {
            Ok(())
        } else {
            self.backend.fill32(Fill::word(base, 0))
        }
    }

    /// One block of the slab at `slot_va` is gone; retires the slab when it was the
    /// last one. Returns whether it retired.
    fn drop_slab_block(&mut self, slot_va: u64) -> Result<bool, BackendError> {
        let slab = self.slabs.get_mut(&slot_va).expect("slab of a live block");
        slab.live -= 1;
        if slab.live > 0 || slab.next < slab.cap {
            return Ok(false);
        }
        let slab = self.slabs.remove(&slot_va).expect("slab");
        let (t, device) = (slab.class, slab.device);
        if self.current.get(&(device, t)) == Some(&slot_va) {
            self.current.remove(&(device, t));
        }
        self.stats.slabs_retired += 1;
        self.windows[t as usize].retire((slot_va - window_base(t)) / GRANULE);
        self.backend.unmap(slot_va, GRANULE)?;
        self.dispose(slab.handle, GRANULE, device)?;
        self.tombstone(slot_va, device)?;
        Ok(true)
    }

    fn free_large(&mut self, t: u32, base: u64) -> Result<(), BackendError> {
        let l = self.large.remove(&base).expect("large block");
        self.windows[t as usize].retire((base - window_base(t)) / slot_bytes(t));
        let (at, bytes) = l.backing;
        match l.header {
            // The header granule stays as the tombstone: its slot reads 0 from here on.
            Some(i) => {
                self.backend.fill32(Fill::span(header_addr(base), 8, 0))?;
                self.backend.unmap(at, bytes)?;
                self.dispose(l.handle, bytes, l.device)?;
                self.bury(base, Tomb::Header(l.device, i))
            }
            None => {
                self.backend.unmap(at, bytes)?;
                self.dispose(l.handle, bytes, l.device)?;
                self.tombstone(base, l.device)
            }
        }
    }

    /// Maps `device`'s all-zero, read-only tombstone chunk over the granule at `va`.
    fn tombstone(&mut self, va: u64, device: i32) -> Result<(), BackendError> {
        match self.tomb.get(&device) {
            Some(&h) => self.backend.map(va, GRANULE, h, Access::ReadOnly)?,
            None => {
                // The first one is made here: mapped writable, zeroed, then read-only.
                let h = self.backend.create(GRANULE, device)?;
                self.stats.physical_created += 1;
                if let Err(e) = self.backend.map(va, GRANULE, h, Access::ReadWrite) {
                    let _ = self.backend.release(h);
                    return Err(e);
                }
                self.tomb.insert(device, h);
                self.backend.fill32(Fill::span(va, GRANULE, 0))?;
                self.backend.protect(va, GRANULE, Access::ReadOnly)?;
            }
        }
        self.bury(va, Tomb::Zero)
    }

    /// Records the tombstone over the granule at `va`; beyond [`MAX_TOMBSTONES`], the
    /// oldest ones go.
    fn bury(&mut self, va: u64, tomb: Tomb) -> Result<(), BackendError> {
        self.tombstones.push_back(va);
        self.tombstoned.insert(va, tomb);
        while self.tombstoned.len() > MAX_TOMBSTONES {
            let old = self.tombstones.pop_front().expect("tombstone queue");
            if let Some(tomb) = self.tombstoned.remove(&old) {
                self.drop_tombstone(old, tomb)?;
            }
        }
        if self.tombstones.len() > 2 * MAX_TOMBSTONES {
            let live = &self.tombstoned;
            self.tombstones.retain(|v| live.contains_key(v));
        }
        Ok(())
    }

    /// Unmaps the tombstone over the granule at `va` (a header granule's slot is free
    /// again).
    fn drop_tombstone(&mut self, va: u64, tomb: Tomb) -> Result<(), BackendError> {
        self.backend.unmap(va, GRANULE)?;
        if let Tomb::Header(device, i) = tomb {
            self.granules(device).give_back(i, header_slot(va));
        }
        Ok(())
    }
}
