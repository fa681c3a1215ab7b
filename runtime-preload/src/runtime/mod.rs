//! The process-wide runtime: started by the first hooked call that needs it (never by
//! a library constructor), then shared by all hooks.
//!
//! * `start`: the start-up sequence and its fallbacks.
//! * `findings`: polling the report page, host reports, halting, the exit check.
//! * `windows`: the launch-time windows appended to instrumented kernels' arguments.
//! * `fuzz`: device coverage handed to a fuzzer after each input.
//! * `leaks`: the leak policy at exit.
//! * `revive`: setting the device side up again after `cudaDeviceReset`.
//! * `capture`: stream captures in progress, and the frees deferred while one is.
//! * `devices`: the devices served besides the one the runtime started on.
//! * `elsewhere`: allocations and instrumented launches the runtime does not serve
//!   (not checked, and said once per device).
//!
//! A child forked after the runtime started sees no runtime (`get` and `initialized`
//! answer `None`): every hook passes its call through, so CUDA's own error for a child
//! of an initialised process reaches the program, and the parent's blocks, reports and
//! locks are left alone (its exit check included).

use std::backtrace::Backtrace;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, TryLockError};
use std::time::{Duration, Instant};

use cudarc::driver::sys as cu;

use cusafe_format::pointer::{is_cusafe, is_poisoned};

use crate::alloc::{AllocError, Allocator, BlockInfo, BlockTable, FreeError, Stats};
use crate::cuda::driver::{code, Context};
use crate::cuda::ordering::HeaderStream;
use crate::cuda::real::{real, CudaError, SUCCESS};
use crate::cuda::rtpage::ReportPage;
use crate::cuda::vmm::VmmBackend;
use crate::options::Options;
use crate::report::demangle;
use crate::report::page::PageReader;
use crate::report::sink::Sink;

pub(crate) mod capture;
mod devheap;
mod devices;
mod elsewhere;
mod findings;
pub(crate) mod fuzz;
mod leaks;
mod resources;
mod revive;
mod stack;
mod start;
mod windows;

pub(crate) use devices::Placed;
pub(crate) use resources::OUT_OF_RESOURCES;
pub(crate) use windows::Kernel;

/// Pitch alignment of `cudaMallocPitch`/`cudaMalloc3D` rows at least (what the real
/// runtime returns on current GPUs).
const MIN_PITCH_ALIGN: u64 = 512;
/// Distinct kernels remembered as launched since the last synchronisation.
const UNSYNCED_KEPT: usize = 8;
/// Leaked blocks listed one by one at exit (the summary counts all).
const LEAKS_SHOWN: usize = 64;
/// How long the exit check waits, in all, for a lock that another thread holds: that
/// thread may be inside a CUDA call that does not return before the process ends (a
/// wait for a kernel that still runs when another thread calls `exit`).
const EXIT_LOCK_WAIT: Duration = Duration::from_secs(2);

/// How a lock is taken: as usual, or (in the exit check) giving up at a deadline.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Wait {
    /// Until the lock is free.
    Block,
    /// Until the lock is free or the instant has passed (then without it).
    Until(Instant),
}

impl Wait {
    /// The exit check's wait, from now.
    fn at_exit() -> Wait {
        Wait::Until(Instant::now() + EXIT_LOCK_WAIT)
    }

    /// `m` locked (a poisoned lock is taken as it is), or `None` at the deadline.
    fn lock<'a, T>(self, m: &'a Mutex<T>) -> Option<MutexGuard<'a, T>> {
        let deadline = match self {
            Wait::Block => return Some(m.lock().unwrap_or_else(|e| e.into_inner())),
            Wait::Until(d) => d,
        };
        loop {
            match m.try_lock() {
                Ok(g) => return Some(g),
                Err(TryLockError::Poisoned(e)) => return Some(e.into_inner()),
                Err(TryLockError::WouldBlock) if Instant::now() >= deadline => return None,
                Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(1)),
            }
        }
    }
}

/// Set in a child forked after the runtime started (`pthread_atfork`).
static FORKED: AtomicBool = AtomicBool::new(false);

extern "C" fn forked_child() {
    FORKED.store(true, Ordering::Relaxed);
}

/// Whether this process is a child forked after the runtime started.
pub(crate) fn is_forked_child() -> bool {
    FORKED.load(Ordering::Relaxed)
}

