//! The process-wide runtime: started by the first hooked call that needs it (never by
//! a library constructor), then shared by all hooks.
//!
//! Start-up, in order: options and output files; the real `cudaFree(0)` (creates the
//! context, as cudart users do); the private write stream; the VMM backend; the report
//! page and the runtime page; the 35 tag windows; the exit handler. When a CUDA step
//! fails, one warning says what is lost and the hooks pass everything through.

use std::backtrace::Backtrace;
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use cudarc::driver::sys as cu;

use crate::alloc::{AllocError, Allocator, BlockInfo, BlockTable, FreeError, Stats};
use crate::check::{check_range, ApiRange};
use crate::cuda::driver::{attribute, driver_present, Context};
use crate::cuda::ordering::HeaderStream;
use crate::cuda::real::{is_device_fault, real, CudaError, DEVICE_FAULTS, INVALID_VALUE, SUCCESS};
use crate::cuda::rtpage::{alloc_report_page, install_runtime_page, ReportPage};
use crate::cuda::vmm::VmmBackend;
use crate::options::Options;
use crate::report::host::leak_report;
use crate::report::page::PageReader;
use crate::report::refine::refine;
use crate::report::sink::Sink;
use crate::report::text::leak_summary;
use crate::report::Report;
use crate::rng::Rng;

/// Pitch alignment of `cudaMallocPitch`/`cudaMalloc3D` rows at least (what the real
/// runtime returns on current GPUs).
const MIN_PITCH_ALIGN: u64 = 512;
/// Leaked blocks listed one by one at exit (the summary counts all).
const LEAKS_SHOWN: usize = 64;

/// Tagged allocation on the device the runtime started on.
pub(crate) struct Heap {
    device: i32,
    ctx: Context,
    /// Row alignment for pitched allocations.
    pub pitch_align: u64,
    writes: Arc<HeaderStream>,
    alloc: Mutex<Allocator<VmmBackend>>,
}

impl Heap {
    fn lock(&self) -> MutexGuard<'_, Allocator<VmmBackend>> {
        self.alloc.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Allocates a tagged block.
    pub fn alloc(&self, size: u64, site: Option<Arc<Backtrace>>) -> Result<BlockInfo, AllocError> {
        let _ctx = self.ctx.enter();
        self.lock().alloc(size, site)
    }

    /// Frees a tagged block (the caller synchronised the device first).
    pub fn free(&self, ptr: u64, site: Option<Arc<Backtrace>>) -> Result<BlockInfo, FreeError> {
        let _ctx = self.ctx.enter();
        self.lock().free(ptr, site)
    }

    /// Runs `f` on the block table.
    fn with_table<R>(&self, f: impl FnOnce(&BlockTable) -> R) -> R {
        f(self.lock().table())
    }

    fn live_blocks(&self) -> Vec<BlockInfo> {
        self.lock().live_blocks()
    }

    fn stats(&self) -> Stats {
        self.lock().stats()
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
    /// `cudaDeviceReset` destroyed the heap's windows and mappings.
    reset: AtomicBool,
    reset_warned: AtomicBool,
    /// The process that started the runtime (a forked child skips the exit check).
    pid: u32,
    /// Kernels launched through the hook so far.
    launches: AtomicU64,
    /// `launches` as of the last device-wide synchronisation that succeeded.
    synced: AtomicU64,
}

static RUNTIME: OnceLock<Runtime> = OnceLock::new();

thread_local! {
    /// Set while this thread runs the start-up (its CUDA calls must not re-enter it).
    static STARTING: Cell<bool> = const { Cell::new(false) };
}

/// The runtime, started on first use; `None` when called back from inside the
/// start-up on the same thread (the hook then just passes the call through).
pub(crate) fn get() -> Option<&'static Runtime> {
    if let Some(rt) = RUNTIME.get() {
        return Some(rt);
    }
    if STARTING.with(Cell::get) {
        return None;
    }
    STARTING.with(|s| s.set(true));
    let rt = RUNTIME.get_or_init(Runtime::start);
    STARTING.with(|s| s.set(false));
    Some(rt)
}

/// The runtime if it has started (hooks that have nothing to do before: copies, syncs).
pub(crate) fn initialized() -> Option<&'static Runtime> {
    RUNTIME.get()
}

fn fatal(msg: &str) -> ! {
    eprintln!("cusafe: error: {msg}");
    std::process::exit(1)
}

extern "C" fn at_exit() {
    if let Some(rt) = initialized() {
        rt.finish();
    }
}

