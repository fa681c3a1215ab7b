//! A thin, safe wrapper over libnvfatbin (CUDA's fatbinary-creation library), loaded at
//! run time with libloading. Only the calls `cusafe-fatbinary` needs are bound; the
//! signatures follow `nvFatbin.h` (nvidia-nvfatbin-cu12 12.9).

use std::ffi::{c_char, c_int, c_void, CStr, CString, OsStr};
use std::ptr;

use libloading::Library;
use thiserror::Error;

/// The soname the CUDA 12 wheels ship.
pub const SONAME: &str = "libnvfatbin.so.12";

type Handle = *mut c_void;
type CreateFn = unsafe extern "C" fn(*mut Handle, *const *const c_char, usize) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut Handle) -> c_int;
type AddPtxFn = unsafe extern "C" fn(
    Handle,
    *const c_char,
    usize,
    *const c_char,
    *const c_char,
    *const c_char,
) -> c_int;
type AddCubinFn =
    unsafe extern "C" fn(Handle, *const c_void, usize, *const c_char, *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(Handle, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(Handle, *mut c_void) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;

/// A libnvfatbin failure.
#[derive(Debug, Error)]
pub enum NvFatbinError {
    /// dlopen failed.
    #[error("cannot load {path}: {source}")]
    Load {
        /// What was opened.
        path: String,
        /// dlopen's message.
        #[source]
        source: libloading::Error,
    },
    /// The library lacks a function.
    #[error("{path} has no {symbol}: {source}")]
    Symbol {
        /// The library.
        path: String,
        /// The function.
        symbol: &'static str,
        /// dlsym's message.
        #[source]
        source: libloading::Error,
    },
    /// A call returned an error.
    #[error("{call} failed: {message} (nvFatbinResult {code})")]
    Call {
        /// The function.
        call: &'static str,
        /// The result code.
        code: c_int,
        /// nvFatbinGetErrorString's text.
        message: String,
    },
    /// A string handed to the library contains a NUL byte.
    #[error("{0:?} contains a NUL byte")]
    Nul(String),
}

/// What an entry of the fatbinary holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A cubin (ELF) built by ptxas.
    Cubin,
    /// PTX text, for the driver to JIT-compile.
    Ptx,
}

/// One image to put into the fatbinary.
#[derive(Debug, Clone, Copy)]
pub struct Entry<'a> {
    /// Cubin or PTX.
    pub kind: EntryKind,
    /// The numeric architecture, the `90` of `sm_90`/`compute_90` (`90a` for `sm_90a`).
    pub arch: &'a str,
    /// A name for the entry (shown by tools such as cuobjdump).
    pub identifier: &'a str,
    /// The file's bytes.
    pub data: &'a [u8],
}

/// libnvfatbin, loaded.
pub struct NvFatbin {
    create: CreateFn,
    destroy: DestroyFn,
    add_ptx: AddPtxFn,
    add_cubin: AddCubinFn,
    size: SizeFn,
    get: GetFn,
    error_string: ErrorStringFn,
    // Keeps the function pointers above valid; dropped last.
    _lib: Library,
}

impl NvFatbin {
    /// Loads the library from `path` (a path, or a bare soname for the dynamic loader's
    /// search).
    pub fn open(path: &OsStr) -> Result<Self, NvFatbinError> {
        let shown = path.to_string_lossy().into_owned();
        // SAFETY: libnvfatbin's initialisers have no preconditions.
        let lib = unsafe { Library::new(path) }.map_err(|source| NvFatbinError::Load {
            path: shown.clone(),
            source,
        })?;
        macro_rules! sym {
            ($name:literal, $ty:ty) => {{
                // SAFETY: the type is the one nvFatbin.h declares for this symbol.
                let s = unsafe { lib.get::<$ty>(concat!($name, "\0").as_bytes()) };
                *s.map_err(|source| NvFatbinError::Symbol {
                    path: shown.clone(),
                    symbol: $name,
                    source,
                })?
            }};
        }
        Ok(Self {
            create: sym!("nvFatbinCreate", CreateFn),
            destroy: sym!("nvFatbinDestroy", DestroyFn),
            add_ptx: sym!("nvFatbinAddPTX", AddPtxFn),
            add_cubin: sym!("nvFatbinAddCubin", AddCubinFn),
            size: sym!("nvFatbinSize", SizeFn),
            get: sym!("nvFatbinGet", GetFn),
            error_string: sym!("nvFatbinGetErrorString", ErrorStringFn),
            _lib: lib,
        })
    }

