//! The tagged allocator (docs/runtime.md, "Allocator"): pure Rust over a [`Backend`].
//!
//! * Every size up to 2 MiB - 8 KiB - 256 bytes gets a *packed* block
//!   (`cusafe_format::packed`): `packed::class_for` names the sub-window `(t, f)` of
//!   window `t` (13..=18) whose blocks are `L = (f + 1) << (t - 5)` bytes apart, the
//!   least multiple of the class's step (256 B .. 8 KiB) that holds the payload and
//!   256 bytes more (the 16-byte header right below the payload, and room for a
//!   one-past-the-end pointer). The blocks come from *slabs* of 4 .. 128 MiB, each at a
//!   random never-used slab slot of its sub-window, bump-allocated and never handed out
//!   twice (`slab.rs`). The pointer carries the tag and the field, so the device finds
//!   the header from the pointer alone. When every slab slot of the sub-window holds a
//!   live block, the block goes to the next sub-window that holds it
//!   (`packed::holding`: a larger extent), else to a slotted block.
//! * A slab's physical memory is mapped lazily, one 2 MiB chunk per granule, when the
//!   first block whose *span* (its header to the next block's header) touches the
//!   granule is allocated; the headers of the later blocks in that granule are zeroed
//!   then (one 2-D fill), so a stray pointer into a block not handed out yet reads size 0.
//!   A granule that no live block touches and no later block can touch (it lies below
//!   the slab's bump point) *retires*: its chunk is unmapped (and cached for another
//!   granule), and the zero tombstone is mapped over it. A full slab whose granules all
//!   retired gives its slot to quarantine. So `n` live blocks of a sub-window take about
//!   `n L` bytes, plus the partly used granules at the ends of the runs of live blocks.
//! * Larger sizes get a *slotted* block (`block::slotted_class_for`, classes from 19):
//!   its own random `2^(t+3)`-aligned slot of window `t` with the payload alone mapped
//!   from `base + 2 MiB` (`block::backing`) and the header in the block's slot of a
//!   shared header granule mapped over the block's first granule (`headers.rs`); the
//!   rest of the slot stays unmapped.
//! * A freed block's header reads 0: a packed block's is zeroed, or its retired granule
//!   gets a shared all-zero, read-only *tombstone* chunk mapped over it; a freed slotted
//!   block keeps its header granule mapped with a zero in its slot (up to
//!   [`MAX_TOMBSTONES`] tombstones of both kinds), so a dangling pointer still meets a
//!   zero header (a use-after-free report) instead of an unmapped page, and an
//!   uninstrumented store through it faults (the payload is unmapped, the tombstone
//!   read-only) instead of un-zeroing the header.
//! * Slots: a used slab or block slot never comes back while unused ones remain
//!   (`slots.rs`); a slab slot that does come back loses the tombstones over all its
//!   granules first.
//! * The host never allocates in windows below 13 nor in the power-of-two sub-window
//!   ([`packed::POW2_FIELD`]) of windows 13..=18: the device heap's arena is there
//!   (`runtime/devheap.rs`).
//! * Devices: the windows and slots are the process's (the address space is unified);
//!   physical memory is the allocating device's. Slabs, cached chunks, tombstones and
//!   header granules are kept per device, so a block's header, payload and tombstone
//!   all live on the block's device.

mod backend;
mod headers;
mod host;
mod slab;
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
    backing, block_base, block_size, header_addr, header_slot, is_slotted, payload,
    slotted_class_for, GRANULE,
};
use cusafe_format::packed::{self, slab_bytes, sub_window_base, HEADER_GAP, SUB_WINDOW};
use cusafe_format::pointer::{
    is_cusafe, is_poisoned, tag_of, window_base, MAX_TAG, MIN_TAG, WINDOW_SIZE,
};

use crate::rng::Rng;
use cusafe_format::devheap::host_slots;
use headers::HeaderGranules;
use slab::{Granule, Slab};

/// Physical chunks kept for reuse after their granule retired (beyond: released).
pub const MAX_CACHED_CHUNKS: usize = 16;
/// Granules that keep a tombstone mapped (beyond: the oldest is unmapped, and a
/// dangling access there faults instead of being reported).
pub const MAX_TOMBSTONES: usize = 4096;

