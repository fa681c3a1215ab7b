//! Launch-time windows (`cusafe_format::launch`): before an instrumented kernel runs,
//! the launch hook appends the window of each of its 8-byte arguments, read off the
//! block table, to the program's arguments. Each kernel's layout is learnt from the
//! driver once and cached.

use rustc_hash::FxHashMap;
use std::cell::Cell;
use std::ffi::c_void;
use std::sync::{Arc, Mutex};

use cudarc::driver::sys as cu;
use cusafe_format::launch::{index_bounds, launch_bounds, Layout};

use super::{Placed, Runtime};
use crate::cuda::driver::reachable;
use crate::cuda::kernels;
use crate::cuda::real::{real, CudaError, SUCCESS};

/// `cudaErrorInvalidDeviceFunction` (and `CUDA_ERROR_INVALID_HANDLE` is what the driver
/// would say): the launch the hook refuses.
const REFUSED: CudaError = 98;

/// A kernel as a launch call names it.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
pub enum Kernel {
    /// The host stub the runtime API takes (`cudaLaunchKernel`'s `func`).
    Stub(usize),
    /// A driver function handle (`cuLaunchKernel`'s `f`).
    Function(usize),
}

impl Kernel {
    /// The kernel as one word for [`Runtime::before_launch`]'s "last kernel" (0: none).
    /// Host addresses (stubs, driver function handles) are below 2^63, so bit 63 tells
    /// the two apart.
    pub fn pack(self) -> u64 {
        match self {
            Kernel::Stub(a) => a as u64,
            Kernel::Function(f) => f as u64 | 1 << 63,
        }
    }

    /// The kernel [`Kernel::pack`] made `w` from (`None` for 0).
    pub fn unpack(w: u64) -> Option<Kernel> {
        match w {
            0 => None,
            w if w >> 63 == 1 => Some(Kernel::Function((w & !(1 << 63)) as usize)),
            w => Some(Kernel::Stub(w as usize)),
        }
    }
}

/// What the driver said about a kernel on its first launch.
struct Learnt {
    /// Its (mangled) name.
    name: Arc<str>,
    /// Its windows (`None`: it takes none).
    layout: Option<Arc<Layout>>,
    /// Whether its module allocates in device code (needs the device heap's arena).
    allocates: bool,
    /// Whether its module recurses or calls through pointers (its stack is the
    /// context's limit).
    dynamic_stack: bool,
}

/// What is known of the kernels launched so far.
#[derive(Default)]
pub struct Layouts(Mutex<FxHashMap<Kernel, Learnt>>);

impl Layouts {
    /// The (mangled) name of `kernel`, if it was launched through a hook and named by
    /// the driver then. No CUDA call: this works after the context died.
    pub fn name(&self, kernel: Kernel) -> Option<Arc<str>> {
        let cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        cache.get(&kernel).map(|l| l.name.clone())
    }

    /// Forgets the kernels known by driver function handle: after a reset the modules
    /// are loaded again, and a new function may get an old handle's value. (Host stubs
    /// stay: they name the same kernel for the whole process.)
    pub fn forget_functions(&self) {
        let mut cache = self.0.lock().unwrap_or_else(|e| e.into_inner());
        cache.retain(|k, _| matches!(k, Kernel::Stub(_)));
    }
}

/// The arguments of one launch, windows and index bounds appended. Keep it until the
/// launch call returns. Its two arrays come from, and go back to, a per-thread pool, so
/// that a launch makes no heap allocation once the thread has launched a kernel of as
/// many arguments.
pub struct WindowedArgs {
    args: Vec<*mut c_void>,
    /// The windows' words, which `args` points into (heap storage: moving the struct
    /// leaves them in place).
    words: Vec<u64>,
}

thread_local! {
    /// The arrays of this thread's last finished launch, kept for the next one (taken
    /// out while in use, so a launch made while another is being made gets new ones).
    static POOL: Cell<Option<(Vec<*mut c_void>, Vec<u64>)>> = const { Cell::new(None) };
}

