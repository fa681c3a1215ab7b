//! The leak policy at exit (`detect_leaks`). A native program that ends with device
//! memory still allocated has usually forgotten a `cudaFree`: with `auto` (the default)
//! every such block is listed. A framework with a caching allocator (PyTorch, CuPy,
//! JAX, TensorFlow) keeps the segments it cached until the process ends, by design:
//! when one of those is loaded, `auto` skips the check, and says so at `verbosity=1`.

use std::ffi::{c_int, c_void, CStr};

use crate::options::LeakCheck;

/// Path fragments of frameworks that keep a caching device allocator, with their names.
const CACHING_ALLOCATORS: &[(&str, &str)] = &[
    ("libc10_cuda.so", "PyTorch"),
    ("/cupy/", "CuPy"),
    ("/cupy_backends/", "CuPy"),
    ("/jaxlib/", "JAX"),
    ("/jax_plugins/", "JAX"),
    ("libtensorflow_framework.so", "TensorFlow"),
];

/// Whether to list leaks, or why not.
pub(super) enum Decision {
    /// List every live block.
    Check,
    /// Skip the check; the reason, for `verbosity=1` (`None`: the user turned it off).
    Skip(Option<String>),
}

/// Decides under `policy`, looking at the objects loaded now.
pub(super) fn decide(policy: LeakCheck) -> Decision {
    match policy {
        LeakCheck::On => Decision::Check,
        LeakCheck::Off => Decision::Skip(None),
        LeakCheck::Auto => match caching_framework() {
            None => Decision::Check,
            Some((framework, path)) => Decision::Skip(Some(format!(
                "leak check skipped: {framework} is loaded ({path}) and its caching allocator \
                 holds device memory until exit by design; set CUSAFE_OPTIONS=detect_leaks=1 \
                 to list what is still allocated"
            ))),
        },
    }
}

/// The first loaded framework with a caching allocator, and the object that told.
fn caching_framework() -> Option<(&'static str, String)> {
    let mut found: Option<(&'static str, String)> = None;
    unsafe extern "C" fn visit(
        info: *mut libc::dl_phdr_info,
        _: usize,
        data: *mut c_void,
    ) -> c_int {
        // SAFETY: dl_iterate_phdr passes a valid info; `data` is our Option.
        let (info, found) = unsafe { (&*info, &mut *data.cast::<Option<(&str, String)>>()) };
        if info.dlpi_name.is_null() {
            return 0;
        }
        // SAFETY: a NUL-terminated path.
        let path = unsafe { CStr::from_ptr(info.dlpi_name) }.to_string_lossy();
        match CACHING_ALLOCATORS
            .iter()
            .find(|(frag, _)| path.contains(frag))
        {
            Some(&(_, name)) => {
                *found = Some((name, path.into_owned()));
                1
            }
            None => 0,
        }
    }
    // SAFETY: `visit` only touches `found` through `data` during the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut found as *mut Option<_>).cast()) };
    found
}
