//! Report page and records: written by device code (cold path), read by the host
//! runtime, also after a trap has killed the context.
//!
//! The page is pinned host memory mapped into the device. Its header:
//!
//! | offset | type | meaning |
//! |---|---|---|
//! | 0 | u32 | [`PAGE_MAGIC`] |
//! | 4 | u32 | [`PAGE_VERSION`] |
//! | 8 | u32 | capacity in records ([`PAGE_CAPACITY`]) |
//! | 12 | u32 | reserved (0); the claim counter is in the [runtime page](crate::rtpage) |
//!
//! The host finds complete records by their state word, not by a count.
//! Records of [`RECORD_BYTES`] bytes each follow from [`PAGE_HEADER_BYTES`]; their
//! fields, in order (offsets in [`field`]):
//!
//! | field | type | meaning |
//! |---|---|---|
//! | [`field::STATE`] | u32 | 0 empty, [`STATE_WRITING`], [`STATE_COMPLETE`] (written after a system fence) |
//! | [`field::KIND`] | u32 | [`DeviceKind`] |
//! | [`field::ADDR`] | u64 | accessed address (as the program computed it) |
//! | [`field::ROOT`] | u64 | root pointer the address was derived from (names the buffer) |
//! | [`field::HEADER_SIZE`] | u64 | header size the device saw ([`NO_HEADER`] if it could not read one) |
//! | [`field::ACCESS_SIZE`] | u32 | access size in bytes (low 32 bits for memory intrinsics) |
//! | [`field::FLAGS`] | u32 | access flags ([`ACCESS_WRITE`], [`ACCESS_ATOMIC`], [`ACCESS_RANGE`]) |
//! | [`field::THREAD`] | u32 x 3 | threadIdx x, y, z |
//! | [`field::BLOCK`] | u32 x 3 | blockIdx x, y, z |
//! | [`field::LOC`] | u8 x [`LOC_BYTES`] | site text `kernel \x1f file \x1f line \x1f col \x1f object`, NUL-terminated |
//!
//! C code (device-rt, the test fixtures) gets these layouts and the kinds from the
//! header [`c_header()`](crate::c_header()) generates.

/// Magic word of the report page ("CSRP").
pub const PAGE_MAGIC: u32 = 0x5052_5343;
/// Layout version.
pub const PAGE_VERSION: u32 = 1;
/// Bytes before the first record.
pub const PAGE_HEADER_BYTES: usize = 64;
/// Bytes per record.
pub const RECORD_BYTES: usize = 512;
/// Records the page holds.
pub const PAGE_CAPACITY: usize = 64;
/// Total page size in bytes.
pub const PAGE_BYTES: usize = PAGE_HEADER_BYTES + RECORD_BYTES * PAGE_CAPACITY;
/// Offset of the site text in a record ([`field::LOC`]).
pub const LOC_OFFSET: usize = field::LOC;
/// Bytes of site text in a record (including the NUL).
pub const LOC_BYTES: usize = RECORD_BYTES - LOC_OFFSET;
/// Separator between the fields of the site text.
pub const LOC_SEP: char = '\x1f';
/// Record state: the slot was never written (no claim, or a claim whose writer has
/// not started).
pub const STATE_EMPTY: u32 = 0;
/// Record state: being written (the writer claimed the record and has not finished).
pub const STATE_WRITING: u32 = 1;
/// Record state: complete.
pub const STATE_COMPLETE: u32 = 2;
/// Per check site the pass emits `{ u32 state, u32 flags, generic ptr site_text }` in
/// global memory (device-rt's `struct site`): `state` makes each site report once,
/// `flags` are the site's `ACCESS_*` / `OBJECT_*` bits. Offset of `flags`:
pub const SITE_FLAGS_OFFSET: u32 = 4;
/// Offset of the site text pointer in a site.
pub const SITE_LOC_OFFSET: u32 = 8;
/// Header size value meaning "not read" (the pointer was poisoned or foreign).
pub const NO_HEADER: u64 = u64::MAX;
/// Access flag: the access writes memory.
pub const ACCESS_WRITE: u32 = 1;
/// Access flag: the access is an atomic read-modify-write.
pub const ACCESS_ATOMIC: u32 = 2;
/// Access flag: the access is a range of a memory intrinsic (memcpy/memmove/memset).
pub const ACCESS_RANGE: u32 = 4;
/// Object space flag ([`DeviceKind::ObjectOutOfBounds`]): a local (stack) array.
pub const OBJECT_LOCAL: u32 = 8;
/// Object space flag: a static `__shared__` array.
pub const OBJECT_SHARED: u32 = 16;
/// Object space flag: the dynamic (`extern __shared__`) shared-memory window.
pub const OBJECT_DYNAMIC_SHARED: u32 = 32;
/// Object space flag: a `__device__` global variable.
pub const OBJECT_GLOBAL_VAR: u32 = 64;
/// All object space flags.
pub const OBJECT_SPACES: u32 =
    OBJECT_LOCAL | OBJECT_SHARED | OBJECT_DYNAMIC_SHARED | OBJECT_GLOBAL_VAR;

