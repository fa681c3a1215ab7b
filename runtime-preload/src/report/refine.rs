//! Device record → [`Report`]. The device only knows "poisoned pointer" or "out of
//! bounds"; the allocation table tells which buffer, and whether it was freed.
//!
//! The device checked the access against the block of its *root* (the pointer the
//! address was derived from), so the root names the buffer; when the address landed
//! in another buffer (a non-linear jump), the report says that too.

use cusafe_format::pointer::{is_cusafe, is_poisoned, POISON_MASK};
use cusafe_format::report::{DeviceKind, Record, ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE};

use super::{buffer_phrase, demangle, relation, Access, Buffer, Kind, Origin, Report};
use crate::alloc::{BlockInfo, BlockTable};

/// Bit 47 marks a local or shared pseudo-pointer (design §3).
pub const PSEUDO_BIT: u64 = 1 << 47;

/// Refines `rec` into a report with the blocks of `table`.
pub fn refine(rec: &Record, table: &BlockTable) -> Report {
    let access = Access {
        write: rec.flags & ACCESS_WRITE != 0,
        atomic: rec.flags & ACCESS_ATOMIC != 0,
        range: rec.flags & ACCESS_RANGE != 0,
        size: u64::from(rec.access_size),
    };
    let origin = Origin::Device {
        kernel: demangle(&rec.kernel),
        file: rec.file.clone(),
        line: rec.line,
        col: rec.col,
        thread: rec.thread,
        block: rec.block,
    };
    let addr = rec.addr;
    let (kind, block) = match rec.kind {
        DeviceKind::PoisonedPointer => {
            // The root itself left its buffer: name the buffer nearest to it.
            (Kind::PointerOverflow, table.nearest(rec.root).cloned())
        }
        DeviceKind::OutOfBounds if addr & PSEUDO_BIT != 0 && !is_poisoned(addr) => {
            let kind = if rec.header_size == 0 {
                Kind::StackUseAfterReturn
            } else {
                Kind::StackOrSharedBufferOverflow
            };
            (kind, None)
        }
        DeviceKind::OutOfBounds => match [rec.root, addr].into_iter().find(|&p| is_cusafe(p)) {
            None => (Kind::StaticBufferOverflow, None),
            Some(key) => match table.lookup(key).cloned() {
                Some(b) if b.freed => (Kind::UseAfterFree, Some(b)),
                Some(b) => (Kind::HeapBufferOverflow, Some(b)),
                None => (Kind::WildAccess, None),
            },
        },
    };
    let mut detail = describe(kind, addr, access.size, block.as_ref(), rec.header_size);
    if let (Some(b), Some(other)) = (&block, table.lookup(addr)) {
        if other.id != b.id {
            detail.push_str(&format!(", inside {}", buffer_phrase(other)));
        }
    }
    Report {
        kind,
        origin,
        access: Some(access),
        address: addr,
        buffer: block.map(|b| Buffer {
            offset: b.offset_of(addr),
            block: b,
        }),
        detail,
        call_site: None,
    }
}

fn describe(kind: Kind, addr: u64, len: u64, block: Option<&BlockInfo>, header: u64) -> String {
    let a = addr & !POISON_MASK;
    match (kind, block) {
        (Kind::PointerOverflow, Some(b)) => format!(
            "the pointer left its buffer; {a:#018x} is {} {}, the nearest buffer",
            relation(b.offset_of(addr), len, b.size),
            buffer_phrase(b)
        ),
        (Kind::PointerOverflow, None) => {
            format!("the pointer left its buffer; no buffer is near {a:#018x}")
        }
        (_, Some(b)) => format!(
            "{a:#018x} is {} {}",
            relation(b.offset_of(addr), len, b.size),
            buffer_phrase(b)
        ),
        (Kind::WildAccess, None) => {
            format!("{a:#018x} is inside a cusafe window but in no buffer allocated so far")
        }
        (Kind::StackUseAfterReturn, None) => {
            format!("{a:#018x} points to a local object of a function that has returned")
        }
        (_, None) if header == u64::MAX => {
            format!("{a:#018x} is outside the object (size known at compile time)")
        }
        (_, None) => format!("{a:#018x} is outside the {header}-byte object"),
    }
}
