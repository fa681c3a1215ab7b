//! What the driver says about a kernel's launch-time windows
//! (`cusafe_format::launch`): whether it has the pass's marker, and its parameter
//! sizes. Queries only, no copies, so that this works inside stream capture.

use std::ffi::{CStr, CString};

use cudarc::driver::sys as cu;
use cusafe_format::devheap::MARKER_SYMBOL;
use cusafe_format::launch::{
    index_member_symbol, index_symbol, layout_symbol, IndexGroup, Layout, MAX_INDEX_GROUPS,
};

use super::driver::describe;

/// Most parameters a kernel can have (4 KiB of parameter space, one byte each).
const MAX_PARAMS: usize = 4096;

/// The function handle behind a launch's handle. Since CUDA 12 a launch may name a
/// library kernel (`CUkernel`, what cudart 13 and static cudart pass) where a
/// `CUfunction` was expected; the function queries refuse it, so it is turned into the
/// current context's function first. A handle that is neither is returned unchanged
/// (the queries then say what is wrong).
pub fn function_of(handle: cu::CUfunction) -> cu::CUfunction {
    let mut name = std::ptr::null();
    // SAFETY: the driver writes a pointer to a string it owns, or refuses the handle.
    if unsafe { cu::cuFuncGetName(&mut name, handle) } == cu::CUresult::CUDA_SUCCESS {
        return handle;
    }
    let mut f = std::ptr::null_mut();
    // SAFETY: writes one handle; the driver refuses what is not a kernel.
    match unsafe { cu::cuKernelGetFunction(&mut f, handle as cu::CUkernel) } {
        cu::CUresult::CUDA_SUCCESS if !f.is_null() => f,
        _ => handle,
    }
}

/// The kernel's (mangled) name, for messages and the marker's symbol.
pub fn name_of(f: cu::CUfunction) -> Result<String, String> {
    let mut p = std::ptr::null();
    // SAFETY: the driver writes a pointer to a string it owns.
    let r = unsafe { cu::cuFuncGetName(&mut p, f) };
    if r != cu::CUresult::CUDA_SUCCESS || p.is_null() {
        return Err(format!("cuFuncGetName failed: {}", describe(r)));
    }
    // SAFETY: a NUL-terminated name owned by the driver.
    Ok(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The windows and index groups kernel `f` (named `name`) takes: `None` for a kernel
/// without the pass's marker (not built by cusafe, or built without launch-time bounds).
pub fn layout_of(f: cu::CUfunction, name: &str) -> Result<Option<Layout>, String> {
    let Some(bytes) = module_global(f, &layout_symbol(name))? else {
        return Ok(None);
    };
    let sizes = param_sizes(f)?;
    let groups = index_groups(f, name, sizes.len())?;
    Layout::from_param_sizes(bytes as u32, &sizes, groups)
        .map(Some)
        .map_err(|e| e.to_string())
}

/// The index groups of kernel `f` (named `name`, with `params` parameters in all), from
/// the sizes of their marker globals (`cusafe_format::launch::index_symbol`): group `j`
/// while its marker exists, each with its members while theirs do.
fn index_groups(f: cu::CUfunction, name: &str, params: usize) -> Result<Vec<IndexGroup>, String> {
    let mut groups = Vec::new();
    while let Some(scale) = module_global(f, &index_symbol(name, groups.len()))? {
        if groups.len() == MAX_INDEX_GROUPS {
            return Err(format!("it has more than {MAX_INDEX_GROUPS} index groups"));
        }
        let mut members = Vec::new();
        while members.len() < params {
            let symbol = index_member_symbol(name, groups.len(), members.len());
            let Some(b) = module_global(f, &symbol)? else {
                break;
            };
            members.push(b as u32 - 1);
        }
        groups.push(IndexGroup {
            scale: scale as u64,
            members,
        });
    }
    Ok(groups)
}

/// Whether the module of kernel `f` allocates in device code (the pass's
/// [`MARKER_SYMBOL`]): the device heap's arena must then be mapped before it runs.
pub fn allocates(f: cu::CUfunction) -> Result<bool, String> {
    module_global(f, MARKER_SYMBOL).map(|g| g.is_some())
}

/// Whether the module of kernel `f` recurses or calls through pointers (the pass's
/// `cusafe_format::stack::MARKER_SYMBOL`): the driver cannot size its stack.
pub fn dynamic_stack(f: cu::CUfunction) -> Result<bool, String> {
    module_global(f, cusafe_format::stack::MARKER_SYMBOL).map(|g| g.is_some())
}

/// The size of the device global `symbol` in the module of kernel `f`, `None` when the
/// module has no such global.
fn module_global(f: cu::CUfunction, symbol: &str) -> Result<Option<usize>, String> {
    let mut module = std::ptr::null_mut();
    // SAFETY: writes one handle.
    let r = unsafe { cu::cuFuncGetModule(&mut module, f) };
    if r != cu::CUresult::CUDA_SUCCESS {
        return Err(format!("cuFuncGetModule failed: {}", describe(r)));
    }
    let symbol = CString::new(symbol).map_err(|e| e.to_string())?;
    let (mut dptr, mut bytes) = (0, 0);
    // SAFETY: writes an address and a size; `symbol` is NUL-terminated.
    let r = unsafe { cu::cuModuleGetGlobal_v2(&mut dptr, &mut bytes, module, symbol.as_ptr()) };
    match r {
        cu::CUresult::CUDA_SUCCESS => Ok(Some(bytes)),
        cu::CUresult::CUDA_ERROR_NOT_FOUND => Ok(None),
        _ => Err(format!("cuModuleGetGlobal failed: {}", describe(r))),
    }
}

/// The sizes of all of `f`'s parameters, in order.
fn param_sizes(f: cu::CUfunction) -> Result<Vec<u64>, String> {
    let mut sizes = Vec::new();
    while sizes.len() < MAX_PARAMS {
        let (mut offset, mut size) = (0, 0);
        // SAFETY: writes an offset and a size.
        let r = unsafe { cu::cuFuncGetParamInfo(f, sizes.len(), &mut offset, &mut size) };
        match r {
            cu::CUresult::CUDA_SUCCESS => sizes.push(size as u64),
            cu::CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(sizes),
            _ => return Err(format!("cuFuncGetParamInfo failed: {}", describe(r))),
        }
    }
    Ok(sizes)
}
