//! The message of a result: the report in one paragraph, with embedded links
//! (`[allocated](1)`) to the buffer's allocation and free sites among the result's
//! `relatedLocations`.

use std::fmt::Write;

use super::input::{Fields, Place};
use super::place::{Anchor, Frame, Position};
use super::rules::FAULT_WITHOUT_FINDING;

/// `relatedLocations` id of the buffer's allocation site.
pub const ALLOC_ID: i64 = 1;
/// `relatedLocations` id of the buffer's free site.
pub const FREE_ID: i64 = 2;

/// `s` with a full stop at the end (the runtime's phrases start in lower case, often
/// with an identifier such as `cudaFree` or `src`, so they are not capitalised).
pub fn full_stop(s: &str) -> String {
    let mut out = s.trim_end().to_string();
    if !out.ends_with('.') {
        out.push('.');
    }
    out
}

/// "(1,2,3)".
fn dim(d: [u32; 3]) -> String {
    format!("({},{},{})", d[0], d[1], d[2])
}

/// "a.cu:3:7" or "a.cu:3".
fn position(p: &Position) -> String {
    match p.col {
        Some(c) => format!("{}:{}:{c}", p.file, p.line),
        None => format!("{}:{}", p.file, p.line),
    }
}

/// "main at a.cu:3:7" or "main".
fn frame(f: &Frame) -> String {
    match &f.position {
        Some(p) => format!("{} at {}", f.function, position(p)),
        None => f.function.clone(),
    }
}

/// The text of the result for `f` (pointing at `a`), standing for `count` reports from
/// `processes` processes: what, where and the access; the runtime's detail; the buffer and
/// its sites; how often.
pub fn message(f: &Fields, a: &Anchor, count: usize, processes: usize) -> String {
    let mut s = if f.kind == FAULT_WITHOUT_FINDING {
        fault(f)
    } else {
        finding(f, a)
    };
    if count > 1 {
        let _ = write!(s, " Reported {count} times");
        match processes {
            0 => s.push('.'),
            1 => s.push_str(" by 1 process."),
            n => {
                let _ = write!(s, " by {n} processes.");
            }
        }
    }
    s
}

/// A device fault without a finding: the CUDA error, the suspects, the causes.
fn fault(f: &Fields) -> String {
    let code = f.code.map_or("?".to_string(), |c| c.to_string());
    let name = f.name.as_deref().unwrap_or("unknown");
    let mut s = format!(
        "{FAULT_WITHOUT_FINDING}: CUDA error {code} ({name}) came without a cusafe finding"
    );
    let suspects = f.suspects.as_deref().unwrap_or_default();
    let _ = match suspects {
        [] => write!(s, "."),
        [one] => write!(
            s,
            "; the only kernel launched since the last successful wait is {one}."
        ),
        [.., last] => write!(
            s,
            "; kernels launched since the last successful wait: {} (last: {last}; run with \
             CUDA_LAUNCH_BLOCKING=1 to name the one).",
            suspects.join(", ")
        ),
    };
    if let Some(d) = &f.detail {
        let _ = write!(s, " Possible causes: {}", full_stop(d));
    }
    s
}

/// A finding: "KIND in WHERE: ACCESS by thread T in block B; DETAIL. Buffer ... ."
fn finding(f: &Fields, a: &Anchor) -> String {
    let mut s = format!("{} in ", f.kind);
    match f.place {
        Place::Device => {
            let kernel = f.kernel.as_deref().unwrap_or("?");
            let at = a
                .position
                .as_ref()
                .map_or("<unknown location>".to_string(), position);
            let _ = write!(s, "kernel {kernel} at {at}");
        }
        Place::Host => {
            s.push_str(f.api.as_deref().unwrap_or("?"));
            if let Some(op) = &f.operand {
                let _ = write!(s, " ({op})");
            }
            if let Some(fr) = a.frames.first() {
                let _ = write!(s, " called from {}", frame(fr));
            }
        }
    }
    if let Some(acc) = f.access {
        let what = match (acc.atomic, acc.write) {
            (true, _) => "ATOMIC",
            (false, true) => "WRITE",
            (false, false) => "READ",
        };
        let _ = if acc.range {
            write!(s, ": {what} of range of {} bytes", acc.size)
        } else {
            write!(s, ": {what} of size {}", acc.size)
        };
        if let Some(addr) = &f.address {
            let _ = write!(s, " at {addr}");
        }
    } else if f.place == Place::Device {
        // A device report without an access is about a free in device code.
        let _ = write!(s, ": FREE at {}", f.address.as_deref().unwrap_or("?"));
    }
    if let (Place::Device, Some(t), Some(b)) = (f.place, f.thread, f.block) {
        let _ = write!(s, " by thread {} in block {}", dim(t), dim(b));
    }
    match f.detail.as_deref().filter(|d| !d.is_empty()) {
        Some(d) => {
            let _ = write!(s, "; {}", full_stop(d));
        }
        None => s.push('.'),
    }
    if let Some(b) = &f.buffer {
        let state = if b.freed { "freed" } else { "live" };
        let _ = write!(s, " Buffer #{}: {} bytes, {state}", b.id, b.size);
        if f.access.is_some() || b.offset != 0 {
            let _ = write!(s, "; the address is at offset {} from its start", b.offset);
        }
        s.push('.');
        let alloc = site("allocated", ALLOC_ID, a.alloc_related(), &a.alloc);
        let alloc = alloc.filter(|_| !a.frames_are_alloc);
        let free = site("freed", FREE_ID, a.free_related(), &a.free);
        let sites: Vec<String> = alloc.into_iter().chain(free).collect();
        if !sites.is_empty() {
            let _ = write!(s, " Buffer #{} was {}.", b.id, sites.join(" and "));
        }
    }
    s
}

/// "[allocated](1) in main at a.cu:3:7" (a link to the related location), "allocated in
/// main" (frames without a position), or nothing (no frames).
fn site(
    verb: &str,
    id: i64,
    related: Option<(&Frame, &Position)>,
    frames: &[Frame],
) -> Option<String> {
    match related {
        Some((fr, p)) => Some(format!(
            "[{verb}]({id}) in {} at {}",
            fr.function,
            position(p)
        )),
        None => frames.first().map(|fr| format!("{verb} in {}", frame(fr))),
    }
}
