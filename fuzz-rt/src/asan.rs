//! AddressSanitizer findings as JSON lines.
//!
//! ASan calls `__asan_on_error` (a weak hook in its runtime; this archive's definition
//! wins at link time) just before it prints a report and ends the process. The hook
//! appends one JSON object to the file named by `CUSAFE_FUZZ_HOST_JSON`: the bug kind
//! ASan names, the address and access, and the return addresses of the stack as
//! (module, offset) pairs. The engine symbolises them from the binary's debug info, so
//! no `llvm-symbolizer` is needed where the target runs. [`__asan_default_options`]
//! makes a fuzz target usable with CUDA outside the engine too.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::io::Write;

use cusafe_format::fuzz::HOST_JSON_ENV;

extern "C" {
    fn backtrace(buffer: *mut *mut c_void, size: c_int) -> c_int;
}

fn asan_fn(name: &CStr) -> *mut c_void {
    // SAFETY: dlsym with RTLD_DEFAULT and a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

fn call_usize(name: &CStr) -> Option<usize> {
    let f = asan_fn(name);
    // SAFETY: ASan's report getters take no argument and return a word.
    (!f.is_null())
        .then(|| unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> usize>(f)() })
}

fn description() -> String {
    let f = asan_fn(c"__asan_get_report_description");
    if f.is_null() {
        return "unknown".into();
    }
    // SAFETY: returns a static NUL-terminated string.
    let p = unsafe { std::mem::transmute::<*mut c_void, extern "C" fn() -> *const c_char>(f)() };
    if p.is_null() {
        return "unknown".into();
    }
    // SAFETY: checked non-null above.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// One stack frame as (module path, offset from its load base, absolute pc).
fn frames() -> Vec<(String, usize, usize)> {
    let mut buf = [std::ptr::null_mut::<c_void>(); 32];
    // SAFETY: buf holds 32 entries.
    let n = unsafe { backtrace(buf.as_mut_ptr(), buf.len() as c_int) }.max(0) as usize;
    buf[..n]
        .iter()
        .filter_map(|&pc| {
            // SAFETY: dladdr fills `info` for an address of a loaded module.
            let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
            if unsafe { libc::dladdr(pc, &mut info) } == 0 || info.dli_fname.is_null() {
                return None;
            }
            // SAFETY: dli_fname is a NUL-terminated path.
            let module = unsafe { CStr::from_ptr(info.dli_fname) }
                .to_string_lossy()
                .into_owned();
            // A return address points after the call: step back into it.
            let pc = (pc as usize).saturating_sub(1);
            Some((module, pc - info.dli_fbase as usize, pc))
        })
        .collect()
}

fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The JSON line for the current ASan report.
pub fn record() -> String {
    let frames: Vec<String> = frames()
        .iter()
        .map(|(m, off, pc)| {
            format!(
                "{{\"module\":{},\"offset\":{off},\"pc\":{pc}}}",
                json_string(m)
            )
        })
        .collect();
    format!(
        "{{\"tool\":\"asan\",\"side\":\"host\",\"kind\":{},\"address\":{},\"access_size\":{},\"write\":{},\"frames\":[{}]}}\n",
        json_string(&description()),
        call_usize(c"__asan_get_report_address").unwrap_or(0),
        call_usize(c"__asan_get_report_access_size").unwrap_or(0),
        call_usize(c"__asan_get_report_access_type").unwrap_or(0) != 0,
        frames.join(",")
    )
}

/// ASan's error hook: append [`record`] to `CUSAFE_FUZZ_HOST_JSON` when set.
#[no_mangle]
pub extern "C" fn __asan_on_error() {
    let Some(path) = std::env::var_os(HOST_JSON_ENV) else {
        return;
    };
    if let Ok(mut f) = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
    {
        let _ = f.write_all(record().as_bytes());
    }
}

/// ASan's defaults for a fuzz target, so that it also runs outside the engine:
/// `protect_shadow_gap=0` (the CUDA driver maps memory in the gap; with the gap
/// protected, CUDA fails to initialise with error 2 — measured on an H100 with driver
/// 580), `detect_leaks=0` (the CUDA runtime's own allocations at exit are not the
/// program's leaks) and `halt_on_error=0`: host code built with
/// `-fsanitize-recover=address` (as `--cusafe-fuzz` builds it) reports a site once per
/// process and goes on, as recover-mode device code does, so that a persistent process
/// outlives inputs that meet a known host bug. `ASAN_OPTIONS` still overrides them.
#[no_mangle]
pub extern "C" fn __asan_default_options() -> *const c_char {
    c"protect_shadow_gap=0:detect_leaks=0:halt_on_error=0".as_ptr()
}
