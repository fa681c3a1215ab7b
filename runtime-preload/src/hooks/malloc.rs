//! `cudaMalloc`, `cudaMallocPitch`, `cudaMalloc3D`: served by the tagged allocator when
//! the runtime is on and the calling thread's device is the runtime's; otherwise (and
//! for zero sizes and sizes beyond every class) passed through.
//!
//! Pitched allocations round the row pitch up to the device's texture pitch alignment
//! (at least 512 bytes, as the real runtime does) and get exactly `pitch * rows` bytes.

use std::ffi::c_void;

use super::polled;
use crate::alloc::AllocError;
use crate::cuda::real::{
    is_device_fault, real, CudaError, Extent, PitchedPtr, MEMORY_ALLOCATION, SUCCESS,
};
use crate::report::{Kind, Origin, Report};
use crate::runtime::{self, Heap, Runtime};

/// Tries a tagged allocation of `size` bytes on `device` for `api`. On success runs `store` with
/// the payload pointer; `None` means "not for cusafe: call the real function".
pub(super) fn tagged(
    rt: &Runtime,
    (heap, device): (&Heap, i32),
    api: &'static str,
    size: u64,
    store: impl FnOnce(u64),
) -> Option<CudaError> {
    let total = heap.total_mem(device);
    if total > 0 && size > total {
        if rt.options.allocator_may_return_error {
            return None;
        }
        rt.report(too_big(api, size, total));
        return Some(MEMORY_ALLOCATION);
    }
    if !rt.options.tagging {
        return None;
    }
    match heap.alloc(size, rt.site(), device) {
        Ok(b) => {
            rt.trace(2, || {
                format!("{api}({size}) = {:#x} (buffer #{})", b.ptr, b.id)
            });
            store(b.ptr);
            Some(SUCCESS)
        }
        Err(AllocError::TooLarge(_)) => None,
        Err(e) => {
            rt.trace(1, || format!("{api}({size}) failed: {e}"));
            let code = match &e {
                AllocError::Backend(b) if is_device_fault(b.code) => b.code,
                _ => MEMORY_ALLOCATION,
            };
            Some(rt.after_call(code))
        }
    }
}

/// The report of an allocation call `api` asking for `size` bytes on a device with
/// `total` bytes of memory. The size is also shown as the signed values a negative
/// `int` or `long` becomes when converted to `size_t`.
pub(super) fn too_big(api: &'static str, size: u64, total: u64) -> Report {
    Report {
        kind: Kind::AllocationSizeTooBig,
        origin: Origin::Host { api, operand: None },
        access: None,
        address: 0,
        buffer: None,
        detail: format!(
            "requested size {size} ({size:#x}; as a signed 32-bit value {}, as a signed 64-bit value {}) exceeds the device's {total} bytes of memory",
            size as u32 as i32,
            size as i64
        ),
        call_site: None,
    }
}

/// The runtime and its heap, when tagged allocation serves the calling thread's device
/// (the first allocation call `api` on another device says that it is not checked).
fn here(api: &str) -> Option<(&'static Runtime, (&'static Heap, i32))> {
    let rt = runtime::get()?;
    Some((rt, rt.heap_to_allocate(api)?))
}

/// Hook of `cudaMalloc`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(dev_ptr: *mut *mut c_void, size: usize) -> CudaError {
    let done = here("cudaMalloc")
        .filter(|_| !dev_ptr.is_null() && size > 0)
        .and_then(|(rt, h)| {
            // SAFETY: dev_ptr is non-null; the caller passes a writable pointer.
            tagged(rt, h, "cudaMalloc", size as u64, |p| unsafe {
                *dev_ptr = p as *mut c_void
            })
        });
    done.unwrap_or_else(|| polled("cudaMalloc", unsafe { real().cudaMalloc(dev_ptr, size) }))
}

/// Hook of `cudaMallocPitch`.
#[no_mangle]
pub unsafe extern "C" fn cudaMallocPitch(
    dev_ptr: *mut *mut c_void,
    pitch: *mut usize,
    width: usize,
    height: usize,
) -> CudaError {
    let ok = !dev_ptr.is_null() && !pitch.is_null() && width > 0 && height > 0;
    let done = here("cudaMallocPitch").filter(|_| ok).and_then(|(rt, h)| {
        let p = (width as u64).next_multiple_of(h.0.pitch_align);
        let size = p.checked_mul(height as u64)?;
        tagged(rt, h, "cudaMallocPitch", size, |ptr| {
            // SAFETY: both out-pointers are non-null and writable.
            unsafe {
                *dev_ptr = ptr as *mut c_void;
                *pitch = p as usize;
            }
        })
    });
    done.unwrap_or_else(|| {
        polled("cudaMallocPitch", unsafe {
            real().cudaMallocPitch(dev_ptr, pitch, width, height)
        })
    })
}

/// Hook of `cudaMalloc3D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3D(pitched: *mut PitchedPtr, extent: Extent) -> CudaError {
    let ok = !pitched.is_null() && extent.width > 0 && extent.height > 0 && extent.depth > 0;
    let done = here("cudaMalloc3D").filter(|_| ok).and_then(|(rt, h)| {
        let p = (extent.width as u64).next_multiple_of(h.0.pitch_align);
        let size = p
            .checked_mul(extent.height as u64)?
            .checked_mul(extent.depth as u64)?;
        tagged(rt, h, "cudaMalloc3D", size, |ptr| {
            // SAFETY: `pitched` is non-null and writable.
            unsafe {
                *pitched = PitchedPtr {
                    ptr: ptr as *mut c_void,
                    pitch: p as usize,
                    xsize: extent.width,
                    ysize: extent.height,
                }
            }
        })
    });
    done.unwrap_or_else(|| {
        polled("cudaMalloc3D", unsafe {
            real().cudaMalloc3D(pitched, extent)
        })
    })
}
