//! What the allocator frontend needs from the memory system: the driver's VMM
//! operations, reduced to six calls.

use std::fmt;

/// A failed backend operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendError {
    /// The operation, e.g. `"cuMemMap"`.
    pub op: &'static str,
    /// The driver's error code (0 when the failure is not a driver error).
    pub code: i32,
    /// What went wrong, in words.
    pub message: String,
}

impl fmt::Display for BackendError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} failed: {}", self.op, self.message)?;
        if self.code != 0 {
            write!(f, " (error {})", self.code)?;
        }
        Ok(())
    }
}

impl std::error::Error for BackendError {}

/// A 32-bit fill of `rows` rows of `words` u32 words each, rows `pitch` bytes apart
/// (`cuMemsetD2D32`; one row is `cuMemsetD32`). Issued asynchronously but ordered
/// before every later kernel launch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fill {
    /// First address written.
    pub va: u64,
    /// The value of every word.
    pub value: u32,
    /// Words per row.
    pub words: u64,
    /// Rows.
    pub rows: u64,
    /// Bytes from one row's start to the next (ignored for one row).
    pub pitch: u64,
}

impl Fill {
    /// One u32 word at `va`.
    pub fn word(va: u64, value: u32) -> Fill {
        Fill {
            va,
            value,
            words: 1,
            rows: 1,
            pitch: 4,
        }
    }

    /// `bytes` bytes (a multiple of 4) from `va`, all words `value`.
    pub fn span(va: u64, bytes: u64, value: u32) -> Fill {
        Fill {
            va,
            value,
            words: bytes / 4,
            rows: 1,
            pitch: bytes,
        }
    }

    /// Every byte address this fill writes, as (start, end) ranges.
    pub fn ranges(&self) -> impl Iterator<Item = (u64, u64)> + '_ {
        (0..self.rows).map(move |r| {
            let start = self.va + r * self.pitch;
            (start, start + self.words * 4)
        })
    }
}

/// How the device may access a mapping.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// Loads and stores.
    ReadWrite,
    /// Loads only: a store faults (the tombstone, so that uninstrumented code writing
    /// through a dangling pointer cannot make its header non-zero).
    ReadOnly,
}

/// The memory system under the allocator frontend. All addresses are device virtual
/// addresses; sizes and addresses of `reserve`, `create`, `map` and `unmap` are
/// multiples of [`cusafe_format::block::GRANULE`].
pub trait Backend {
    /// A physical memory allocation (`CUmemGenericAllocationHandle`).
    type Handle: Copy + Eq + fmt::Debug;

    /// Reserves `bytes` of address space exactly at `va` (an error if it lands elsewhere).
    fn reserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError>;
    /// Frees the reservation of `bytes` at `va` (no mapping may be left in it).
    fn unreserve(&mut self, va: u64, bytes: u64) -> Result<(), BackendError>;
    /// Allocates `bytes` of physical memory on `device` (a CUDA device ordinal). Maps of
    /// it are accessible to that device and to every device that can reach it as a peer;
    /// fills of it are issued on that device.
    fn create(&mut self, bytes: u64, device: i32) -> Result<Self::Handle, BackendError>;
    /// Frees physical memory (once no mapping uses it any more).
    fn release(&mut self, handle: Self::Handle) -> Result<(), BackendError>;
    /// Maps the whole of `handle` (`bytes` long) at `va` inside a reservation with
    /// `access` for the device.
    fn map(
        &mut self,
        va: u64,
        bytes: u64,
        handle: Self::Handle,
        access: Access,
    ) -> Result<(), BackendError>;
    /// Changes the access of the mapping of `bytes` at `va`, once every fill issued
    /// so far has landed.
    fn protect(&mut self, va: u64, bytes: u64, access: Access) -> Result<(), BackendError>;
    /// Unmaps exactly one earlier mapping of `bytes` at `va`.
    fn unmap(&mut self, va: u64, bytes: u64) -> Result<(), BackendError>;
    /// Writes `fill` into mapped memory.
    fn fill32(&mut self, fill: Fill) -> Result<(), BackendError>;
}
