//! A host-memory [`Backend`] that simulates the driver's VMM API: reservations,
//! physical handles and mappings are bookkeeping; memory is a sparse map of u32 words
//! per physical handle, so a chunk mapped at several addresses (the tombstone) shows
//! the same contents everywhere. Every call checks the contract the CUDA backend
//! relies on (alignment, mapping inside a reservation, no overlapping mappings,
//! unmapping exactly what was mapped, fills only into mapped memory), so frontend
//! tests catch misuse that the real driver would reject.

use std::collections::{BTreeMap, HashMap};

use cusafe_format::block::GRANULE;

use super::backend::{Access, Backend, BackendError, Fill};

/// Operation counters of a [`HostBackend`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HostOps {
    /// `create` calls that succeeded.
    pub creates: u64,
    /// `release` calls that succeeded.
    pub releases: u64,
    /// `map` calls that succeeded.
    pub maps: u64,
    /// `unmap` calls that succeeded.
    pub unmaps: u64,
    /// `fill32` calls that succeeded.
    pub fills: u64,
}

#[derive(Clone, Copy, Debug)]
struct Mapping {
    bytes: u64,
    handle: u64,
    access: Access,
}

/// The simulated memory system.
#[derive(Debug, Default)]
pub struct HostBackend {
    reservations: BTreeMap<u64, u64>,
    /// Live physical handles and their sizes.
    handles: HashMap<u64, u64>,
    /// The device each live handle's memory is on.
    devices: HashMap<u64, i32>,
    next_handle: u64,
    mappings: BTreeMap<u64, Mapping>,
    /// Words written, by handle, then byte offset.
    words: HashMap<u64, HashMap<u64, u32>>,
    /// Value of every word of a handle that one fill covered whole.
    filled: HashMap<u64, u32>,
    ops: HostOps,
    fail_next: Option<&'static str>,
}

fn contract(op: &'static str, message: String) -> BackendError {
    BackendError {
        op,
        code: 0,
        message,
    }
}

impl HostBackend {
    /// An empty memory system.
    pub fn new() -> HostBackend {
        HostBackend::default()
    }

    /// Operation counters so far.
    pub fn ops(&self) -> HostOps {
        self.ops
    }

    /// Makes the next call of `op` ("reserve", "create", "release", "map", "unmap",
    /// "fill32") fail as if the driver had refused it (out of memory, ...).
    pub fn fail_next(&mut self, op: &'static str) {
        self.fail_next = Some(op);
    }

    /// What `cudaDeviceReset` does to the driver's state: every reservation, mapping and
    /// physical handle is gone (handles are not reused: new ones keep counting up).
    pub fn reset_device(&mut self) {
        self.reservations.clear();
        self.handles.clear();
        self.devices.clear();
        self.mappings.clear();
        self.words.clear();
        self.filled.clear();
    }

    /// Physical handles not released.
    pub fn live_handles(&self) -> usize {
        self.handles.len()
    }

    /// Number of mappings in place.
    pub fn mapping_count(&self) -> usize {
        self.mappings.len()
    }

    /// The mappings that start in `[start, end)`, as (address, bytes, access), lowest
    /// first.
    pub fn mappings_in(&self, start: u64, end: u64) -> Vec<(u64, u64, Access)> {
        self.mappings
            .range(start..end)
            .map(|(&va, m)| (va, m.bytes, m.access))
            .collect()
    }

    /// Whether `va` is mapped.
    pub fn is_mapped(&self, va: u64) -> bool {
        self.resolve(va).is_some()
    }

    /// The access of the mapping holding `va`.
    pub fn access(&self, va: u64) -> Option<Access> {
        self.mapping_at(va).map(|(_, m)| m.access)
    }

    /// The device whose memory is mapped at `va`, if any.
    pub fn device_at(&self, va: u64) -> Option<i32> {
        let (_, m) = self.mapping_at(va)?;
        self.devices.get(&m.handle).copied()
    }

    fn mapping_at(&self, va: u64) -> Option<(u64, &Mapping)> {
        let (&start, m) = self.mappings.range(..=va).next_back()?;
        (va < start + m.bytes).then_some((start, m))
    }

    /// The u32 at `va` (4-aligned), or `None` if unmapped. Never-written memory reads
    /// as 0xdeadbeef, standing for whatever a fresh physical page holds.
    pub fn read_u32(&self, va: u64) -> Option<u32> {
        let (handle, off) = self.resolve(va)?;
        let word = self.words.get(&handle).and_then(|w| w.get(&off));
        Some(*word.or(self.filled.get(&handle)).unwrap_or(&0xdead_beef))
    }

    /// The u64 at `va` (8-aligned), or `None` if unmapped.
    pub fn read_u64(&self, va: u64) -> Option<u64> {
        let lo = u64::from(self.read_u32(va)?);
        let hi = u64::from(self.read_u32(va + 4)?);
        Some(lo | hi << 32)
    }

    fn resolve(&self, va: u64) -> Option<(u64, u64)> {
        self.mapping_at(va).map(|(start, m)| (m.handle, va - start))
    }

    fn injected(&mut self, op: &'static str) -> Result<(), BackendError> {
        if self.fail_next == Some(op) {
            self.fail_next = None;
            return Err(BackendError {
                op,
                code: 2,
                message: "injected failure".into(),
            });
        }
        Ok(())
    }
}

