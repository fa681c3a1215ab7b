//! Reports: what went wrong, where, and with which buffer.
//!
//! * [`page`]: reads new complete records off the report page.
//! * [`refine`]: turns a device record into a [`Report`], using the allocation table.
//! * [`host`]: builds the host-side reports (double/invalid free, API ranges, leaks).
//! * [`text`] and [`json`]: the two renderings; [`site`]: host backtraces in them;
//!   [`sink`]: where they are written.

pub mod host;
pub mod json;
pub mod page;
pub mod refine;
pub mod sink;
pub mod site;
pub mod text;

use std::backtrace::Backtrace;
use std::sync::Arc;

use crate::alloc::BlockInfo;

/// The error kinds cusafe reports.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// A live cusafe buffer accessed outside its exact bounds.
    HeapBufferOverflow,
    /// A freed buffer accessed (device or API).
    UseAfterFree,
    /// A pointer whose arithmetic left its buffer was dereferenced.
    PointerOverflow,
    /// An access through a pointer that is in no known allocation: an address in a
    /// cusafe window that belongs to no buffer, a kernel argument in no memory the driver
    /// knows, or a pointer with corrupted high bits.
    WildAccess,
    /// An access in the null page through an untagged pointer (null plus an offset).
    NullDereference,
    /// A local (stack) array accessed outside its bounds.
    StackBufferOverflow,
    /// A `__shared__` array, or the dynamic shared-memory window, accessed outside its bounds.
    SharedBufferOverflow,
    /// A `__device__` global variable accessed outside its bounds.
    GlobalBufferOverflow,
    /// A local array used through a pointer after its function returned (or after a
    /// later call reused the frame's depth).
    StackUseAfterReturn,
    /// A block-scoped local array used through a pointer after its scope ended (its
    /// function still running).
    StackUseAfterScope,
    /// `cudaFree` of a buffer that was already freed.
    DoubleFree,
    /// `cudaFree` of a pointer that is not the start of a buffer.
    InvalidFree,
    /// A copy or set API call whose range does not fit in the buffer.
    ApiOutOfBounds,
    /// A buffer still allocated at exit.
    Leak,
    /// An allocation call asked for more bytes than the device has (often a negative
    /// `int` converted to `size_t`).
    AllocationSizeTooBig,
    /// A CUDA API call returned an error (`report_api_errors=1`).
    ApiError,
}

impl Kind {
    /// The kind's name as reports print it.
    pub fn name(self) -> &'static str {
        match self {
            Kind::HeapBufferOverflow => "heap-buffer-overflow",
            Kind::UseAfterFree => "use-after-free",
            Kind::PointerOverflow => "pointer-overflow",
            Kind::WildAccess => "wild-access",
            Kind::NullDereference => "null-dereference",
            Kind::StackBufferOverflow => "stack-buffer-overflow",
            Kind::SharedBufferOverflow => "shared-buffer-overflow",
            Kind::GlobalBufferOverflow => "global-buffer-overflow",
            Kind::StackUseAfterReturn => "stack-use-after-return",
            Kind::StackUseAfterScope => "stack-use-after-scope",
            Kind::DoubleFree => "double-free",
            Kind::InvalidFree => "invalid-free",
            Kind::ApiOutOfBounds => "api-out-of-bounds",
            Kind::Leak => "leak",
            Kind::AllocationSizeTooBig => "allocation-size-too-big",
            Kind::ApiError => "api-error",
        }
    }

    /// One line on what to do about it.
    pub fn hint(self) -> &'static str {
        match self {
            Kind::HeapBufferOverflow => {
                "the access is outside the buffer: check the index and the launch geometry against the buffer's element count"
            }
            Kind::UseAfterFree => {
                "the buffer was freed before this use: free it only after the last kernel or copy that uses it, and drop stale copies of the pointer"
            }
            Kind::PointerOverflow => {
                "pointer arithmetic moved the pointer out of its buffer before it was dereferenced: check the offset computation"
            }
            Kind::WildAccess => {
                "the pointer points into no buffer cusafe knows: it is uninitialised, corrupted, computed from an unrelated value, or a host pointer passed to a kernel (check that an allocation before it did not fail)"
            }
            Kind::NullDereference => {
                "the pointer is null (or null plus an offset): check the allocation or lookup that should have set it, and guard optional buffers with `if (p)`"
            }
            Kind::StackBufferOverflow => {
                "the access is outside a local array: check the index against the array's length"
            }
            Kind::SharedBufferOverflow => {
                "the access is outside a __shared__ array (or the dynamic shared memory the launch gave): check the index against the array's length and the launch's shared-memory size"
            }
            Kind::GlobalBufferOverflow => {
                "the access is outside a __device__ global array: check the index against the array's length"
            }
            Kind::StackUseAfterReturn => {
                "a pointer to a local array was used after its function returned: do not keep pointers to locals beyond the call that owns them"
            }
            Kind::StackUseAfterScope => {
                "a pointer to a block-scoped local array was used after the block ended: declare the array in the scope where the pointer is used"
            }
            Kind::DoubleFree => {
                "the buffer was already freed: free each allocation exactly once (reset the pointer after cudaFree, free or delete)"
            }
            Kind::InvalidFree => {
                "free exactly the pointer the allocation returned, with the matching call (cudaFree for cudaMalloc, free/delete in device code for malloc/new there): not an interior pointer or other memory"
            }
            Kind::ApiOutOfBounds => {
                "the call's byte range does not fit in the buffer: check the byte count (elements * sizeof) and the offsets"
            }
            Kind::Leak => {
                "cudaFree the buffer when done with it, or set CUSAFE_OPTIONS=detect_leaks=0 if the leak is intended"
            }
            Kind::AllocationSizeTooBig => {
                "the size is larger than the device's memory, often an int count that overflowed or went negative before the conversion to size_t: compute sizes in size_t; CUSAFE_OPTIONS=allocator_may_return_error=1 returns cudaErrorMemoryAllocation instead"
            }
            Kind::ApiError => {
                "check the return value of every CUDA call (and cudaGetLastError after launches): the program went on as if the call had worked"
            }
        }
    }
}

