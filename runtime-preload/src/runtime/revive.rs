//! After `cudaDeviceReset` (or the destruction of the runtime's context): the reset
//! took the windows, every mapping, the runtime page, the report page's registration,
//! the private stream and the device heap's arena. The first hooked call that needs
//! the device side afterwards (an allocation, a free, a launch, a checked copy or set)
//! sets it all up again in the (new) context of the runtime's device, so that tagging,
//! the checks and device reports work after the reset as before. Blocks live at the
//! reset were freed by it: they stay in the table as freed (a later use or free of a
//! pre-reset pointer is reported, and they are not leaks), and their addresses are not
//! handed out again while unused ones remain.
//!
//! If setting up fails, one warning says so and tagging stays off for the rest of the
//! process (allocations pass through). A call on another device waits: the set-up
//! happens at the next call on the runtime's device.

use std::sync::atomic::Ordering;

use super::{Runtime, STARTING};
use crate::cuda::driver::Context;
use crate::cuda::real::{try_real, SUCCESS};
use crate::cuda::rtpage::{drop_runtime_page, install_runtime_page, reserve_runtime_window};
use crate::report::page::PageReader;
use cusafe_format::rtpage::RTPAGE_ADDR;

/// Why the set-up did not happen now.
enum NotNow {
    /// The calling thread works on another device: try again at a later call.
    OtherDevice,
    /// It failed: tagging stays off.
    Failed(String),
}

impl Runtime {
    /// Sets the device side up again if a reset destroyed it (one atomic load when not).
    pub(super) fn revive_if_reset(&self) {
        if !self.reset.load(Ordering::Acquire)
            || self.revive_failed.load(Ordering::Relaxed)
            || STARTING.with(|s| s.get())
        {
            return;
        }
        let _one = self.revive_lock.lock().unwrap_or_else(|e| e.into_inner());
        if !self.reset.load(Ordering::Acquire) || self.revive_failed.load(Ordering::Relaxed) {
            return;
        }
        // The set-up's own CUDA calls reach the hooks: they pass through.
        STARTING.with(|s| s.set(true));
        let done = self.revive();
        STARTING.with(|s| s.set(false));
        match done {
            Ok(()) => {
                self.reset.store(false, Ordering::Release);
                self.trace(1, || {
                    "set up again after cudaDeviceReset: windows, runtime page and report page"
                        .into()
                });
            }
            Err(NotNow::OtherDevice) => {}
            Err(NotNow::Failed(why)) => {
                self.revive_failed.store(true, Ordering::Relaxed);
                self.warn(&format!(
                    "cudaDeviceReset destroyed cusafe's address windows and they cannot be set \
                     up again ({why}): allocations from now on are untagged (no checks)"
                ));
            }
        }
    }

    fn revive(&self) -> Result<(), NotNow> {
        let Some(h) = self.heap.as_ref() else {
            return Ok(());
        };
        // Records written before the reset are still on the page: take them first.
        self.after_call(SUCCESS);
        // cudart makes its primary context again at its next call; a driver-API program
        // has made (and made current) its new context itself.
        if let Ok(r) = try_real() {
            // SAFETY: the real cudaFree(NULL) only initialises the runtime and its context.
            let e = unsafe { r.cudaFree(std::ptr::null_mut()) };
            if e != SUCCESS {
                return Err(NotNow::Failed(format!(
                    "the CUDA runtime failed to initialise again (error {e})"
                )));
            }
        }
        let failed = |e: crate::alloc::BackendError| NotNow::Failed(e.to_string());
        let ctx = Context::current().map_err(failed)?;
        if Context::device().map_err(failed)? != h.device {
            return Err(NotNow::OtherDevice);
        }
        h.ctx.store(ctx.raw(), Ordering::Release);
        let _ctx = ctx.enter();
        h.lock().backend_mut().set_context(h.device, ctx);
        // The reset put the context's limits back to the driver's.
        self.stack_after_reset();
        h.writes.renew().map_err(failed)?;
        let arena = self.take_device_heap();
        let mut a = h.lock();
        // The arena and the runtime page live in windows: gone before the windows go.
        if let Some(arena) = arena {
            arena.give_back(a.backend_mut());
        }
        drop_runtime_page(a.backend_mut(), h.rtpage.swap(0, Ordering::AcqRel));
        a.after_reset()
            .map_err(|e| NotNow::Failed(format!("cannot reserve the windows again ({e})")))?;
        if let Some((page, reader)) = &self.page {
            *reader.lock().unwrap_or_else(|e| e.into_inner()) = PageReader::new();
            let flags = self.options.device_flags();
            let installed = page.register_again().and_then(|at| {
                reserve_runtime_window(a.backend_mut())?;
                install_runtime_page(a.backend_mut(), RTPAGE_ADDR, h.device, at, flags)
            });
            match installed {
                Ok(handle) => h.rtpage.store(handle, Ordering::Release),
                Err(why) => {
                    drop(a);
                    self.warn_no_reports(&why);
                }
            }
        }
        // Nothing launched before the reset is running; the arena is to be made again.
        self.synced
            .store(self.launches.load(Ordering::Acquire), Ordering::Release);
        self.unsynced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clear();
        self.fault_noted.store(false, Ordering::Relaxed);
        self.layouts.forget_functions();
        Ok(())
    }
}
