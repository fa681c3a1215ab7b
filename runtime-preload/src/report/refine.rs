//! Device record → [`Report`]. The device only knows "poisoned pointer" or "out of
//! bounds"; the allocation table tells which buffer, and whether it was freed.

use cusafe_format::pointer::{is_cusafe, is_poisoned, POISON_MASK};
use cusafe_format::report::{DeviceKind, Record, ACCESS_ATOMIC, ACCESS_RANGE, ACCESS_WRITE};

use super::{buffer_phrase, demangle, relation, Access, Buffer, Kind, Origin, Report};
use crate::alloc::BlockInfo;

/// Bit 47 marks a local or shared pseudo-pointer (design §3).
pub const PSEUDO_BIT: u64 = 1 << 47;

/// Refines `rec` into a report; `lookup` finds the block (live or freed) containing an
/// address, poison bit ignored.
pub fn refine(rec: &Record, lookup: impl Fn(u64) -> Option<BlockInfo>) -> Report {
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
            // The address left its buffer; the root pointer names the buffer.
            (Kind::PointerOverflow, lookup(rec.root & !POISON_MASK))
        }
        DeviceKind::OutOfBounds if addr & PSEUDO_BIT != 0 && !is_poisoned(addr) => {
            let kind = if rec.header_size == 0 {
                Kind::StackUseAfterReturn
            } else {
                Kind::StackOrSharedBufferOverflow
            };
            (kind, None)
        }
        DeviceKind::OutOfBounds if is_cusafe(addr) => match lookup(addr) {
            Some(b) if b.freed => (Kind::UseAfterFree, Some(b)),
            Some(b) => (Kind::HeapBufferOverflow, Some(b)),
            None => (Kind::WildAccess, None),
        },
        DeviceKind::OutOfBounds => (Kind::StaticBufferOverflow, None),
    };
    let detail = describe(kind, addr, access.size, block.as_ref(), rec.header_size);
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
    }
}

fn describe(kind: Kind, addr: u64, len: u64, block: Option<&BlockInfo>, header: u64) -> String {
    let a = addr & !POISON_MASK;
    match (kind, block) {
        (Kind::PointerOverflow, Some(b)) => format!(
            "the pointer {a:#018x} was derived from {} and is {} it",
            buffer_phrase(b),
            relation(b.offset_of(addr), len, b.size)
        ),
        (Kind::PointerOverflow, None) => {
            format!(
                "the pointer {a:#018x} left its buffer (the root pointer names no known buffer)"
            )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(kind: DeviceKind, addr: u64, header: u64) -> Record {
        Record {
            kind,
            addr,
            root: addr,
            header_size: header,
            access_size: 4,
            flags: 0,
            thread: [0; 3],
            block: [0; 3],
            kernel: "k".into(),
            file: String::new(),
            line: 0,
            col: 0,
        }
    }

    #[test]
    fn pseudo_pointers_are_local_or_shared() {
        let r = refine(
            &rec(DeviceKind::OutOfBounds, 0x7f27_0000_0400 | PSEUDO_BIT, 0),
            |_| None,
        );
        assert_eq!(r.kind, Kind::StackUseAfterReturn);
        let r = refine(
            &rec(DeviceKind::OutOfBounds, 0x7f27_0000_0400 | PSEUDO_BIT, 64),
            |_| None,
        );
        assert_eq!(r.kind, Kind::StackOrSharedBufferOverflow);
    }

    #[test]
    fn foreign_addresses_are_static_objects() {
        let r = refine(
            &rec(DeviceKind::OutOfBounds, 0x7f26_8be0_0000, u64::MAX),
            |_| None,
        );
        assert_eq!(r.kind, Kind::StaticBufferOverflow);
    }
}