/// Tagged allocation: on the device the runtime started on (the home device), and on
/// the other devices it serves (`devices.rs`).
pub(crate) struct Heap {
    /// The home device.
    device: i32,
    /// The context's raw handle ([`Heap::ctx`]); a new one after a reset.
    ctx: AtomicPtr<c_void>,
    /// The runtime page's memory (0: none).
    rtpage: AtomicU64,
    /// Row alignment for pitched allocations.
    pub pitch_align: u64,
    /// The home device's memory in bytes (0: unknown).
    total_mem: u64,
    writes: Arc<HeaderStream>,
    alloc: Mutex<Allocator<VmmBackend>>,
    /// The other devices served.
    sides: devices::Sides,
    /// The process sees this one device only: a runtime API launch needs not ask
    /// which device is current (`cudaGetDevice` costs 90-190 ns a launch).
    only_device: bool,
}

impl Heap {
    fn lock(&self) -> MutexGuard<'_, Allocator<VmmBackend>> {
        self.alloc.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The heap's context.
    pub fn ctx(&self) -> Context {
        Context::from_raw(self.ctx.load(Ordering::Acquire))
    }

    /// Allocates a tagged block on `device` (the home device or a side).
    pub fn alloc(
        &self,
        size: u64,
        site: Option<Arc<Backtrace>>,
        device: i32,
    ) -> Result<BlockInfo, AllocError> {
        let _ctx = self.ctx().enter();
        self.lock().alloc(size, site, device)
    }

    /// The memory of `device` in bytes (0: unknown): the home device's, or a side's.
    pub fn total_mem(&self, device: i32) -> u64 {
        if device == self.device {
            self.total_mem
        } else {
            self.sides.total_mem(device)
        }
    }

    /// Frees a tagged block (the caller waited for kernels that may use it).
    pub fn free(&self, ptr: u64, site: Option<Arc<Backtrace>>) -> Result<BlockInfo, FreeError> {
        let _ctx = self.ctx().enter();
        self.lock().free(ptr, site)
    }

    /// The live block starting at `ptr`, or why [`Heap::free`] would refuse it (nothing
    /// is freed).
    pub fn check_free(&self, ptr: u64) -> Result<BlockInfo, FreeError> {
        self.lock().check_free(ptr).cloned()
    }

    /// Blocks not freed yet (`None`: the lock was not free by `wait`'s deadline).
    fn live_blocks(&self, wait: Wait) -> Option<Vec<BlockInfo>> {
        wait.lock(&self.alloc).map(|a| a.live_blocks())
    }

    fn stats(&self, wait: Wait) -> Option<Stats> {
        wait.lock(&self.alloc).map(|a| a.stats())
    }
}

/// The runtime.
pub(crate) struct Runtime {
    /// The parsed `CUSAFE_OPTIONS`.
    pub options: Options,
    sink: Sink,
    heap: Option<Heap>,
    page: Option<(ReportPage, Mutex<PageReader>)>,
    errors: AtomicU64,
    fault_noted: AtomicBool,
    /// `cudaDeviceReset` destroyed the heap's windows and mappings (and they were not
    /// set up again yet).
    reset: AtomicBool,
    /// The process that started the runtime (a forked child skips the exit check).
    pid: u32,
    /// Kernels launched through the hook so far.
    launches: AtomicU64,
    /// The kernel launched last through a hook ([`Kernel::pack`]; 0: none yet).
    last_kernel: AtomicU64,
    /// `launches` as of the last device-wide synchronisation that succeeded.
    synced: AtomicU64,
    /// The distinct kernels launched since then, each with its latest launch number,
    /// oldest first: the suspects of a fault that came without a finding.
    unsynced: Mutex<Vec<(u64, Kernel)>>,
    /// Kernel layouts for launch-time windows, learnt on first launch.
    layouts: windows::Layouts,
    /// Blocks left allocated on purpose (freed inside stream capture): not leaks.
    kept: Mutex<Vec<u64>>,
    /// The device heap's arena, once a kernel that allocates was launched: the classes
    /// it serves, or `None` when it could not be mapped (outer `None`: not tried since
    /// the start or the last reset).
    device_heap: Mutex<Option<Option<devheap::Arena>>>,
    /// The stack limit was raised for a kernel the driver cannot size (since the start
    /// or the last reset; `stack_size=auto`).
    stack_raised: AtomicBool,
    /// Held while the device side is set up again after a reset.
    revive_lock: Mutex<()>,
    /// Setting up again after a reset failed (said once): tagging stays off.
    revive_failed: AtomicBool,
    /// Devices where an allocation passed through untagged was said already.
    untagged_said: elsewhere::SaidOnce,
    /// Devices where a launch of an instrumented kernel was said already.
    launch_said: elsewhere::SaidOnce,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

thread_local! {
    /// Set while this thread runs the start-up (its CUDA calls must not re-enter it).
    static STARTING: Cell<bool> = const { Cell::new(false) };
}

/// The runtime, started on first use (and set up again after a reset); `None` when
/// called back from inside the start-up on the same thread, and in a forked child (the
/// hook then just passes the call through).
pub(crate) fn get() -> Option<&'static Runtime> {
    if let Some(rt) = started() {
        return Some(rt);
    }
    if STARTING.with(Cell::get) || is_forked_child() {
        return None;
    }
    STARTING.with(|s| s.set(true));
    let rt = RUNTIME.get_or_init(Runtime::start);
    STARTING.with(|s| s.set(false));
    Some(rt)
}

