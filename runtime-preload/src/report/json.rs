//! The JSON-lines rendering of a [`Report`]: one object per line, stable field names.
//!
//! ```json
//! {"kind":"heap-buffer-overflow","pid":42,"where":"device","kernel":"k(int*)",
//!  "file":"a.cu","line":3,"col":7,"thread":[1,0,0],"block":[0,0,0],
//!  "api":null,"operand":null,"access":{"write":true,"atomic":false,"range":false,"size":4},
//!  "address":"0x0000040000000290","buffer":{"id":1,"ptr":"0x...","size":400,
//!  "offset":400,"freed":false},"detail":"...","hint":"..."}
//! ```
//! Addresses are hex strings (JSON numbers lose precision above 2^53).

use serde_json::{json, Value};

use super::{site, Origin, Report};

fn hex(v: u64) -> String {
    format!("{v:#018x}")
}

/// The report as one JSON object.
pub fn to_value(r: &Report, pid: u32) -> Value {
    let (place, kernel, file, line, col, thread, block, api, operand) = match &r.origin {
        Origin::Device {
            kernel,
            file,
            line,
            col,
            thread,
            block,
            ..
        } => (
            "device",
            json!(kernel),
            json!(file),
            json!(line),
            json!(col),
            json!(thread),
            json!(block),
            Value::Null,
            Value::Null,
        ),
        Origin::Host { api, operand } => (
            "host",
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            Value::Null,
            json!(api),
            json!(operand),
        ),
    };
    json!({
        "kind": r.kind.name(),
        "pid": pid,
        "where": place,
        "device": match &r.origin {
            Origin::Device { device, .. } => json!(device),
            Origin::Host { .. } => Value::Null,
        },
        "kernel": kernel,
        "file": file,
        "line": line,
        "col": col,
        "thread": thread,
        "block": block,
        "api": api,
        "operand": operand,
        "access": r.access.map(|a| json!({
            "write": a.write, "atomic": a.atomic, "range": a.range, "size": a.size,
        })),
        "address": hex(r.address),
        "buffer": r.buffer.as_ref().map(|b| json!({
            "id": b.block.id,
            "ptr": hex(b.block.ptr),
            "size": b.block.size,
            "offset": b.offset,
            "freed": b.block.freed,
            "device": b.block.device,
            "alloc_site": b.block.alloc_site.as_deref().map(frames),
            "free_site": b.block.free_site.as_deref().map(frames),
        })),
        "detail": r.detail,
        "call_site": r.call_site.as_deref().map(frames),
        "hint": r.kind.hint(),
    })
}

/// The program's frames of a backtrace, innermost first: `function at file:line:col`,
/// or the function alone where the location is unknown.
fn frames(bt: &std::backtrace::Backtrace) -> Vec<String> {
    site::program_frames(&site::parse(&bt.to_string()))
        .iter()
        .map(|f| match &f.location {
            Some(loc) => format!("{} at {loc}", f.function),
            None => f.function.clone(),
        })
        .collect()
}

/// The report as one line of JSON, newline included.
pub fn render(r: &Report, pid: u32) -> String {
    let mut s = to_value(r, pid).to_string();
    s.push('\n');
    s
}

/// Why a device fault may come without a finding (the text note says the same).
pub const FAULT_WITHOUT_FINDING: &str = "the fault is in uninstrumented code, or an access \
     reached unmapped memory through a pointer no check could judge (a wild pointer loaded \
     from memory, a buffer freed long ago), or the stack overflowed (instrumented frames \
     are larger; a kernel that recurses or calls through pointers gets the context's \
     limit, which cusafe multiplies by 4 at its first launch: give more with \
     CUSAFE_OPTIONS=stack_size=BYTES, e.g. 16384)";

/// The JSON line for a device fault (CUDA error `code`, named `name`) that came with no
/// cusafe record: kind `cuda-error-without-finding`, with the kernels launched through a
/// hook since the last successful synchronisation (demangled, oldest first; `kernel` is
/// the last of them), newline included.
pub fn cuda_error_without_finding(code: i32, name: &str, suspects: &[String], pid: u32) -> String {
    let mut s = json!({
        "kind": "cuda-error-without-finding",
        "pid": pid,
        "where": "device",
        "code": code,
        "name": name,
        "kernel": suspects.last(),
        "suspects": suspects,
        "detail": FAULT_WITHOUT_FINDING,
    })
    .to_string();
    s.push('\n');
    s
}
