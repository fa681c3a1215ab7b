//! Stream captures in progress, and the frees put off while one is.
//!
//! While a stream is being captured into a graph, a device-wide wait
//! (`cuCtxSynchronize`) fails with `CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED` and
//! invalidates the capture, whatever thread waits and whatever the capture's mode. A
//! `cudaFree` of a tagged block waits for the device after a launch, and freeing may
//! unmap memory, which waits too; so while a capture is in progress the free is
//! *deferred*: a double or invalid free is still refused and reported at once, anything
//! else is recorded (pointer, API, call site) and answered with success. The next free,
//! `cudaDeviceSynchronize` or `cuCtxSynchronize` that finds no capture in progress
//! completes the deferred frees, oldest first (after a wait for the device if a kernel
//! was launched since the last one). Blocks still deferred at exit are not leaks (not
//! freed then either: that would mean waiting for the device at exit). Until its free
//! completes a block reads as live: a use after it is not reported.
//!
//! The count is exact for captures begun and ended through the runtime API's hooks
//! (`hooks/capture.rs`): a capture counts from the start of its begin call (frees that
//! start later defer; the begin waits for frees already under way, so none of their
//! waits can meet the capture) until its end call returns, unless the stream is still
//! capturing then (an end called from the wrong thread).

use std::backtrace::Backtrace;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};

use cudarc::driver::sys as cu;

use super::{is_forked_child, Heap, Runtime, Wait};
use crate::alloc::{BlockInfo, FreeError};
use crate::cuda::driver::driver_present;
use crate::cuda::real::{CudaError, INVALID_VALUE, SUCCESS};
use crate::report::host::free_report;

/// A free put off until no capture is in progress.
struct Deferred {
    /// The API that freed (for reports).
    api: &'static str,
    /// The block's payload pointer.
    ptr: u64,
    /// Where it was freed (with `alloc_backtrace=1`).
    site: Option<Arc<Backtrace>>,
}

struct State {
    /// Begin calls that have started and not returned (each counts as a capture).
    beginning: usize,
    /// Streams whose capture began through a hook and has not ended, once per capture
    /// (the per-thread default stream's handle may be capturing in several threads).
    streams: Vec<usize>,
    /// Frees (and completions) going ahead now: [`Open`] guards.
    open: usize,
    /// Deferred frees, oldest first.
    deferred: Vec<Deferred>,
}

impl State {
    fn capturing(&self) -> bool {
        self.beginning > 0 || !self.streams.is_empty()
    }
}

static STATE: Mutex<State> = Mutex::new(State {
    beginning: 0,
    streams: Vec::new(),
    open: 0,
    deferred: Vec::new(),
});
/// Signalled when the last [`Open`] guard goes.
static CLOSED: Condvar = Condvar::new();
/// Captures past their begin's wait for open frees and not ended (read without the
/// lock by the VMM backend).
static ACTIVE: AtomicUsize = AtomicUsize::new(0);

fn state() -> MutexGuard<'static, State> {
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Whether a capture may be in progress, so that a device-wide wait now could break it
/// (no free is going ahead then: only an allocation can be waiting for the device).
pub(crate) fn active() -> bool {
    ACTIVE.load(Ordering::Acquire) > 0
}

/// Runs `call`, the real begin of a capture on `stream` (`cudaStreamPerThread` for the
/// per-thread default stream), counting the capture from now; it stays counted when
/// `call` succeeds.
pub(crate) fn begin(stream: usize, call: impl FnOnce() -> CudaError) -> CudaError {
    if is_forked_child() {
        return call();
    }
    let mut s = state();
    s.beginning += 1;
    while s.open > 0 {
        s = CLOSED.wait(s).unwrap_or_else(|e| e.into_inner());
    }
    ACTIVE.fetch_add(1, Ordering::AcqRel);
    drop(s);
    let e = call();
    let mut s = state();
    s.beginning -= 1;
    if e == SUCCESS {
        s.streams.push(stream);
    } else {
        ACTIVE.fetch_sub(1, Ordering::AcqRel);
    }
    e
}

/// Runs `call`, the real end of the capture on `stream`; the capture stops counting
/// when the call returns, whatever it returns, unless the stream is still capturing.
pub(crate) fn end(stream: usize, call: impl FnOnce() -> CudaError) -> CudaError {
    if is_forked_child() {
        return call();
    }
    let e = call();
    if e != SUCCESS && state().streams.contains(&stream) && still_capturing(stream) {
        return e;
    }
    let mut s = state();
    if let Some(i) = s.streams.iter().position(|&x| x == stream) {
        s.streams.swap_remove(i);
        ACTIVE.fetch_sub(1, Ordering::AcqRel);
    }
    e
}

/// Whether the driver says `stream` is capturing (active or invalidated).
fn still_capturing(stream: usize) -> bool {
    if !driver_present() {
        return false;
    }
    let mut status = cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
    // SAFETY: writes one status.
    let r = unsafe { cu::cuStreamIsCapturing(stream as cu::CUstream, &mut status) };
    r == cu::CUresult::CUDA_SUCCESS
        && status != cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
}

/// A free (or a completion of deferred ones) going ahead while no capture is in
/// progress, holding the frees it took over; a begin waits until it is dropped. Frees
/// still held then (a wait failed) go back to the front of the list.
pub(crate) struct Open {
    deferred: Vec<Deferred>,
}

