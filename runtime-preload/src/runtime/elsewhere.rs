//! Work on devices other than the runtime's. The runtime tags memory on one device, in
//! the context it started in, and maps the runtime page that instrumented kernels read
//! (reports, local-pointer epochs, coverage, the device heap) for that device only.
//! Allocations elsewhere pass through untagged, and instrumented kernels launched
//! elsewhere run unchecked against their memory and may fault where they would read
//! the runtime page. Neither is silent: the first of each on every device is said.

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

/// "on device D", or "in a context of device H other than its primary context".
fn place(device: Option<i32>, heap_device: i32) -> String {
    match device {
        Some(d) => format!("on device {d}"),
        None => format!("in a context of device {heap_device} other than its primary context"),
    }
}

/// The calling thread's current device as the runtime API sees it (only from runtime
/// API hooks: libcudart is loaded then).
fn current_device() -> Option<i32> {
    let mut d = -1;
    // SAFETY: writes one int.
    let e = unsafe { real().cudaGetDevice(&mut d) };
    (e == SUCCESS).then_some(d)
}

impl Runtime {
    /// The heap for an allocation call `api` on the calling thread's current device; on
    /// another device the allocation passes through untagged, and the first one there
    /// says so.
    pub fn heap_to_allocate(&self, api: &str) -> Option<&Heap> {
        let h = self.heap()?;
        let d = current_device()?;
        if d != h.device {
            self.say_untagged(api, Some(d), h.device);
            return None;
        }
        Some(h)
    }

    /// The heap for a driver API allocation call `api` in `ctx`; in another context the
    /// allocation passes through untagged, and the first one on each device says so.
    pub fn heap_to_allocate_in(&self, api: &str, ctx: Context) -> Option<&Heap> {
        let h = self.heap()?;
        if h.ctx() == ctx {
            return Some(h);
        }
        let d = Context::device().ok().filter(|d| *d != h.device);
        self.say_untagged(api, d, h.device);
        None
    }

    /// Warns, once per device, that allocations there are not tagged and so not checked.
    fn say_untagged(&self, api: &str, device: Option<i32>, heap_device: i32) {
        if !self.untagged_said.first(device) {
            return;
        }
        self.warn(&format!(
            "{api} {}: cusafe tags and checks memory on device {heap_device} only (in the \
             context the runtime started in), so this and later allocations there are not \
             checked for overflows or use after free; to check every GPU, run one process per \
             device (CUDA_VISIBLE_DEVICES=N) or allocate in that device's primary context",
            place(device, heap_device)
        ));
    }

    /// Before the launch of instrumented `kernel`: warns, once per device, when the
    /// calling thread launches on a device other than the runtime's.
    pub fn note_launch_device(&self, kernel: Kernel) {
        let Some(h) = self.heap() else {
            return;
        };
        // A runtime API launch (a host stub) asks the runtime API for its device; a driver
        // API launch (a function handle) goes by its current context, since the program
        // may not load libcudart at all.
        let device = match kernel {
            Kernel::Stub(_) => current_device(),
            Kernel::Function(_) => Context::current_or_none()
                .filter(|c| *c != h.ctx())
                .and_then(|_| Context::device().ok()),
        };
        let Some(d) = device.filter(|d| *d != h.device) else {
            return;
        };
        if !self.launch_said.first(Some(d)) {
            return;
        }
        let name = self
            .layouts
            .name(kernel)
            .map_or_else(|| "an instrumented kernel".to_string(), |n| demangle(&n));
        self.warn(&format!(
            "{name} launched on device {d}: instrumented kernels work on device {} only (the \
             runtime page they read to report, to track local pointers and to allocate is \
             mapped there), so on device {d} a failing check or a tracked local may fault with \
             an illegal address instead of a report, and memory there is not checked; run one \
             process per GPU (CUDA_VISIBLE_DEVICES=N)",
            h.device
        ));
    }
}
