//! `dlsym`: how programs that never link libcuda find the driver. Static cudart (nvcc's
//! default), dynamic cudart 12/13 and frameworks' own driver loaders all `dlopen`
//! libcuda and ask it for `cuGetProcAddress` (or each entry point) by name. A lookup that
//! lands in libcuda on an entry point of the hook table gets the hook instead, and the
//! real address is kept for the hook to call. Every other lookup, and every lookup made
//! by this library itself (cudarc loading the driver), gets exactly what glibc says.
//!
//! `dlopen` needs no hook: whatever handle the program holds, its lookups come here.
//!
//! `RTLD_NEXT` depends on the caller, which a forwarded call would change to this
//! library. On x86_64 a lookup of a name the hooks never replace (every name but the
//! driver's hooked entry points) jumps to glibc's `dlsym` with the caller's return address
//! still on the stack, so glibc answers it as the caller's own call, with no work here.
//! For the driver's names, and on aarch64 for every name, a naked entry passes the
//! caller's return address along and lookups relative to another object are searched
//! object by object (`libcuda::next_after`, which `dlopen`s each object). That search
//! must stay off the other lookups: a profiler's injected library that interposes
//! `dlopen` looks up the real one with `dlsym(RTLD_NEXT, "dlopen")` while its own
//! `dlopen` is not ready yet, and Nsight Compute hung there for ever.

use std::ffi::{c_char, c_void, CStr};

use super::driver::hook_for_symbol;
use super::procaddr;
use crate::cuda::libcuda::{in_libcuda, in_this_library, next_after, real_dlsym};

/// The hook of `dlsym`: jumps to glibc's `dlsym` when [`glibc_answers`] says so, else
/// passes the caller's return address to [`dlsym_from`].
///
/// # Safety
/// As `dlsym(3)`.
#[cfg(target_arch = "x86_64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    core::arch::naked_asm!(
        // Keep both arguments; at the call the stack is 16-byte aligned again (8 at
        // entry, then three 8-byte steps).
        "push rdi",
        "push rsi",
        "sub rsp, 8",
        "mov rdi, rsi",
        "call {route}",
        "add rsp, 8",
        "pop rsi",
        "pop rdi",
        "test rax, rax",
        "jz 2f",
        // glibc's dlsym, by a jump: the return address on top of the stack is the
        // caller's, so glibc resolves RTLD_NEXT from the caller's object.
        "jmp rax",
        // At entry the return address is on top of the stack; a tail jump keeps it there.
        "2:",
        "mov rdx, [rsp]",
        "jmp {from}",
        route = sym glibc_answers,
        from = sym dlsym_from,
    )
}

/// glibc's `dlsym` when its answer for `symbol` is the answer (the name is no entry point
/// the hooks replace, or there is no name: glibc reports the error); 0 when the lookup
/// needs [`dlsym_from`]. Reads only the name and the static hook table: no lock, no
/// allocation, no call that a loader's or an interposer's start-up could be inside.
#[cfg(target_arch = "x86_64")]
extern "C" fn glibc_answers(symbol: *const c_char) -> usize {
    if !symbol.is_null() {
        // SAFETY: a NUL-terminated name (dlsym's contract).
        let name = unsafe { CStr::from_ptr(symbol) };
        if procaddr::hook_for(name).is_some() || hook_for_symbol(name).is_some() {
            return 0;
        }
    }
    real_dlsym() as usize
}

/// The hook of `dlsym`: passes the caller's return address to [`dlsym_from`].
///
/// # Safety
/// As `dlsym(3)`.
#[cfg(target_arch = "aarch64")]
#[unsafe(naked)]
#[no_mangle]
pub unsafe extern "C" fn dlsym(handle: *mut c_void, symbol: *const c_char) -> *mut c_void {
    // The link register holds the return address; a plain branch keeps it.
    core::arch::naked_asm!("mov x2, x30", "b {0}", sym dlsym_from)
}

/// `dlsym(handle, symbol)` for a call returning to `caller`.
unsafe extern "C" fn dlsym_from(
    handle: *mut c_void,
    symbol: *const c_char,
    caller: usize,
) -> *mut c_void {
    if symbol.is_null() {
        // SAFETY: glibc reports the error itself.
        return unsafe { real_dlsym()(handle, symbol) };
    }
    let ours = in_this_library(caller);
    let found = if handle == libc::RTLD_NEXT && !ours {
        next_after(caller, symbol)
    } else {
        // SAFETY: the caller's arguments; handles other than RTLD_NEXT do not depend on
        // the caller (RTLD_DEFAULT only through its namespace, which is the base one).
        unsafe { real_dlsym()(handle, symbol) }
    };
    if found.is_null() || ours {
        return found;
    }
    // SAFETY: a NUL-terminated name (dlsym's contract).
    let name = unsafe { CStr::from_ptr(symbol) };
    if let Some(hook) = procaddr::hook_for(name).filter(|_| in_libcuda(found as usize)) {
        return hook;
    }
    match hook_for_symbol(name) {
        Some((hook, variant)) if in_libcuda(found as usize) => {
            variant.offer(found as usize);
            hook as *mut c_void
        }
        _ => found,
    }
}