impl Open {
    /// Goes ahead when no capture is in progress, taking the deferred frees over;
    /// otherwise the state, still locked.
    fn new() -> Result<Open, MutexGuard<'static, State>> {
        let mut s = state();
        if s.capturing() {
            return Err(s);
        }
        s.open += 1;
        Ok(Open {
            deferred: std::mem::take(&mut s.deferred),
        })
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        let mut s = state();
        if !self.deferred.is_empty() {
            s.deferred.splice(0..0, self.deferred.drain(..));
        }
        s.open -= 1;
        if s.open == 0 {
            CLOSED.notify_all();
        }
    }
}

/// Forgets the captures and the deferred frees: `cudaDeviceReset` destroys the streams
/// and frees every block.
pub(super) fn forget_at_reset() {
    let mut s = state();
    ACTIVE.fetch_sub(s.streams.len(), Ordering::AcqRel);
    s.streams.clear();
    s.deferred.clear();
}

/// The blocks whose free is still deferred (not leaks), or `None` when the lock was not
/// free by `wait`'s deadline.
pub(super) fn deferred_blocks(wait: Wait) -> Option<Vec<u64>> {
    wait.lock(&STATE)
        .map(|s| s.deferred.iter().map(|d| d.ptr).collect())
}

impl Runtime {
    /// Readies the free of the tagged pointer `p` by `api`. `Ok`: free it now, holding
    /// the guard until it is freed; the device was waited for if a kernel was launched
    /// since the last wait, and deferred frees were completed first. `Err`: the code to
    /// return, when the free was deferred (success), refused (reported) or the wait
    /// failed.
    pub fn free_or_defer(&self, api: &'static str, p: u64, heap: &Heap) -> Result<Open, CudaError> {
        let mut open = Open::new().map_err(|s| self.defer(api, p, heap, s))?;
        if self.launched_since_sync() {
            let e = self.device_sync();
            if e != SUCCESS {
                return Err(self.after_api(api, e));
            }
        }
        self.complete(&mut open, heap);
        Ok(open)
    }

    /// Completes the deferred frees if there are any and no capture is in progress
    /// (waiting for the device first if a kernel was launched since the last wait).
    pub fn complete_deferred(&self) {
        let Some(heap) = self.heap() else {
            return;
        };
        if state().deferred.is_empty() {
            return;
        }
        if let Ok(mut open) = Open::new() {
            if !self.launched_since_sync() || self.device_sync() == SUCCESS {
                self.complete(&mut open, heap);
            }
        }
    }

    /// Frees the tagged block at `p` for `api` (the caller waited for kernels that may
    /// use it): `SUCCESS`, also when giving the memory back failed (a warning), or
    /// `cudaErrorInvalidValue` after reporting a double or invalid free.
    pub fn free_block(
        &self,
        api: &'static str,
        p: u64,
        heap: &Heap,
        site: Option<Arc<Backtrace>>,
    ) -> CudaError {
        match heap.free(p, site) {
            Ok(b) => {
                self.trace(2, || {
                    format!("{api}({p:#x}) (buffer #{}, {} bytes)", b.id, b.size)
                });
                SUCCESS
            }
            Err(FreeError::Backend { block, error }) => {
                self.warn(&format!(
                    "freeing buffer #{} at {p:#x}: {error}; later uses of it may go unreported",
                    block.id
                ));
                SUCCESS
            }
            Err(e) => {
                if let Some(r) = free_report(api, &e) {
                    self.report(r);
                }
                INVALID_VALUE
            }
        }
    }

    /// Frees what `open` took over, oldest first (no kernel launched before now runs).
    fn complete(&self, open: &mut Open, heap: &Heap) {
        for d in std::mem::take(&mut open.deferred) {
            self.trace(2, || {
                format!("{}({:#x}): completing the deferred free", d.api, d.ptr)
            });
            self.free_block(d.api, d.ptr, heap, d.site);
        }
    }

    /// Defers the free of `p` by `api` while a capture is in progress (`s`, locked):
    /// success, or `cudaErrorInvalidValue` after reporting a double free (also
    /// of a block whose free is deferred) or an invalid one.
    fn defer(
        &self,
        api: &'static str,
        p: u64,
        heap: &Heap,
        mut s: MutexGuard<'static, State>,
    ) -> CudaError {
        let err = match heap.check_free(p) {
            Err(e) => e,
            Ok(block) => match s.deferred.iter().find(|d| d.ptr == p) {
                Some(d) => FreeError::DoubleFree {
                    block: BlockInfo {
                        freed: true,
                        free_site: d.site.clone(),
                        ..block
                    },
                },
                None => {
                    s.deferred.push(Deferred {
                        api,
                        ptr: p,
                        site: self.site(),
                    });
                    drop(s);
                    self.trace(2, || {
                        format!(
                            "{api}({p:#x}) (buffer #{}, {} bytes) deferred: a stream capture is in progress",
                            block.id, block.size
                        )
                    });
                    return SUCCESS;
                }
            },
        };
        drop(s);
        if let Some(r) = free_report(api, &err) {
            self.report(r);
        }
        INVALID_VALUE
    }
}
