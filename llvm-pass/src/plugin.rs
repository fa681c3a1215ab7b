//! The `llvmGetPassPluginInfo` entry point. It must be exported from the Rust cdylib
//! (symbols of the static C++ shim are not exported), so it forwards to the shim.

use std::ffi::{c_char, c_void};

/// `llvm::PassPluginLibraryInfo`, as laid out by LLVM 19.
#[repr(C)]
pub struct PassPluginLibraryInfo {
    api_version: u32,
    plugin_name: *const c_char,
    plugin_version: *const c_char,
    register_callbacks: *const c_void,
}

extern "C" {
    fn cusafe_plugin_info() -> PassPluginLibraryInfo;
}

/// The plugin entry point LLVM looks up after `dlopen`.
#[no_mangle]
pub extern "C" fn llvmGetPassPluginInfo() -> PassPluginLibraryInfo {
    unsafe { cusafe_plugin_info() }
}
