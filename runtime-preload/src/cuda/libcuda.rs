//! The real driver library (libcuda) as the dynamic linker sees it: glibc's own `dlsym`
//! (the runtime exports a `dlsym` of its own, `hooks/dlsym.rs`), the real entry point
//! behind a libcuda symbol, and whether an address lies in libcuda or in this library.
//!
//! Nothing here allocates or takes a lock that `dlsym` callers might hold: `dlsym` is
//! called from allocators' and loaders' start-up code.

use std::ffi::{c_char, c_void, CStr};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The type of `dlsym`.
pub type DlsymFn = unsafe extern "C" fn(*mut c_void, *const c_char) -> *mut c_void;

/// glibc's `dlsym` (found with `dlvsym`, which the runtime does not export).
pub fn real_dlsym() -> DlsymFn {
    static REAL: AtomicUsize = AtomicUsize::new(0);
    let mut p = REAL.load(Ordering::Acquire);
    if p == 0 {
        // glibc >= 2.34 defines dlsym@GLIBC_2.34 in libc; older ones the base version.
        for version in [c"GLIBC_2.34", c"GLIBC_2.2.5", c"GLIBC_2.17"] {
            // SAFETY: dlvsym with NUL-terminated names.
            p = unsafe { libc::dlvsym(libc::RTLD_NEXT, c"dlsym".as_ptr(), version.as_ptr()) }
                as usize;
            if p != 0 {
                break;
            }
        }
        if p == 0 {
            // SAFETY: write(2) and _exit(2) have no preconditions.
            unsafe {
                let msg = b"cusafe: error: cannot find glibc's dlsym (is this a glibc system?)\n";
                libc::write(2, msg.as_ptr().cast(), msg.len());
                libc::_exit(1)
            }
        }
        REAL.store(p, Ordering::Release);
    }
    // SAFETY: `p` is glibc's dlsym.
    unsafe { std::mem::transmute::<usize, DlsymFn>(p) }
}

/// A `dlopen` handle of the libcuda loaded in the process (`None` before the program
/// loaded it: the runtime never loads the driver for a program that did not).
fn handle() -> Option<*mut c_void> {
    static HANDLE: AtomicUsize = AtomicUsize::new(0);
    let h = HANDLE.load(Ordering::Acquire);
    if h != 0 {
        return Some(h as *mut c_void);
    }
    for name in [c"libcuda.so.1", c"libcuda.so"] {
        // SAFETY: RTLD_NOLOAD only returns a handle of an object already loaded.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if !h.is_null() {
            HANDLE.store(h as usize, Ordering::Release);
            return Some(h);
        }
    }
    None
}

/// `addr` as a function pointer of type `F` (`None` for 0).
///
/// # Safety
/// A non-zero `addr` must be a function of the C signature `F` names.
pub unsafe fn as_fn<F: Copy>(addr: usize) -> Option<F> {
    const { assert!(std::mem::size_of::<F>() == std::mem::size_of::<usize>()) };
    // SAFETY: the caller's promise.
    (addr != 0).then(|| unsafe { std::mem::transmute_copy::<usize, F>(&addr) })
}

/// The address libcuda defines for `symbol` (NUL-terminated), or 0.
pub fn symbol(symbol: &CStr) -> usize {
    match handle() {
        // SAFETY: a dlopen handle and a NUL-terminated name.
        Some(h) => unsafe { real_dlsym()(h, symbol.as_ptr()) as usize },
        None => 0,
    }
}

/// The file name (no directory) of the object containing `addr`, if any.
fn object_of(addr: usize) -> Option<(&'static [u8], usize)> {
    let mut info: libc::Dl_info = unsafe { std::mem::zeroed() };
    // SAFETY: dladdr only reads the loader's tables and writes `info`.
    if unsafe { libc::dladdr(addr as *const c_void, &mut info) } == 0 || info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: the loader's NUL-terminated path, alive while the object is loaded.
    let path = unsafe { CStr::from_ptr(info.dli_fname) }.to_bytes();
    let file = path.rsplit(|&b| b == b'/').next().unwrap_or(path);
    Some((file, info.dli_fbase as usize))
}