impl Runtime {
    fn start() -> Runtime {
        let options = Options::from_env().unwrap_or_else(|e| fatal(&e.to_string()));
        let sink = Sink::open(&options, std::process::id()).unwrap_or_else(|e| fatal(&e));
        let mut rt = Runtime {
            options,
            sink,
            heap: None,
            page: None,
            errors: AtomicU64::new(0),
            fault_noted: AtomicBool::new(false),
            reset: AtomicBool::new(false),
            reset_warned: AtomicBool::new(false),
            pid: std::process::id(),
            launches: AtomicU64::new(0),
            synced: AtomicU64::new(0),
        };
        if let Err(why) = rt.start_cuda() {
            rt.warn(&format!(
                "{why}. cusafe is OFF in this process: cudaMalloc returns untagged memory, so \
                 there are no bounds or use-after-free checks on device memory and no checks \
                 of cudaFree/cudaMemcpy/cudaMemset arguments"
            ));
        }
        // SAFETY: registers a plain function; it runs before cudart's own exit handlers,
        // which cudart registered when it initialised (earlier).
        unsafe { libc::atexit(at_exit) };
        rt
    }

    fn start_cuda(&mut self) -> Result<(), String> {
        // SAFETY: the real cudaFree(NULL) only initialises the runtime and its context.
        let e = unsafe { (real().cudaFree)(std::ptr::null_mut()) };
        if e != SUCCESS {
            return Err(format!("the CUDA runtime failed to initialise (error {e})"));
        }
        if !driver_present() {
            return Err("the CUDA driver library (libcuda.so.1) cannot be loaded".into());
        }
        let s = |e: crate::alloc::BackendError| e.to_string();
        let ctx = Context::current().map_err(s)?;
        let device = Context::device().map_err(s)?;
        let writes = Arc::new(HeaderStream::new().map_err(s)?);
        let mut backend = VmmBackend::new(device, writes.clone()).map_err(s)?;
        match alloc_report_page() {
            Ok(p) => {
                match install_runtime_page(&mut backend, p.device, self.options.device_flags()) {
                    Ok(()) => self.page = Some((p, Mutex::new(PageReader::new()))),
                    Err(why) => self.warn_no_reports(&why),
                }
            }
            Err(why) => self.warn_no_reports(&why),
        }
        let pitch = attribute(
            device,
            cu::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT,
        )
        .map(|a| a.max(0) as u64)
        .unwrap_or(0);
        let alloc = Allocator::new(backend, Rng::from_os())
            .map_err(|e| format!("cannot reserve the cusafe address windows ({e})"))?;
        self.heap = Some(Heap {
            device,
            ctx,
            pitch_align: pitch.max(MIN_PITCH_ALIGN).next_power_of_two(),
            writes,
            alloc: Mutex::new(alloc),
        });
        if self.options.verbosity >= 1 {
            let page = self.page.as_ref().map_or(0, |(p, _)| p.device);
            self.sink.message(&format!(
                "cusafe: ready on device {device}: windows 1..=35 reserved, report page at \
                 {page:#x}, halt_on_error={}\n",
                u8::from(self.options.halt_on_error)
            ));
        }
        Ok(())
    }

    fn warn_no_reports(&self, why: &str) {
        self.warn(&format!(
            "{why}. Instrumented kernels cannot report: their first finding ends in an \
             illegal-address error instead of a report"
        ));
    }

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

    /// The heap, if any (none after `cudaDeviceReset`).
    pub fn heap(&self) -> Option<&Heap> {
        self.heap
            .as_ref()
            .filter(|_| !self.reset.load(Ordering::Acquire))
    }

    /// `cudaDeviceReset` is about to destroy every allocation, the windows and the
    /// runtime page: from now on allocations pass through untagged, and blocks
    /// allocated before are not leaks.
    pub fn note_reset(&self) {
        self.reset.store(true, Ordering::Release);
    }