/// The runtime if it has started, set up again first if a reset destroyed its device
/// side (hooks that have nothing to do before the start: copies, sets).
pub(crate) fn started() -> Option<&'static Runtime> {
    let rt = initialized()?;
    rt.revive_if_reset();
    Some(rt)
}

/// The runtime if it has started (`None` in a forked child); never sets anything up
/// (syncs, polls, the exit check).
pub(crate) fn initialized() -> Option<&'static Runtime> {
    if is_forked_child() {
        return None;
    }
    RUNTIME.get()
}

impl Runtime {
    /// Prints a warning line.
    pub fn warn(&self, msg: &str) {
        self.sink.message(&format!("cusafe: warning: {msg}\n"));
    }

    /// Prints `msg()` when the verbosity is at least `level`.
    pub fn trace(&self, level: u32, msg: impl FnOnce() -> String) {
        if self.options.verbosity >= level {
            self.sink.message(&format!("cusafe: {}\n", msg()));
        }
    }

    /// The heap, if any (none after `cudaDeviceReset` until it is set up again).
    pub fn heap(&self) -> Option<&Heap> {
        self.heap
            .as_ref()
            .filter(|_| !self.reset.load(Ordering::Acquire))
    }

    /// `cudaDeviceReset` is about to destroy every allocation, the windows and the
    /// runtime page: until the next hooked call that needs them sets them up again
    /// (`revive`), allocations pass through untagged; blocks allocated before the reset
    /// are freed by it, not leaks.
    pub fn note_reset(&self) {
        if self.heap.is_some() {
            self.reset.store(true, Ordering::Release);
            capture::forget_at_reset();
        }
    }

    /// `cudaDeviceReset` on the calling thread's current device: the home device's
    /// reset as [`Runtime::note_reset`], another device's as
    /// [`Runtime::note_side_reset`].
    pub fn note_reset_here(&self) {
        match (elsewhere::current_device(), self.heap_device()) {
            (Some(d), Some(home)) if d != home => self.note_side_reset(d),
            _ => self.note_reset(),
        }
    }

    /// The heap, if it serves the calling thread's current device (allocations on
    /// other devices pass through untagged).
    pub fn heap_here(&self) -> Option<&Heap> {
        let h = self.heap()?;
        let mut d = -1;
        // SAFETY: writes one int.
        let e = unsafe { real().cudaGetDevice(&mut d) };
        (e == SUCCESS && d == h.device).then_some(h)
    }

    /// The heap, if it lives in the calling thread's current context (driver API
    /// allocations in other contexts pass through untagged).
    pub fn heap_in_current_context(&self) -> Option<&Heap> {
        self.heap_in(Context::current_or_none()?)
    }

    /// The heap, if it lives in `ctx`.
    pub fn heap_in(&self, ctx: Context) -> Option<&Heap> {
        self.heap().filter(|h| h.ctx() == ctx)
    }

    /// Whether `p` is the tagged allocator's to free (a cusafe or poisoned pointer, with
    /// a heap).
    pub fn owns(&self, p: u64) -> bool {
        (is_cusafe(p) || is_poisoned(p)) && self.heap().is_some()
    }

    /// The live block `p` points into, as (payload start, size).
    pub fn user_range(&self, p: u64) -> Option<(u64, u64)> {
        if !is_cusafe(p) || self.heap().is_none() {
            return None;
        }
        self.with_table(|t| {
            let b = t.lookup(p).filter(|b| !b.freed)?;
            (p >= b.ptr && p - b.ptr < b.size.max(1)).then_some((b.ptr, b.size))
        })
    }

    /// Leaves the block at `p` allocated for good, and out of the leak check.
    pub fn keep_until_exit(&self, p: u64) {
        self.kept.lock().unwrap_or_else(|e| e.into_inner()).push(p);
    }

    /// Whether `ctx` is the heap's context.
    pub fn is_heap_context(&self, ctx: *mut std::ffi::c_void) -> bool {
        self.heap.as_ref().is_some_and(|h| h.ctx().raw() == ctx)
    }

    /// The heap's device, if there is a heap.
    pub fn heap_device(&self) -> Option<i32> {
        self.heap.as_ref().map(|h| h.device)
    }

