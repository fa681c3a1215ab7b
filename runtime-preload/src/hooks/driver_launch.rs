//! The driver API's launches (`cuLaunchKernel`, `cuLaunchCooperativeKernel`,
//! `cuLaunchKernelEx`), for programs that launch through the driver: the same work as
//! the runtime API's launches (`launch.rs`). Arguments packed in `extra` cannot take
//! windows: such a launch of an instrumented kernel is refused with a message.

use std::ffi::{c_uint, c_void};

use cudarc::driver::sys as cu;

use super::launch::launch;
use crate::runtime::Kernel;

/// `CUDA_ERROR_INVALID_VALUE`, for a launch with packed arguments (`extra`) and none
/// in `kernelParams`: the windows go after `kernelParams`' entries.
fn packed_args_refused(f: cu::CUfunction) -> cu::CUresult {
    eprintln!(
        "cusafe: error: a kernel ({:?}) was launched with its arguments packed in `extra` \
         (CU_LAUNCH_PARAM_BUFFER_POINTER); cusafe appends each argument's bounds to \
         kernelParams. Pass the arguments in kernelParams, or build the kernel with \
         --cusafe-no-launch-bounds",
        crate::cuda::kernels::name_of(f).unwrap_or_default()
    );
    cu::CUresult::CUDA_ERROR_INVALID_VALUE
}

/// Launches `f` on `stream` through `call` (given the argument array), or refuses a
/// packed-argument launch of a kernel that takes windows.
fn driver_launch(
    f: cu::CUfunction,
    params: *mut *mut c_void,
    extra: *mut *mut c_void,
    stream: cu::CUstream,
    call: impl FnOnce(*mut *mut c_void) -> cu::CUresult,
) -> cu::CUresult {
    let takes_windows = || {
        crate::cuda::kernels::name_of(f)
            .and_then(|n| crate::cuda::kernels::layout_of(f, &n))
            .is_ok_and(|l| l.is_some())
    };
    if params.is_null() && !extra.is_null() && takes_windows() {
        return packed_args_refused(f);
    }
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
    driver_launch(f, params, extra, stream, |a| unsafe {
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
    driver_launch(f, params, std::ptr::null_mut(), stream, |a| unsafe {
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
    driver_launch(f, params, extra, stream, |a| unsafe {
        cu::cuLaunchKernelEx(config, f, a, extra)
    })
}