    /// The heap, if it serves the calling thread's current device (allocations on
    /// other devices pass through untagged).
    pub fn heap_here(&self) -> Option<&Heap> {
        if self.heap.is_some()
            && self.reset.load(Ordering::Acquire)
            && !self.reset_warned.swap(true, Ordering::Relaxed)
        {
            self.warn(
                "cudaDeviceReset destroyed cusafe's address windows: allocations from now on \
                 are untagged (no checks)",
            );
        }
        let h = self.heap()?;
        let mut d = -1;
        // SAFETY: writes one int.
        let e = unsafe { (real().cudaGetDevice)(&mut d) };
        (e == SUCCESS && d == h.device).then_some(h)
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
            Some(h) => h.with_table(f),
            None => f(&BlockTable::default()),
        }
    }

    fn emit(&self, r: &Report) {
        self.sink.emit(r);
        self.errors.fetch_add(1, Ordering::Relaxed);
    }

    fn halt(&self) -> ! {
        // SAFETY: flushes the program's stdio buffers (its output so far), then ends the
        // process without running exit handlers; the reports were written already.
        unsafe {
            libc::fflush(std::ptr::null_mut());
            libc::_exit(self.options.exitcode)
        }
    }

    /// Prints a host-side report with the program's call site; in halt mode the
    /// process ends here.
    pub fn report(&self, mut r: Report) {
        r.call_site = Some(Arc::new(Backtrace::force_capture()));
        self.emit(&r);
        if self.options.halt_on_error {
            self.halt();
        }
    }

    /// Checks the ranges of a copy or set call. `Err` carries the error code the hook
    /// returns (recover mode) instead of making the call.
    pub fn check_ranges(&self, ranges: &[ApiRange]) -> Result<(), CudaError> {
        if self.heap().is_none() {
            return Ok(());
        }
        for range in ranges {
            if let Some(r) = self.with_table(|t| check_range(range, t)) {
                self.report(r);
                return Err(INVALID_VALUE);
            }
        }
        Ok(())
    }

    /// Orders the runtime's pending header writes before a launch on `stream`.
    pub fn before_launch(&self, stream: usize) {
        self.launches.fetch_add(1, Ordering::AcqRel);
        if let Some(h) = self.heap() {
            let _ctx = h.ctx.enter();
            h.writes.order_before(stream);
        }
    }

    /// Waits for the device with the real `cudaDeviceSynchronize` and notes that every
    /// launch so far has finished.
    pub fn device_sync(&self) -> CudaError {
        let seen = self.launches.load(Ordering::Acquire);
        // SAFETY: the real runtime function.
        let e = unsafe { (real().cudaDeviceSynchronize)() };
        if e == SUCCESS {
            self.synced.fetch_max(seen, Ordering::AcqRel);
        }
        e
    }

    /// Whether a kernel was launched through the hook since the last device-wide
    /// synchronisation (and might still be using memory).
    pub fn launched_since_sync(&self) -> bool {
        self.launches.load(Ordering::Acquire) != self.synced.load(Ordering::Acquire)
    }

    /// Polls the report page after a call that returned `err`; returns `err`.
    pub fn after_call(&self, err: CudaError) -> CudaError {
        self.poll(err);
        err
    }

    fn poll(&self, err: CudaError) {
        let Some((page, reader)) = &self.page else {
            return;
        };
        let (records, saw_any, newly_full) = {
            let mut rd = reader.lock().unwrap_or_else(|e| e.into_inner());
            let was_full = rd.is_full();
            // SAFETY: the page is PAGE_BYTES of pinned memory for the whole process.
            let records = unsafe { rd.poll(page.host()) };
            (records, rd.saw_any(), rd.is_full() && !was_full)
        };
        for rec in &records {
            let r = self.with_table(|t| refine(rec, t));
            self.emit(&r);
        }
        if newly_full {
            self.sink.message(
                "cusafe: the report page is full (64 findings): later device findings are dropped\n",
            );
        }
        if is_device_fault(err) && !saw_any && !self.fault_noted.swap(true, Ordering::Relaxed) {
            let name = DEVICE_FAULTS
                .iter()
                .find(|&&(c, _)| c == err)
                .map_or("", |&(_, n)| n);
            self.sink.message(&format!(
                "cusafe: note: CUDA error {err} ({name}) came without a cusafe finding: the \
                 fault is in uninstrumented code, or an access reached unmapped memory (e.g. a \
                 buffer freed long ago)\n"
            ));
        }
        if !records.is_empty() && self.options.halt_on_error {
            self.halt();
        }
    }

    /// The exit check: last poll, leaks, summary; exits with `exitcode` when anything
    /// was reported.
    fn finish(&self) {
        if std::process::id() != self.pid {
            return;
        }
        self.poll(SUCCESS);
        let mut leaked = 0;
        if let (true, Some(h)) = (self.options.detect_leaks, self.heap()) {
            let live = h.live_blocks();
            for b in live.iter().take(LEAKS_SHOWN) {
                self.sink.emit(&leak_report(b));
            }
            if live.len() > LEAKS_SHOWN {
                self.sink.message(&format!(
                    "cusafe: ... and {} more leaked blocks\n",
                    live.len() - LEAKS_SHOWN
                ));
            }
            if !live.is_empty() {
                let bytes = live.iter().map(|b| b.size).sum();
                self.sink
                    .message(&leak_summary(self.sink.pid(), live.len(), bytes));
            }
            leaked = live.len();
        }
        if let (true, Some(h)) = (self.options.verbosity >= 1, self.heap()) {
            self.sink
                .message(&format!("cusafe: exit statistics: {:?}\n", h.stats()));
        }
        if self.errors.load(Ordering::Relaxed) > 0 || leaked > 0 {
            self.halt();
        }
    }
}