    /// A backtrace of the caller when `alloc_backtrace=1`.
    pub fn site(&self) -> Option<Arc<Backtrace>> {
        self.options
            .alloc_backtrace
            .then(|| Arc::new(Backtrace::force_capture()))
    }

    /// Runs `f` on the block table (an empty one without a heap).
    fn with_table<R>(&self, f: impl FnOnce(&BlockTable) -> R) -> R {
        match self.heap() {
            Some(h) => f(h.lock().table()),
            None => f(&BlockTable::default()),
        }
    }

    /// Notes the launch of `kernel` and orders the runtime's pending header writes
    /// before it on `stream` (on another device served, the kernel's module is first
    /// told where that device's runtime page is). Returns where the launch goes, for
    /// [`Runtime::windowed_args`] (`None`: no heap). The launch is counted by
    /// [`Runtime::launched`] once made.
    pub fn before_launch(&self, kernel: Kernel, stream: usize) -> Option<devices::Placed<'_>> {
        self.last_kernel.store(kernel.pack(), Ordering::Relaxed);
        let h = self.heap()?;
        let placed = self.launch_place(kernel)?;
        match placed {
            Ok(devices::Served::Home) => h.writes.order_before(stream, h.ctx()),
            Ok(devices::Served::Side(side)) => self.prepare_side_launch(h, side, kernel, stream),
            // Said at the launch of an instrumented kernel (`note_launch_device`).
            Err(_) => {}
        }
        Some(placed)
    }

    /// Counts a launch of `kernel` after the launch call returned; returns the count
    /// of launches so far (this one included). Not before: a
    /// device-wide wait that another thread starts while the launch is still being made
    /// does not cover its kernel, yet would mark it finished ([`Runtime::note_synced`]),
    /// and a `cudaFree` after it would then skip its wait.
    pub fn launched(&self, kernel: Kernel) -> u64 {
        let n = self.launches.fetch_add(1, Ordering::AcqRel) + 1;
        let mut pending = self.unsynced.lock().unwrap_or_else(|e| e.into_inner());
        pending.retain(|&(_, k)| k != kernel);
        if pending.len() == UNSYNCED_KEPT {
            pending.remove(0);
        }
        pending.push((n, kernel));
        n
    }

    /// Waits for the heap's contexts (every device served) with the real
    /// `cuCtxSynchronize` and notes that every launch so far has finished. Never while a
    /// stream capture is in progress (it would fail and invalidate the capture): callers
    /// go through [`Runtime::free_or_defer`] or [`Runtime::complete_deferred`].
    pub fn device_sync(&self) -> CudaError {
        let seen = self.launches.load(Ordering::Acquire);
        let mut e = SUCCESS;
        if let Some(h) = self.heap() {
            let contexts = std::iter::once(h.ctx()).chain(h.sides.all().map(|s| s.ctx));
            for ctx in contexts {
                let _ctx = ctx.enter();
                // SAFETY: waits for the context made current above.
                let r = code(unsafe { cu::cuCtxSynchronize() });
                if e == SUCCESS {
                    e = r;
                }
            }
        }
        self.note_synced(seen, e);
        e
    }

    /// Notes that the launches counted as `seen` before a device-wide wait that
    /// returned `e` have finished (when `e` is success).
    pub fn note_synced(&self, seen: u64, e: CudaError) {
        if e == SUCCESS {
            self.synced.fetch_max(seen, Ordering::AcqRel);
            self.unsynced
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .retain(|&(n, _)| n > seen);
        }
    }

    /// Launches counted so far (for [`Runtime::note_synced`]).
    pub fn launch_count(&self) -> u64 {
        self.launches.load(Ordering::Acquire)
    }

    /// The demangled name of the kernel launched last through a hook, if the driver
    /// named it at its first launch (no CUDA call).
    pub fn last_kernel_name(&self) -> Option<String> {
        let k = Kernel::unpack(self.last_kernel.load(Ordering::Relaxed))?;
        self.layouts.name(k).map(|n| demangle(&n))
    }

    /// The demangled names of the kernels launched through a hook since the last
    /// device-wide synchronisation that succeeded, oldest first (at most
    /// [`UNSYNCED_KEPT`] distinct kernels; no CUDA call).
    pub fn unsynced_kernel_names(&self) -> Vec<String> {
        let pending = self
            .unsynced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        pending
            .into_iter()
            .filter_map(|(_, k)| self.layouts.name(k).map(|n| demangle(&n)))
            .collect()
    }

    /// Whether a kernel was launched through the hook since the last device-wide
    /// synchronisation (and might still be using memory).
    pub fn launched_since_sync(&self) -> bool {
        self.launches.load(Ordering::Acquire) != self.synced.load(Ordering::Acquire)
    }
}
