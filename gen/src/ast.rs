//! The generator's representation of a program: what the generator builds, the
//! emitter prints, EMI and planting transform, and the reducer shrinks.
//!
//! Every construct is free of undefined behaviour by construction: arithmetic is on
//! `unsigned` (wrapping), shift amounts are masked, divisors are forced odd, every
//! index is reduced modulo its array's length, trip counts and recursion depths are
//! bounded, global buffers are written only at the writing thread's own slots, and
//! shared memory is read only between two barriers in uniform control flow. The only
//! exceptions are a [`Stmt::Plant`] (the one planted bug) and the content of a dead
//! [`Stmt::Guard`] (never executed).

use serde::{Deserialize, Serialize};

/// One generated program: device allocations, device functions, kernels and the host's
/// sequence of CUDA calls. Printed as one namespace of a CUDA file by [`crate::emit`].
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Program {
    /// The seed it was generated from (also its name: `p<seed>`).
    pub seed: u64,
    /// Blocks per launch.
    pub grid: u32,
    /// Threads per block (a multiple of 32, so warps are full).
    pub block: u32,
    /// Device allocations (`cudaMalloc`); every kernel receives all of them.
    pub buffers: Vec<Buffer>,
    /// Length of the `__device__` table (read-only in kernels, set by
    /// `cudaMemcpyToSymbol`).
    pub table_len: u32,
    /// Device functions kernels call.
    pub funcs: Vec<Func>,
    /// Kernels.
    pub kernels: Vec<Kernel>,
    /// What the host does after allocating and filling the buffers.
    pub host: Vec<HostOp>,
}

/// What a buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Elem {
    /// `unsigned` words.
    Word,
    /// `Rec` structs (16 bytes: `unsigned a; unsigned short b; unsigned char c, e;
    /// unsigned long long d;`).
    Rec,
}

impl Elem {
    /// Size of one element in bytes.
    pub fn bytes(self) -> u32 {
        match self {
            Elem::Word => 4,
            Elem::Rec => 16,
        }
    }
}

/// One device allocation.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Buffer {
    /// Elements.
    pub len: u32,
    /// Element type.
    pub elem: Elem,
    /// Slots each thread owns when a kernel writes it (`gid * own + slot`); 0 for a
    /// buffer too small to be written (`len >= threads * own` otherwise).
    pub own: u32,
    /// Only atomics touch it (never read by kernels).
    pub accumulator: bool,
}

/// A device function.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Func {
    /// `__noinline__`.
    pub noinline: bool,
    /// What it does.
    pub kind: FuncKind,
}

/// The shapes of device functions.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum FuncKind {
    /// `unsigned f(unsigned a, unsigned b, const unsigned *p, unsigned n)
    /// { return body; }`; `body` uses [`Expr::Arg`] 0 and 1 and [`Expr::ArgLoad`].
    Pure {
        /// The returned expression.
        body: Expr,
    },
    /// Bounded recursion: `f(d, x, p, n) = d == 0 ? base : f(d - 1, step, p, n) ^ d`,
    /// with `d` (argument 0) below [`MAX_DEPTH`] at every call.
    Recursive {
        /// Result at depth 0 (over argument 1 and `p`).
        base: Expr,
        /// The next `x` (over arguments 0 and 1).
        step: Expr,
    },
    /// Fills a caller's local array through a pointer:
    /// `void f(unsigned *q, unsigned n, unsigned a) { for i < n: q[i] = body; }`, with
    /// `body` over argument 0 (`a`) and argument 1 (`i`).
    FillLocal {
        /// The value of element `i`.
        body: Expr,
    },
}

/// Deepest recursion a [`FuncKind::Recursive`] call starts with (exclusive).
pub const MAX_DEPTH: u32 = 6;

