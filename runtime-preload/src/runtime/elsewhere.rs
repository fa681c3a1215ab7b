//! Work the runtime does not serve: allocations and instrumented launches on a device
//! that could not be set up (no VMM support, or a setup step failed), and driver API
//! work in a context of a device other than the one the runtime works in there
//! (`devices.rs`). Allocations there pass through untagged, and instrumented kernels
//! launched there run unchecked against their memory and may fault where they would
//! read the runtime page. Neither is silent: the first of each on every device is said.

use std::sync::atomic::{AtomicU64, Ordering};

use super::{Heap, Kernel, Runtime};
use crate::cuda::driver::Context;
use crate::cuda::real::{real, SUCCESS};
use crate::report::demangle;

/// Devices something was said about: bit `d` for device `d` (below 63), bit 63 for
/// another context of the runtime's own device (or a device number past 62).
#[derive(Debug, Default)]
pub(crate) struct SaidOnce(AtomicU64);

impl SaidOnce {
    /// Whether this is the first time for `device` (`None`: another context of the
    /// runtime's device); marks it said.
    fn first(&self, device: Option<i32>) -> bool {
        let bit = match device {
            Some(d) if (0..63).contains(&d) => 1u64 << d,
            _ => 1u64 << 63,
        };
        self.0.fetch_or(bit, Ordering::AcqRel) & bit == 0
    }
}

/// "on device D", or "in another context of a device".
fn place(device: Option<i32>) -> String {
    match device {
        Some(d) => format!("on device {d}"),
        None => "in a context cusafe does not work in".to_string(),
    }
}

/// The calling thread's current device as the runtime API sees it (only from runtime
/// API hooks: libcudart is loaded then).
pub(super) fn current_device() -> Option<i32> {
    let mut d = -1;
    // SAFETY: writes one int.
    let e = unsafe { real().cudaGetDevice(&mut d) };
    (e == SUCCESS).then_some(d)
}

/// Whether `why` says the work is in another context (not that the device failed).
fn other_context(why: &str) -> bool {
    why.contains("other than the one cusafe works in")
}

impl Runtime {
    /// The heap and the device for an allocation call `api` on the calling thread's
    /// current device; on a device that cannot be served the allocation passes through
    /// untagged, and the first one there says so.
    pub fn heap_to_allocate(&self, api: &str) -> Option<(&Heap, i32)> {
        let h = self.heap()?;
        let d = current_device()?;
        match self.served_on_device(h, d) {
            Ok(_) => Some((h, d)),
            Err(why) => {
                self.say_untagged(api, Some(d), &why);
                None
            }
        }
    }

    /// The heap and the device for a driver API allocation call `api` in `ctx`
    /// (current); in a context the runtime does not work in the allocation passes
    /// through untagged, and the first one on each device says so.
    pub fn heap_to_allocate_in(&self, api: &str, ctx: Context) -> Option<(&Heap, i32)> {
        let h = self.heap()?;
        if h.ctx() == ctx {
            return Some((h, h.device));
        }
        let d = Context::device().ok()?;
        match self.served_in_context(h, d, ctx) {
            Ok(_) => Some((h, d)),
            Err(why) => {
                let key = (!other_context(&why)).then_some(d);
                self.say_untagged(api, key, &why);
                None
            }
        }
    }

    /// Warns, once per device, that allocations there are not tagged and so not checked.
    fn say_untagged(&self, api: &str, device: Option<i32>, why: &str) {
        if !self.untagged_said.first(device) {
            return;
        }
        self.warn(&format!(
            "{api} {}: cusafe cannot tag memory there ({why}), so this and later \
             allocations there are not checked for overflows or use after free; allocate in \
             each device's primary context (what the CUDA runtime API uses), or run one \
             process per device (CUDA_VISIBLE_DEVICES=N)",
            place(device)
        ));
    }

    /// Before the launch of instrumented `kernel`: warns, once per device, when the
    /// calling thread launches where the runtime does not serve.
    pub fn note_launch_device(&self, kernel: Kernel) {
        let Some(h) = self.heap() else {
            return;
        };
        let Err(why) = self.launch_served(h, kernel) else {
            return;
        };
        let device = match kernel {
            Kernel::Stub(_) => current_device(),
            Kernel::Function(_) => Context::device().ok(),
        };
        let key = device.filter(|_| !other_context(&why));
        if !self.launch_said.first(key) {
            return;
        }
        let name = self
            .layouts
            .name(kernel)
            .map_or_else(|| "an instrumented kernel".to_string(), |n| demangle(&n));
        self.warn(&format!(
            "{name} launched {}: cusafe does not serve it ({why}), so a failing check or a \
             tracked local there may fault with an illegal address instead of a report, and \
             memory there is not checked; launch in each device's primary context (what the \
             CUDA runtime API uses), or run one process per device (CUDA_VISIBLE_DEVICES=N)",
            device.map_or_else(
                || "in a context cusafe does not work in".to_string(),
                |d| format!("on device {d}")
            )
        ));
    }
}