impl WindowedArgs {
    /// The program's `layout.params` arguments `args`, then the window `window(p)` of
    /// the value `p` of each argument with one, then the bounds of each index group
    /// (`index_bounds` of its members' values and windows).
    ///
    /// # Safety
    /// `args` must point to `layout.params` argument pointers, those of the windowed
    /// arguments each to 8 readable bytes.
    pub unsafe fn new(
        layout: &Layout,
        args: *const *mut c_void,
        mut window: impl FnMut(u64) -> (u64, u64),
    ) -> WindowedArgs {
        let n = layout.params as usize;
        // SAFETY: the caller's promise.
        let given = unsafe { std::slice::from_raw_parts(args, n) };
        // (A launch from a thread-local destructor, after the pool is gone, gets new ones.)
        let (mut out, mut words) = POOL.try_with(Cell::take).ok().flatten().unwrap_or_default();
        out.clear();
        words.clear();
        // SAFETY: a windowed argument points to 8 readable bytes.
        let value = |i: u32| unsafe { given[i as usize].cast::<u64>().read_unaligned() };
        for &i in &layout.windows {
            let (start, limit) = window(value(i));
            words.extend([start, limit]);
        }
        for g in &layout.groups {
            let members = g.members.iter().map(|m| {
                let w = layout
                    .windows
                    .binary_search(m)
                    .expect("Layout::from_param_sizes refuses a member without a window");
                (value(*m), words[2 * w], words[2 * w + 1])
            });
            let (lo, span) = index_bounds(g.scale, members);
            words.extend([lo, span]);
        }
        out.extend_from_slice(given);
        out.extend(words.iter_mut().map(|w| (w as *mut u64).cast::<c_void>()));
        WindowedArgs { args: out, words }
    }

    /// The argument array to pass to the real launch.
    pub fn as_ptr(&mut self) -> *mut *mut c_void {
        self.args.as_mut_ptr()
    }
}

impl Drop for WindowedArgs {
    fn drop(&mut self) {
        let arrays = (
            std::mem::take(&mut self.args),
            std::mem::take(&mut self.words),
        );
        let _ = POOL.try_with(|p| p.set(Some(arrays)));
    }
}

impl Runtime {
    /// The arguments to launch `kernel` with: `Ok(None)` for the program's own (the
    /// kernel takes no windows), else the program's and the windows. `Err`: the code the
    /// hook returns instead of launching, after saying why. `placed`: where the launch
    /// goes ([`Runtime::before_launch`], [`Runtime::node_place`]).
    pub fn windowed_args(
        &self,
        kernel: Kernel,
        args: *mut *mut c_void,
        placed: Option<&Placed>,
    ) -> Result<Option<WindowedArgs>, CudaError> {
        let Some(layout) = self.layout(kernel)? else {
            return Ok(None);
        };
        if let Some(Err(not)) = placed {
            self.note_launch_device(kernel, not);
        }
        if args.is_null() {
            self.refuse(
                "an instrumented kernel was launched with no argument array; arguments \
                 packed in the driver's `extra` cannot take bounds: pass them in kernelParams",
            );
            return Err(REFUSED);
        }
        let device = self.heap_device();
        let w = self.with_table(|t| {
            let window = |p| launch_bounds(p, |b| t.header_word(b), |p| reachable(p, device));
            // SAFETY: the program passes one argument pointer per source parameter, as
            // the launch API requires; the windowed ones are 8 bytes.
            unsafe { WindowedArgs::new(&layout, args, window) }
        });
        Ok(Some(w))
    }

    /// The layout of `kernel`, learnt on its first launch.
    fn layout(&self, kernel: Kernel) -> Result<Option<Arc<Layout>>, CudaError> {
        let mut cache = self.layouts.0.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(l) = cache.get(&kernel) {
            // Both made again at the first launch after a reset.
            if l.allocates {
                self.ensure_device_heap();
            }
            if l.dynamic_stack {
                self.ensure_dynamic_stack();
            }
            return Ok(l.layout.clone());
        }
        // Not a kernel the runtime knows: the real launch says so.
        let Some(f) = function(kernel) else {
            return Ok(None);
        };
        let allocates = kernels::allocates(f).unwrap_or(false);
        if allocates {
            self.ensure_device_heap();
        }
        let dynamic_stack = kernels::dynamic_stack(f).unwrap_or(false);
        if dynamic_stack {
            self.ensure_dynamic_stack();
        }
        let learnt = kernels::name_of(f).and_then(|name| {
            kernels::layout_of(f, &name)
                .map(|l| (name.clone(), l))
                .map_err(|e| format!("kernel {name}: {e}"))
        });
        match learnt {
            Ok((name, l)) => {
                let l = l.map(Arc::new);
                cache.insert(
                    kernel,
                    Learnt {
                        name: name.into(),
                        layout: l.clone(),
                        allocates,
                        dynamic_stack,
                    },
                );
                Ok(l)
            }
            Err(why) => {
                drop(cache);
                self.refuse(&why);
                Err(REFUSED)
            }
        }
    }

    /// Says why a launch is refused and what to do.
    fn refuse(&self, why: &str) {
        self.sink.message(&format!(
            "cusafe: error: cannot pass the bounds of a kernel's arguments at launch \
             ({why}); the launch is refused. Rebuild the kernel with this cusafe-clang++, \
             or with --cusafe-no-launch-bounds so that it takes no bounds at launch\n"
        ));
    }
}