/// Why an allocation failed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AllocError {
    /// No class holds this many bytes.
    TooLarge(u64),
    /// Every slot of the class's window holds a live block (slotted classes), or every
    /// slab slot of its sub-window `field` holds a slab in use (packed ones).
    OutOfAddressSpace {
        /// The class.
        class: u32,
        /// The packed sub-window, for a packed block.
        field: Option<u32>,
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
            AllocError::OutOfAddressSpace { class, field: None } => {
                write!(f, "every slot of window {class} holds a live block")
            }
            AllocError::OutOfAddressSpace {
                class,
                field: Some(field),
            } => write!(
                f,
                "every slab slot of sub-window {field} of window {class} holds a slab in use"
            ),
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
    /// Packed slabs begun (a slab slot of their sub-window taken).
    pub slabs_mapped: u64,
    /// Packed slabs retired (every block handed out and freed, every granule retired).
    pub slabs_retired: u64,
    /// Granules of packed slabs mapped.
    pub granules_mapped: u64,
    /// Granules of packed slabs retired (unmapped).
    pub granules_retired: u64,
    /// Slotted blocks mapped.
    pub large_mapped: u64,
    /// Physical allocations made (chunks, slotted payloads, tombstones, header
    /// granules).
    pub physical_created: u64,
    /// Cached chunks reused.
    pub chunks_reused: u64,
    /// Header granules made (for slotted blocks).
    pub header_granules: u64,
}

#[derive(Debug)]
struct Large<H> {
    device: i32,
    /// Where its own physical memory is mapped, and how many bytes.
    backing: (u64, u64),
    handle: H,
    /// The header granule (of its device) mapped over its first granule.
    header: usize,
}

/// What keeps a freed block's header reading 0 over a granule.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Tomb {
    /// The shared all-zero, read-only tombstone chunk.
    Zero,
    /// A slotted block's header granule (this device's, this index), its slot zeroed
    /// and still taken.
    Header(i32, usize),
}

/// Where slots are picked from: a slotted window (a slot per block), or a packed
/// sub-window (a slot per slab).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Region {
    Window(u32),
    Sub(u32, u32),
}

impl Region {
    fn base(self) -> u64 {
        match self {
            Region::Window(t) => window_base(t),
            Region::Sub(t, f) => sub_window_base(t, f),
        }
    }

    fn slot_bytes(self) -> u64 {
        match self {
            Region::Window(t) => block_size(t),
            Region::Sub(t, _) => slab_bytes(t),
        }
    }

    /// Granules at the start of a slot that may carry a tombstone: a slotted block's
    /// first (its header granule), every granule of a slab.
    fn tomb_granules(self) -> u64 {
        match self {
            Region::Window(_) => 1,
            Region::Sub(t, _) => slab_bytes(t) / GRANULE,
        }
    }

    fn exhausted(self) -> AllocError {
        match self {
            Region::Window(class) => AllocError::OutOfAddressSpace { class, field: None },
            Region::Sub(class, f) => AllocError::OutOfAddressSpace {
                class,
                field: Some(f),
            },
        }
    }
}

