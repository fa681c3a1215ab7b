//! Device record → [`Report`]. The device only knows "poisoned pointer" or "out of
//! bounds"; the allocation table tells which buffer, and whether it was freed.
//!
//! The device checked the access against the block of its *root* (the pointer the
//! address was derived from), so the root names the buffer; when the address landed
//! in another buffer (a non-linear jump), the report says that too.

use cusafe_format::block::{block_base, payload};
use cusafe_format::devheap::in_arena;
use cusafe_format::pointer::{in_null_page, is_cusafe, tag_of, ADDRESS_END, POISON_MASK};
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
        device: None,
    };
    let addr = rec.addr;
    let (kind, block) = match rec.kind {
        DeviceKind::PoisonedPointer if high_bits(rec.root) => (Kind::WildAccess, None),
        DeviceKind::PoisonedPointer => {
            // The root itself left its buffer: name the buffer nearest to it.
            (Kind::PointerOverflow, table.nearest(rec.root).cloned())
        }
        DeviceKind::ObjectOutOfBounds => (object_kind(rec.flags), None),
        DeviceKind::StaleLocal => (Kind::StackUseAfterReturn, None),
        DeviceKind::LocalOutOfScope => (Kind::StackUseAfterScope, None),
        DeviceKind::DeviceDoubleFree => (Kind::DoubleFree, None),
        DeviceKind::DeviceInvalidFree => (Kind::InvalidFree, None),
        DeviceKind::OutOfBounds => match [rec.root, addr].into_iter().find(|&p| is_cusafe(p)) {
            None => (untagged_kind(rec), None),
            Some(key) if in_arena(key) && rec.header_size == 0 => (Kind::UseAfterFree, None),
            Some(key) if in_arena(key) => (Kind::HeapBufferOverflow, None),
            Some(key) => match table.lookup(key).cloned() {
                Some(b) if b.freed => (Kind::UseAfterFree, Some(b)),
                Some(b) => (Kind::HeapBufferOverflow, Some(b)),
                None => (Kind::WildAccess, None),
            },
        },
    };
    let free = matches!(
        rec.kind,
        DeviceKind::DeviceDoubleFree | DeviceKind::DeviceInvalidFree
    );
    let mut detail = match rec.kind {
        DeviceKind::ObjectOutOfBounds => describe_object(rec),
        DeviceKind::StaleLocal => describe_dead_local(rec, "whose function has returned"),
        DeviceKind::LocalOutOfScope => describe_dead_local(rec, "whose scope has ended"),
        DeviceKind::DeviceDoubleFree | DeviceKind::DeviceInvalidFree => describe_free(rec, table),
        _ if block.is_none() && in_arena(rec.root) => describe_device_heap(rec),
        _ if block.is_none() && !is_cusafe(rec.root) && !is_cusafe(addr) => {
            describe_untagged(kind, rec)
        }
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
        access: (!free).then_some(access),
        address: addr,
        buffer: block.map(|b| Buffer {
            offset: b.offset_of(addr),
            block: b,
        }),
        detail,
        call_site: None,
    }
}

/// Whether `p` has any of bits 47..62 set: no real address does, nor a poisoned
/// pointer made by the arithmetic rule from one (an uninitialised or corrupted value).
fn high_bits(p: u64) -> bool {
    (p & !POISON_MASK) >= ADDRESS_END
}

/// A failed check whose root carried no cusafe tag: the device's foreign window
/// (`pointer::FOREIGN_WINDOW`) fails only in the null page and beyond the address
/// space; a launch-time window fails every access through an argument in the null page
/// (root 0) or in memory nobody allocated (root = the argument).
fn untagged_kind(rec: &Record) -> Kind {
    if in_null_page(rec.root) || in_null_page(rec.addr & !POISON_MASK) {
        Kind::NullDereference
    } else {
        Kind::WildAccess
    }
}

/// "0x10 is in the null page ..." or what made the pointer wild.
fn describe_untagged(kind: Kind, rec: &Record) -> String {
    let a = rec.addr & !POISON_MASK;
    match kind {
        Kind::NullDereference => format!(
            "{a:#018x} is in the null page (the first {} bytes, mapped by nobody): a null pointer plus {a} bytes",
            cusafe_format::pointer::NULL_PAGE
        ),
        _ if high_bits(rec.root) || high_bits(a) => format!(
            "{a:#018x} has bits 47..62 set, which no real address has: the pointer is uninitialised or corrupted"
        ),
        // A launch-time window (p, 0) carries the argument as its root; the device's
        // foreign window carries its constant start.
        _ if rec.root != cusafe_format::pointer::FOREIGN_WINDOW.0 => format!(
            "{a:#018x} is at offset {} from the kernel argument {:#018x}, which is in no allocation, registered or managed memory the driver knows (a host pointer, a stale or uninitialised value)",
            a.wrapping_sub(rec.root) as i64,
            rec.root
        ),
        _ => format!("{a:#018x} is outside every buffer cusafe or the driver knows"),
    }
}

/// "0x... is 4 bytes after the end of the 100-byte device-heap block" (a block of
/// `malloc`/`new` in device code; the host's table does not know it).
fn describe_device_heap(rec: &Record) -> String {
    let a = rec.addr & !POISON_MASK;
    let offset = a.wrapping_sub(rec.root) as i64;
    if rec.header_size == 0 {
        format!(
            "{a:#018x} is at offset {offset} of a device-heap block (malloc/new in device code) that was freed (free/delete in device code)"
        )
    } else {
        format!(
            "{a:#018x} is {} the {}-byte device-heap block at {:#018x} (malloc/new in device code)",
            relation(offset, u64::from(rec.access_size), rec.header_size),
            rec.header_size,
            rec.root
        )
    }
}

/// What was wrong with a `free` (or `delete`) in device code.
fn describe_free(rec: &Record, table: &BlockTable) -> String {
    let a = rec.addr;
    if rec.kind == DeviceKind::DeviceDoubleFree {
        return format!(
            "free of {a:#018x}: the device-heap block (malloc/new in device code) was already freed"
        );
    }
    if in_arena(a) {
        let base = block_base(a, tag_of(a));
        return format!(
            "free of {a:#018x}, at offset {} inside the {}-byte device-heap block at {:#018x}: free takes exactly the pointer malloc returned",
            a.wrapping_sub(payload(base)) as i64,
            rec.header_size,
            payload(base)
        );
    }
    if is_cusafe(a) {
        let what = table
            .lookup(a)
            .map_or("a cudaMalloc buffer".to_string(), buffer_phrase);
        return format!(
            "free of {a:#018x}, inside {what}: memory from cudaMalloc is freed with cudaFree on the host, not free in device code"
        );
    }
    format!(
        "free of {a:#018x}, which is not device-heap memory (a local, shared or constant address, or a pointer that left its buffer)"
    )
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
