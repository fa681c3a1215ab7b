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

/// The report of a hooked call `api` that returned the error `code` (`report_api_errors`):
/// named when it is a runtime API error the table knows (driver calls, `cu*`, return
/// the driver's codes, shown by number).
pub fn api_error_report(api: &'static str, code: i32) -> Report {
    let driver = api.starts_with("cu") && !api.starts_with("cuda");
    let name = if driver {
        format!("CUresult {code}")
    } else {
        crate::cuda::real::COMMON_ERRORS
            .iter()
            .find(|&&(c, _)| c == code)
            .map_or(format!("error {code}"), |&(_, n)| {
                format!("{n} (error {code})")
            })
    };
    Report {
        kind: Kind::ApiError,
        origin: host(api),
        access: None,
        address: 0,
        detail: format!("{api} returned {name}; the call did nothing the program may rely on"),
        buffer: None,
        call_site: None,
    }
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
