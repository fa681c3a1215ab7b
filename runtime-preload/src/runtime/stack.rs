//! The stack limit per GPU thread (`CUSAFE_OPTIONS=stack_size`): a size the user gave,
//! set at start and after a reset; or, by default, the context's limit multiplied by
//! `cusafe_format::stack::SCALE` once, at the first launch of a kernel whose module
//! the pass marked as recursive or calling through pointers (the driver cannot size
//! such a kernel's stack, and instrumented frames are larger than plain ones).

use std::sync::atomic::Ordering;

use cudarc::driver::sys as cu;
use cusafe_format::stack::SCALE;

use super::{capture, Runtime};
use crate::options::StackSize;

const LIMIT: cu::CUlimit = cu::CUlimit::CU_LIMIT_STACK_SIZE;

impl Runtime {
    /// Sets the stack per GPU thread of the current context to `stack_size` (when it
    /// gives bytes); says so when the driver refuses.
    pub(super) fn apply_stack_size(&self) {
        let StackSize::Bytes(bytes) = self.options.stack_size else {
            return;
        };
        // SAFETY: sets one limit of the current context.
        let r = unsafe { cu::cuCtxSetLimit(LIMIT, bytes as usize) };
        if r != cu::CUresult::CUDA_SUCCESS {
            self.warn(&format!(
                "CUSAFE_OPTIONS=stack_size={bytes}: the driver refused it ({r:?}); kernels keep the default stack; try a smaller value"
            ));
        }
    }

    /// Before a launch of a kernel whose stack the driver cannot size: with
    /// `stack_size=auto`, raises the context's limit once (until a reset). Not while a
    /// stream capture is in progress (a later launch outside one does it).
    pub(super) fn ensure_dynamic_stack(&self) {
        if self.options.stack_size != StackSize::Auto
            || self.stack_raised.load(Ordering::Acquire)
            || capture::active()
        {
            return;
        }
        if self.stack_raised.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut now = 0usize;
        // SAFETY: reads one limit of the current context.
        let r = unsafe { cu::cuCtxGetLimit(&mut now, LIMIT) };
        let want = now.saturating_mul(SCALE);
        let r = if r == cu::CUresult::CUDA_SUCCESS {
            // SAFETY: sets one limit of the current context.
            unsafe { cu::cuCtxSetLimit(LIMIT, want) }
        } else {
            r
        };
        if r == cu::CUresult::CUDA_SUCCESS {
            self.trace(1, || {
                format!(
                    "stack: {now} -> {want} bytes per GPU thread for kernels that recurse or \
                     call through pointers (instrumented frames are larger)"
                )
            });
        } else {
            self.warn(&format!(
                "cannot raise the GPU stack limit from {now} to {want} bytes per thread for \
                 kernels that recurse or call through pointers ({r:?}); if one fails with \
                 error 719 or 700, set CUSAFE_OPTIONS=stack_size=BYTES or call \
                 cudaDeviceSetLimit(cudaLimitStackSize, ...) in the program"
            ));
        }
    }

    /// After a reset: the context's limits are the driver's again.
    pub(super) fn stack_after_reset(&self) {
        self.stack_raised.store(false, Ordering::Release);
        self.apply_stack_size();
    }
}
