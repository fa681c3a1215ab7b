//! Work the runtime does not serve: allocations and instrumented launches on a device
//! that could not be set up (no VMM support, or a setup step failed), and driver API
//! work in a context of a device other than the one the runtime works in there
//! (`devices.rs`). Allocations there pass through untagged, and instrumented kernels
//! launched there run unchecked against their memory and may fault where they would
//! read the runtime page. Neither is silent: the first of each on every device is said.

use std::sync::atomic::{AtomicU64, Ordering};

use super::devices::NotServed;
use super::{Heap, Kernel, Placed, Runtime};
use crate::cuda::driver::Context;
use crate::cuda::real::{real, SUCCESS};
use crate::report::demangle;

/// Devices something was said about: bit `d` for device `d` (below 63), bit 63 for
/// work in a context the runtime does not work in (or a device number past 62).
#[derive(Debug, Default)]
pub(crate) struct SaidOnce(AtomicU64);

impl SaidOnce {
    /// Whether this is the first time for `device` (`None`: a context the runtime does
    /// not work in); marks it said.
    fn first(&self, device: Option<i32>) -> bool {
        let bit = match device {
            Some(d) if (0..63).contains(&d) => 1u64 << d,
            _ => 1u64 << 63,
        };
        self.0.fetch_or(bit, Ordering::AcqRel) & bit == 0
    }
}

/// "on device D", or "in a context cusafe does not work in".
fn place(not: &NotServed) -> String {
    if not.other_context {
        "in a context cusafe does not work in".to_string()
    } else {
        format!("on device {}", not.device)
    }
}

/// The key a warning is said once under: the device, or none for another context.
fn said_key(not: &NotServed) -> Option<i32> {
    (!not.other_context).then_some(not.device)
}

/// The calling thread's current device as the runtime API sees it (only from runtime
/// API hooks: libcudart is loaded then).
pub(super) fn current_device() -> Option<i32> {
    let mut d = -1;
    // SAFETY: writes one int.
    let e = unsafe { real().cudaGetDevice(&mut d) };
    (e == SUCCESS).then_some(d)
}

impl Runtime {
    /// The heap and the device for an allocation call `api` on the calling thread's
    /// current device; on a device that cannot be served the allocation passes through
    /// untagged, and the first one there says so.
    pub fn heap_to_allocate(&self, api: &str) -> Option<(&Heap, i32)> {
        let h = self.heap()?;
        let d = current_device()?;
        self.allocate_where(api, h, d, self.served_on_device(h, d))
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
        self.allocate_where(api, h, d, self.served_in_context(h, d, ctx))
    }

    /// `(h, device)` when `placed` is served; else says, once per device, that
    /// allocations there are not tagged and so not checked.
    fn allocate_where<'h>(
        &self,
        api: &str,
        h: &'h Heap,
        device: i32,
        placed: Placed,
    ) -> Option<(&'h Heap, i32)> {
        let not = match placed {
            Ok(_) => return Some((h, device)),
            Err(not) => not,
        };
        if self.untagged_said.first(said_key(&not)) {
            self.warn(&format!(
                "{api} {}: cusafe cannot tag memory there ({}), so this and later \
                 allocations there are not checked for overflows or use after free; allocate \
                 in each device's primary context (what the CUDA runtime API uses), or run \
                 one process per device (CUDA_VISIBLE_DEVICES=N)",
                place(&not),
                not.why
            ));
        }
        None
    }

    /// Before the launch of instrumented `kernel` where the runtime does not serve
    /// (`not`): warns, once per device.
    pub fn note_launch_device(&self, kernel: Kernel, not: &NotServed) {
        if !self.launch_said.first(said_key(not)) {
            return;
        }
        let name = self
            .layouts
            .name(kernel)
            .map_or_else(|| "an instrumented kernel".to_string(), |n| demangle(&n));
        self.warn(&format!(
            "{name} launched {}: cusafe does not serve it ({}), so a failing check or a \
             tracked local there may fault with an illegal address instead of a report, and \
             memory there is not checked; launch in each device's primary context (what the \
             CUDA runtime API uses), or run one process per device (CUDA_VISIBLE_DEVICES=N)",
            place(not),
            not.why
        ));
    }
}
