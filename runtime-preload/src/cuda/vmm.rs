//! The CUDA [`Backend`]: the driver's virtual memory management API
//! (`cuMemAddressReserve`, `cuMemCreate`, `cuMemMap`, `cuMemSetAccess`, `cuMemUnmap`,
//! `cuMemRelease`) on one device, with fills on the private write stream.

use std::sync::Arc;

use cudarc::driver::sys as cu;
use cusafe_format::block::GRANULE;

use super::driver::{attribute, check};
use super::ordering::HeaderStream;
use crate::alloc::{Access, Backend, BackendError, Fill};

/// VMM on one device.
pub struct VmmBackend {
    prop: cu::CUmemAllocationProp,
    writes: Arc<HeaderStream>,
    /// Cleared when the driver refuses read-only access (tombstones are then writable).
    read_only_works: bool,
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

impl VmmBackend {
    /// Checks that `device` supports VMM with a granularity dividing
    /// [`GRANULE`] and returns its backend. The caller holds the device's context.
    pub fn new(
        device: cu::CUdevice,
        writes: Arc<HeaderStream>,
    ) -> Result<VmmBackend, BackendError> {
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
                "allocation granularity {granularity} does not divide 2 MiB"
            )));
        }
        Ok(VmmBackend {
            prop,
            writes,
            read_only_works: true,
        })
    }

    /// `cuMemSetAccess` of one mapping; read-only falls back to read-write (for good)
    /// where the driver refuses it.
    fn set_access(&mut self, va: u64, bytes: u64, access: Access) -> Result<(), BackendError> {
        let flags = |a| match a {
            Access::ReadOnly => cu::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READ,
            Access::ReadWrite => cu::CUmemAccess_flags::CU_MEM_ACCESS_FLAGS_PROT_READWRITE,
        };
        let want = if self.read_only_works {
            access
        } else {
            Access::ReadWrite
        };
        let desc = |a| cu::CUmemAccessDesc {
            location: self.prop.location,
            flags: flags(a),
        };
        // SAFETY: `va..va+bytes` is one mapping; `desc` describes our device.
        let r = unsafe { cu::cuMemSetAccess(va, bytes as usize, &desc(want), 1) };
        if r != cu::CUresult::CUDA_SUCCESS && want == Access::ReadOnly {
            self.read_only_works = false;
            return self.set_access(va, bytes, Access::ReadWrite);
        }
        check("cuMemSetAccess", r)
    }

    /// Waits for the current context's work (`cuCtxSynchronize`); while a stream
    /// capture is in progress, where that wait would fail and invalidate the capture,
    /// for the private write stream only. Frees are deferred then, so only an
    /// allocation gets here during a capture (unmapping an old tombstone for a reused
    /// slot, or undoing a failed mapping), where only fills of ours can target the range.
    fn wait_for_device(&self) -> Result<(), BackendError> {
        if crate::runtime::capture::active() {
            return self.writes.wait();
        }
        // SAFETY: waits for the current context's work.
        check("cuCtxSynchronize", unsafe { cu::cuCtxSynchronize() })
    }

    /// Copies `bytes` from the host to device address `va` (synchronous).
    pub fn copy_to_device(&mut self, va: u64, bytes: &[u8]) -> Result<(), BackendError> {
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

    fn create(&mut self, bytes: u64) -> Result<Self::Handle, BackendError> {
        let mut h = 0;
        // SAFETY: writes one handle; `prop` is a valid description.
        check("cuMemCreate", unsafe {
            cu::cuMemCreate(&mut h, bytes as usize, &self.prop, 0)
        })?;
        Ok(h)
    }

    fn release(&mut self, handle: Self::Handle) -> Result<(), BackendError> {
        // SAFETY: `handle` came from cuMemCreate and is released once.
        check("cuMemRelease", unsafe { cu::cuMemRelease(handle) })
    }

    fn map(
        &mut self,
        va: u64,
        bytes: u64,
        handle: Self::Handle,
        access: Access,
    ) -> Result<(), BackendError> {
        // SAFETY: `va..va+bytes` lies in a reservation and is unmapped; `handle` is
        // `bytes` long.
        check("cuMemMap", unsafe {
            cu::cuMemMap(va, bytes as usize, 0, handle, 0)
        })?;
        if let Err(e) = self.set_access(va, bytes, access) {
            // SAFETY: undoes the mapping above.
            unsafe { cu::cuMemUnmap(va, bytes as usize) };
            return Err(e);
        }
        Ok(())
    }

    /// Waits for the device first (fills to the range must land before it turns
    /// read-only).
    fn protect(&mut self, va: u64, bytes: u64, access: Access) -> Result<(), BackendError> {
        self.wait_for_device()?;
        self.set_access(va, bytes, access)
    }

    /// Waits for the device first: no kernel, copy or fill of ours may still touch
    /// the range when it goes.
    fn unmap(&mut self, va: u64, bytes: u64) -> Result<(), BackendError> {
        self.wait_for_device()?;
        // SAFETY: `va..va+bytes` is exactly one earlier mapping.
        check("cuMemUnmap", unsafe { cu::cuMemUnmap(va, bytes as usize) })
    }

    fn fill32(&mut self, fill: Fill) -> Result<(), BackendError> {
        self.writes.fill(fill)
    }
}
