//! The ASan-style text rendering of a [`Report`].

use std::fmt::Write;

use super::{site, Origin, Report};

const RULE: &str = "=================================================================";

/// "kernel f(int*) at a.cu:3:7" (with " on device D" after the kernel when the process
/// uses several devices) or "cudaMemcpy (dst)".
pub fn location(origin: &Origin) -> String {
    match origin {
        Origin::Device {
            kernel,
            file,
            line,
            col,
            device,
            ..
        } => {
            let on = device.map_or_else(String::new, |d| format!(" on device {d}"));
            if file.is_empty() {
                format!("kernel {kernel}{on} at <unknown location>")
            } else {
                format!("kernel {kernel}{on} at {file}:{line}:{col}")
            }
        }
        Origin::Host { api, operand } => match operand {
            Some(op) => format!("{api} ({op})"),
            None => api.to_string(),
        },
    }
}

/// Renders `r` as the runtime prints it; `pid` goes into the `==PID==` prefix.
pub fn render(r: &Report, pid: u32) -> String {
    let mut s = String::new();
    let kind = r.kind.name();
    let loc = location(&r.origin);
    // Writing into a String cannot fail.
    let _ = writeln!(s, "{RULE}");
    let _ = writeln!(s, "=={pid}==ERROR: cusafe: {kind} in {loc}");
    let what = r.access.map(|a| {
        let what = match (a.atomic, a.write) {
            (true, _) => "ATOMIC",
            (false, true) => "WRITE",
            (false, false) => "READ",
        };
        if a.range {
            format!("{what} of range of {} bytes", a.size)
        } else {
            format!("{what} of size {}", a.size)
        }
    });
    // A device report without an access is about a free in device code.
    let what = match (&what, &r.origin) {
        (None, Origin::Device { .. }) => Some("FREE".to_string()),
        _ => what,
    };
    if let Some(what) = what {
        let _ = write!(s, "{what} at {:#018x}", r.address);
        if let Origin::Device { thread, block, .. } = &r.origin {
            let _ = write!(
                s,
                " by thread ({},{},{}) in block ({},{},{})",
                thread[0], thread[1], thread[2], block[0], block[1], block[2]
            );
        }
        s.push('\n');
    }
    let _ = writeln!(s, "{}", r.detail);
    if let Some(bt) = &r.call_site {
        let _ = write!(s, "  called from:\n{}", site::render(bt));
    }
    if let Some(b) = &r.buffer {
        let blk = &b.block;
        let _ = writeln!(
            s,
            "buffer #{}: {} bytes at [{:#018x}, {:#018x}), {}; the address is at offset {} from its start",
            blk.id,
            blk.size,
            blk.ptr,
            blk.ptr + blk.size,
            if blk.freed { "freed" } else { "live" },
            b.offset
        );
        match &blk.alloc_site {
            Some(bt) => {
                let _ = write!(s, "  allocated at:\n{}", site::render(bt));
            }
            None => {
                let _ = writeln!(
                    s,
                    "  allocated at: unknown (set CUSAFE_OPTIONS=alloc_backtrace=1 to record it)"
                );
            }
        }
        if let Some(bt) = &blk.free_site {
            let _ = write!(s, "  freed at:\n{}", site::render(bt));
        }
    }
    let _ = writeln!(s, "HINT: {}", r.kind.hint());
    let _ = writeln!(s, "SUMMARY: cusafe: {kind} in {loc}");
    let _ = writeln!(s, "{RULE}");
    s
}

/// The closing line of a leak check.
pub fn leak_summary(pid: u32, blocks: usize, bytes: u64) -> String {
    format!("=={pid}==SUMMARY: cusafe: {bytes} bytes leaked in {blocks} allocation(s)\n")
}
