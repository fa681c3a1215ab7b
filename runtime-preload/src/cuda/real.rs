//! The real CUDA runtime functions behind the hooks, and the runtime API's C types.
//!
//! Each function is looked up once with `dlsym(RTLD_NEXT, name)`, which finds the
//! definition in the first object loaded after this library (libcudart, or another
//! interposer). When libcudart was loaded by `dlopen` with `RTLD_LOCAL` (PyTorch's
//! case) `RTLD_NEXT` does not see it; then the loaded `libcudart.so*` is found with
//! `dl_iterate_phdr` and asked directly.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::sync::OnceLock;

/// `cudaError_t`.
pub type CudaError = c_int;
/// `cudaSuccess`.
pub const SUCCESS: CudaError = 0;
/// `cudaErrorInvalidValue`.
pub const INVALID_VALUE: CudaError = 1;
/// `cudaErrorMemoryAllocation`.
pub const MEMORY_ALLOCATION: CudaError = 2;
/// `cudaStream_t` (the same handle as the driver's `CUstream`).
pub type Stream = *mut c_void;
/// `cudaEvent_t`.
pub type Event = *mut c_void;

/// `dim3`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Dim3 {
    /// x.
    pub x: c_uint,
    /// y.
    pub y: c_uint,
    /// z.
    pub z: c_uint,
}

/// `struct cudaExtent`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct Extent {
    /// Width in bytes (linear memory).
    pub width: usize,
    /// Height in rows.
    pub height: usize,
    /// Depth in slices.
    pub depth: usize,
}

/// `struct cudaPitchedPtr`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct PitchedPtr {
    /// The allocation.
    pub ptr: *mut c_void,
    /// Bytes per row.
    pub pitch: usize,
    /// Logical width.
    pub xsize: usize,
    /// Logical height.
    pub ysize: usize,
}

/// `cudaLaunchConfig_t` (`cudaLaunchKernelExC`).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct LaunchConfig {
    /// Grid size.
    pub grid: Dim3,
    /// Block size.
    pub block: Dim3,
    /// Dynamic shared memory bytes.
    pub dynamic_smem: usize,
    /// The launch stream.
    pub stream: Stream,
    /// Launch attributes.
    pub attrs: *mut c_void,
    /// Number of launch attributes.
    pub num_attrs: c_uint,
}

/// `cudaKernelNodeParams` (graph kernel nodes).
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct KernelNodeParams {
    /// The kernel's host stub.
    pub func: *mut c_void,
    /// Grid size.
    pub grid: Dim3,
    /// Block size.
    pub block: Dim3,
    /// Dynamic shared memory bytes.
    pub shared_mem: c_uint,
    /// One pointer per argument.
    pub kernel_params: *mut *mut c_void,
    /// Packed arguments (unused by the runtime API).
    pub extra: *mut *mut c_void,
}

/// Device-side failures that kill the context (sticky errors) and, with an
/// instrumented kernel, normally come with a cusafe record; with their names.
pub const DEVICE_FAULTS: &[(CudaError, &str)] = &[
    (700, "cudaErrorIllegalAddress"),
    (710, "cudaErrorAssert"),
    (714, "cudaErrorHardwareStackError"),
    (715, "cudaErrorIllegalInstruction"),
    (716, "cudaErrorMisalignedAddress"),
    (717, "cudaErrorInvalidAddressSpace"),
    (718, "cudaErrorInvalidPc"),
    (719, "cudaErrorLaunchFailure"),
];

/// Names of the runtime API's errors that programs most often ignore (for
/// `report_api_errors`; others are shown by number).
pub const COMMON_ERRORS: &[(CudaError, &str)] = &[
    (1, "cudaErrorInvalidValue"),
    (2, "cudaErrorMemoryAllocation"),
    (3, "cudaErrorInitializationError"),
    (9, "cudaErrorInvalidConfiguration"),
    (12, "cudaErrorInvalidPitchValue"),
    (17, "cudaErrorInvalidDevicePointer"),
    (21, "cudaErrorInvalidMemcpyDirection"),
    (98, "cudaErrorInvalidDeviceFunction"),
    (100, "cudaErrorNoDevice"),
    (101, "cudaErrorInvalidDevice"),
    (209, "cudaErrorNoKernelImageForDevice"),
    (222, "cudaErrorUnsupportedPtxVersion"),
    (400, "cudaErrorInvalidResourceHandle"),
    (701, "cudaErrorLaunchOutOfResources"),
    (720, "cudaErrorCooperativeLaunchTooLarge"),
];

/// `cudaErrorNotReady` (and `CUDA_ERROR_NOT_READY`): an answer, not an error.
pub const NOT_READY: CudaError = 600;

/// Whether `e` is one of [`DEVICE_FAULTS`] (these codes are the same in the driver API).
pub fn is_device_fault(e: CudaError) -> bool {
    DEVICE_FAULTS.iter().any(|&(c, _)| c == e)
}

