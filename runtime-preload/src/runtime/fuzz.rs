//! The hand-off of device edge coverage to a fuzzer (`hooks/fuzz.rs` exports it): the
//! fuzzer attaches its device-edge map (a host buffer); after each input, and once more
//! at exit, the runtime waits for the device, merges the runtime page's coverage map
//! into that buffer, zeroes the map and polls the report page.

use std::sync::atomic::Ordering;
use std::sync::Mutex;

use super::{initialized, Runtime, Wait};
use crate::alloc::BackendError;
use crate::cuda::coverage::{read_map, MAP_ADDR, MAP_BYTES};
use crate::cuda::driver::code;
use crate::cuda::real::{CudaError, SUCCESS};

/// The attached map.
struct Attached {
    /// The fuzzer's buffer, `len` bytes.
    sink: *mut u8,
    len: usize,
    /// Where the device map is copied before it is merged (allocated at attach, so that
    /// collecting allocates nothing).
    staging: Box<[u8]>,
}

impl Attached {
    /// Copies the device map into the staging buffer and ors it into the sink (the
    /// caller holds the context and waited for the device).
    fn merge(&mut self) -> Result<(), BackendError> {
        read_map(&mut self.staging)?;
        // SAFETY: attach's promise: `len` writable bytes.
        let sink = unsafe { std::slice::from_raw_parts_mut(self.sink, self.len) };
        for (s, d) in sink.iter_mut().zip(self.staging.iter()) {
            *s |= *d;
        }
        Ok(())
    }
}

// SAFETY: the sink is a plain host buffer the fuzzer promised to keep (for the whole
// process); it is only touched under the mutex.
unsafe impl Send for Attached {}

static ATTACHED: Mutex<Option<Attached>> = Mutex::new(None);

fn attached() -> std::sync::MutexGuard<'static, Option<Attached>> {
    ATTACHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// Remembers the fuzzer's device-edge map: `len` bytes at `sink` (null or 0 detaches).
/// No CUDA call.
///
/// # Safety
/// `sink` must point to `len` writable bytes that stay valid for the rest of the
/// process (or until the next attach).
pub unsafe fn attach(sink: *mut u8, len: usize) {
    *attached() = (!sink.is_null() && len > 0).then(|| Attached {
        sink,
        len,
        staging: vec![0; len.min(MAP_BYTES)].into_boxed_slice(),
    });
}

/// At exit: one last [`collect`] when a map is attached. The map's lock is taken as
/// `wait` says (another thread may be inside `collect`, waiting for a kernel that still
/// runs): when it stays busy, nothing is collected.
pub(super) fn collect_at_exit(wait: Wait) {
    let Some(rt) = initialized() else {
        return;
    };
    if let Some(mut guard) = wait.lock(&ATTACHED) {
        if let Some(att) = guard.as_mut() {
            rt.collect_into(Some(att), wait);
        }
    }
}

/// A negative status for CUDA error `e` (-1 for errors without a code).
fn failed(e: i32) -> i32 {
    -(e.max(1))
}

/// After an input: waits for the device, merges the device map into the attached one
/// (an `or`: the fuzzer clears its map before each input, and a second collection of
/// one input, e.g. the harness's and then the exit's, adds nothing and loses nothing),
/// zeroes the device map and polls the report page. Returns 0, also when the runtime
/// never started (no kernel can have run) or has no runtime page; minus the CUDA error
/// code when waiting for, reading or zeroing the device fails (after a trap or fault,
/// the dead context's sticky error: the caller ends the process). In halt mode a device
/// report ends the process here, after the merge when the context still works.
pub fn collect() -> i32 {
    let Some(rt) = initialized() else {
        return 0;
    };
    let mut guard = attached();
    rt.collect_into(guard.as_mut(), Wait::Block)
}

impl Runtime {
    fn collect_into(&self, att: Option<&mut Attached>, wait: Wait) -> i32 {
        // A forked child of a process with a context cannot use CUDA.
        if std::process::id() != self.pid {
            return 0;
        }
        let Some(h) = self.heap().filter(|_| self.page.is_some()) else {
            self.poll(SUCCESS, wait);
            return 0;
        };
        let (err, status) = {
            let _ctx = h.ctx().enter();
            let seen = self.launches.load(Ordering::Acquire);
            // SAFETY: waits for the runtime's context.
            let err: CudaError = code(unsafe { cudarc::driver::sys::cuCtxSynchronize() });
            let status = if err != SUCCESS {
                failed(err)
            } else {
                self.synced.fetch_max(seen, Ordering::AcqRel);
                let merged = att.map_or(Ok(()), Attached::merge);
                match merged.and_then(|()| h.writes.zero_now(MAP_ADDR, MAP_BYTES as u64)) {
                    Ok(()) => 0,
                    Err(e) => failed(e.code),
                }
            };
            (err, status)
        };
        self.poll(err, wait);
        status
    }
}
