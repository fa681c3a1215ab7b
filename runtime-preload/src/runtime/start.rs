//! Start-up, run once by the first hooked call that needs the runtime: options and
//! output files; the context (the program's current one, else the real `cudaFree(0)`
//! creates cudart's primary context); the
//! private write stream; the VMM backend; the report page and the runtime page; the 35
//! tag windows; the exit handler. When a CUDA step fails, one warning says what is
//! lost and the hooks pass everything through.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64};
use std::sync::{Arc, Mutex};

use cudarc::driver::sys as cu;

use super::findings::at_exit;
use super::{forked_child, Heap, Runtime, MIN_PITCH_ALIGN};
use crate::alloc::{Allocator, BackendError};
use crate::cuda::driver::{attribute, device_count, driver_present, Context};
use crate::cuda::ordering::HeaderStream;
use crate::cuda::real::{try_real, SUCCESS};
use crate::cuda::rtpage::{alloc_report_page, install_runtime_page, reserve_runtime_window};
use crate::cuda::vmm::VmmBackend;
use crate::options::Options;
use crate::report::page::PageReader;
use crate::report::sink::Sink;
use crate::rng::Rng;
use cusafe_format::rtpage::RTPAGE_ADDR;

fn fatal(msg: &str) -> ! {
    eprintln!("cusafe: error: {msg}");
    std::process::exit(1)
}

impl Runtime {
    /// Builds the runtime (the `OnceLock` initialiser).
    pub(super) fn start() -> Runtime {
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
            pid: std::process::id(),
            launches: AtomicU64::new(0),
            last_kernel: AtomicU64::new(0),
            synced: AtomicU64::new(0),
            layouts: Default::default(),
            kept: Default::default(),
            device_heap: Default::default(),
            unsynced: Default::default(),
            stack_raised: AtomicBool::new(false),
            revive_lock: Mutex::new(()),
            revive_failed: AtomicBool::new(false),
            untagged_said: Default::default(),
            launch_said: Default::default(),
        };
        if let Err(why) = rt.start_cuda() {
            rt.warn(&format!(
                "{why}. cusafe is OFF in this process: cudaMalloc returns untagged memory, so \
                 there are no bounds or use-after-free checks on device memory and no checks \
                 of cudaFree/cudaMemcpy/cudaMemset arguments"
            ));
        }
        // SAFETY: registers plain functions. The exit handler runs before cudart's own,
        // which cudart registered when it initialised (earlier); the fork handler only
        // stores a flag in the child.
        unsafe {
            libc::atexit(at_exit);
            libc::pthread_atfork(None, None, Some(forked_child as unsafe extern "C" fn()));
        }
        rt
    }

    fn start_cuda(&mut self) -> Result<(), String> {
        if !driver_present() {
            return Err("the CUDA driver library (libcuda.so.1) cannot be loaded".into());
        }
        // A driver hook starts the runtime in the program's current context; a runtime
        // API hook may come first, before cudart made one: then the real cudaFree(NULL)
        // initialises cudart and its primary context.
        if Context::current_or_none().is_none() {
            let r = try_real().map_err(|e| {
                format!("no CUDA context is current and the CUDA runtime is not loaded ({e})")
            })?;
            // SAFETY: the real cudaFree(NULL) only initialises the runtime and its context.
            let e = unsafe { r.cudaFree(std::ptr::null_mut()) };
            if e != SUCCESS {
                return Err(format!("the CUDA runtime failed to initialise (error {e})"));
            }
        }
        let s = |e: BackendError| e.to_string();
        let ctx = Context::current().map_err(s)?;
        self.apply_stack_size();
        let device = Context::device().map_err(s)?;
        let writes = Arc::new(HeaderStream::new().map_err(s)?);
        let mut backend = VmmBackend::new(device, ctx, writes.clone()).map_err(s)?;
        let mut rtpage = 0;
        match alloc_report_page() {
            Ok(p) => {
                let flags = self.options.device_flags();
                match reserve_runtime_window(&mut backend).and_then(|()| {
                    install_runtime_page(&mut backend, RTPAGE_ADDR, device, p.device(), flags)
                }) {
                    Ok(h) => {
                        rtpage = h;
                        self.page = Some((p, Mutex::new(PageReader::new())));
                    }
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
        let mut total_mem = 0usize;
        // SAFETY: writes one size; 0 (no limit known) if the query fails.
        unsafe { cu::cuDeviceTotalMem_v2(&mut total_mem, device) };
        let mut alloc = Allocator::new(backend, Rng::from_os())
            .map_err(|e| format!("cannot reserve the cusafe address windows ({e})"))?;
        // The first header granule of blocks of 4 MiB and up, made now so that they cost
        // only their payload. If the device has no 2 MiB to spare now, the first such
        // block makes it (and reports a failure as cudaErrorMemoryAllocation).
        let _ = alloc.make_header_granule(device);
        self.heap = Some(Heap {
            device,
            ctx: AtomicPtr::new(ctx.raw()),
            rtpage: AtomicU64::new(rtpage),
            pitch_align: pitch.max(MIN_PITCH_ALIGN).next_power_of_two(),
            total_mem: total_mem as u64,
            writes,
            alloc: Mutex::new(alloc),
            sides: Default::default(),
            only_device: device_count() == 1,
        });
        if self.options.verbosity >= 1 {
            let page = self.page.as_ref().map_or(0, |(p, _)| p.device());
            let missing = self
                .heap
                .as_ref()
                .map(|h| {
                    h.alloc
                        .lock()
                        .map(|a| a.missing_windows())
                        .unwrap_or_default()
                })
                .unwrap_or_default();
            let windows = if missing.is_empty() {
                "windows 1..=35 reserved".to_string()
            } else {
                format!(
                    "windows {missing:?} in use by the process (AddressSanitizer's shadow?), \
                     device-heap sizes of those classes take the next class"
                )
            };
            self.sink.message(&format!(
                "cusafe: ready on device {device}: {windows}, report page at \
                 {page:#x}, halt_on_error={}\n",
                u8::from(self.options.halt_on_error)
            ));
        }
        Ok(())
    }

    pub(super) fn warn_no_reports(&self, why: &str) {
        self.warn(&format!(
            "{why}. Instrumented kernels cannot report: their first finding ends in an \
             illegal-address error instead of a report"
        ));
    }
}
