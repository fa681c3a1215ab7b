//! Graph kernel nodes (`cudaGraphAddKernelNode`, `cudaGraphKernelNodeSetParams`,
//! `cudaGraphExecKernelNodeSetParams`): an instrumented kernel's node gets the
//! launch-time windows of its arguments as they are when the node is made (the graph
//! copies the arguments then). A block freed before a later replay keeps its window:
//! use-after-free through a graph node's argument is not caught. A node made while the
//! calling thread's device is another device the runtime serves tells the kernel's
//! module there where that device's runtime page is (`runtime/devices.rs`).

use std::ffi::c_void;

use crate::cuda::real::{real, CudaError, KernelNodeParams};
use crate::runtime::{self, Kernel};

/// Calls `call` with `params`, or with a copy whose argument array has the windows.
fn with_windows(
    params: *const KernelNodeParams,
    call: impl FnOnce(*const KernelNodeParams) -> CudaError,
) -> CudaError {
    // SAFETY: the program passes valid parameters (a null pointer reaches the real call).
    let (Some(rt), Some(p)) = (runtime::get(), unsafe { params.as_ref() }) else {
        return call(params);
    };
    let kernel = Kernel::Stub(p.func as usize);
    let placed = rt.node_place(kernel);
    match rt.windowed_args(kernel, p.kernel_params, placed.as_ref()) {
        Err(e) => e,
        Ok(None) => call(params),
        Ok(Some(mut w)) => {
            let copy = KernelNodeParams {
                kernel_params: w.as_ptr(),
                ..*p
            };
            call(&copy)
        }
    }
}

/// Hook of `cudaGraphAddKernelNode`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphAddKernelNode(
    node: *mut *mut c_void,
    graph: *mut c_void,
    deps: *const *mut c_void,
    ndeps: usize,
    params: *const KernelNodeParams,
) -> CudaError {
    with_windows(params, |p| unsafe {
        real().cudaGraphAddKernelNode(node, graph, deps, ndeps, p)
    })
}

/// Hook of `cudaGraphKernelNodeSetParams`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphKernelNodeSetParams(
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    with_windows(params, |p| unsafe {
        real().cudaGraphKernelNodeSetParams(node, p)
    })
}

/// Hook of `cudaGraphExecKernelNodeSetParams`.
#[no_mangle]
pub unsafe extern "C" fn cudaGraphExecKernelNodeSetParams(
    exec: *mut c_void,
    node: *mut c_void,
    params: *const KernelNodeParams,
) -> CudaError {
    with_windows(params, |p| unsafe {
        real().cudaGraphExecKernelNodeSetParams(exec, node, p)
    })
}