/// A kernel. Its parameters are every buffer of the program, the trip counts
/// `t0..t2`, the EMI array `ctl` (`ctl[j] == j`), the planted bug's index `poff` and
/// the planted use-after-free's dangling pointer `victim`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kernel {
    /// Buffers it reads (never writes).
    pub inputs: Vec<usize>,
    /// Buffers it writes at its own slots (never reads other threads' slots).
    pub outputs: Vec<usize>,
    /// `unsigned v0..v{vars}` per thread.
    pub vars: u32,
    /// Length of the local array `loc` (0: none).
    pub local_len: u32,
    /// Elements of `__shared__ unsigned sh[]` per thread (0: none).
    pub shared_per_thread: u32,
    /// Elements of dynamic shared memory per thread (0: none).
    pub dynamic_per_thread: u32,
    /// The statements.
    pub body: Vec<Stmt>,
}

/// A statement of a kernel body.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Stmt {
    /// `v{var} = value;`
    Set {
        /// Variable.
        var: u32,
        /// Value.
        value: Expr,
    },
    /// `buf[gid * own + slot] = value;` (a field of it for `Rec` buffers).
    Store {
        /// Output buffer.
        buf: usize,
        /// Own slot (below the buffer's `own`).
        slot: u32,
        /// Field for `Rec` buffers.
        field: Field,
        /// Value.
        value: Expr,
    },
    /// `loc[index % local_len] = value;`
    LocalStore {
        /// Index (reduced).
        index: Expr,
        /// Value.
        value: Expr,
    },
    /// `atomicOp(&acc[index % len], value);` on an accumulator buffer.
    Atomic {
        /// Operation (commutative, so the final value does not depend on order).
        op: AtomicOp,
        /// Accumulator buffer.
        buf: usize,
        /// Index (reduced).
        index: Expr,
        /// Operand.
        value: Expr,
    },
    /// A divergent branch.
    If {
        /// Condition (non-zero is true).
        cond: Expr,
        /// Then branch.
        then: Vec<Stmt>,
        /// Else branch.
        els: Vec<Stmt>,
    },
    /// `for (unsigned i{var} = 0; i{var} < t{param} % modulus + 1; ++i{var}) body`:
    /// a uniform trip count known only at run time.
    Loop {
        /// Loop variable (`i{var}`, unique in the kernel).
        var: u32,
        /// Trip-count parameter (0..3).
        param: u8,
        /// At most this many iterations.
        modulus: u32,
        /// Body.
        body: Vec<Stmt>,
    },
    /// Uniform: every thread writes its own elements of static shared memory,
    /// barrier, `v{var} ^= sh[index % size]`, barrier.
    SharedRound {
        /// Dynamic shared memory instead of `sh`.
        dynamic: bool,
        /// The values written (one per element each thread owns).
        values: Vec<Expr>,
        /// Variable that receives the read.
        var: u32,
        /// Index of the read (reduced).
        index: Expr,
    },
    /// Uniform: `if (tid == 0) sacc = init; barrier; atomicOp(&sacc, value); barrier;
    /// v{var} += sacc; barrier;`
    SharedAtomic {
        /// Operation.
        op: AtomicOp,
        /// Initial value.
        init: u32,
        /// Each thread's operand.
        value: Expr,
        /// Variable that receives the result.
        var: u32,
    },
    /// Uniform: `v{var} = warp_op(value)` over the full warp.
    Warp {
        /// The warp operation.
        op: WarpOp,
        /// Variable that receives the result.
        var: u32,
        /// Operand.
        value: Expr,
    },
    /// Pointer walk with a one-past-the-end bound:
    /// `for (p = buf + a; p != buf + b; ++p) v{var} = v{var} * 31 + *p;` with
    /// `a = from % (len + 1)`, `b = a + to % (len + 1 - a)`.
    Walk {
        /// Variable.
        var: u32,
        /// Input buffer (words).
        buf: usize,
        /// Start (reduced).
        from: Expr,
        /// Length (reduced).
        to: Expr,
    },
    /// Integer arithmetic that takes a pointer out of its buffer and back:
    /// `q = (uintptr_t)(buf + index % len) + delta; v{var} += *(unsigned *)(q - delta);`
    RoundTrip {
        /// Variable.
        var: u32,
        /// Input buffer (words).
        buf: usize,
        /// Index (reduced).
        index: Expr,
        /// How far out the pointer goes, in bytes.
        delta: u32,
    },
    /// A vector load: `v{var} += combine(((const uint4 *)buf)[index % (len / 4)])`
    /// (or `uint2`).
    Vector {
        /// Variable.
        var: u32,
        /// Input buffer (words, `len >= 4`).
        buf: usize,
        /// Index (reduced).
        index: Expr,
        /// 2 or 4 lanes.
        width: u32,
    },
    /// Passes `loc` to a [`FuncKind::FillLocal`] function (a local pointer escapes).
    FillLocal {
        /// The function.
        func: usize,
        /// Its `a`.
        value: Expr,
    },
    /// In-kernel heap: `h = (unsigned *)malloc(len * 4)`; fill; read one element into
    /// `v{var}` (or the same value computed without the heap when `malloc` fails);
    /// `free(h)`.
    DeviceHeap {
        /// Variable.
        var: u32,
        /// Words allocated.
        len: u32,
        /// Index of the read (reduced).
        index: Expr,
    },
    /// EMI guard: `if (ctl[a] < ctl[b]) body` — never true when `a > b` (dead code),
    /// always true when `a < b` (a live guard).
    Guard {
        /// First index into `ctl`.
        a: u32,
        /// Second index into `ctl`.
        b: u32,
        /// Body.
        body: Vec<Stmt>,
    },
    /// The planted bug (or, inside a dead guard, a hazard that never runs).
    Plant(Plant),
}

