//! The driver's launches (`cuLaunchKernel`, `cuLaunchCooperativeKernel`,
//! `cuLaunchKernelEx`, each also `_ptsz`): the same work as the runtime API's launches
//! (`hooks/launch.rs`); static cudart's `cudaLaunchKernel` arrives here. Arguments
//! packed in `extra` (no `kernelParams`) cannot take windows: such a launch of an
//! instrumented kernel is refused with a message.

use std::ffi::{c_uint, c_void};

use cudarc::driver::sys as cu;

use super::{Call, CuResult, Stream};
use crate::hooks::launch::launch;
use crate::runtime::Kernel;

/// `CUfunction`.
pub type Func = *mut c_void;
/// `CUlaunchConfig`.
pub type Config = cu::CUlaunchConfig;

/// `CUDA_ERROR_INVALID_VALUE`: a launch the hook refused (it said why).
const REFUSED: CuResult = 1;

/// Launches `f` on `stream` with `threads` per block through `go` (given the argument
/// array to pass).
fn driver_launch(
    api: &'static str,
    f: Func,
    params: *mut *mut c_void,
    stream: usize,
    threads: u64,
    go: impl FnOnce(*mut *mut c_void) -> CuResult,
) -> CuResult {
    let mut result = None;
    launch(
        api,
        Kernel::Function(f as usize),
        params,
        stream,
        threads,
        |a| {
            let r = go(a);
            result = Some(r);
            r
        },
    );
    result.unwrap_or(REFUSED)
}

/// Threads in a block of `x` × `y` × `z`.
fn block(x: c_uint, y: c_uint, z: c_uint) -> u64 {
    u64::from(x) * u64::from(y) * u64::from(z)
}

/// `cuLaunchKernel` (and `_ptsz`).
pub(super) unsafe fn classic(
    real: unsafe extern "C" fn(
        Func,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Stream,
        *mut *mut c_void,
        *mut *mut c_void,
    ) -> CuResult,
    call: Call,
    f: Func,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: Stream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    let threads = block(bx, by, bz);
    driver_launch(
        call.api,
        f,
        params,
        call.stream(stream),
        threads,
        |a| unsafe {
            // SAFETY: the caller's arguments, with the windowed argument array.
            real(f, gx, gy, gz, bx, by, bz, shared, stream, a, extra)
        },
    )
}

/// `cuLaunchCooperativeKernel` (and `_ptsz`).
pub(super) unsafe fn cooperative(
    real: unsafe extern "C" fn(
        Func,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        c_uint,
        Stream,
        *mut *mut c_void,
    ) -> CuResult,
    call: Call,
    f: Func,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: Stream,
    params: *mut *mut c_void,
) -> CuResult {
    let threads = block(bx, by, bz);
    driver_launch(
        call.api,
        f,
        params,
        call.stream(stream),
        threads,
        |a| unsafe {
            // SAFETY: the caller's arguments, with the windowed argument array.
            real(f, gx, gy, gz, bx, by, bz, shared, stream, a)
        },
    )
}

/// `cuLaunchKernelEx` (and `_ptsz`).
pub(super) unsafe fn ex(
    real: unsafe extern "C" fn(*const Config, Func, *mut *mut c_void, *mut *mut c_void) -> CuResult,
    call: Call,
    config: *const Config,
    f: Func,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> CuResult {
    // SAFETY: the program passes a valid configuration (a null one reaches the real call).
    let (stream, threads) = unsafe { config.as_ref() }.map_or((std::ptr::null_mut(), 0), |c| {
        (
            c.hStream.cast(),
            block(c.blockDimX, c.blockDimY, c.blockDimZ),
        )
    });
    driver_launch(
        call.api,
        f,
        params,
        call.stream(stream),
        threads,
        |a| unsafe {
            // SAFETY: the caller's arguments, with the windowed argument array.
            real(config, f, a, extra)
        },
    )
}
