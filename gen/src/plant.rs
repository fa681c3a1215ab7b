//! Bug mode: exactly one bad access, made by one thread, at a top-level position of
//! one kernel. The space it goes to is created if the kernel lacks it, so every space
//! and fault can be planted in every program.

use crate::ast::*;
use crate::rng::Choices;

/// Every (space, fault) pair that can be planted.
pub const CHOICES: [(Space, Fault); 20] = [
    (Space::Heap, Fault::OffByOne),
    (Space::Heap, Fault::Underflow),
    (Space::Heap, Fault::Far),
    (Space::Heap, Fault::UseAfterFree),
    (Space::Global, Fault::OffByOne),
    (Space::Global, Fault::Underflow),
    (Space::Global, Fault::Far),
    (Space::Shared, Fault::OffByOne),
    (Space::Shared, Fault::Underflow),
    (Space::Shared, Fault::Far),
    (Space::Dynamic, Fault::OffByOne),
    (Space::Dynamic, Fault::Underflow),
    (Space::Dynamic, Fault::Far),
    (Space::Local, Fault::OffByOne),
    (Space::Local, Fault::Underflow),
    (Space::Local, Fault::Far),
    (Space::DeviceHeap, Fault::OffByOne),
    (Space::DeviceHeap, Fault::Underflow),
    (Space::DeviceHeap, Fault::Far),
    (Space::DeviceHeap, Fault::UseAfterFree),
];

/// Words of the block a device-heap plant allocates (`malloc(64)`).
pub const DEVICE_HEAP_WORDS: i64 = 16;

/// Plants one bug in `prog`, chosen by `seed` (`choice` picks the (space, fault) pair
/// from [`CHOICES`] when given, so a batch can cover every pair evenly).
pub fn plant(prog: &mut Program, seed: u64, choice: Option<usize>) -> Plant {
    let mut r = Choices::new(seed ^ 0x0070_6c61_6e74);
    let (space, fault) =
        CHOICES[choice.unwrap_or_else(|| r.below(CHOICES.len() as u32) as usize) % CHOICES.len()];
    let kernel = r.below(prog.kernels.len() as u32) as usize;
    let block = prog.block;
    let data: Vec<usize> = (1..prog.buffers.len()).collect();
    let buf = r.pick(&data);
    let k = &mut prog.kernels[kernel];
    let len = match space {
        Space::Heap => i64::from(prog.buffers[buf].len),
        Space::Global => {
            if prog.table_len == 0 {
                prog.table_len = 33;
            }
            i64::from(prog.table_len)
        }
        Space::Shared => {
            k.shared_per_thread = k.shared_per_thread.max(1);
            i64::from(k.shared_per_thread * block)
        }
        Space::Dynamic => {
            k.dynamic_per_thread = k.dynamic_per_thread.max(1);
            i64::from(k.dynamic_per_thread * block)
        }
        Space::Local => {
            if k.local_len == 0 {
                k.local_len = 8;
            }
            i64::from(k.local_len)
        }
        Space::DeviceHeap => DEVICE_HEAP_WORDS,
    };
    let index = match fault {
        Fault::OffByOne => len,
        Fault::Underflow => -1,
        Fault::Far => len + 1000 + i64::from(r.below(4000)),
        Fault::UseAfterFree => i64::from(r.below(len.min(1 << 20) as u32)),
    };
    let plant = Plant {
        space,
        fault,
        write: r.chance(50),
        thread: r.below(prog.grid * prog.block),
        buf,
        index,
    };
    let at = r.below(k.body.len() as u32 + 1) as usize;
    k.body.insert(at, Stmt::Plant(plant));
    if matches!(space, Space::Shared | Space::Dynamic) {
        // Shared memory nobody writes is undefined: the optimiser may fold the planted
        // load away. Every thread writes its elements first (top level: uniform).
        let per = if space == Space::Shared {
            k.shared_per_thread
        } else {
            k.dynamic_per_thread
        };
        k.body.insert(
            at,
            Stmt::SharedRound {
                dynamic: space == Space::Dynamic,
                values: vec![Expr::Gid; per as usize],
                var: 0,
                index: Expr::Tid,
            },
        );
    }
    plant
}