/// Field of a `Rec` element (ignored for word buffers).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Field {
    /// `unsigned a`.
    A,
    /// `unsigned short b`.
    B,
    /// `unsigned char c`.
    C,
    /// `unsigned long long d`.
    D,
}

/// Commutative, associative atomic operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum AtomicOp {
    /// `atomicAdd`.
    Add,
    /// `atomicOr`.
    Or,
    /// `atomicXor`.
    Xor,
    /// `atomicMin`.
    Min,
    /// `atomicMax`.
    Max,
    /// `atomicAnd`.
    And,
}

/// Warp-wide operations (full mask).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum WarpOp {
    /// `__shfl_sync(FULL, x, lane)`.
    Shfl(u32),
    /// `__shfl_xor_sync(FULL, x, mask)`.
    ShflXor(u32),
    /// `__shfl_down_sync(FULL, x, delta)`.
    ShflDown(u32),
    /// `__ballot_sync(FULL, x & 1)`.
    Ballot,
    /// `__any_sync(FULL, x & 1)`.
    Any,
    /// `__all_sync(FULL, x & 1)`.
    All,
}

/// An expression; every operator is defined for every operand value.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Expr {
    /// A literal.
    Const(u32),
    /// `v{n}`.
    Var(u32),
    /// `i{n}` of an enclosing loop.
    LoopVar(u32),
    /// A function's argument `n` (function bodies only).
    Arg(u32),
    /// `threadIdx.x`.
    Tid,
    /// `blockIdx.x * blockDim.x + threadIdx.x`.
    Gid,
    /// `blockIdx.x`.
    Bid,
    /// `t{n}` (trip-count parameter).
    Param(u8),
    /// A binary operation.
    Bin(BinOp, Box<Expr>, Box<Expr>),
    /// `c ? a : b`.
    Select(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `buf[index % len]` (a field of it for `Rec` buffers, widened to `unsigned`).
    Load {
        /// Input buffer.
        buf: usize,
        /// Index (reduced).
        index: Box<Expr>,
        /// Field for `Rec` buffers.
        field: Field,
    },
    /// `table[index % table_len]` (the `__device__` table).
    Table(Box<Expr>),
    /// `loc[index % local_len]`.
    Local(Box<Expr>),
    /// `p[index % n]` inside a function body.
    ArgLoad(Box<Expr>),
    /// A call of a [`FuncKind::Pure`] or [`FuncKind::Recursive`] function with an
    /// input word buffer as its `p`.
    Call {
        /// The function.
        func: usize,
        /// Its two `unsigned` arguments (a recursive call's first is reduced below
        /// [`MAX_DEPTH`]).
        args: Box<(Expr, Expr)>,
        /// The buffer passed as `p`.
        buf: usize,
    },
}