/// Where the error happened.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Origin {
    /// In a kernel, found by an instrumented check.
    Device {
        /// Kernel name, demangled when possible.
        kernel: String,
        /// Source file ("" if unknown).
        file: String,
        /// Source line (0 if unknown).
        line: u32,
        /// Source column (0 if unknown).
        col: u32,
        /// threadIdx.
        thread: [u32; 3],
        /// blockIdx.
        block: [u32; 3],
        /// The device the kernel ran on, when the process uses several.
        device: Option<i32>,
    },
    /// In a host API call, found by the runtime.
    Host {
        /// The API, e.g. `"cudaMemcpy"`.
        api: &'static str,
        /// The operand checked, e.g. `"dst"` (`None` when the call has one pointer).
        operand: Option<&'static str>,
    },
}

/// The memory access.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Access {
    /// A write (else a read).
    pub write: bool,
    /// An atomic read-modify-write.
    pub atomic: bool,
    /// A range of a memory intrinsic or API call.
    pub range: bool,
    /// Bytes accessed.
    pub size: u64,
}

/// The buffer an access or call concerns.
#[derive(Clone, Debug)]
pub struct Buffer {
    /// The block as the table knows it.
    pub block: BlockInfo,
    /// Offset of the access from the payload start (negative: before it).
    pub offset: i64,
}

/// One finding.
#[derive(Clone, Debug)]
pub struct Report {
    /// What went wrong.
    pub kind: Kind,
    /// Where.
    pub origin: Origin,
    /// The access, if the finding is about one.
    pub access: Option<Access>,
    /// The address accessed or passed (as the program had it, poison bit included).
    pub address: u64,
    /// The buffer concerned, if known.
    pub buffer: Option<Buffer>,
    /// The address's relation to the buffer in words, e.g. "4 bytes after the end of
    /// the 400-byte buffer #3".
    pub detail: String,
    /// Where the program made the API call (host findings; set when reported).
    pub call_site: Option<Arc<Backtrace>>,
}

/// Describes where `offset` (from the payload start) with `len` bytes lies relative to
/// a buffer of `size` bytes.
pub fn relation(offset: i64, len: u64, size: u64) -> String {
    let size_i = size as i64;
    if offset < 0 {
        format!("{} bytes before the start of", offset.unsigned_abs())
    } else if offset >= size_i {
        format!("{} bytes after the end of", offset - size_i)
    } else if offset as u64 + len > size {
        format!(
            "at offset {offset}, running {} bytes past the end of",
            offset as u64 + len - size
        )
    } else {
        format!("at offset {offset} inside")
    }
}

/// "the 400-byte buffer #3 (freed)" and the like.
pub fn buffer_phrase(b: &BlockInfo) -> String {
    format!(
        "the {}-byte buffer #{} ({})",
        b.size,
        b.id,
        if b.freed { "freed" } else { "live" }
    )
}

/// The demangled form of a kernel name, or the name itself.
pub fn demangle(name: &str) -> String {
    cpp_demangle::Symbol::new(name)
        .ok()
        .and_then(|s| s.demangle().ok())
        .unwrap_or_else(|| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relations() {
        assert_eq!(relation(400, 4, 400), "0 bytes after the end of");
        assert_eq!(relation(-8, 4, 400), "8 bytes before the start of");
        assert_eq!(
            relation(398, 4, 400),
            "at offset 398, running 2 bytes past the end of"
        );
        assert_eq!(relation(10, 4, 400), "at offset 10 inside");
    }

    #[test]
    fn demangles_kernel_names() {
        assert_eq!(demangle("_Z7add_onePii"), "add_one(int*, int)");
        assert_eq!(demangle("not_mangled"), "not_mangled");
    }
}
