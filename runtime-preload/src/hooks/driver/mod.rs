//! The driver API's entry points: the one hook table every route to the driver goes
//! through. A program reaches a hook
//! * by linking libcuda (the exported symbols below win symbol lookup, as the runtime
//!   API's do),
//! * by `dlsym` on libcuda (`hooks/dlsym.rs`), or
//! * through `cuGetProcAddress` (`hooks/procaddr.rs`), which is how cudart 12 and 13,
//!   static or shared, find every driver function.
//!
//! Each row names the entry point as `cuGetProcAddress` knows it, the first API version
//! with the hooked signature, the function doing the work, the signature, and the
//! exported symbols of its variants: default, then per-thread default stream.
//!
//! A call made from inside a hooked runtime API function (cudart's `cudaMalloc` calling
//! `cuMemAlloc_v2`) goes straight to the driver: the runtime API hook already did the
//! work, so an allocation is tagged once and a launch gets its windows once.

#![allow(clippy::too_many_arguments)]

mod alloc;
mod capture;
mod copy;
mod entry;
mod launch;
mod query;
mod set;
mod sync;

use std::ffi::{c_int, c_uchar, c_uint, c_ushort, c_void, CStr};

pub use entry::{Entry, HookFn, Variant};

/// `CUresult` (kept an integer: a driver newer than the headers may return new codes).
pub type CuResult = c_int;
/// `CUDA_ERROR_NOT_FOUND`: what a hook returns when the real function is unknown.
pub(super) const NOT_FOUND: CuResult = 500;
/// `CUdeviceptr`.
type DevPtr = u64;
/// `CUstream`.
type Stream = *mut c_void;
/// `CUcontext`.
type Ctx = *mut c_void;

/// What a hook's worker is told about the call besides its arguments.
#[derive(Clone, Copy, Debug)]
pub struct Call {
    /// The entry point's name, for reports (`cuMemcpyHtoD`).
    pub api: &'static str,
    /// Whether the per-thread-default-stream variant was called (a null stream is then
    /// the calling thread's stream).
    pub per_thread: bool,
}

impl Call {
    /// The stream a call on `stream` runs on, as the runtime's ordering names it.
    fn stream(&self, stream: Stream) -> usize {
        /// `CU_STREAM_PER_THREAD`.
        const PER_THREAD_STREAM: usize = 2;
        match stream as usize {
            0 if self.per_thread => PER_THREAD_STREAM,
            s => s,
        }
    }
}

macro_rules! hook_fn {
    ($entry:ident, $imp:path, $v:literal, $sym:ident, ($($a:ident: $t:ty),*)) => {
        #[doc = concat!("Hook of the driver's `", stringify!($sym), "`.")]
        #[no_mangle]
        pub unsafe extern "C" fn $sym($($a: $t),*) -> CuResult {
            type Real = unsafe extern "C" fn($($t),*) -> CuResult;
            // SAFETY: `Real` is the entry point's signature (the table's row).
            let Some(real) = (unsafe { slots::$entry.variants[$v].real::<Real>() }) else {
                return NOT_FOUND;
            };
            if crate::cuda::real::inside_runtime_api() {
                // SAFETY: the caller's arguments, passed on unchanged.
                return unsafe { real($($a),*) };
            }
            let call = Call { api: stringify!($entry), per_thread: $v == 1 };
            // SAFETY: the worker gets the caller's arguments and the real function.
            unsafe { $imp(real, call, $($a),*) }
        }
    };
}

macro_rules! variant {
    ($sym:ident, ($($a:ident: $t:ty),*)) => {
        Variant::new(
            concat!(stringify!($sym), "\0"),
            // SAFETY: only changes the pointer's type; callers cast it back to the
            // signature (the table's row) before calling.
            unsafe {
                std::mem::transmute::<unsafe extern "C" fn($($t),*) -> CuResult, HookFn>(
                    super::$sym,
                )
            },
        )
    };
}

macro_rules! table {
    ($(
        $entry:ident since $since:literal = $imp:path, fn $args:tt, [$sym:ident $(, $pt:ident)?];
    )*) => {
        /// The table's rows, one static each.
        #[allow(non_upper_case_globals)]
        mod slots {
            use super::*;
            $(
                pub static $entry: Entry = Entry {
                    name: stringify!($entry),
                    since: $since,
                    variants: [variant!($sym, $args), table!(@pt $($pt)?, $args)],
                };
            )*
        }
        $(
            hook_fn!($entry, $imp, 0, $sym, $args);
            $(hook_fn!($entry, $imp, 1, $pt, $args);)?
        )*
        /// Every hooked entry point.
        pub static TABLE: &[&Entry] = &[$(&slots::$entry),*];
    };
    (@pt $pt:ident, $args:tt) => { variant!($pt, $args) };
    (@pt , $args:tt) => { Variant::none() };
}

