//! Host call sites: a backtrace captured inside a hook, cut down to the program's own
//! frames (from the caller of the hooked `cuda*` function up to `main`) and printed one
//! frame a line, ASan style: `#0 main at ./app.cu:11:5`.

use std::backtrace::Backtrace;
use std::fmt::Write;

/// One frame: the function and, when debug info has it, `file:line:col`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// Function name (demangled by the standard library).
    pub function: String,
    /// Source location.
    pub location: Option<String>,
}

/// Parses the standard library's backtrace text (`  N: function` lines, each followed
/// by an optional `at file:line:col` line).
pub fn parse(text: &str) -> Vec<Frame> {
    let mut frames: Vec<Frame> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(loc) = t.strip_prefix("at ") {
            if let Some(f) = frames.last_mut() {
                f.location.get_or_insert_with(|| loc.to_string());
            }
        } else if let Some((n, function)) = t.split_once(": ") {
            if n.chars().all(|c| c.is_ascii_digit()) {
                frames.push(Frame {
                    function: function.to_string(),
                    location: None,
                });
            }
        }
    }
    frames
}

/// The program's frames: after the hooked CUDA function (the innermost frame named
/// `cuda*` that is not a Rust path) and up to `main`. Without such a frame, after the
/// last frame of the runtime itself.
pub fn program_frames(frames: &[Frame]) -> &[Frame] {
    let is_hook = |f: &Frame| f.function.starts_with("cuda") && !f.function.contains("::");
    let start = match frames.iter().position(is_hook) {
        Some(i) => i + 1,
        None => frames
            .iter()
            .rposition(|f| f.function.contains("cusafe_rt::"))
            .map_or(0, |i| i + 1),
    };
    let mut rest = &frames[start.min(frames.len())..];
    // The CUDA headers' inline wrappers (`cudaMalloc<T>`, `cudaLaunchKernel<T>`) and a
    // kernel's launch stub stand between the hook and the user's line: skip them.
    while rest.len() > 1 && is_glue(&rest[0]) {
        rest = &rest[1..];
    }
    let end = rest
        .iter()
        .position(|f| f.function == "main")
        .map_or(rest.len(), |i| i + 1);
    &rest[..end]
}

/// Whether `f` is code the compiler or the CUDA toolkit put between a program's call and
/// the hooked function: a frame in a CUDA or compiler header, or a kernel's host launch
/// stub (`__device_stub__` in clang's and nvcc's names).
fn is_glue(f: &Frame) -> bool {
    const HEADERS: [&str; 4] = [
        "/cuda/include/",
        "__clang_cuda",
        "/lib/clang/",
        "/nvidia/cuda_",
    ];
    f.function.contains("__device_stub__")
        || f.location
            .as_deref()
            .is_some_and(|l| HEADERS.iter().any(|h| l.contains(h)))
}

/// Renders frames, one a line, indented.
pub fn render_frames(frames: &[Frame]) -> String {
    let mut s = String::new();
    for (i, f) in frames.iter().enumerate() {
        let _ = match &f.location {
            Some(loc) => writeln!(s, "    #{i} {} at {loc}", f.function),
            None => writeln!(s, "    #{i} {}", f.function),
        };
    }
    if s.is_empty() {
        s.push_str("    (no frames: build the program with -g for source locations)\n");
    }
    s
}

/// Renders the program's part of a captured backtrace.
pub fn render(bt: &Backtrace) -> String {
    render_frames(program_frames(&parse(&bt.to_string())))
}