/// Whether `addr` lies in libcuda (`libcuda.so*`).
pub fn in_libcuda(addr: usize) -> bool {
    object_of(addr).is_some_and(|(f, _)| f.starts_with(b"libcuda.so"))
}

/// Whether `addr` lies in this library.
pub fn in_this_library(addr: usize) -> bool {
    static BASE: AtomicUsize = AtomicUsize::new(0);
    let mut base = BASE.load(Ordering::Relaxed);
    if base == 0 {
        base = object_of(in_this_library as *const () as usize).map_or(usize::MAX, |(_, b)| b);
        BASE.store(base, Ordering::Relaxed);
    }
    object_of(addr).is_some_and(|(_, b)| b == base)
}

/// `dlsym(RTLD_NEXT, name)` as seen from the object containing `caller`: the first
/// definition in an object loaded after it. The runtime's `dlsym` cannot forward
/// `RTLD_NEXT` (glibc would search after *this* library), so it searches the loaded
/// objects in load order itself.
pub fn next_after(caller: usize, name: *const c_char) -> *mut c_void {
    let Some((_, caller_base)) = object_of(caller) else {
        return std::ptr::null_mut();
    };
    struct Search {
        caller_base: usize,
        passed: bool,
        /// The caller is the main program (the first object).
        main: bool,
        first: bool,
        name: *const c_char,
        found: *mut c_void,
    }
    /// Where the object's first loaded segment starts (what `dladdr` calls its base).
    fn base_of(info: &libc::dl_phdr_info) -> Option<usize> {
        (0..info.dlpi_phnum as usize)
            // SAFETY: dlpi_phdr has dlpi_phnum entries.
            .map(|i| unsafe { &*info.dlpi_phdr.add(i) })
            .find(|ph| ph.p_type == libc::PT_LOAD)
            .map(|ph| info.dlpi_addr as usize + (ph.p_vaddr & !0xfff) as usize)
    }
    unsafe extern "C" fn visit(info: *mut libc::dl_phdr_info, _: usize, data: *mut c_void) -> i32 {
        // SAFETY: dl_iterate_phdr passes a valid info; `data` is our Search.
        let (info, s) = unsafe { (&*info, &mut *data.cast::<Search>()) };
        let base = base_of(info);
        let first = std::mem::replace(&mut s.first, false);
        if !s.passed {
            s.passed = base == Some(s.caller_base);
            s.main = s.passed && first;
            // From the main program, "next" is every other object: glibc's own search
            // from this library gives that (this library comes right after it), and it
            // must not dlopen (sanitizers look up their functions this way before their
            // dlopen interceptor works).
            return i32::from(s.main);
        }
        // SAFETY: dlpi_name is a NUL-terminated path ("" for the main program).
        let name = unsafe { CStr::from_ptr(info.dlpi_name) };
        if name.is_empty() {
            return 0;
        }
        // SAFETY: RTLD_NOLOAD only returns a handle of a loaded object.
        let h = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_LAZY | libc::RTLD_NOLOAD) };
        if h.is_null() {
            return 0;
        }
        // SAFETY: a dlopen handle and the caller's NUL-terminated name.
        let p = unsafe { real_dlsym()(h, s.name) };
        // SAFETY: balances the dlopen above.
        unsafe { libc::dlclose(h) };
        // A handle lookup also searches the object's dependencies: keep only its own.
        if !p.is_null() && object_of(p as usize).map(|(_, b)| b) == base {
            s.found = p;
            return 1;
        }
        0
    }
    let mut s = Search {
        caller_base,
        passed: false,
        main: false,
        first: true,
        name,
        found: std::ptr::null_mut(),
    };
    // SAFETY: `visit` only touches `s` through `data` during the call.
    unsafe { libc::dl_iterate_phdr(Some(visit), (&mut s as *mut Search).cast()) };
    if s.main {
        // SAFETY: NUL-terminated name; RTLD_NEXT from this library.
        return unsafe { real_dlsym()(libc::RTLD_NEXT, name) };
    }
    s.found
}
