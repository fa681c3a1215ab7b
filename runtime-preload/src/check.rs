//! Range checks of the copy and set APIs (`cudaMemcpy*`, `cudaMemset*`) against the
//! exact size of cusafe buffers. Pointers outside the cusafe windows (host memory,
//! foreign device memory) are not checked.

use cusafe_format::block::{access_ok, block_base};
use cusafe_format::pointer::{is_cusafe, is_poisoned, tag_of};

use crate::alloc::BlockTable;
use crate::report::{buffer_phrase, relation, Access, Buffer, Kind, Origin, Report};

/// One pointer operand of an API call and the bytes the call touches through it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApiRange {
    /// The API, e.g. `"cudaMemcpy2D"`.
    pub api: &'static str,
    /// The operand, e.g. `"dst"`.
    pub operand: &'static str,
    /// The pointer passed.
    pub ptr: u64,
    /// Bytes from `ptr` to the end of the last byte touched.
    pub len: u64,
    /// Whether the call writes through the operand.
    pub write: bool,
}

/// Bytes spanned by `height` rows of `width` bytes, `pitch` bytes apart (saturating,
/// so an absurd geometry fails the check instead of wrapping).
pub fn extent_2d(pitch: u64, width: u64, height: u64) -> u64 {
    if width == 0 || height == 0 {
        return 0;
    }
    (height - 1).saturating_mul(pitch).saturating_add(width)
}

/// Checks one operand against the blocks of `table`. Returns the report when the
/// range does not fit in a live buffer.
pub fn check_range(r: &ApiRange, table: &BlockTable) -> Option<Report> {
    if r.len == 0 || !(is_cusafe(r.ptr) || is_poisoned(r.ptr)) {
        return None;
    }
    let block = if is_poisoned(r.ptr) {
        None
    } else {
        table.lookup(r.ptr).cloned()
    };
    let (kind, detail) = match &block {
        Some(b) if !b.freed => {
            let base = block_base(r.ptr, tag_of(r.ptr));
            if access_ok(r.ptr, base, b.size, r.len) {
                return None;
            }
            let end = r.ptr.saturating_add(r.len);
            (
                Kind::ApiOutOfBounds,
                format!(
                    "{} range [{:#018x}, {end:#018x}) ({} bytes) starts {} {}",
                    r.operand,
                    r.ptr,
                    r.len,
                    relation(b.offset_of(r.ptr), r.len, b.size),
                    buffer_phrase(b)
                ),
            )
        }
        Some(b) => (
            Kind::UseAfterFree,
            format!(
                "{} range [{:#018x}, +{}) is in {}",
                r.operand,
                r.ptr,
                r.len,
                buffer_phrase(b)
            ),
        ),
        None if is_poisoned(r.ptr) => (
            Kind::PointerOverflow,
            format!(
                "{} {:#018x} is a poisoned pointer (its arithmetic left its buffer)",
                r.operand, r.ptr
            ),
        ),
        None => (
            Kind::WildAccess,
            format!(
                "{} {:#018x} is inside a cusafe window but in no buffer allocated so far",
                r.operand, r.ptr
            ),
        ),
    };
    Some(Report {
        kind,
        origin: Origin::Host {
            api: r.api,
            operand: Some(r.operand),
        },
        access: Some(Access {
            write: r.write,
            atomic: false,
            range: true,
            size: r.len,
        }),
        address: r.ptr,
        buffer: block.map(|b| Buffer {
            offset: b.offset_of(r.ptr),
            block: b,
        }),
        detail,
        call_site: None,
    })
}
