//! The CUDA [`Backend`]: the driver's virtual memory management API
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, `cuMemSetAccess`, `cuMemUnmap`,
//! `cuMemRelease`) over every device the runtime serves, with fills on each device's
//! private write stream.
//!
//! Reservations are the process's (the address space is unified). Physical memory is
//! made on the device `create` names; a mapping of it is made accessible to that device
//! and to every device that can reach it as a peer (`cuDeviceCanAccessPeer`), so a
//! kernel on another GPU may use a tagged block, as it may use `cudaMalloc` memory after
//! `cudaDeviceEnablePeerAccess`. Fills go to the private stream of the device the
//! filled memory is on, with that device's context current; on every device but the
//! first they are waited for at once, so that a kernel of any device sees them.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;

use cudarc::driver::sys as cu;
use cusafe_format::block::GRANULE;

use super::driver::{attribute, check, device_count, Context};
use super::ordering::HeaderStream;
use crate::alloc::{Access, Backend, BackendError, Fill};

/// One device the backend makes memory on.
struct Place {
    /// The context its work is issued in (the runtime's context on that device).
    ctx: Context,
    prop: cu::CUmemAllocationProp,
    /// The device's private write stream.
    writes: Arc<HeaderStream>,
    /// The devices a mapping of its memory is made accessible to: itself first, then
    /// its peers.
    access: Vec<cu::CUdevice>,
    /// Whether fills wait for the stream (every device but the first): launches order
    /// themselves after their own device's stream only, and a kernel on another device
    /// may use this memory as a peer.
    sync_fills: bool,
}

/// VMM on the devices the runtime serves.
pub struct VmmBackend {
    places: HashMap<cu::CUdevice, Place>,
    /// The device of every physical allocation not released.
    handles: HashMap<cu::CUmemGenericAllocationHandle, cu::CUdevice>,
    /// Every mapping: start -> (bytes, device of its memory).
    mappings: BTreeMap<u64, (u64, cu::CUdevice)>,
    /// Cleared when the driver refuses read-only access (tombstones are then writable).
    read_only_works: bool,
    /// Cleared when the driver refuses access for peers (mappings are then the own
    /// device's only).
    peers_work: bool,
}

// SAFETY: the allocation properties hold a null Windows-only pointer; everything else is
// plain data and process-wide handles.
unsafe impl Send for VmmBackend {}

fn unsupported(message: String) -> BackendError {
    BackendError {
        op: "VMM check",
        code: 0,
        message,
    }
}

/// The allocation properties of pinned memory on `device`, after checking that the
/// device supports VMM with a granularity dividing [`GRANULE`].
fn properties(device: cu::CUdevice) -> Result<cu::CUmemAllocationProp, BackendError> {
    let vmm = attribute(
        device,
        cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED,
    )?;
    if vmm == 0 {
        return Err(unsupported(format!(
            "device {device} does not support virtual memory management"
        )));
    }
    // SAFETY: an all-zero CUmemAllocationProp is valid (null pointer, zero enums are
    // defined values); the fields that matter are set below.
    let mut prop: cu::CUmemAllocationProp = unsafe { std::mem::zeroed() };
    prop.type_ = cu::CUmemAllocationType::CU_MEM_ALLOCATION_TYPE_PINNED;
    prop.location.type_ = cu::CUmemLocationType::CU_MEM_LOCATION_TYPE_DEVICE;
    prop.location.id = device;
    let mut granularity = 0usize;
    // SAFETY: writes one usize.
    check("cuMemGetAllocationGranularity", unsafe {
        cu::cuMemGetAllocationGranularity(
            &mut granularity,
            &prop,
            cu::CUmemAllocationGranularity_flags::CU_MEM_ALLOC_GRANULARITY_MINIMUM,
        )
    })?;
    if granularity == 0 || GRANULE % granularity as u64 != 0 {
        return Err(unsupported(format!(
            "allocation granularity {granularity} of device {device} does not divide 2 MiB"
        )));
    }
    Ok(prop)
}

/// `device` first, then every other device that can access its memory as a peer.
fn with_peers(device: cu::CUdevice) -> Vec<cu::CUdevice> {
    let mut out = vec![device];
    for p in (0..device_count()).filter(|&p| p != device) {
        let mut can = 0;
        // SAFETY: writes one int.
        let r = unsafe { cu::cuDeviceCanAccessPeer(&mut can, p, device) };
        if r == cu::CUresult::CUDA_SUCCESS && can != 0 {
            out.push(p);
        }
    }
    out
}

