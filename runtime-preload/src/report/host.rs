//! Host-side findings → [`Report`]s: refused frees and leaks. (API range findings are
//! built by [`crate::check`].)

use cusafe_format::pointer::is_poisoned;

use super::{buffer_phrase, relation, Buffer, Kind, Origin, Report};
use crate::alloc::{BlockInfo, FreeError};

fn host(api: &'static str) -> Origin {
    Origin::Host { api, operand: None }
}

fn with_buffer(block: BlockInfo, addr: u64) -> Option<Buffer> {
    Some(Buffer {
        offset: block.offset_of(addr),
        block,
    })
}

/// The report for a refused free (`None` for [`FreeError::Backend`], which is a
/// warning about the runtime, not a bug in the program).
pub fn free_report(api: &'static str, err: &FreeError) -> Option<Report> {
    let r = match err {
        FreeError::DoubleFree { block } => Report {
            kind: Kind::DoubleFree,
            origin: host(api),
            access: None,
            address: block.ptr,
            detail: format!("{:#018x} is {}", block.ptr, buffer_phrase(block)),
            buffer: with_buffer(block.clone(), block.ptr),
            call_site: None,
        },
        FreeError::Interior { ptr, block } => Report {
            kind: Kind::InvalidFree,
            origin: host(api),
            access: None,
            address: *ptr,
            detail: format!(
                "interior pointer: {ptr:#018x} is {} {}, not its start",
                relation(block.offset_of(*ptr), 0, block.size),
                buffer_phrase(block)
            ),
            buffer: with_buffer(block.clone(), *ptr),
            call_site: None,
        },
        FreeError::NotAllocated { ptr } => Report {
            kind: Kind::InvalidFree,
            origin: host(api),
            access: None,
            address: *ptr,
            detail: if is_poisoned(*ptr) {
                format!("never allocated: {ptr:#018x} is a poisoned pointer (its arithmetic left its buffer)")
            } else {
                format!("never allocated: no buffer was ever allocated at {ptr:#018x} (host, stack and cudaMallocHost memory are not freed with cudaFree)")
            },
            buffer: None,
            call_site: None,
        },
        FreeError::Backend { .. } => return None,
    };
    Some(r)
}

/// The report for a block still allocated at exit.
pub fn leak_report(block: &BlockInfo) -> Report {
    Report {
        kind: Kind::Leak,
        origin: host("cudaMalloc"),
        access: None,
        address: block.ptr,
        detail: format!("{} was never freed", buffer_phrase(block)),
        buffer: with_buffer(block.clone(), block.ptr),
        call_site: None,
    }
}