    /// Builds a fatbinary with the given creation options (e.g. `-64`, `-g`,
    /// `-compress=false`) and entries, and returns its bytes.
    pub fn build(&self, options: &[&str], entries: &[Entry<'_>]) -> Result<Vec<u8>, NvFatbinError> {
        let options = options
            .iter()
            .map(|o| cstring(o))
            .collect::<Result<Vec<_>, _>>()?;
        let option_ptrs: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut handle: Handle = ptr::null_mut();
        // SAFETY: the option array and its strings outlive the call.
        let code = unsafe { (self.create)(&mut handle, option_ptrs.as_ptr(), option_ptrs.len()) };
        self.check("nvFatbinCreate", code)?;
        let guard = HandleGuard { lib: self, handle };

        for entry in entries {
            let arch = cstring(entry.arch)?;
            let identifier = cstring(entry.identifier)?;
            let code = match entry.kind {
                EntryKind::Cubin => {
                    // SAFETY: data, arch and identifier are valid for the call.
                    unsafe {
                        (self.add_cubin)(
                            guard.handle,
                            entry.data.as_ptr().cast(),
                            entry.data.len(),
                            arch.as_ptr(),
                            identifier.as_ptr(),
                        )
                    }
                }
                EntryKind::Ptx => {
                    // The size must include a terminating NUL.
                    let mut ptx = entry.data.to_vec();
                    if ptx.last() != Some(&0) {
                        ptx.push(0);
                    }
                    let no_options = c"";
                    // SAFETY: as above; ptx is NUL-terminated and its size counts the NUL.
                    unsafe {
                        (self.add_ptx)(
                            guard.handle,
                            ptx.as_ptr().cast(),
                            ptx.len(),
                            arch.as_ptr(),
                            identifier.as_ptr(),
                            no_options.as_ptr(),
                        )
                    }
                }
            };
            let call = match entry.kind {
                EntryKind::Cubin => "nvFatbinAddCubin",
                EntryKind::Ptx => "nvFatbinAddPTX",
            };
            self.check(call, code)?;
        }

        let mut size = 0usize;
        // SAFETY: the handle is live.
        let code = unsafe { (self.size)(guard.handle, &mut size) };
        self.check("nvFatbinSize", code)?;
        let mut bytes = vec![0u8; size];
        // SAFETY: the buffer holds the size nvFatbinSize reported.
        let code = unsafe { (self.get)(guard.handle, bytes.as_mut_ptr().cast()) };
        self.check("nvFatbinGet", code)?;
        Ok(bytes)
    }

    fn check(&self, call: &'static str, code: c_int) -> Result<(), NvFatbinError> {
        if code == 0 {
            return Ok(());
        }
        // SAFETY: nvFatbinGetErrorString returns a static string or null.
        let text = unsafe { (self.error_string)(code) };
        let message = if text.is_null() {
            "unknown error".to_owned()
        } else {
            // SAFETY: non-null results are NUL-terminated static strings.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        };
        Err(NvFatbinError::Call {
            call,
            code,
            message,
        })
    }
}

/// Destroys an nvFatbin handle when dropped.
struct HandleGuard<'a> {
    lib: &'a NvFatbin,
    handle: Handle,
}

impl Drop for HandleGuard<'_> {
    fn drop(&mut self) {
        // SAFETY: the handle came from nvFatbinCreate and is destroyed once. A failure
        // here cannot be acted on.
        unsafe { (self.lib.destroy)(&mut self.handle) };
    }
}

fn cstring(s: &str) -> Result<CString, NvFatbinError> {
    CString::new(s).map_err(|_| NvFatbinError::Nul(s.to_owned()))
}
