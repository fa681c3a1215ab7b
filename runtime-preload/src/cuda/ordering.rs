//! Ordering the runtime's own device writes (block headers, slab header zeroing)
//! before the kernels that read them.
//!
//! The writes go to a private non-blocking stream, so they never touch the legacy
//! stream (which would break stream capture and serialise with the program's work).
//! Each write bumps a generation counter. Before a launch, when the launch stream has
//! not yet waited for the latest generation, an event is recorded on the private
//! stream and the launch stream waits for it (`cuStreamWaitEvent`, no host stall).
//! Launches with nothing new to wait for cost one atomic load.

use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

use cudarc::driver::sys as cu;

use super::driver::{check, Context};
use crate::alloc::{BackendError, Fill};

/// `CU_STREAM_PER_THREAD`: one handle, a different stream in every thread.
const PER_THREAD_STREAM: usize = 2;
/// Forget per-stream state beyond this many streams (handles of destroyed streams).
const MAX_TRACKED_STREAMS: usize = 4096;

thread_local! {
    /// Generation the calling thread's per-thread default stream last waited for.
    static PER_THREAD_WAITED: Cell<u64> = const { Cell::new(0) };
}

struct State {
    /// Generation covered by the last event record.
    recorded: u64,
    /// Generation each stream last waited for.
    waited: FxHashMap<usize, u64>,
}

/// The private write stream and its ordering state.
pub struct HeaderStream {
    /// The stream (`CUstream`); replaced by [`HeaderStream::renew`] after a reset.
    stream: AtomicPtr<cu::CUstream_st>,
    /// The event (`CUevent`), replaced with the stream.
    event: AtomicPtr<cu::CUevent_st>,
    generation: AtomicU64,
    state: Mutex<State>,
}

// SAFETY: stream and event handles are process-wide and usable from any thread; the
// mutable state is behind the mutex and the atomic.
unsafe impl Send for HeaderStream {}
// SAFETY: as above.
unsafe impl Sync for HeaderStream {}

impl HeaderStream {
    /// Creates the stream and event in the current context.
    pub fn new() -> Result<HeaderStream, BackendError> {
        let (stream, event) = create()?;
        Ok(HeaderStream {
            stream: AtomicPtr::new(stream),
            event: AtomicPtr::new(event),
            generation: AtomicU64::new(0),
            state: Mutex::new(State {
                recorded: 0,
                waited: FxHashMap::default(),
            }),
        })
    }