impl VmmBackend {
    /// The backend, serving `device` in `ctx` (current) with its write stream `writes`.
    pub fn new(
        device: cu::CUdevice,
        ctx: Context,
        writes: Arc<HeaderStream>,
    ) -> Result<VmmBackend, BackendError> {
        let mut b = VmmBackend {
            places: HashMap::new(),
            handles: HashMap::new(),
            mappings: BTreeMap::new(),
            read_only_works: true,
            peers_work: true,
        };
        b.add_device(device, ctx, writes)?;
        Ok(b)
    }

    /// Serves `device` too, in `ctx` with its write stream `writes` (checks that the
    /// device supports VMM with a granularity dividing 2 MiB).
    pub fn add_device(
        &mut self,
        device: cu::CUdevice,
        ctx: Context,
        writes: Arc<HeaderStream>,
    ) -> Result<(), BackendError> {
        let prop = properties(device)?;
        let sync_fills = !self.places.is_empty();
        self.places.insert(
            device,
            Place {
                ctx,
                prop,
                writes,
                access: with_peers(device),
                sync_fills,
            },
        );
        Ok(())
    }

    /// The context `device` is served in (after a reset, the new one).
    pub fn set_context(&mut self, device: cu::CUdevice, ctx: Context) {
        if let Some(p) = self.places.get_mut(&device) {
            p.ctx = ctx;
        }
    }

    fn place(&self, device: cu::CUdevice) -> Result<&Place, BackendError> {
        self.places
            .get(&device)
            .ok_or_else(|| unsupported(format!("device {device} is not served by the allocator")))
    }

    /// The device whose memory is mapped at `va`.
    fn device_at(&self, va: u64) -> Result<cu::CUdevice, BackendError> {
        self.mappings
            .range(..=va)
            .next_back()
            .filter(|(&s, &(n, _))| va < s + n)
            .map(|(_, &(_, d))| d)
            .ok_or_else(|| unsupported(format!("{va:#x} is not mapped by the allocator")))
    }

    /// `cuMemSetAccess` of one mapping of `device`'s memory, for the device and its
    /// peers; read-only falls back to read-write (for good) where the driver refuses
    /// it, and peers are dropped (for good) where the driver refuses them.
    fn set_access(
        &mut self,
        va: u64,
        bytes: u64,
        access: Access,
        device: cu::CUdevice,
    ) -> Result<(), BackendError> {
        let flags = match (access, self.read_only_works) {
            (Access::ReadOnly, true) => cu::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
            _ => cu::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        let place = self.place(device)?;
        let devices = if self.peers_work {
            &place.access[..]
        } else {
            &place.access[..1]
        };
        let desc: Vec<cu::CUmemAccessDesc> = devices
            .iter()
            .map(|&d| cu::CUmemAccessDesc {
                location: cu::CUmemLocation {
                    id: d,
                    ..place.prop.location
                },
                flags,
            })
            .collect();
        // SAFETY: `va..va+bytes` is one mapping; `desc` holds `desc.len()` descriptions.
        let r = unsafe { cu::cuMemSetAccess(va, bytes as usize, desc.as_ptr(), desc.len()) };
        if r == cu::CUresult::CUDA_SUCCESS {
            return Ok(());
        }
        if desc.len() > 1 {
            self.peers_work = false;
            return self.set_access(va, bytes, access, device);
        }
        if access == Access::ReadOnly && self.read_only_works {
            self.read_only_works = false;
            return self.set_access(va, bytes, Access::ReadWrite, device);
        }
        check("cuMemSetAccess", r)
    }

    /// Waits for every served device's work (`cuCtxSynchronize` in each context: a
    /// kernel on any of them may use a block of another as a peer); while a stream
    /// capture is in progress, where that wait would fail and invalidate the capture,
    /// for the private write streams only. Frees are deferred then, so only an
    /// allocation gets here during a capture (unmapping an old tombstone for a reused
    /// slot, or undoing a failed mapping), where only fills of ours can target the range.
    fn wait_for_device(&self) -> Result<(), BackendError> {
        let capturing = crate::runtime::capture::active();
        for p in self.places.values() {
            let _ctx = p.ctx.enter();
            if capturing {
                p.writes.wait()?;
            } else {
                // SAFETY: waits for the current context's work.
                check("cuCtxSynchronize", unsafe { cu::cuCtxSynchronize() })?;
            }
        }
        Ok(())
    }

    /// Copies `bytes` from the host to device address `va` (synchronous), in the
    /// context of the device whose memory is mapped there.
    pub fn copy_to_device(&mut self, va: u64, bytes: &[u8]) -> Result<(), BackendError> {
        let _ctx = self.place(self.device_at(va)?)?.ctx.enter();
        // SAFETY: `bytes` is readable for its length; `va` is mapped device memory.
        check("cuMemcpyHtoD", unsafe {
            cu::cuMemcpyHtoD_v2(va, bytes.as_ptr().cast(), bytes.len())
        })
    }
}

impl Backend for VmmBackend {
    type Handle = cu::CUmemGenericAllocationHandle;

