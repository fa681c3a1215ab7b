//! The devices the runtime serves besides the one it started on (the *home* device).
//!
//! The windows and the block table are the process's: the address space is unified, so
//! a tagged pointer names its block whatever device it is on. Each further device gets,
//! the first time a tagged allocation or an instrumented launch needs it, a *side*:
//!
//! * the context the runtime works in there (the device's primary context for runtime
//!   API calls; for driver API calls the first context the program allocated in);
//! * its own private write stream (header writes to its memory go there, and launches
//!   there wait for them);
//! * its own report page and runtime page (`device_page(n)` in window 36 for the n-th
//!   device served): stack epochs are indexed by hardware thread slot and the claim
//!   counter by report page, so two GPUs must not share them.
//!
//! Device code finds its runtime page through the per-module constant
//! [`RTPAGE_SYMBOL`], initialised to the home page's address: before the first launch of
//! a kernel on another device, the runtime writes that device's page address into the
//! kernel's module there (module globals are per context).
//!
//! Not served (said once per device): a device without VMM support, and driver API
//! contexts of a device other than the one the runtime works in there.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::sys as cu;
use cusafe_format::rtpage::{device_page, RTPAGE_SYMBOL};

use super::{Heap, Kernel, Runtime};
use crate::alloc::Fill;
use crate::cuda::driver::{check, Context};
use crate::cuda::ordering::HeaderStream;
use crate::cuda::rtpage::{alloc_report_page, install_runtime_page, ReportPage};
use crate::report::page::PageReader;

/// Device ordinals served at most (the process's devices beyond are not tagged).
const MAX_DEVICES: usize = 64;

/// A device served besides the home device.
pub(crate) struct Side {
    /// The device ordinal.
    pub device: i32,
    /// The context the runtime works in on this device.
    pub ctx: Context,
    /// Its private write stream.
    pub writes: Arc<HeaderStream>,
    /// Its report page and reader (`None`: it could not be made; kernels there cannot
    /// report).
    pub page: Option<(ReportPage, Mutex<PageReader>)>,
    /// Its runtime page's device address.
    pub rtpage: u64,
    /// Its memory in bytes (0: unknown).
    total_mem: u64,
    /// A reset destroyed its context: the device is not served any more.
    reset: AtomicBool,
    /// The home device's write generation that launches here were last ordered after.
    home_seen: AtomicU64,
    /// Kernels ([`Kernel::pack`]) whose module here was given the page's address (or
    /// has no page symbol, or could not be given it: said once).
    patched: Mutex<HashSet<u64>>,
}

/// The sides, by device ordinal; set once (a device that cannot be served holds why).
pub(crate) struct Sides {
    by_device: [OnceLock<Result<Side, NotServed>>; MAX_DEVICES],
    /// Bit `d`: device `d`'s side was set up. What [`Sides::all`] visits, so that a
    /// launch's report poll reads one word, not every device's slot (64 cache lines).
    made: AtomicU64,
    /// Held while a side is set up (its page number is the count of sides so far + 1).
    setup: Mutex<u32>,
}

impl Default for Sides {
    fn default() -> Self {
        Sides {
            by_device: std::array::from_fn(|_| OnceLock::new()),
            made: AtomicU64::new(0),
            setup: Mutex::new(0),
        }
    }
}

impl Sides {
    /// `Some` once setting `device` up was tried: the side, or why it failed.
    fn tried(&self, device: i32) -> Option<&Result<Side, NotServed>> {
        self.by_device.get(usize::try_from(device).ok()?)?.get()
    }

    /// Every side set up so far and not reset since.
    pub fn all(&self) -> impl Iterator<Item = &Side> {
        let made = self.made.load(Ordering::Acquire);
        (0..MAX_DEVICES)
            .filter(move |&d| made & (1u64 << d) != 0)
            .filter_map(|d| self.by_device[d].get()?.as_ref().ok())
            .filter(|s| !s.reset.load(Ordering::Acquire))
    }