fn aligned(op: &'static str, va: u64, bytes: u64) -> Result<(), BackendError> {
    if va % GRANULE != 0 || bytes % GRANULE != 0 || bytes == 0 {
        return Err(contract(
            op,
            format!("{va:#x}+{bytes:#x} is not granule-aligned"),
        ));
    }
    Ok(())
}

impl Backend for HostBackend {
    type Handle = u64;

    fn reserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        self.injected("reserve")?;
        aligned("reserve", va, bytes)?;
        let overlaps = self
            .reservations
            .iter()
            .any(|(&s, &n)| va < s + n && s < va + bytes);
        if overlaps {
            return Err(contract(
                "reserve",
                format!("{va:#x} overlaps a reservation"),
            ));
        }
        self.reservations.insert(va, bytes);
        Ok(())
    }

    fn unreserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        self.injected("unreserve")?;
        if self.reservations.get(&va) != Some(&bytes) {
            return Err(contract(
                "unreserve",
                format!("no reservation of {bytes:#x} bytes at {va:#x}"),
            ));
        }
        if self.mappings.range(va..va + bytes).next().is_some() {
            return Err(contract(
                "unreserve",
                format!("the reservation at {va:#x} still has mappings"),
            ));
        }
        self.reservations.remove(&va);
        Ok(())
    }

    fn create(&mut self, bytes: u64, device: i32) -> Result<u64, BackendError> {
        self.injected("create")?;
        aligned("create", 0, bytes)?;
        self.next_handle += 1;
        self.handles.insert(self.next_handle, bytes);
        self.devices.insert(self.next_handle, device);
        self.ops.creates += 1;
        Ok(self.next_handle)
    }

    fn release(&mut self, handle: u64) -> Result<(), BackendError> {
        self.injected("release")?;
        if self.mappings.values().any(|m| m.handle == handle) {
            return Err(contract(
                "release",
                format!("handle {handle} is still mapped"),
            ));
        }
        if self.handles.remove(&handle).is_none() {
            return Err(contract("release", format!("unknown handle {handle}")));
        }
        self.words.remove(&handle);
        self.filled.remove(&handle);
        self.devices.remove(&handle);
        self.ops.releases += 1;
        Ok(())
    }

    fn map(
        &mut self,
        va: u64,
        bytes: u64,
        handle: u64,
        access: Access,
    ) -> Result<(), BackendError> {
        self.injected("map")?;
        aligned("map", va, bytes)?;
        match self.handles.get(&handle) {
            Some(&n) if n == bytes => {}
            Some(&n) => {
                return Err(contract(
                    "map",
                    format!("mapping {bytes:#x} bytes of a {n:#x}-byte handle"),
                ))
            }
            None => return Err(contract("map", format!("unknown handle {handle}"))),
        }
        let reserved = self
            .reservations
            .range(..=va)
            .next_back()
            .is_some_and(|(&s, &n)| va + bytes <= s + n);
        if !reserved {
            return Err(contract(
                "map",
                format!("{va:#x} is outside every reservation"),
            ));
        }
        let overlaps = self
            .mappings
            .range(..va + bytes)
            .next_back()
            .is_some_and(|(&s, m)| va < s + m.bytes);
        if overlaps {
            return Err(contract("map", format!("{va:#x} is already mapped")));
        }
        self.mappings.insert(
            va,
            Mapping {
                bytes,
                handle,
                access,
            },
        );
        self.ops.maps += 1;
        Ok(())
    }

    fn unmap(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        self.injected("unmap")?;
        match self.mappings.get(&va) {
            Some(m) if m.bytes == bytes => {
                self.mappings.remove(&va);
                self.ops.unmaps += 1;
                Ok(())
            }
            _ => Err(contract(
                "unmap",
                format!("{va:#x}+{bytes:#x} is not exactly one mapping"),
            )),
        }
    }

    fn protect(&mut self, va: u64, bytes: u64, access: Access) -> Result<(), BackendError> {
        self.injected("protect")?;
        match self.mappings.get_mut(&va) {
            Some(m) if m.bytes == bytes => {
                m.access = access;
                Ok(())
            }
            _ => Err(contract(
                "protect",
                format!("{va:#x}+{bytes:#x} is not exactly one mapping"),
            )),
        }
    }

    fn fill32(&mut self, fill: Fill) -> Result<(), BackendError> {
        self.injected("fill32")?;
        if fill.va % 4 != 0 || (fill.rows > 1 && fill.pitch < fill.words * 4) {
            return Err(contract("fill32", format!("bad fill {fill:?}")));
        }
        if let Some((handle, 0)) = self.resolve(fill.va) {
            if fill.rows == 1 && fill.words * 4 == self.handles[&handle] {
                // The whole handle: one value, no per-word entries.
                self.words.remove(&handle);
                self.filled.insert(handle, fill.value);
                self.ops.fills += 1;
                return Ok(());
            }
        }
        for (start, end) in fill.ranges() {
            if self.access(start) == Some(Access::ReadOnly) {
                return Err(contract("fill32", format!("{start:#x} is read-only")));
            }
            let mut a = start;
            while a < end {
                let (handle, off) = self
                    .resolve(a)
                    .ok_or_else(|| contract("fill32", format!("{a:#x} is not mapped")))?;
                self.words
                    .entry(handle)
                    .or_default()
                    .insert(off, fill.value);
                a += 4;
            }
        }
        self.ops.fills += 1;
        Ok(())
    }
}