    fn reserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        let mut got: cu::CUdeviceptr = 0;
        // SAFETY: writes one address.
        check("cuMemAddressReserve", unsafe {
            cu::cuMemAddressReserve(&mut got, bytes as usize, GRANULE as usize, va, 0)
        })?;
        if got != va {
            // SAFETY: frees the reservation just made.
            unsafe { cu::cuMemAddressFree(got, bytes as usize) };
            return Err(BackendError {
                op: "cuMemAddressReserve",
                code: 0,
                message: format!("asked for {va:#x}, the driver placed it at {got:#x}"),
            });
        }
        Ok(())
    }

    fn unreserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        // SAFETY: frees a range this backend reserved; the caller unmapped it.
        check("cuMemAddressFree", unsafe {
            cu::cuMemAddressFree(va, bytes as usize)
        })
    }

    fn create(&mut self, bytes: u64, device: i32) -> Result<Self::Handle, BackendError> {
        let place = self.place(device)?;
        let _ctx = place.ctx.enter();
        let mut h = 0;
        // SAFETY: writes one handle; `prop` is a valid description.
        check("cuMemCreate", unsafe {
            cu::cuMemCreate(&mut h, bytes as usize, &place.prop, 0)
        })?;
        self.handles.insert(h, device);
        Ok(h)
    }

    fn release(&mut self, handle: Self::Handle) -> Result<(), BackendError> {
        // SAFETY: `handle` came from cuMemCreate and is released once.
        check("cuMemRelease", unsafe { cu::cuMemRelease(handle) })?;
        self.handles.remove(&handle);
        Ok(())
    }

    fn map(
        &mut self,
        va: u64,
        bytes: u64,
        handle: Self::Handle,
        access: Access,
    ) -> Result<(), BackendError> {
        let device = *self.handles.get(&handle).ok_or_else(|| {
            unsupported(format!(
                "physical allocation {handle:#x} is not the allocator's"
            ))
        })?;
        // SAFETY: `va..va+bytes` lies in a reservation and is unmapped; `handle` is
        // `bytes` long.
        check("cuMemMap", unsafe {
            cu::cuMemMap(va, bytes as usize, 0, handle, 0)
        })?;
        if let Err(e) = self.set_access(va, bytes, access, device) {
            // SAFETY: undoes the mapping above.
            unsafe { cu::cuMemUnmap(va, bytes as usize) };
            return Err(e);
        }
        self.mappings.insert(va, (bytes, device));
        Ok(())
    }

    /// Waits for the device first (fills to the range must land before it turns
    /// read-only).
    fn protect(&mut self, va: u64, bytes: u64, access: Access) -> Result<(), BackendError> {
        self.wait_for_device()?;
        let device = self.device_at(va)?;
        self.set_access(va, bytes, access, device)
    }

    /// Waits for the device first: no kernel, copy or fill of ours may still touch
    /// the range when it goes.
    fn unmap(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        self.wait_for_device()?;
        // SAFETY: `va..va+bytes` is exactly one earlier mapping.
        check("cuMemUnmap", unsafe { cu::cuMemUnmap(va, bytes as usize) })?;
        self.mappings.remove(&va);
        Ok(())
    }

    fn fill32(&mut self, fill: Fill) -> Result<(), BackendError> {
        let place = self.place(self.device_at(fill.va)?)?;
        let _ctx = place.ctx.enter();
        place.writes.fill(fill)?;
        if place.sync_fills {
            place.writes.wait()?;
        }
        Ok(())
    }
}