    /// The memory of side `device` in bytes (0: unknown, or no side).
    pub fn total_mem(&self, device: i32) -> u64 {
        match self.tried(device) {
            Some(Ok(s)) => s.total_mem,
            _ => 0,
        }
    }

    /// Whether any side was set up (the process uses more than one device).
    pub fn any(&self) -> bool {
        self.all().next().is_some()
    }
}

impl Heap {
    /// The side of `device`, set up in `ctx` (current) the first time; `Err` says why
    /// the device cannot be served (the same reason every time).
    fn side_in(&self, rt: &Runtime, device: i32, ctx: Context) -> Result<&Side, NotServed> {
        let Some(slot) = usize::try_from(device)
            .ok()
            .and_then(|d| self.sides.by_device.get(d))
        else {
            return Err(NotServed::device(
                device,
                format!("device {device} is beyond the {MAX_DEVICES} cusafe serves"),
            ));
        };
        if let Some(s) = slot.get() {
            return s.as_ref().map_err(Clone::clone);
        }
        let mut n = self.sides.setup.lock().unwrap_or_else(|e| e.into_inner());
        if slot.get().is_none() {
            let made = self
                .make_side(rt, device, ctx, *n + 1)
                .map_err(|why| NotServed::device(device, why));
            let ok = made.is_ok();
            if ok {
                *n += 1;
            }
            let _ = slot.set(made);
            if ok {
                // After the set: `all` reads the slot of every bit it sees.
                self.sides.made.fetch_or(1u64 << device, Ordering::AcqRel);
            }
        }
        let s = slot.get().expect("set above");
        s.as_ref().map_err(Clone::clone)
    }

    /// Sets up device `device` in `ctx` with runtime page number `n`.
    fn make_side(&self, rt: &Runtime, device: i32, ctx: Context, n: u32) -> Result<Side, String> {
        let _ctx = ctx.enter();
        let s = |e: crate::alloc::BackendError| e.to_string();
        let writes = Arc::new(HeaderStream::new().map_err(s)?);
        let mut a = self.lock();
        a.backend_mut()
            .add_device(device, ctx, writes.clone())
            .map_err(s)?;
        let rtpage = device_page(n);
        let page = match alloc_report_page().and_then(|p| {
            install_runtime_page(
                a.backend_mut(),
                rtpage,
                device,
                p.device(),
                rt.options.device_flags(),
            )
            .map(|_| p)
        }) {
            Ok(p) => Some((p, Mutex::new(PageReader::new()))),
            Err(why) => {
                drop(a);
                rt.warn_no_reports(&format!("device {device}: {why}"));
                None
            }
        };
        rt.trace(1, || {
            format!("serving device {device} too: runtime page at {rtpage:#x}")
        });
        let mut total_mem = 0usize;
        // SAFETY: writes one size; 0 (no limit known) if the query fails.
        unsafe { cu::cuDeviceTotalMem_v2(&mut total_mem, device) };
        Ok(Side {
            device,
            ctx,
            writes,
            page,
            rtpage,
            total_mem: total_mem as u64,
            reset: AtomicBool::new(false),
            home_seen: AtomicU64::new(0),
            patched: Mutex::new(HashSet::new()),
        })
    }
}

/// The primary context of `device`, retained (for good: the runtime works in it).
fn primary_context(device: i32) -> Result<Context, String> {
    let mut ctx = std::ptr::null_mut();
    // SAFETY: writes one handle.
    check("cuDevicePrimaryCtxRetain", unsafe {
        cu::cuDevicePrimaryCtxRetain(&mut ctx, device)
    })
    .map_err(|e| e.to_string())?;
    Ok(Context::from_raw(ctx.cast()))
}

/// Where tagged work on a device goes: the home device, or a side.
#[derive(Clone, Copy)]
pub(crate) enum Served<'a> {
    /// The device the runtime started on.
    Home,
    /// Another device.
    Side(&'a Side),
}