    /// Replaces the stream and event, which died with their context
    /// (`cudaDeviceReset`), by new ones in the current context. The old handles are
    /// not destroyed (the driver already did). Every stream waits once more before its
    /// next launch (harmless: nothing is pending on the new stream).
    pub fn renew(&self) -> Result<(), BackendError> {
        let (stream, event) = create()?;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        self.stream.store(stream, Ordering::Release);
        self.event.store(event, Ordering::Release);
        st.recorded = 0;
        st.waited.clear();
        self.generation.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// Writes issued so far (a count that only grows; 0: none).
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The private stream.
    fn stream(&self) -> cu::CUstream {
        self.stream.load(Ordering::Acquire)
    }

    /// Issues `f` on the private stream (the caller holds the context).
    pub fn fill(&self, f: Fill) -> Result<(), BackendError> {
        // SAFETY: plain driver calls on mapped device memory.
        let r = unsafe {
            if f.rows <= 1 {
                cu::cuMemsetD32Async(f.va, f.value, f.words as usize, self.stream())
            } else {
                cu::cuMemsetD2D32Async(
                    f.va,
                    f.pitch as usize,
                    f.value,
                    f.words as usize,
                    f.rows as usize,
                    self.stream(),
                )
            }
        };
        check("cuMemsetD32Async", r)?;
        self.generation.fetch_add(1, Ordering::Release);
        Ok(())
    }

    /// Zeroes `bytes` bytes (a multiple of 4) at `va` on the private stream and waits
    /// for the stream (the caller holds the context): the memory is zero when this
    /// returns, for every later kernel whatever path launches it, so no generation is
    /// bumped.
    pub fn zero_now(&self, va: u64, bytes: u64) -> Result<(), BackendError> {
        // SAFETY: plain driver calls on mapped device memory and our own stream.
        let r = unsafe { cu::cuMemsetD32Async(va, 0, (bytes / 4) as usize, self.stream()) };
        check("cuMemsetD32Async", r)?;
        // SAFETY: our own stream.
        check("cuStreamSynchronize", unsafe {
            cu::cuStreamSynchronize(self.stream())
        })
    }

    /// Waits for every write issued so far (the caller holds the context).
    pub fn wait(&self) -> Result<(), BackendError> {
        // SAFETY: our own stream.
        check("cuStreamSynchronize", unsafe {
            cu::cuStreamSynchronize(self.stream())
        })
    }

    /// Copies `dst.len()` bytes from device address `src` on the private stream and
    /// waits for that stream only (the caller holds the context): unlike a synchronous
    /// copy, this does not wait for kernels still running on the program's streams.
    pub fn read_now(&self, dst: &mut [u8], src: u64) -> Result<(), BackendError> {
        // SAFETY: `dst` is writable for its length; `src` is mapped device memory.
        let r = unsafe {
            cu::cuMemcpyDtoHAsync_v2(dst.as_mut_ptr().cast(), src, dst.len(), self.stream())
        };
        check("cuMemcpyDtoHAsync", r)?;
        // SAFETY: our own stream.
        check("cuStreamSynchronize", unsafe {
            cu::cuStreamSynchronize(self.stream())
        })
    }

    /// Makes `stream` (a `cudaStream_t` as passed to a launch in context `ctx`) wait for
    /// every write issued so far. Skipped for a stream being captured into a graph (the
    /// graph runs later, after the writes). Errors are ignored: at worst a kernel reads a
    /// header a moment early, which the caller cannot fix either. `ctx` is made current
    /// only when the stream has writes to wait for: most launches have none, and then
    /// cost no driver call here.
    pub fn order_before(&self, stream: usize, ctx: Context) {
        let g = self.generation.load(Ordering::Acquire);
        if g == 0 {
            return;
        }
        let per_thread = stream == PER_THREAD_STREAM;
        let mut st = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let waited = if per_thread {
            PER_THREAD_WAITED.with(Cell::get)
        } else {
            st.waited.get(&stream).copied().unwrap_or(0)
        };
        if waited >= g {
            return;
        }
        let _ctx = ctx.enter();
        let s = stream as cu::CUstream;
        // SAFETY: `s` is the program's stream handle (or a special handle the driver
        // accepts); event and private stream are ours.
        unsafe {
            let mut status = cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE;
            let r = cu::cuStreamIsCapturing(s, &mut status);
            if r != cu::CUresult::CUDA_SUCCESS
                || status != cu::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE
            {
                return;
            }
            let event = self.event.load(Ordering::Acquire);
            if st.recorded < g {
                if cu::cuEventRecord(event, self.stream()) != cu::CUresult::CUDA_SUCCESS {
                    return;
                }
                st.recorded = g;
            }
            if cu::cuStreamWaitEvent(s, event, 0) != cu::CUresult::CUDA_SUCCESS {
                return;
            }
        }
        let covered = st.recorded;
        if per_thread {
            PER_THREAD_WAITED.with(|c| c.set(covered));
        } else {
            if st.waited.len() >= MAX_TRACKED_STREAMS {
                st.waited.clear();
            }
            st.waited.insert(stream, covered);
        }
    }
}

/// A non-blocking stream and a timing-free event in the current context.
fn create() -> Result<(cu::CUstream, cu::CUevent), BackendError> {
    let mut stream = std::ptr::null_mut();
    let mut event = std::ptr::null_mut();
    // SAFETY: each call writes one handle.
    unsafe {
        check(
            "cuStreamCreate",
            cu::cuStreamCreate(
                &mut stream,
                cu::CUstream_flags::CU_STREAM_NON_BLOCKING as u32,
            ),
        )?;
        check(
            "cuEventCreate",
            cu::cuEventCreate(
                &mut event,
                cu::CUevent_flags::CU_EVENT_DISABLE_TIMING as u32,
            ),
        )?;
    }
    Ok((stream, event))
}