thread_local! {
    /// Set while the calling thread is inside a real runtime API function called by a
    /// hook: the driver calls it makes were covered by that hook.
    static INSIDE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether the calling thread is inside a real runtime API function a hook called (the
/// driver hooks then pass their call straight through).
pub fn inside_runtime_api() -> bool {
    INSIDE.with(|c| c.get())
}

/// Runs `f` (a call of a real runtime API function) marked as inside the runtime API.
fn inside<R>(f: impl FnOnce() -> R) -> R {
    let was = INSIDE.with(|c| c.replace(true));
    let r = f();
    INSIDE.with(|c| c.set(was));
    r
}

macro_rules! real_table {
    ($($name:ident: fn($($arg:ident: $ty:ty),*);)*) => {
        /// Pointers to the real runtime functions; call them through the methods of the
        /// same names, which mark the call as inside the runtime API.
        #[allow(non_snake_case)]
        pub struct Real {
            $($name: unsafe extern "C" fn($($ty),*) -> CudaError,)*
        }

        #[allow(non_snake_case)]
        impl Real {
            fn resolve() -> Result<Real, String> {
                Ok(Real {
                    $($name: {
                        let p = find(concat!(stringify!($name), "\0"))?;
                        // SAFETY: the symbol is the runtime API function of this name,
                        // whose C signature the type spells out.
                        unsafe {
                            std::mem::transmute::<
                                *mut c_void,
                                unsafe extern "C" fn($($ty),*) -> CudaError,
                            >(p)
                        }
                    },)*
                })
            }

            $(
                #[doc = concat!("Calls the real `", stringify!($name), "`.")]
                ///
                /// # Safety
                /// As the runtime API function.
                #[allow(clippy::too_many_arguments)]
                pub unsafe fn $name(&self, $($arg: $ty),*) -> CudaError {
                    // SAFETY: the caller keeps the function's contract.
                    inside(|| unsafe { (self.$name)($($arg),*) })
                }
            )*
        }
    };
}

real_table! {
    cudaMalloc: fn(a0: *mut *mut c_void, a1: usize);
    cudaMallocPitch: fn(a0: *mut *mut c_void, a1: *mut usize, a2: usize, a3: usize);
    cudaMalloc3D: fn(a0: *mut PitchedPtr, a1: Extent);
    cudaFree: fn(a0: *mut c_void);
    cudaMemcpy: fn(a0: *mut c_void, a1: *const c_void, a2: usize, a3: c_int);
    cudaMemcpyAsync: fn(a0: *mut c_void, a1: *const c_void, a2: usize, a3: c_int, a4: Stream);
    cudaMemcpy2D: fn(a0: *mut c_void, a1: usize, a2: *const c_void, a3: usize, a4: usize, a5: usize, a6: c_int);
    cudaMemcpy2DAsync: fn(a0: *mut c_void, a1: usize, a2: *const c_void, a3: usize, a4: usize, a5: usize, a6: c_int, a7: Stream);
    cudaMemset: fn(a0: *mut c_void, a1: c_int, a2: usize);
    cudaMemsetAsync: fn(a0: *mut c_void, a1: c_int, a2: usize, a3: Stream);
    cudaMemset2D: fn(a0: *mut c_void, a1: usize, a2: c_int, a3: usize, a4: usize);
    cudaLaunchKernel: fn(a0: *const c_void, a1: Dim3, a2: Dim3, a3: *mut *mut c_void, a4: usize, a5: Stream);
    cudaLaunchKernel_ptsz: fn(a0: *const c_void, a1: Dim3, a2: Dim3, a3: *mut *mut c_void, a4: usize, a5: Stream);
    cudaLaunchCooperativeKernel: fn(a0: *const c_void, a1: Dim3, a2: Dim3, a3: *mut *mut c_void, a4: usize, a5: Stream);
    cudaLaunchCooperativeKernel_ptsz: fn(a0: *const c_void, a1: Dim3, a2: Dim3, a3: *mut *mut c_void, a4: usize, a5: Stream);
    cudaLaunchKernelExC: fn(a0: *const LaunchConfig, a1: *const c_void, a2: *mut *mut c_void);
    cudaLaunchKernelExC_ptsz: fn(a0: *const LaunchConfig, a1: *const c_void, a2: *mut *mut c_void);
    cudaGraphAddKernelNode: fn(a0: *mut *mut c_void, a1: *mut c_void, a2: *const *mut c_void, a3: usize, a4: *const KernelNodeParams);
    cudaGraphKernelNodeSetParams: fn(a0: *mut c_void, a1: *const KernelNodeParams);
    cudaGraphExecKernelNodeSetParams: fn(a0: *mut c_void, a1: *mut c_void, a2: *const KernelNodeParams);
    cudaGetFuncBySymbol: fn(a0: *mut *mut c_void, a1: *const c_void);
    cudaDeviceSynchronize: fn();
    cudaDeviceReset: fn();
    cudaStreamSynchronize: fn(a0: Stream);
    cudaEventSynchronize: fn(a0: Event);
    cudaGetLastError: fn();
    cudaPeekAtLastError: fn();
    cudaGetDevice: fn(a0: *mut c_int);
    cudaStreamBeginCapture: fn(a0: Stream, a1: c_int);
    cudaStreamBeginCapture_ptsz: fn(a0: Stream, a1: c_int);
    cudaStreamEndCapture: fn(a0: Stream, a1: *mut *mut c_void);
    cudaStreamEndCapture_ptsz: fn(a0: Stream, a1: *mut *mut c_void);
}

/// `cudaErrorNotSupported`: what a hook returns when the loaded libcudart lacks the
/// real function (one newer than the oldest supported cudart).
pub const NOT_SUPPORTED: CudaError = 801;

/// `cudaStreamBeginCaptureToGraph`'s signature (stream, graph, dependencies, edge data,
/// dependency count, mode).
pub type BeginCaptureToGraph = unsafe extern "C" fn(
    Stream,
    *mut c_void,
    *const *mut c_void,
    *const c_void,
    usize,
    c_int,
) -> CudaError;

/// The real `cudaStreamBeginCaptureToGraph` (`_ptsz` when `ptsz`), if the loaded
/// libcudart has it (CUDA 12.3 and newer do): looked up on its own, so that an older
/// cudart still serves every other hook.
pub fn begin_capture_to_graph(ptsz: bool) -> Option<BeginCaptureToGraph> {
    static FOUND: OnceLock<[Option<usize>; 2]> = OnceLock::new();
    let found = FOUND.get_or_init(|| {
        [
            "cudaStreamBeginCaptureToGraph\0",
            "cudaStreamBeginCaptureToGraph_ptsz\0",
        ]
        .map(|name| find(name).ok().map(|p| p as usize))
    });
    found[usize::from(ptsz)].map(|p| {
        // SAFETY: the symbol is the runtime API function of this name, whose C
        // signature `BeginCaptureToGraph` spells out.
        unsafe { std::mem::transmute::<usize, BeginCaptureToGraph>(p) }
    })
}

/// Calls `f` (a real runtime API function found outside [`Real`]) marked as inside the
/// runtime API.
pub fn call_inside<R>(f: impl FnOnce() -> R) -> R {
    inside(f)
}

/// The real functions. Exits with a message when libcudart is not in the process
/// (a runtime API hook can only run when something called the CUDA runtime).
pub fn real() -> &'static Real {
    try_real().unwrap_or_else(|e| {
        eprintln!("cusafe: error: {e}");
        // SAFETY: _exit has no preconditions.
        unsafe { libc::_exit(1) }
    })
}

/// The real functions, or why they cannot be found (no libcudart in the process: a
/// program built with static cudart, or one using the driver API only).
pub fn try_real() -> Result<&'static Real, &'static str> {
    static REAL: OnceLock<Result<Real, String>> = OnceLock::new();
    REAL.get_or_init(Real::resolve)
        .as_ref()
        .map_err(String::as_str)
}

fn find(name: &'static str) -> Result<*mut c_void, String> {
    // SAFETY: `name` is NUL-terminated.
    let p = unsafe { libc::dlsym(libc::RTLD_NEXT, name.as_ptr().cast()) };
    if !p.is_null() {
        return Ok(p);
    }
    let shown = name.trim_end_matches('\0');
    let handle = cudart_handle()
        .ok_or_else(|| format!("cannot find the real {shown}: libcudart is not loaded"))?;
    // SAFETY: `handle` came from dlopen; `name` is NUL-terminated.
    let p = unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr().cast()) };
    if p.is_null() {
        return Err(format!(
            "cannot find the real {shown} in the loaded libcudart"
        ));
    }
    Ok(p)
}