/// Why the runtime does not serve work on a device (said once per device).
#[derive(Clone, Debug)]
pub(crate) struct NotServed {
    /// The device.
    pub device: i32,
    /// The work is in a context of the device other than the one the runtime works in
    /// there (the device itself may be served).
    pub other_context: bool,
    /// Why, in words.
    pub why: String,
}

impl NotServed {
    fn device(device: i32, why: String) -> NotServed {
        NotServed {
            device,
            other_context: false,
            why,
        }
    }

    fn other_context(device: i32) -> NotServed {
        NotServed {
            device,
            other_context: true,
            why: format!("a context of device {device} other than the one cusafe works in"),
        }
    }
}

/// Where a launch or an allocation goes, or why it is not served.
pub(crate) type Placed<'a> = Result<Served<'a>, NotServed>;

/// `side` unless a reset ended it.
fn live(side: &Side) -> Placed<'_> {
    if side.reset.load(Ordering::Acquire) {
        return Err(NotServed::device(
            side.device,
            format!(
                "a reset of device {} destroyed cusafe's state there; cusafe tags memory \
                 again only in a new process",
                side.device
            ),
        ));
    }
    Ok(Served::Side(side))
}

impl Runtime {
    /// Where a runtime API call on `device` (the calling thread's current device) is
    /// served.
    pub(super) fn served_on_device<'h>(&self, h: &'h Heap, device: i32) -> Placed<'h> {
        if device == h.device {
            return Ok(Served::Home);
        }
        match h.sides.tried(device) {
            Some(Ok(s)) => return live(s),
            Some(Err(e)) => return Err(e.clone()),
            None => {}
        }
        let ctx = primary_context(device).map_err(|why| NotServed::device(device, why))?;
        live(h.side_in(self, device, ctx)?)
    }

    /// Where a driver API call in `ctx` (current; on `device`) is served.
    pub(super) fn served_in_context<'h>(
        &self,
        h: &'h Heap,
        device: i32,
        ctx: Context,
    ) -> Placed<'h> {
        if ctx == h.ctx() {
            return Ok(Served::Home);
        }
        if device == h.device {
            return Err(NotServed::other_context(device));
        }
        let side = h.side_in(self, device, ctx)?;
        if side.ctx != ctx {
            return Err(NotServed::other_context(device));
        }
        live(side)
    }

    /// `cudaDeviceReset` (or the primary context's reset) of `device`, not the home
    /// device, is about to destroy its memory: its live blocks count as freed by it (a
    /// later use or free is reported; they are not leaks), and from now on the device is
    /// not served (its allocations pass through untagged, said once). Findings already
    /// on its report page are still read.
    pub fn note_side_reset(&self, device: i32) {
        let Some(h) = self.heap() else {
            return;
        };
        let Some(Ok(side)) = h.sides.tried(device) else {
            return;
        };
        self.after_call(crate::cuda::real::SUCCESS);
        side.reset.store(true, Ordering::Release);
        h.lock().forget_device(device);
    }

    /// Where a launch of `kernel` by the calling thread goes (`None`: no heap): a
    /// runtime API launch (a host stub) asks the runtime API for its device; a driver
    /// API launch (a function handle) goes by its current context, since the program may
    /// not load libcudart. Where neither answers, the home device (the launch call will
    /// fail on its own). Asked once per launch ([`Runtime::before_launch`]).
    pub(super) fn launch_place(&self, kernel: Kernel) -> Option<Placed<'_>> {
        let h = self.heap()?;
        let placed = match kernel {
            Kernel::Stub(_) if h.only_device => Ok(Served::Home),
            Kernel::Stub(_) => match super::elsewhere::current_device() {
                Some(d) => self.served_on_device(h, d),
                None => Ok(Served::Home),
            },
            Kernel::Function(_) => match Context::current_or_none() {
                Some(ctx) if ctx != h.ctx() => match Context::device() {
                    Ok(d) => self.served_in_context(h, d, ctx),
                    Err(_) => Ok(Served::Home),
                },
                _ => Ok(Served::Home),
            },
        };
        Some(placed)
    }

    /// Before `kernel`'s launch on `side`: gives the kernel's module there the side's
    /// runtime page address (once per kernel), then orders the side's pending header
    /// writes before the launch on `stream`. The home device's header writes (the kernel
    /// may use its blocks as a peer) are waited for on the host when new ones were made
    /// since the last launch here: streams of two devices are not ordered by the side's
    /// event bookkeeping.
    pub(super) fn prepare_side_launch(&self, h: &Heap, side: &Side, kernel: Kernel, stream: usize) {
        let home = h.writes.generation();
        if side.home_seen.load(Ordering::Acquire) < home {
            let _ctx = h.ctx().enter();
            if h.writes.wait().is_ok() {
                side.home_seen.fetch_max(home, Ordering::AcqRel);
            }
        }
        {
            let _ctx = side.ctx.enter();
            self.tell_page(side, kernel);
        }
        side.writes.order_before(stream, side.ctx);
    }

    /// Gives `kernel`'s module on `side` (its context current) the side's runtime page
    /// address, once per kernel; a failure is said and the kernel keeps the home page.
    fn tell_page(&self, side: &Side, kernel: Kernel) {
        // Held through the write: another thread's launch of the kernel here waits for it.
        let mut patched = side.patched.lock().unwrap_or_else(|e| e.into_inner());
        if !patched.insert(kernel.pack()) {
            return;
        }
        if let Err(why) = self.give_page_address(side, kernel) {
            self.warn(&format!(
                "cannot tell a kernel on device {} where its runtime page is ({why}): it \
                 reports through device {}'s page and shares its stack-epoch state",
                side.device,
                self.heap_device().unwrap_or(0)
            ));
        }
    }

    /// Where a graph kernel node of `kernel`, made or changed by the calling thread,
    /// goes. On a side, the kernel's module there learns the side's page now (the
    /// graph's launches do not pass the launch hooks).
    pub fn node_place(&self, kernel: Kernel) -> Option<Placed<'_>> {
        let placed = self.launch_place(kernel)?;
        if let Ok(Served::Side(side)) = placed {
            let _ctx = side.ctx.enter();
            self.tell_page(side, kernel);
        }
        Some(placed)
    }

    /// Writes the side's runtime page address into [`RTPAGE_SYMBOL`] of `kernel`'s
    /// module in the side's context and waits for the write; nothing when the module
    /// has no such symbol (not instrumented).
    fn give_page_address(&self, side: &Side, kernel: Kernel) -> Result<(), String> {
        let Some(f) = super::windows::function(kernel) else {
            return Ok(());
        };
        let mut module = std::ptr::null_mut();
        // SAFETY: writes one handle.
        check("cuFuncGetModule", unsafe {
            cu::cuFuncGetModule(&mut module, f)
        })
        .map_err(|e| e.to_string())?;
        let name = std::ffi::CString::new(RTPAGE_SYMBOL).expect("no NUL in the symbol");
        let (mut dptr, mut bytes) = (0, 0);
        // SAFETY: writes an address and a size; `name` is NUL-terminated.
        let r = unsafe { cu::cuModuleGetGlobal_v2(&mut dptr, &mut bytes, module, name.as_ptr()) };
        if r == cu::CUresult::CUDA_ERROR_NOT_FOUND {
            return Ok(());
        }
        check("cuModuleGetGlobal", r).map_err(|e| e.to_string())?;
        if bytes != 8 {
            return Err(format!("{RTPAGE_SYMBOL} has {bytes} bytes, not 8"));
        }
        let s = |e: crate::alloc::BackendError| e.to_string();
        side.writes
            .fill(Fill::word(dptr, side.rtpage as u32))
            .map_err(s)?;
        side.writes
            .fill(Fill::word(dptr + 4, (side.rtpage >> 32) as u32))
            .map_err(s)?;
        side.writes.wait().map_err(s)
    }
}