/// Binary operators; division and remainder divide by `rhs | 1`, shifts by `rhs & 31`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum BinOp {
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `^`
    Xor,
    /// `&`
    And,
    /// `|`
    Or,
    /// `<<` (masked)
    Shl,
    /// `>>` (masked)
    Shr,
    /// `/` (odd divisor)
    Div,
    /// `%` (odd divisor)
    Rem,
    /// `<` (0 or 1)
    Lt,
    /// `==` (0 or 1)
    Eq,
    /// signed `<` of the operands as `int` (0 or 1)
    SLt,
    /// `min`
    Min,
    /// `max`
    Max,
}

/// A host step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostOp {
    /// `cudaMemset(buf, byte, whole buffer)`.
    Memset {
        /// Buffer.
        buf: usize,
        /// Byte value.
        byte: u8,
    },
    /// `cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice)`.
    Copy {
        /// Destination.
        dst: usize,
        /// Source.
        src: usize,
        /// Bytes (at most both buffers' sizes).
        bytes: u32,
    },
    /// `k{kernel}<<<grid, block, dynamic>>>(..., t0, t1, t2, ...)`.
    Launch {
        /// Kernel.
        kernel: usize,
        /// Trip-count arguments.
        trips: [u32; 3],
    },
}

/// Where the planted access goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Space {
    /// A `cudaMalloc` buffer.
    Heap,
    /// The `__device__` table.
    Global,
    /// Static `__shared__` memory.
    Shared,
    /// Dynamic shared memory.
    Dynamic,
    /// The kernel's local array.
    Local,
    /// A block from in-kernel `malloc`.
    DeviceHeap,
}

/// How the planted access goes wrong.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Fault {
    /// One element past the end.
    OffByOne,
    /// One element before the start.
    Underflow,
    /// Far past the end (thousands of elements).
    Far,
    /// Into memory already freed (`cudaFree` before the launch, or `free` in the
    /// kernel).
    UseAfterFree,
}

/// The planted bug: one thread makes one bad access.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Plant {
    /// Memory space.
    pub space: Space,
    /// Kind of fault.
    pub fault: Fault,
    /// A write (else a read whose value reaches the output).
    pub write: bool,
    /// The global thread id that makes the access.
    pub thread: u32,
    /// For heap accesses: the buffer (a use after free frees it before the launch).
    pub buf: usize,
    /// The element index the access uses (passed as the kernel's `poff`).
    pub index: i64,
}

impl Plant {
    /// The report kind cusafe should give.
    pub fn expected_kind(&self) -> &'static str {
        match (self.fault, self.space) {
            (Fault::UseAfterFree, _) => "use-after-free",
            (_, Space::Heap | Space::DeviceHeap) => "heap-buffer-overflow",
            (_, Space::Global) => "global-buffer-overflow",
            (_, Space::Shared | Space::Dynamic) => "shared-buffer-overflow",
            (_, Space::Local) => "stack-buffer-overflow",
        }
    }
}

impl Program {
    /// Threads per launch.
    pub fn threads(&self) -> u32 {
        self.grid * self.block
    }

    /// The planted bug, if any (outside dead guards).
    pub fn plant(&self) -> Option<(usize, Plant)> {
        self.kernels
            .iter()
            .enumerate()
            .find_map(|(k, kernel)| live_plant(&kernel.body).map(|p| (k, p)))
    }
}

fn live_plant(body: &[Stmt]) -> Option<Plant> {
    body.iter().find_map(|s| match s {
        Stmt::Plant(p) => Some(*p),
        Stmt::If { then, els, .. } => live_plant(then).or_else(|| live_plant(els)),
        Stmt::Loop { body, .. } => live_plant(body),
        Stmt::Guard { a, b, body } if a < b => live_plant(body),
        _ => None,
    })
}
