//! Device record → [`Report`]. The device only knows "poisoned pointer" or "out of
//! bounds"; the allocation table tells which buffer, and whether it was freed.
//!
//! The device checked the access against the block of its *root* (the pointer the
//! address was derived from), so the root names the buffer; when the address landed
//! in another buffer (a non-linear jump), the report says that too.

use cusafe_format::pointer::{is_cusafe, POISON_MASK};
use cusafe_format::report::{
    DeviceKind, Record, ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE, OBJECT_DYNAMIC_SHARED,
    OBJECT_GLOBAL_VAR, OBJECT_LOCAL, OBJECT_SHARED,
};

use super::{buffer_phrase, demangle, relation, Access, Buffer, Kind, Origin, Report};
use crate::alloc::{BlockInfo, BlockTable};

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
        DeviceKind::ObjectOutOfBounds => (object_kind(rec.flags), None),
        DeviceKind::StaleLocal => (Kind::StackUseAfterReturn, None),
        DeviceKind::LocalOutOfScope => (Kind::StackUseAfterScope, None),
        DeviceKind::OutOfBounds => match [rec.root, addr].into_iter().find(|&p| is_cusafe(p)) {
            None => (Kind::WildAccess, None),
            Some(key) => match table.lookup(key).cloned() {
                Some(b) if b.freed => (Kind::UseAfterFree, Some(b)),
                Some(b) => (Kind::HeapBufferOverflow, Some(b)),
                None => (Kind::WildAccess, None),
            },
        },
    };
    let mut detail = match rec.kind {
        DeviceKind::ObjectOutOfBounds => describe_object(rec),
        DeviceKind::StaleLocal => describe_dead_local(rec, "whose function has returned"),
        DeviceKind::LocalOutOfScope => describe_dead_local(rec, "whose scope has ended"),
        _ => describe(kind, addr, access.size, block.as_ref()),
    };
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

/// The report kind of an object overflow, from the object's space flag.
fn object_kind(flags: u32) -> Kind {
    if flags & OBJECT_LOCAL != 0 {
        Kind::StackBufferOverflow
    } else if flags & (OBJECT_SHARED | OBJECT_DYNAMIC_SHARED) != 0 {
        Kind::SharedBufferOverflow
    } else {
        debug_assert!(
            flags & OBJECT_GLOBAL_VAR != 0,
            "object record without a space flag"
        );
        Kind::GlobalBufferOverflow
    }
}

/// "0x... is 4 bytes after the end of the 64-byte local array 'tile'".
fn describe_object(rec: &Record) -> String {
    let what = if rec.flags & OBJECT_LOCAL != 0 {
        "local array"
    } else if rec.flags & OBJECT_DYNAMIC_SHARED != 0 {
        "dynamic shared memory of this launch"
    } else if rec.flags & OBJECT_SHARED != 0 {
        "__shared__ array"
    } else {
        "__device__ array"
    };
    let name = if rec.object.is_empty() {
        String::new()
    } else {
        format!(" '{}'", rec.object)
    };
    let offset = rec.addr.wrapping_sub(rec.root) as i64;
    format!(
        "{:#018x} is {} the {}-byte {what}{name}",
        rec.addr,
        relation(offset, u64::from(rec.access_size), rec.header_size),
        rec.header_size
    )
}

fn describe(kind: Kind, addr: u64, len: u64, block: Option<&BlockInfo>) -> String {
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
        (_, None) => format!("{a:#018x} is outside every buffer cusafe knows"),
    }
}

/// "ADDR is at offset N of a SIZE-byte local array WHY".
fn describe_dead_local(rec: &Record, why: &str) -> String {
    format!(
        "{:#018x} is at offset {} of a {}-byte local array {why}",
        rec.addr,
        rec.addr.wrapping_sub(rec.root) as i64,
        rec.header_size
    )
}
