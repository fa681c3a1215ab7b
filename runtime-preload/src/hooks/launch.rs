//! The runtime API's launches (`cudaLaunchKernel`, `cudaLaunchCooperativeKernel`,
//! `cudaLaunchKernelExC`, each also per-thread-stream `_ptsz`): start the runtime before
//! the first launch (instrumented kernels read the runtime page), order pending header
//! writes before the kernel, append the launch-time windows of instrumented kernels,
//! launch, and poll for reports of earlier kernels (after a failed launch, and
//! on every 16th: `LAUNCH_POLL_EVERY` in runtime/findings.rs).

use std::ffi::c_void;

use crate::cuda::real::{real, CudaError, Dim3, LaunchConfig, Stream};
use crate::runtime::{self, Kernel};

/// `cudaStreamPerThread`: what a null stream means to a `_ptsz` launch.
const PER_THREAD: usize = 2;

/// Launches `kernel` on `stream` with `threads` per block through `call`, given the
/// argument array to pass.
pub(super) fn launch(
    api: &'static str,
    kernel: Kernel,
    args: *mut *mut c_void,
    stream: usize,
    threads: u64,
    call: impl FnOnce(*mut *mut c_void) -> CudaError,
) -> CudaError {
    let Some(rt) = runtime::get() else {
        return call(args);
    };
    let placed = rt.before_launch(kernel, stream);
    let e = match rt.windowed_args(kernel, args, placed.as_ref()) {
        Err(e) => return e,
        Ok(None) => call(args),
        Ok(Some(mut w)) => call(w.as_ptr()),
    };
    let n = rt.launched(kernel);
    if e as u32 == runtime::OUT_OF_RESOURCES {
        rt.launch_out_of_resources(kernel, threads);
    }
    match runtime::initialized() {
        Some(rt) => rt.after_launch(api, e, n),
        None => e,
    }
}

/// Threads in a block of `block`.
pub(super) fn threads(block: Dim3) -> u64 {
    u64::from(block.x) * u64::from(block.y) * u64::from(block.z)
}

fn ptsz(stream: Stream) -> usize {
    if stream.is_null() {
        PER_THREAD
    } else {
        stream as usize
    }
}

macro_rules! classic_launch {
    ($($name:ident, $stream:expr;)*) => {$(
        #[doc = concat!("Hook of `", stringify!($name), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $name(
            func: *const c_void,
            grid: Dim3,
            block: Dim3,
            args: *mut *mut c_void,
            shared_mem: usize,
            stream: Stream,
        ) -> CudaError {
            launch(stringify!($name), Kernel::Stub(func as usize), args, $stream(stream), threads(block), |a| unsafe {
                real().$name(func, grid, block, a, shared_mem, stream)
            })
        }
    )*};
}

classic_launch! {
    cudaLaunchKernel, |s: Stream| s as usize;
    cudaLaunchKernel_ptsz, ptsz;
    cudaLaunchCooperativeKernel, |s: Stream| s as usize;
    cudaLaunchCooperativeKernel_ptsz, ptsz;
}

/// Hook of `cudaLaunchKernelExC` (what `cudaLaunchKernelEx` calls).
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernelExC(
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
) -> CudaError {
    // SAFETY: the program passes a valid configuration (a null one reaches the real call).
    let (stream, block) =
        unsafe { config.as_ref() }.map_or((0, 0), |c| (c.stream as usize, threads(c.block)));
    launch(
        "cudaLaunchKernelExC",
        Kernel::Stub(func as usize),
        args,
        stream,
        block,
        |a| unsafe { real().cudaLaunchKernelExC(config, func, a) },
    )
}

/// Hook of `cudaLaunchKernelExC_ptsz`.
#[no_mangle]
pub unsafe extern "C" fn cudaLaunchKernelExC_ptsz(
    config: *const LaunchConfig,
    func: *const c_void,
    args: *mut *mut c_void,
) -> CudaError {
    // SAFETY: as in `cudaLaunchKernelExC`.
    let (stream, block) =
        unsafe { config.as_ref() }.map_or((PER_THREAD, 0), |c| (ptsz(c.stream), threads(c.block)));
    launch(
        "cudaLaunchKernelExC_ptsz",
        Kernel::Stub(func as usize),
        args,
        stream,
        block,
        |a| unsafe { real().cudaLaunchKernelExC_ptsz(config, func, a) },
    )
}
