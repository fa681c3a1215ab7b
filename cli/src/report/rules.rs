//! What each report kind is, for its SARIF rule: a short and a full description and the
//! default level. (The help text is the runtime's `hint`, which every report carries.)

use serde_sarif::sarif::ResultLevel;

/// The kind of a device fault that came with no cusafe finding (no `hint` in its line).
pub const FAULT_WITHOUT_FINDING: &str = "cuda-error-without-finding";

/// The help of [`FAULT_WITHOUT_FINDING`].
pub const FAULT_HELP: &str = "run the program again with CUDA_LAUNCH_BLOCKING=1 to name \
     the faulting kernel, build all device code with cusafe-clang++, and look for a wild \
     pointer loaded from memory, a buffer freed long ago or a stack overflow (give more \
     stack with CUSAFE_OPTIONS=stack_size=BYTES)";

/// A kind's rule text.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// One line.
    pub short: String,
    /// A sentence or two.
    pub full: String,
    /// The level of its results.
    pub level: ResultLevel,
}

/// The rule text of `kind` (a generic one for a kind this version does not know).
pub fn describe(kind: &str) -> Rule {
    let (short, full) = match kind {
        "heap-buffer-overflow" => (
            "Heap buffer overflow",
            "A kernel or an API call accessed a live device buffer (cudaMalloc and friends, or the device heap) outside its exact bounds.",
        ),
        "use-after-free" => (
            "Use after free",
            "A kernel or an API call accessed a device buffer after it was freed.",
        ),
        "pointer-overflow" => (
            "Pointer overflow",
            "A pointer whose arithmetic moved it out of its buffer was dereferenced.",
        ),
        "wild-access" => (
            "Wild access",
            "An access through a pointer that is in no known allocation: an address that belongs to no buffer, a kernel argument in no memory the driver knows, or a pointer with corrupted high bits.",
        ),
        "null-dereference" => (
            "Null dereference",
            "An access in the null page through an untagged pointer (null plus an offset).",
        ),
        "stack-buffer-overflow" => (
            "Stack buffer overflow",
            "A local array in device code was accessed outside its bounds.",
        ),
        "shared-buffer-overflow" => (
            "Shared buffer overflow",
            "A __shared__ array, or the dynamic shared memory of a launch, was accessed outside its bounds.",
        ),
        "global-buffer-overflow" => (
            "Global buffer overflow",
            "A __device__ global variable was accessed outside its bounds.",
        ),
        "stack-use-after-return" => (
            "Stack use after return",
            "A local array was used through a pointer after its function returned.",
        ),
        "stack-use-after-scope" => (
            "Stack use after scope",
            "A block-scoped local array was used through a pointer after its scope ended.",
        ),
        "double-free" => (
            "Double free",
            "A buffer that was already freed was freed again (cudaFree, or free/delete in device code).",
        ),
        "invalid-free" => (
            "Invalid free",
            "A pointer that is not the start of a buffer was freed: an interior pointer, memory never allocated, or memory of another kind.",
        ),
        "api-out-of-bounds" => (
            "API range out of bounds",
            "A copy or set API call was given a byte range that does not fit in its buffer.",
        ),
        "leak" => (
            "Device memory leak",
            "A device buffer was still allocated when the program exited.",
        ),
        "allocation-size-too-big" => (
            "Allocation size too big",
            "An allocation call asked for more bytes than the device has, often a negative int converted to size_t.",
        ),
        "api-error" => (
            "CUDA API error",
            "A CUDA API call returned an error (reported with CUSAFE_OPTIONS=report_api_errors=1).",
        ),
        FAULT_WITHOUT_FINDING => (
            "Device fault without a finding",
            "A kernel faulted (an illegal address or a similar CUDA error) and no cusafe check reported why: the fault is in uninstrumented code, through a pointer no check could judge, or a stack overflow.",
        ),
        _ => {
            return Rule {
                short: format!("cusafe report `{kind}`"),
                full: format!("A cusafe report of kind `{kind}` (see its message)."),
                level: ResultLevel::Error,
            }
        }
    };
    let level = match kind {
        "leak" | "api-error" | FAULT_WITHOUT_FINDING => ResultLevel::Warning,
        _ => ResultLevel::Error,
    };
    Rule {
        short: short.to_string(),
        full: full.to_string(),
        level,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_unknown_kinds() {
        assert_eq!(describe("heap-buffer-overflow").level, ResultLevel::Error);
        assert_eq!(describe("leak").level, ResultLevel::Warning);
        assert_eq!(describe(FAULT_WITHOUT_FINDING).level, ResultLevel::Warning);
        let r = describe("future-kind");
        assert_eq!(r.short, "cusafe report `future-kind`");
        assert_eq!(r.level, ResultLevel::Error);
    }
}