/// The driver's function behind `kernel`; `None` for a stub cudart does not know.
pub(super) fn function(kernel: Kernel) -> Option<cu::CUfunction> {
    let f = match kernel {
        Kernel::Function(f) => f as cu::CUfunction,
        Kernel::Stub(stub) => {
            let mut f = std::ptr::null_mut();
            // SAFETY: writes one handle; `stub` is what the program launches.
            let e = unsafe { real().cudaGetFuncBySymbol(&mut f, stub as *const c_void) };
            if e != SUCCESS {
                return None;
            }
            f as cu::CUfunction
        }
    };
    Some(kernels::function_of(f))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_pack_into_one_word() {
        for k in [
            Kernel::Stub(0x5555_1234),
            Kernel::Function(0x7fff_0000_1000),
        ] {
            assert_eq!(Kernel::unpack(k.pack()), Some(k));
        }
        assert_ne!(Kernel::Stub(8).pack(), Kernel::Function(8).pack());
        assert_eq!(Kernel::unpack(0), None);
    }

    #[test]
    fn a_threads_next_launch_reuses_the_last_ones_arrays_and_one_in_use_is_not_shared() {
        let layout = Layout::of_sources(&[8, 8]);
        let (mut a, mut b) = (0x1000u64, 0x2000u64);
        let mut args: Vec<*mut c_void> =
            vec![(&mut a as *mut u64).cast(), (&mut b as *mut u64).cast()];
        let window = |p: u64| (p, 1);
        // SAFETY: two u64 arguments.
        let mut first = unsafe { WindowedArgs::new(&layout, args.as_mut_ptr(), window) };
        let first_ptr = first.as_ptr();
        // Made while the first is in use: its own arrays.
        // SAFETY: as above.
        let mut during = unsafe { WindowedArgs::new(&layout, args.as_mut_ptr(), window) };
        assert_ne!(during.as_ptr(), first_ptr);
        drop(during);
        drop(first);
        // SAFETY: as above.
        let mut next = unsafe { WindowedArgs::new(&layout, args.as_mut_ptr(), window) };
        let p = next.as_ptr();
        assert_eq!(p, first_ptr);
        let word = |i: usize| unsafe { *(*p.add(i)).cast::<u64>() };
        assert_eq!([word(2), word(3), word(4), word(5)], [0x1000, 1, 0x2000, 1]);
    }

    #[test]
    fn windows_follow_the_program_arguments_in_order() {
        let layout = Layout::of_sources(&[8, 4, 8]);
        let (mut a, mut n, mut b) = (0x1000u64, 7i32, 0x2000u64);
        let mut args: Vec<*mut c_void> = vec![
            (&mut a as *mut u64).cast(),
            (&mut n as *mut i32).cast(),
            (&mut b as *mut u64).cast(),
        ];
        // SAFETY: three arguments, the windowed ones u64.
        let mut w = unsafe { WindowedArgs::new(&layout, args.as_mut_ptr(), |p| (p + 1, p + 2)) };
        let out = w.as_ptr();
        let word = |i: usize| unsafe { *(*out.add(i)).cast::<u64>() };
        assert_eq!(unsafe { *out.add(1) }, args[1]);
        assert_eq!(
            [word(0), word(2), word(3), word(4), word(5), word(6)],
            [0x1000, 0x2000, 0x1001, 0x1002, 0x2001, 0x2002]
        );
    }

    #[test]
    fn index_bounds_follow_the_windows() {
        let group = cusafe_format::launch::IndexGroup {
            scale: 4,
            members: vec![0, 2],
        };
        let sizes = [8, 4, 8, 8, 8, 8, 8, 8, 8];
        let layout = Layout::from_param_sizes(3, &sizes, vec![group]).expect("a layout");
        // Two float arrays of 10 elements, the second passed 2 elements in.
        let (mut a, mut n, mut b) = (0x1000u64, 7i32, 0x2008u64);
        let mut args: Vec<*mut c_void> = vec![
            (&mut a as *mut u64).cast(),
            (&mut n as *mut i32).cast(),
            (&mut b as *mut u64).cast(),
        ];
        let window = |p: u64| (p & !0xfff, 40);
        // SAFETY: three arguments, the windowed ones u64.
        let mut w = unsafe { WindowedArgs::new(&layout, args.as_mut_ptr(), window) };
        let out = w.as_ptr();
        let word = |i: usize| unsafe { *(*out.add(i)).cast::<u64>() };
        assert_eq!(
            [word(3), word(4), word(5), word(6), word(7), word(8)],
            [0x1000, 40, 0x2000, 40, 0, 8]
        );
    }
}