/// The slab slots of packed sub-window `(t, f)`, made at its first use.
fn sub_slots(maps: &mut HashMap<(u32, u32), SlotMap>, t: u32, f: u32) -> &mut SlotMap {
    maps.entry((t, f))
        .or_insert_with(|| SlotMap::new(SUB_WINDOW / slab_bytes(t)))
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
    /// Slot maps of the slotted windows, indexed by class (the others' are empty).
    windows: Vec<SlotMap>,
    /// Slab slot maps of the packed sub-windows used so far, by (class, field).
    sub_windows: HashMap<(u32, u32), SlotMap>,
    /// Packed slabs in use, by address.
    slabs: HashMap<u64, Slab<B::Handle>>,
    /// The slab each (device, class, field) bump-allocates from.
    current: HashMap<(i32, u32, u32), u64>,
    /// Live slotted blocks, by base.
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
    /// shadow covers windows 1..=8 in a host-ASan build) is left out: the host allocator
    /// does not use those windows, and the device heap serves only the classes whose
    /// windows it has ([`Allocator::missing_windows`]). Fails with the first
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
                SlotMap::new(if is_slotted(t) {
                    host_slots(block_size(t))
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
            sub_windows: HashMap::new(),
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

    /// The windows that could not be reserved (the device heap does not serve their
    /// classes).
    pub fn missing_windows(&self) -> Vec<u32> {
        (MIN_TAG..=MAX_TAG)
            .filter(|&t| !self.available[t as usize])
            .collect()
    }

    /// Slot bookkeeping of slotted window `t` (empty for the other classes: packed
    /// blocks take slab slots of sub-windows, [`Allocator::sub_window`]).
    pub fn window(&self, t: u32) -> &SlotMap {
        &self.windows[t as usize]
    }

    /// Slab slot bookkeeping of packed sub-window `(t, f)`, once a slab was taken there.
    pub fn sub_window(&self, t: u32, f: u32) -> Option<&SlotMap> {
        self.sub_windows.get(&(t, f))
    }

    /// Allocates a block with `size` payload bytes on `device` and writes its header.
    pub fn alloc(
        &mut self,
        size: u64,
        site: Option<Arc<Backtrace>>,
        device: i32,
    ) -> Result<BlockInfo, AllocError> {
        let base = self.alloc_anywhere(size, device)?;
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

    /// A block for `size` bytes: in its packed sub-window (`packed::class_for`), or, when
    /// every slab slot there holds a live block, the next packed sub-window that holds
    /// the size (`packed::holding`: a larger extent, still exact bounds), else a slotted
    /// block. Returns its key.
    fn alloc_anywhere(&mut self, size: u64, device: i32) -> Result<u64, AllocError> {
        let mut full = None;
        for (t, f) in packed::holding(size) {
            match self.alloc_packed(t, f, size, device) {
                Err(e @ AllocError::OutOfAddressSpace { .. }) => {
                    full.get_or_insert(e);
                }
                other => return other,
            }
        }
        match slotted_class_for(size) {
            Some(t) => match self.alloc_large(t, size, device) {
                Err(AllocError::OutOfAddressSpace { .. }) if full.is_some() => {
                    Err(full.expect("checked"))
                }
                other => other,
            },
            None => Err(AllocError::TooLarge(size)),
        }
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
        let base = block_base(ptr, tag_of(ptr));
        let block = self.table.mark_freed(base, site).expect("live block");
        self.stats.frees += 1;
        self.stats.live_bytes -= block.size;
        let done = if packed::is_packed(base) {
            self.free_packed(base)
        } else {
            self.free_large(base)
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
        let mut handles = Vec::new();
        for (va, slab) in std::mem::take(&mut self.slabs) {
            let (t, f) = (slab.class, slab.field);
            sub_slots(&mut self.sub_windows, t, f)
                .retire((va - sub_window_base(t, f)) / slab_bytes(t));
            for (g, granule) in slab.granules.iter().enumerate() {
                if let Granule::Mapped { handle, .. } = *granule {
                    let _ = self.backend.unmap(slab.granule_va(g), GRANULE);
                    handles.push(handle);
                }
            }
        }
        for (va, l) in std::mem::take(&mut self.large) {
            let t = tag_of(va);
            self.windows[t as usize].retire((va - window_base(t)) / block_size(t));
            let _ = self.backend.unmap(l.backing.0, l.backing.1);
            let _ = self.backend.unmap(va, GRANULE);
            handles.push(l.handle);
        }
        for va in std::mem::take(&mut self.tombstoned).into_keys() {
            let _ = self.backend.unmap(va, GRANULE);
        }
        let chunks = std::mem::take(&mut self.chunks).into_values().flatten();
        let tombs = std::mem::take(&mut self.tomb).into_values();
        let headers = std::mem::take(&mut self.headers)
            .into_values()
            .flat_map(|mut h| h.drain());
        handles.extend(chunks.chain(tombs).chain(headers));
        for h in handles {
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
        self.current.retain(|&(d, _, _), _| d != device);
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

    /// Hands out the next block of `device`'s slab of sub-window `(t, f)` (taking a new
    /// slab when there is none or it is full), maps the granules its span reaches first,
    /// and writes its header. Returns the block's key (its tile start). On failure
    /// nothing is handed out: what this call mapped is undone and the block stays the
    /// slab's next one.
    fn alloc_packed(&mut self, t: u32, f: u32, size: u64, device: i32) -> Result<u64, AllocError> {
        let va = match self.current.get(&(device, t, f)) {
            Some(&va) if !self.slabs[&va].is_full() => va,
            _ => self.new_slab(t, f, device)?,
        };
        let slab = &self.slabs[&va];
        let k = slab.next;
        let hdr = slab.header(k);
        let span = slab.span_granules(k);
        let mut fresh = Vec::new();
        let mut result = Ok(());
        for g in span.clone() {
            if self.slabs[&va].granules[g] == Granule::Unmapped {
                result = self.map_granule(va, g, k);
                if result.is_err() {
                    break;
                }
                fresh.push(g);
            }
        }
        if result.is_ok() {
            // Both words: chunks come back from the cache with old contents, and the
            // size must not depend on the zeroing above having covered this header.
            let fills = [
                Fill::word(hdr, size as u32),
                Fill::word(hdr + 4, (size >> 32) as u32),
            ];
            result = fills.iter().try_for_each(|f| self.backend.fill32(*f));
            if result.is_err() && !fresh.contains(&self.slabs[&va].granule_of(hdr)) {
                let _ = self.backend.fill32(Fill::span(hdr, 8, 0));
            }
        }
        if let Err(e) = result {
            for g in fresh {
                self.undo_granule(va, g);
            }
            return Err(e.into());
        }
        self.stats.granules_mapped += fresh.len() as u64;
        let slab = self.slabs.get_mut(&va).expect("current slab");
        slab.next += 1;
        for g in span {
            if let Granule::Mapped { live, .. } = &mut slab.granules[g] {
                *live += 1;
            }
        }
        Ok(slab.payload(k) - packed::UNDERFLOW)
    }

    /// Takes a slab slot of sub-window `(t, f)` for a new slab of `device` (nothing is
    /// mapped yet) and makes it the one `device` allocates from there.
    fn new_slab(&mut self, t: u32, f: u32, device: i32) -> Result<u64, AllocError> {
        let (va, _) = self.take_slot(Region::Sub(t, f))?;
        self.slabs.insert(va, Slab::new(va, t, f, device));
        self.current.insert((device, t, f), va);
        self.stats.slabs_mapped += 1;
        Ok(va)
    }

    /// Maps a chunk of the slab's device read-write over granule `g` of the slab at
    /// `va` and zeroes the headers of block `k` and the later ones that lie there. On
    /// failure nothing stays mapped and the chunk goes back.
    fn map_granule(&mut self, va: u64, g: usize, k: u64) -> Result<(), BackendError> {
        let slab = &self.slabs[&va];
        let (at, device, headers) = (slab.granule_va(g), slab.device, slab.header_fill(g, k));
        let handle = self.chunk(device)?;
        self.map_fill(at, GRANULE, (handle, device), headers.as_slice())?;
        self.slabs.get_mut(&va).expect("slab").granules[g] = Granule::Mapped { handle, live: 0 };
        Ok(())
    }

    /// Unmaps granule `g` of the slab at `va`, mapped by an allocation that failed
    /// later, and gives its chunk back (when the unmap fails, it stays recorded mapped,
    /// as it is).
    fn undo_granule(&mut self, va: u64, g: usize) {
        let slab = self.slabs.get_mut(&va).expect("slab");
        let Granule::Mapped { handle, .. } = slab.granules[g] else {
            return;
        };
        let (at, device) = (slab.granule_va(g), slab.device);
        if self.backend.unmap(at, GRANULE).is_ok() {
            self.slabs.get_mut(&va).expect("slab").granules[g] = Granule::Unmapped;
            let _ = self.dispose(handle, GRANULE, device);
        }
    }

    /// Frees the packed block with key `base`: the live counts of the granules its span
    /// touches go down, its header is zeroed (unless its granule retires now), granules
    /// that can retire do, and so does the slab when it is spent.
    fn free_packed(&mut self, base: u64) -> Result<(), BackendError> {
        let p = payload(base);
        let va = p & !(slab_bytes(tag_of(p)) - 1);
        let slab = self.slabs.get_mut(&va).expect("slab of a live block");
        let span = slab.span_granules(slab.index_of(p));
        for g in span.clone() {
            if let Granule::Mapped { live, .. } = &mut slab.granules[g] {
                *live -= 1;
            }
        }
        let retiring: Vec<usize> = span.filter(|&g| slab.retirable(g)).collect();
        let hdr = p - HEADER_GAP;
        let mut result = if retiring.contains(&slab.granule_of(hdr)) {
            Ok(())
        } else {
            self.backend.fill32(Fill::span(hdr, 8, 0))
        };
        for g in retiring {
            result = result.and(self.retire_granule(va, g));
        }
        if self.slabs[&va].is_spent() {
            self.retire_slab(va);
        }
        result
    }

    /// Unmaps granule `g` of the slab at `va` (no live block touches it and no later
    /// block can), gives its chunk back and maps the zero tombstone over it. When the
    /// unmap fails, the granule stays as it was.
    fn retire_granule(&mut self, va: u64, g: usize) -> Result<(), BackendError> {
        let slab = &self.slabs[&va];
        let Granule::Mapped { handle, .. } = slab.granules[g] else {
            unreachable!("only mapped granules retire");
        };
        let (at, device) = (slab.granule_va(g), slab.device);
        self.backend.unmap(at, GRANULE)?;
        self.slabs.get_mut(&va).expect("slab").granules[g] = Granule::Retired;
        self.stats.granules_retired += 1;
        self.dispose(handle, GRANULE, device)?;
        self.tombstone(at, device)
    }

    /// Forgets the spent slab at `va` and quarantines its slot.
    fn retire_slab(&mut self, va: u64) {
        let slab = self.slabs.remove(&va).expect("slab");
        let (t, f) = (slab.class, slab.field);
        if self.current.get(&(slab.device, t, f)) == Some(&va) {
            self.current.remove(&(slab.device, t, f));
        }
        sub_slots(&mut self.sub_windows, t, f).retire((va - sub_window_base(t, f)) / slab_bytes(t));
        self.stats.slabs_retired += 1;
    }

    /// Maps a slotted block of class `t` with `size` payload bytes on `device`: its
    /// payload (a chunk when it is one granule) and a header granule with its slot.
    fn alloc_large(&mut self, t: u32, size: u64, device: i32) -> Result<u64, AllocError> {
        let (va, slot) = self.take_slot(Region::Window(t))?;
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
        let header = match self.map_header_granule(va, device) {
            Ok(i) => i,
            Err(e) => {
                let _ = self.dispose(handle, bytes, device);
                self.windows[t as usize].retire(slot);
                return Err(e.into());
            }
        };
        // The payload's memory is not zeroed: write both words of the size.
        let hdr = header_addr(va);
        let fills = [
            Fill::word(hdr, size as u32),
            Fill::word(hdr + 4, (size >> 32) as u32),
        ];
        if let Err(e) = self.map_fill(at, bytes, (handle, device), &fills) {
            let _ = self.backend.unmap(va, GRANULE);
            self.granules(device).give_back(header, header_slot(va));
            self.windows[t as usize].retire(slot);
            return Err(e.into());
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

    /// Picks a slot of region `r`; a reused slot loses the tombstones over its granules
    /// first.
    fn take_slot(&mut self, r: Region) -> Result<(u64, u64), AllocError> {
        let rng = &mut self.rng;
        let picked = match r {
            Region::Window(t) => self.windows[t as usize].pick(rng),
            Region::Sub(t, f) => sub_slots(&mut self.sub_windows, t, f).pick(rng),
        };
        let p = picked.ok_or(r.exhausted())?;
        let va = r.base() + p.slot * r.slot_bytes();
        if p.reused {
            for at in (0..r.tomb_granules()).map(|g| va + g * GRANULE) {
                let Some(tomb) = self.tombstoned.remove(&at) else {
                    continue;
                };
                if let Err(e) = self.drop_tombstone(at, tomb) {
                    self.tombstoned.insert(at, tomb);
                    self.retire_slot(r, p.slot);
                    return Err(e.into());
                }
            }
        }
        Ok((va, p.slot))
    }

    /// Quarantines `slot` of region `r`.
    fn retire_slot(&mut self, r: Region, slot: u64) {
        match r {
            Region::Window(t) => self.windows[t as usize].retire(slot),
            Region::Sub(t, f) => sub_slots(&mut self.sub_windows, t, f).retire(slot),
        }
    }

    /// Maps `handle` (`bytes` of memory of `device`) read-write at `va` and runs
    /// `fills`; on failure undoes the mapping and gives the memory back.
    fn map_fill(
        &mut self,
        va: u64,
        bytes: u64,
        (handle, device): (B::Handle, i32),
        fills: &[Fill],
    ) -> Result<(), BackendError> {
        let mut mapped = false;
        let mut result = self.backend.map(va, bytes, handle, Access::ReadWrite);
        if result.is_ok() {
            mapped = true;
            result = fills.iter().try_for_each(|f| self.backend.fill32(*f));
        }
        if result.is_err() {
            if mapped {
                let _ = self.backend.unmap(va, bytes);
            }
            let _ = self.dispose(handle, bytes, device);
        }
        result
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

    /// Frees the slotted block at `base`: its header slot reads 0 and its header granule
    /// stays mapped as its tombstone; its payload is unmapped.
    fn free_large(&mut self, base: u64) -> Result<(), BackendError> {
        let t = tag_of(base);
        let l = self.large.remove(&base).expect("slotted block");
        self.windows[t as usize].retire((base - window_base(t)) / block_size(t));
        let (at, bytes) = l.backing;
        self.backend.fill32(Fill::span(header_addr(base), 8, 0))?;
        self.backend.unmap(at, bytes)?;
        self.dispose(l.handle, bytes, l.device)?;
        self.bury(base, Tomb::Header(l.device, l.header))
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
