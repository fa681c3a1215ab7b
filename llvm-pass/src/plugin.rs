//! The `llvmGetPassPluginInfo` entry point. It must be exported from the Rust cdylib
//! (symbols of the static C++ shim are not exported), so it forwards to the shim.

use crate::ffi::{cusafe_plugin_info, PassPluginLibraryInfo};

/// The plugin entry point LLVM looks up after `dlopen`.
#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    unsafe { cusafe_plugin_info() }
}