/// The page header as the runtime initialises it: magic, version, capacity, the rest
/// zero. The records after the header must be zeroed too (state 0: empty).
pub fn page_header() -> [u8; PAGE_HEADER_BYTES] {
    let mut b = [0u8; PAGE_HEADER_BYTES];
    b[0..4].copy_from_slice(&PAGE_MAGIC.to_le_bytes());
    b[4..8].copy_from_slice(&PAGE_VERSION.to_le_bytes());
    b[8..12].copy_from_slice(&(PAGE_CAPACITY as u32).to_le_bytes());
    b
}

/// Byte offset of record `i` in the page.
pub const fn record_offset(i: usize) -> usize {
    PAGE_HEADER_BYTES + i * RECORD_BYTES
}

/// Defines the record's fields: one `usize` constant per field in [`field`] and
/// [`field::ALL`] listing them.
macro_rules! record_fields {
    ($($(#[$doc:meta])* $name:ident = $off:expr;)*) => {
        /// Byte offsets of a record's fields (the table at the top of this module);
        /// device-rt and the test fixtures get them as `CUSAFE_REC_<FIELD>`
        /// ([`c_header()`](crate::c_header())).
        pub mod field {
            $($(#[$doc])* pub const $name: usize = $off;)*
            /// Every field as (name, offset), in offset order.
            pub const ALL: [(&str, usize); [$(stringify!($name)),*].len()] =
                [$((stringify!($name), $name)),*];
        }
    };
}

record_fields! {
    /// u32 state: 0 empty, [`STATE_WRITING`](super::STATE_WRITING),
    /// [`STATE_COMPLETE`](super::STATE_COMPLETE) (written after a system fence).
    STATE = 0;
    /// u32 [`DeviceKind`](super::DeviceKind).
    KIND = 4;
    /// u64 accessed address (as the program computed it).
    ADDR = 8;
    /// u64 root pointer the address was derived from.
    ROOT = 16;
    /// u64 header size the device saw ([`NO_HEADER`](super::NO_HEADER) if none).
    HEADER_SIZE = 24;
    /// u32 access size in bytes.
    ACCESS_SIZE = 32;
    /// u32 access flags (`ACCESS_*`, `OBJECT_*`).
    FLAGS = 36;
    /// u32 x 3: threadIdx x, y, z.
    THREAD = 40;
    /// u32 x 3: blockIdx x, y, z.
    BLOCK = 52;
    /// u8 x [`LOC_BYTES`](super::LOC_BYTES): the NUL-terminated site text.
    LOC = 64;
}

// The fields are packed in order and the site text ends the record.
const _: () = {
    assert!(field::KIND == field::STATE + 4);
    assert!(field::ADDR == field::KIND + 4);
    assert!(field::ROOT == field::ADDR + 8);
    assert!(field::HEADER_SIZE == field::ROOT + 8);
    assert!(field::ACCESS_SIZE == field::HEADER_SIZE + 8);
    assert!(field::FLAGS == field::ACCESS_SIZE + 4);
    assert!(field::THREAD == field::FLAGS + 4);
    assert!(field::BLOCK == field::THREAD + 12);
    assert!(field::LOC == field::BLOCK + 12);
    assert!(field::LOC < RECORD_BYTES);
};

/// Defines [`DeviceKind`] from one list: the enum, [`DeviceKind::ALL`],
/// [`DeviceKind::from_u32`] and [`DeviceKind::c_name`] (the C header's
/// `CUSAFE_KIND_<name>`).
macro_rules! device_kinds {
    ($($(#[$doc:meta])* $name:ident = $value:literal, c: $c:literal;)*) => {
        /// What the device saw; the host refines it with its allocation table.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        #[repr(u32)]
        pub enum DeviceKind {
            $($(#[$doc])* $name = $value,)*
        }

        impl DeviceKind {
            /// Every kind, in the order of their values.
            pub const ALL: [DeviceKind; [$(stringify!($name)),*].len()] = [$(Self::$name),*];

            /// Decodes the record's kind field.
            pub fn from_u32(v: u32) -> Option<Self> {
                match v {
                    $($value => Some(Self::$name),)*
                    _ => None,
                }
            }

            /// The kind's name in C: device code writes `CUSAFE_KIND_<name>`.
            pub const fn c_name(self) -> &'static str {
                match self {
                    $(Self::$name => $c,)*
                }
            }
        }
    };
}

device_kinds! {
    /// The pointer carried the poison bit: its arithmetic left its block.
    PoisonedPointer = 1, c: "POISONED";
    /// The access was outside the exact bounds in the header (or the header was 0).
    OutOfBounds = 2, c: "OUT_OF_BOUNDS";
    /// The access was outside an object whose size is known at compile time (local,
    /// shared, dynamic shared, `__device__` global): `root` is the object's start,
    /// `header_size` its size in bytes, the flags carry its space (`OBJECT_*`) and the
    /// site text its name.
    ObjectOutOfBounds = 3, c: "OBJECT";
    /// A local-memory pseudo-pointer whose frame is gone (its function returned, or a
    /// later call reused its depth): `root` is the object's start, `header_size` the
    /// size its header still holds.
    StaleLocal = 4, c: "STALE_LOCAL";
    /// A local pseudo-pointer whose frame is alive but whose object's scope has ended
    /// (its header carries `pseudo::OUT_OF_SCOPE`): `root` is the object's start,
    /// `header_size` its size.
    LocalOutOfScope = 5, c: "LOCAL_OUT_OF_SCOPE";
    /// `free` (or `delete`) in device code of a device-heap block that is already free:
    /// `addr` is the pointer freed, `root` the block's payload start, `header_size` 0.
    DeviceDoubleFree = 6, c: "DOUBLE_FREE";
    /// `free` (or `delete`) in device code of a pointer that is not the start of a
    /// device-heap block: `addr` is the pointer; for an interior pointer of a block,
    /// `root` is its payload start and `header_size` its size, else `root` is 0 and
    /// `header_size` [`NO_HEADER`].
    DeviceInvalidFree = 7, c: "INVALID_FREE";
}

/// One decoded record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Record {
    /// What the device saw.
    pub kind: DeviceKind,
    /// Accessed address.
    pub addr: u64,
    /// Root pointer of the access.
    pub root: u64,
    /// Header size seen by the device, or [`NO_HEADER`].
    pub header_size: u64,
    /// Access size in bytes.
    pub access_size: u32,
    /// Access flags.
    pub flags: u32,
    /// threadIdx.
    pub thread: [u32; 3],
    /// blockIdx.
    pub block: [u32; 3],
    /// Kernel (mangled name of the function holding the access).
    pub kernel: String,
    /// Source file.
    pub file: String,
    /// Source line (0 if unknown).
    pub line: u32,
    /// Source column (0 if unknown).
    pub col: u32,
    /// Name of the object for [`DeviceKind::ObjectOutOfBounds`] (may be empty).
    pub object: String,
}

fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes(b[off..off + 4].try_into().expect("4 bytes"))
}

fn u64_at(b: &[u8], off: usize) -> u64 {
    u64::from_le_bytes(b[off..off + 8].try_into().expect("8 bytes"))
}

/// Encodes the site text the pass embeds for a check (`object` empty for heap checks).
pub fn encode_loc(kernel: &str, file: &str, line: u32, col: u32, object: &str) -> String {
    format!("{kernel}{LOC_SEP}{file}{LOC_SEP}{line}{LOC_SEP}{col}{LOC_SEP}{object}")
}

impl Record {
    /// Decodes a complete record from its bytes; `None` if the record is not complete
    /// or malformed.
    pub fn decode(b: &[u8]) -> Option<Record> {
        if b.len() < RECORD_BYTES || u32_at(b, field::STATE) != STATE_COMPLETE {
            return None;
        }
        let kind = DeviceKind::from_u32(u32_at(b, field::KIND))?;
        let text = &b[LOC_OFFSET..RECORD_BYTES];
        let end = text.iter().position(|&c| c == 0).unwrap_or(text.len());
        let text = String::from_utf8_lossy(&text[..end]);
        let mut parts = text.split(LOC_SEP);
        let kernel = parts.next().unwrap_or("").to_string();
        let file = parts.next().unwrap_or("").to_string();
        let line = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let col = parts.next().and_then(|s| s.parse().ok()).unwrap_or(0);
        let object = parts.next().unwrap_or("").to_string();
        Some(Record {
            kind,
            addr: u64_at(b, field::ADDR),
            root: u64_at(b, field::ROOT),
            header_size: u64_at(b, field::HEADER_SIZE),
            access_size: u32_at(b, field::ACCESS_SIZE),
            flags: u32_at(b, field::FLAGS),
            thread: std::array::from_fn(|i| u32_at(b, field::THREAD + 4 * i)),
            block: std::array::from_fn(|i| u32_at(b, field::BLOCK + 4 * i)),
            kernel,
            file,
            line,
            col,
            object,
        })
    }

    /// Encodes the record as device code writes it (for tests and host backends).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; RECORD_BYTES];
        let put32 =
            |b: &mut Vec<u8>, off: usize, v: u32| b[off..off + 4].copy_from_slice(&v.to_le_bytes());
        let put64 =
            |b: &mut Vec<u8>, off: usize, v: u64| b[off..off + 8].copy_from_slice(&v.to_le_bytes());
        put32(&mut b, field::STATE, STATE_COMPLETE);
        put32(&mut b, field::KIND, self.kind as u32);
        put64(&mut b, field::ADDR, self.addr);
        put64(&mut b, field::ROOT, self.root);
        put64(&mut b, field::HEADER_SIZE, self.header_size);
        put32(&mut b, field::ACCESS_SIZE, self.access_size);
        put32(&mut b, field::FLAGS, self.flags);
        for i in 0..3 {
            put32(&mut b, field::THREAD + 4 * i, self.thread[i]);
            put32(&mut b, field::BLOCK + 4 * i, self.block[i]);
        }
        let loc = encode_loc(&self.kernel, &self.file, self.line, self.col, &self.object);
        let n = loc.len().min(LOC_BYTES - 1);
        b[LOC_OFFSET..LOC_OFFSET + n].copy_from_slice(&loc.as_bytes()[..n]);
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_header_layout() {
        let h = page_header();
        assert_eq!(u32_at(&h, 0), PAGE_MAGIC);
        assert_eq!(u32_at(&h, 4), PAGE_VERSION);
        assert_eq!(u32_at(&h, 8) as usize, PAGE_CAPACITY);
        assert!(h[12..].iter().all(|&b| b == 0));
        assert_eq!(record_offset(0), PAGE_HEADER_BYTES);
        assert_eq!(record_offset(PAGE_CAPACITY), PAGE_BYTES);
    }
}
