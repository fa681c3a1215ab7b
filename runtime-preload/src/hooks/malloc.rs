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
use crate::runtime::{self, Heap, Runtime};

/// Tries a tagged allocation of `size` bytes for `api`. On success runs `store` with
/// the payload pointer; `None` means "not for cusafe: call the real function".
pub(super) fn tagged(
    rt: &Runtime,
    heap: &Heap,
    api: &str,
    size: u64,
    store: impl FnOnce(u64),
) -> Option<CudaError> {
    if !rt.options.tagging {
        return None;
    }
    match heap.alloc(size, rt.site()) {
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

/// The runtime and its heap, when tagged allocation serves the calling thread.
fn here() -> Option<(&'static Runtime, &'static Heap)> {
    let rt = runtime::get()?;
    Some((rt, rt.heap_here()?))
}

/// Hook of `cudaMalloc`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc(dev_ptr: *mut *mut c_void, size: usize) -> CudaError {
    let done = here()
        .filter(|_| !dev_ptr.is_null() && size > 0)
        .and_then(|(rt, h)| {
            // SAFETY: dev_ptr is non-null; the caller passes a writable pointer.
            tagged(rt, h, "cudaMalloc", size as u64, |p| unsafe {
                *dev_ptr = p as *mut c_void
            })
        });
    done.unwrap_or_else(|| polled(unsafe { real().cudaMalloc(dev_ptr, size) }))
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
    let done = here().filter(|_| ok).and_then(|(rt, h)| {
        let p = (width as u64).next_multiple_of(h.pitch_align);
        let size = p.checked_mul(height as u64)?;
        tagged(rt, h, "cudaMallocPitch", size, |ptr| {
            // SAFETY: both out-pointers are non-null and writable.
            unsafe {
                *dev_ptr = ptr as *mut c_void;
                *pitch = p as usize;
            }
        })
    });
    done.unwrap_or_else(|| polled(unsafe { real().cudaMallocPitch(dev_ptr, pitch, width, height) }))
}

/// Hook of `cudaMalloc3D`.
#[no_mangle]
pub unsafe extern "C" fn cudaMalloc3D(pitched: *mut PitchedPtr, extent: Extent) -> CudaError {
    let ok = !pitched.is_null() && extent.width > 0 && extent.height > 0 && extent.depth > 0;
    let done = here().filter(|_| ok).and_then(|(rt, h)| {
        let p = (extent.width as u64).next_multiple_of(h.pitch_align);
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
    done.unwrap_or_else(|| polled(unsafe { real().cudaMalloc3D(pitched, extent) }))
}