/// A `dlopen` handle of the libcudart already in the process, if any.
fn cudart_handle() -> Option<usize> {
    static HANDLE: OnceLock<Option<usize>> = OnceLock::new();
    *HANDLE.get_or_init(|| {
        let path = loaded_object("libcudart.so")?;
        // SAFETY: `path` is NUL-terminated; RTLD_NOLOAD only returns an existing handle.
        let h = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        (!h.is_null()).then_some(h as usize)
    })
}

/// The path of the first loaded object whose file name starts with `prefix`.
fn loaded_object(prefix: &str) -> Option<CString> {
    struct Search<'a> {
        prefix: &'a str,
        found: Option<CString>,
    }
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _size: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info; `data` is our Search.
        let (info, search) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: dlpi_name is a NUL-terminated path.
        let name = unsafe { CStr::from_ptr(info.dlpi_name as *const c_char) };
        let file = name.to_bytes().rsplit(|&b| b == b'/').next().unwrap_or(&[]);
        if file.starts_with(search.prefix.as_bytes()) {
            search.found = Some(name.to_owned());
            return 1;
        }
        0
    }
    let mut search = Search {
        prefix,
        found: None,
    };
    // SAFETY: `visit` only touches `search` through `data` during the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut search as *mut Search).cast()) };
    search.found
}
