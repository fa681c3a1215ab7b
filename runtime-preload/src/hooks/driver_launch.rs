//! The driver API's launches (`cuLaunchKernel`, `cuLaunchCooperativeKernel`,
//! `cuLaunchKernelEx`), for programs that launch through the driver: the same work as
//! the runtime API's launches (`launch.rs`). Arguments packed in `extra` (no
//! `kernelParams`) cannot take windows: such a launch of an instrumented kernel is
//! refused with a message.

use std::ffi::{c_uint, c_void};

use cudarc::driver::sys as cu;

use super::launch::launch;
use crate::runtime::Kernel;

/// Launches `f` on `stream` through `call` (given the argument array to pass); a
/// launch the hook refuses (it says why) returns `CUDA_ERROR_INVALID_VALUE`.
fn driver_launch(
    f: cu::CUfunction,
    params: *mut *mut c_void,
    stream: cu::CUstream,
    call: impl FnOnce(*mut *mut c_void) -> cu::CUresult,
) -> cu::CUresult {
    let mut result = None;
    launch(Kernel::Function(f as usize), params, stream as usize, |a| {
        let r = call(a);
        result = Some(r);
        r as i32
    });
    // No result: the hook refused the launch (it said why).
    result.unwrap_or(cu::CUresult::CUDA_ERROR_INVALID_VALUE)
}

/// Hook of `cuLaunchKernel`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchKernel(
    f: cu::CUfunction,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: cu::CUstream,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> cu::CUresult {
    driver_launch(f, params, stream, |a| unsafe {
        cu::cuLaunchKernel(f, gx, gy, gz, bx, by, bz, shared, stream, a, extra)
    })
}

/// Hook of `cuLaunchCooperativeKernel`.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn cuLaunchCooperativeKernel(
    f: cu::CUfunction,
    gx: c_uint,
    gy: c_uint,
    gz: c_uint,
    bx: c_uint,
    by: c_uint,
    bz: c_uint,
    shared: c_uint,
    stream: cu::CUstream,
    params: *mut *mut c_void,
) -> cu::CUresult {
    driver_launch(f, params, stream, |a| unsafe {
        cu::cuLaunchCooperativeKernel(f, gx, gy, gz, bx, by, bz, shared, stream, a)
    })
}

/// Hook of `cuLaunchKernelEx`.
#[no_mangle]
pub unsafe extern "C" fn cuLaunchKernelEx(
    config: *const cu::CUlaunchConfig,
    f: cu::CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
) -> cu::CUresult {
    // SAFETY: the program passes a valid configuration (a null one reaches the real call).
    let stream = unsafe { config.as_ref() }.map_or(std::ptr::null_mut(), |c| c.hStream);
    driver_launch(f, params, stream, |a| unsafe {
        cu::cuLaunchKernelEx(config, f, a, extra)
    })
}