table! {
    // Allocation (`alloc.rs`).
    cuMemAlloc since 3020 = alloc::mem_alloc,
        fn(dptr: *mut DevPtr, size: usize), [cuMemAlloc_v2];
    cuMemAllocPitch since 3020 = alloc::mem_alloc_pitch,
        fn(dptr: *mut DevPtr, pitch: *mut usize, width: usize, height: usize, elem: c_uint),
        [cuMemAllocPitch_v2];
    cuMemFree since 3020 = alloc::mem_free, fn(dptr: DevPtr), [cuMemFree_v2];
    cuMemAllocAsync since 11020 = alloc::mem_alloc_async,
        fn(dptr: *mut DevPtr, size: usize, stream: Stream), [cuMemAllocAsync, cuMemAllocAsync_ptsz];
    cuMemFreeAsync since 11020 = alloc::mem_free_async,
        fn(dptr: DevPtr, stream: Stream), [cuMemFreeAsync, cuMemFreeAsync_ptsz];
    cuMemGetAddressRange since 3020 = query::address_range,
        fn(base: *mut DevPtr, size: *mut usize, dptr: DevPtr), [cuMemGetAddressRange_v2];

    // Copies (`copy.rs`).
    cuMemcpy since 4000 = copy::dev_dev, fn(dst: DevPtr, src: DevPtr, n: usize),
        [cuMemcpy, cuMemcpy_ptds];
    cuMemcpyAsync since 4000 = copy::dev_dev_async,
        fn(dst: DevPtr, src: DevPtr, n: usize, stream: Stream), [cuMemcpyAsync, cuMemcpyAsync_ptsz];
    cuMemcpyHtoD since 3020 = copy::htod, fn(dst: DevPtr, src: *const c_void, n: usize),
        [cuMemcpyHtoD_v2, cuMemcpyHtoD_v2_ptds];
    cuMemcpyDtoH since 3020 = copy::dtoh, fn(dst: *mut c_void, src: DevPtr, n: usize),
        [cuMemcpyDtoH_v2, cuMemcpyDtoH_v2_ptds];
    cuMemcpyDtoD since 3020 = copy::dev_dev, fn(dst: DevPtr, src: DevPtr, n: usize),
        [cuMemcpyDtoD_v2, cuMemcpyDtoD_v2_ptds];
    cuMemcpyHtoDAsync since 3020 = copy::htod_async,
        fn(dst: DevPtr, src: *const c_void, n: usize, stream: Stream),
        [cuMemcpyHtoDAsync_v2, cuMemcpyHtoDAsync_v2_ptsz];
    cuMemcpyDtoHAsync since 3020 = copy::dtoh_async,
        fn(dst: *mut c_void, src: DevPtr, n: usize, stream: Stream),
        [cuMemcpyDtoHAsync_v2, cuMemcpyDtoHAsync_v2_ptsz];
    cuMemcpyDtoDAsync since 3020 = copy::dev_dev_async,
        fn(dst: DevPtr, src: DevPtr, n: usize, stream: Stream),
        [cuMemcpyDtoDAsync_v2, cuMemcpyDtoDAsync_v2_ptsz];
    cuMemcpyPeer since 4000 = copy::peer,
        fn(dst: DevPtr, dst_ctx: Ctx, src: DevPtr, src_ctx: Ctx, n: usize),
        [cuMemcpyPeer, cuMemcpyPeer_ptds];
    cuMemcpyPeerAsync since 4000 = copy::peer_async,
        fn(dst: DevPtr, dst_ctx: Ctx, src: DevPtr, src_ctx: Ctx, n: usize, stream: Stream),
        [cuMemcpyPeerAsync, cuMemcpyPeerAsync_ptsz];
    cuMemcpy2D since 3020 = copy::two_d, fn(p: *const copy::Memcpy2D),
        [cuMemcpy2D_v2, cuMemcpy2D_v2_ptds];
    cuMemcpy2DUnaligned since 3020 = copy::two_d, fn(p: *const copy::Memcpy2D),
        [cuMemcpy2DUnaligned_v2, cuMemcpy2DUnaligned_v2_ptds];
    cuMemcpy2DAsync since 3020 = copy::two_d_async,
        fn(p: *const copy::Memcpy2D, stream: Stream), [cuMemcpy2DAsync_v2, cuMemcpy2DAsync_v2_ptsz];

    // Sets (`set.rs`).
    cuMemsetD8 since 3020 = set::d1, fn(dst: DevPtr, v: c_uchar, n: usize),
        [cuMemsetD8_v2, cuMemsetD8_v2_ptds];
    cuMemsetD16 since 3020 = set::d1, fn(dst: DevPtr, v: c_ushort, n: usize),
        [cuMemsetD16_v2, cuMemsetD16_v2_ptds];
    cuMemsetD32 since 3020 = set::d1, fn(dst: DevPtr, v: c_uint, n: usize),
        [cuMemsetD32_v2, cuMemsetD32_v2_ptds];
    cuMemsetD8Async since 3020 = set::d1_async,
        fn(dst: DevPtr, v: c_uchar, n: usize, stream: Stream), [cuMemsetD8Async, cuMemsetD8Async_ptsz];
    cuMemsetD16Async since 3020 = set::d1_async,
        fn(dst: DevPtr, v: c_ushort, n: usize, stream: Stream),
        [cuMemsetD16Async, cuMemsetD16Async_ptsz];
    cuMemsetD32Async since 3020 = set::d1_async,
        fn(dst: DevPtr, v: c_uint, n: usize, stream: Stream),
        [cuMemsetD32Async, cuMemsetD32Async_ptsz];
    cuMemsetD2D8 since 3020 = set::d2,
        fn(dst: DevPtr, pitch: usize, v: c_uchar, w: usize, h: usize),
        [cuMemsetD2D8_v2, cuMemsetD2D8_v2_ptds];
    cuMemsetD2D16 since 3020 = set::d2,
        fn(dst: DevPtr, pitch: usize, v: c_ushort, w: usize, h: usize),
        [cuMemsetD2D16_v2, cuMemsetD2D16_v2_ptds];
    cuMemsetD2D32 since 3020 = set::d2,
        fn(dst: DevPtr, pitch: usize, v: c_uint, w: usize, h: usize),
        [cuMemsetD2D32_v2, cuMemsetD2D32_v2_ptds];
    cuMemsetD2D8Async since 3020 = set::d2_async,
        fn(dst: DevPtr, pitch: usize, v: c_uchar, w: usize, h: usize, stream: Stream),
        [cuMemsetD2D8Async, cuMemsetD2D8Async_ptsz];
    cuMemsetD2D16Async since 3020 = set::d2_async,
        fn(dst: DevPtr, pitch: usize, v: c_ushort, w: usize, h: usize, stream: Stream),
        [cuMemsetD2D16Async, cuMemsetD2D16Async_ptsz];
    cuMemsetD2D32Async since 3020 = set::d2_async,
        fn(dst: DevPtr, pitch: usize, v: c_uint, w: usize, h: usize, stream: Stream),
        [cuMemsetD2D32Async, cuMemsetD2D32Async_ptsz];

    // Launches (`launch.rs`).
    cuLaunchKernel since 4000 = launch::classic,
        fn(f: launch::Func, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint,
           bz: c_uint, shared: c_uint, stream: Stream, params: *mut *mut c_void,
           extra: *mut *mut c_void),
        [cuLaunchKernel, cuLaunchKernel_ptsz];
    cuLaunchCooperativeKernel since 9000 = launch::cooperative,
        fn(f: launch::Func, gx: c_uint, gy: c_uint, gz: c_uint, bx: c_uint, by: c_uint,
           bz: c_uint, shared: c_uint, stream: Stream, params: *mut *mut c_void),
        [cuLaunchCooperativeKernel, cuLaunchCooperativeKernel_ptsz];
    cuLaunchKernelEx since 11060 = launch::ex,
        fn(config: *const launch::Config, f: launch::Func, params: *mut *mut c_void,
           extra: *mut *mut c_void),
        [cuLaunchKernelEx, cuLaunchKernelEx_ptsz];

    // Stream capture (`capture.rs`).
    cuStreamBeginCapture since 10010 = capture::begin, fn(stream: Stream, mode: c_int),
        [cuStreamBeginCapture_v2, cuStreamBeginCapture_v2_ptsz];
    cuStreamEndCapture since 10000 = capture::end,
        fn(stream: Stream, graph: *mut *mut c_void), [cuStreamEndCapture, cuStreamEndCapture_ptsz];

    // Waits and teardown (`sync.rs`).
    cuCtxSynchronize since 2000 = sync::context, fn(ctx: Ctx), [cuCtxSynchronize];
    cuStreamSynchronize since 2000 = sync::stream, fn(stream: Stream),
        [cuStreamSynchronize, cuStreamSynchronize_ptsz];
    cuEventSynchronize since 2000 = sync::event, fn(event: *mut c_void), [cuEventSynchronize];
    cuDevicePrimaryCtxReset since 11000 = sync::primary_reset, fn(dev: c_int),
        [cuDevicePrimaryCtxReset_v2];
    cuCtxDestroy since 4000 = sync::destroy, fn(ctx: Ctx), [cuCtxDestroy_v2];
}

/// The hook exported as `symbol` and its variant, for a symbol of the table.
pub fn hook_for_symbol(symbol: &CStr) -> Option<(HookFn, &'static Variant)> {
    let name = symbol.to_bytes();
    if !name.starts_with(b"cu") {
        return None;
    }
    TABLE
        .iter()
        .flat_map(|e| e.variants.iter())
        .find(|v| v.exists() && v.name().as_bytes() == name)
        .and_then(|v| Some((v.hook?, v)))
}

/// The entry point `cuGetProcAddress` is asked for as `symbol` at `version`, if hooked.
pub fn entry_for(symbol: &CStr, version: c_int) -> Option<&'static Entry> {
    let name = symbol.to_bytes();
    TABLE
        .iter()
        .copied()
        .find(|e| e.name.as_bytes() == name && version >= e.since)
}
