//! The allocator under concurrent use, two ways.
//!
//! * In process: one [`Allocator`] over the host backend behind a mutex, the way the
//!   runtime's heap holds it, driven by several real threads at once with random
//!   per-thread operation sequences (allocations of edge and random sizes, frees, double
//!   and interior frees, stray pointers, blocks handed to other threads, and races
//!   between threads freeing the same block). Checked on every operation, by a checker
//!   thread while they run, and at the end: live blocks never overlap; each live
//!   block's header decodes to its exact size and its pointer's tag (and, for a packed
//!   block, its sub-window field) names its class; no
//!   address is handed out twice (freed slots stay quarantined); freed headers read 0;
//!   the counters and the leak list agree with the model; everything freed leaves no
//!   live block, no live byte and no physical memory beyond the caches; and the results
//!   are those of replaying the operations sequentially in the order the lock admitted
//!   them.
//! * End to end: `libcusafe_rt.so` preloaded into `scenario concurrent` over the fake
//!   CUDA, where threads that start together (their first calls start the runtime)
//!   allocate, fill (memset or a checked kernel on shared streams), read back, free,
//!   double-free and race for shared blocks through the real hooks; and the launch
//!   counting race of `cudaFree`'s wait (`scenario launch_race`).

mod common;
use common::*;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Barrier, Mutex, MutexGuard};

use cusafe_format::block::{block_base, header_addr, payload, slotted_class_for, tile_len};
use cusafe_format::packed::{self, capacity, FIRST_PACKED_CLASS, LAST_PACKED_CLASS, POW2_FIELD};
use cusafe_format::pointer::{is_cusafe, tag_of, POISON_MASK};
use cusafe_rt::alloc::{
    AllocError, Allocator, BlockInfo, FreeError, HostBackend, MAX_CACHED_CHUNKS,
};
use cusafe_rt::rng::Rng;
use proptest::prelude::*;

const SEED: u64 = 0xc0c0_5eed;

/// One thread's operation; indices pick among the thread's own blocks (modulo).
#[derive(Clone, Debug)]
enum Op {
    Alloc(u64),
    Free(usize),
    DoubleFree(usize),
    Interior(usize, u64),
    Stray(u64),
    Publish(usize),
    FreeShared(usize),
}

/// Sizes at and around powers of two and class limits (the largest payload of a packed
/// sub-window is its extent less 256; 2^k - 257 was the largest of a power-of-two
/// block), and random ones.
fn size() -> impl Strategy<Value = u64> {
    prop_oneof![
        3 => (4u32..=23, prop::sample::select(vec![-258i64, -257, -256, -255, -1, 0, 1, 2]))
            .prop_map(|(k, d)| ((1i64 << k) + d).max(0) as u64),
        2 => (FIRST_PACKED_CLASS..=LAST_PACKED_CLASS, 0..POW2_FIELD, 0u64..=1)
            .prop_map(|(t, f, d)| capacity(t, f) + d),
        2 => prop_oneof![Just(0u64), Just(1), Just(255), Just(256), Just(257)],
        4 => 1u64..20_000,
        1 => 20_000u64..(5 << 20),
    ]
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        8 => size().prop_map(Op::Alloc),
        5 => any::<usize>().prop_map(Op::Free),
        1 => any::<usize>().prop_map(Op::DoubleFree),
        1 => (any::<usize>(), 1u64..5000).prop_map(|(i, o)| Op::Interior(i, o)),
        1 => prop_oneof![
            Just(0u64),
            Just(0x7f00_0000_1000),
            (1u64..36, 0u64..(1 << 30)).prop_map(|(t, o)| ((t << 41) + o * 256) | POISON_MASK),
        ]
        .prop_map(Op::Stray),
        2 => any::<usize>().prop_map(Op::Publish),
        2 => any::<usize>().prop_map(Op::FreeShared),
    ]
}

/// What an allocator call returned, reduced to what a sequential replay must reproduce.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Block { ptr: u64, id: u64, size: u64 },
    AllocFailed(String),
    Freed { id: u64, size: u64 },
    NotAllocated,
    Interior { id: u64 },
    DoubleFree { id: u64 },
    FreeFailed(String),
}

#[derive(Clone, Copy, Debug)]
enum Call {
    Alloc(u64),
    Free(u64),
}

/// One call in the order the lock admitted it.
#[derive(Debug)]
struct Entry {
    thread: usize,
    call: Call,
    outcome: Outcome,
}

#[derive(Clone, Copy, Debug)]
struct Live {
    ptr: u64,
    size: u64,
    id: u64,
    end: u64,
}

/// The allocator and the model of what it should hold, under one lock.
struct World {
    a: Allocator<HostBackend>,
    /// Live blocks by base.
    live: BTreeMap<u64, Live>,
    /// Every payload pointer ever handed out.
    ever: HashSet<u64>,
    /// Bases of freed blocks, most recent last.
    freed: Vec<u64>,
    /// Ids of freed blocks by payload pointer.
    dead: HashMap<u64, u64>,
    log: Vec<Entry>,
    last_id: u64,
    /// The packed sub-windows used, as (class, field).
    sub_windows: HashSet<(u32, u32)>,
}

fn base_of(ptr: u64) -> u64 {
    block_base(ptr, tag_of(ptr))
}

/// Whether `ptr`'s tag (and, for a packed block, its field) is the one `size` gets.
fn placed_right(size: u64, ptr: u64) -> bool {
    match packed::class_for(size) {
        Some((t, f)) => tag_of(ptr) == t && packed::is_packed(ptr) && packed::field_of(ptr) == f,
        None => slotted_class_for(size) == Some(tag_of(ptr)),
    }
}

fn outcome_of_alloc(r: &Result<BlockInfo, AllocError>) -> Outcome {
    match r {
        Ok(b) => Outcome::Block {
            ptr: b.ptr,
            id: b.id,
            size: b.size,
        },
        Err(e) => Outcome::AllocFailed(e.to_string()),
    }
}

fn outcome_of_free(r: &Result<BlockInfo, FreeError>) -> Outcome {
    match r {
        Ok(b) => Outcome::Freed {
            id: b.id,
            size: b.size,
        },
        Err(FreeError::NotAllocated { .. }) => Outcome::NotAllocated,
        Err(FreeError::Interior { block, .. }) => Outcome::Interior { id: block.id },
        Err(FreeError::DoubleFree { block }) => Outcome::DoubleFree { id: block.id },
        Err(FreeError::Backend { error, .. }) => Outcome::FreeFailed(error.to_string()),
    }
}

impl World {
    fn new() -> World {
        World {
            a: Allocator::new(HostBackend::new(), Rng::new(SEED)).expect("windows reserve"),
            live: BTreeMap::new(),
            ever: HashSet::new(),
            freed: Vec::new(),
            dead: HashMap::new(),
            log: Vec::new(),
            last_id: 0,
            sub_windows: HashSet::new(),
        }
    }

    /// The live block overlapping `[base, end)`, if any.
    fn overlapping(&self, base: u64, end: u64) -> Option<Live> {
        self.live
            .range(..end)
            .next_back()
            .map(|(_, l)| *l)
            .filter(|l| l.end > base)
    }

    /// Allocates for `thread` and checks the block against the model.
    fn alloc(&mut self, thread: usize, size: u64) -> Result<Live, String> {
        let r = self.a.alloc(size, None, 0);
        self.log.push(Entry {
            thread,
            call: Call::Alloc(size),
            outcome: outcome_of_alloc(&r),
        });
        let b = r.map_err(|e| format!("alloc({size}) failed: {e}"))?;
        let t = tag_of(b.ptr);
        let base = base_of(b.ptr);
        let end = base + tile_len(b.ptr);
        let live = Live {
            ptr: b.ptr,
            size,
            id: b.id,
            end,
        };
        if b.size != size || !is_cusafe(b.ptr) || !placed_right(size, b.ptr) {
            return Err(format!("alloc({size}) gave {b:?} (tag {t})"));
        }
        if payload(base) != b.ptr || b.ptr % 256 != 0 {
            return Err(format!(
                "alloc({size}): payload {:#x} not at the block's payload offset",
                b.ptr
            ));
        }
        if b.id != self.last_id + 1 {
            return Err(format!(
                "alloc({size}): id {} after id {}",
                b.id, self.last_id
            ));
        }
        if !self.ever.insert(b.ptr) {
            return Err(format!("alloc({size}): {:#x} was handed out before", b.ptr));
        }
        if let Some(o) = self.overlapping(base, end) {
            return Err(format!(
                "alloc({size}) at {base:#x}..{end:#x} overlaps {o:?}"
            ));
        }
        if self.a.backend().read_u64(header_addr(base)) != Some(size) {
            return Err(format!(
                "alloc({size}): header reads {:?}",
                self.a.backend().read_u64(header_addr(base))
            ));
        }
        self.last_id = b.id;
        if packed::is_packed(b.ptr) {
            self.sub_windows.insert((t, packed::field_of(b.ptr)));
        }
        self.live.insert(base, live);
        Ok(live)
    }

    /// Frees `ptr` for `thread` and checks the answer against the model.
    fn free(&mut self, thread: usize, ptr: u64) -> Result<Outcome, String> {
        let r = self.a.free(ptr, None);
        let outcome = outcome_of_free(&r);
        self.log.push(Entry {
            thread,
            call: Call::Free(ptr),
            outcome: outcome.clone(),
        });
        let clean = ptr & !POISON_MASK;
        let hit = is_cusafe(clean)
            .then(|| block_base(clean, tag_of(clean)))
            .and_then(|base| self.live.get(&base).map(|l| (base, *l)));
        let expected = match hit {
            _ if ptr & POISON_MASK != 0 => Outcome::NotAllocated,
            Some((_, l)) if l.ptr == ptr => Outcome::Freed {
                id: l.id,
                size: l.size,
            },
            Some((_, l)) => Outcome::Interior { id: l.id },
            None => match self.dead.get(&ptr) {
                Some(&id) => Outcome::DoubleFree { id },
                None => Outcome::NotAllocated,
            },
        };
        if outcome != expected {
            return Err(format!(
                "free({ptr:#x}) gave {outcome:?}, expected {expected:?}"
            ));
        }
        if let (Outcome::Freed { .. }, Some((base, l))) = (&outcome, hit) {
            self.live.remove(&base);
            self.freed.push(base);
            self.dead.insert(l.ptr, l.id);
            if self.a.backend().read_u64(header_addr(base)) != Some(0) {
                return Err(format!(
                    "free({ptr:#x}): header reads {:?} afterwards",
                    self.a.backend().read_u64(header_addr(base))
                ));
            }
        }
        Ok(outcome)
    }

    /// Invariants that hold between any two calls.
    fn check(&self) -> Result<(), String> {
        let stats = self.a.stats();
        let bytes: u64 = self.live.values().map(|l| l.size).sum();
        if stats.live_bytes != bytes || stats.allocs - stats.frees != self.live.len() as u64 {
            return Err(format!(
                "counters {stats:?} vs {} live blocks of {bytes} bytes",
                self.live.len()
            ));
        }
        let mut ids: Vec<u64> = self.live.values().map(|l| l.id).collect();
        ids.sort_unstable();
        let listed: Vec<u64> = self.a.live_blocks().iter().map(|b| b.id).collect();
        if listed != ids {
            return Err(format!("leak list {listed:?}, model {ids:?}"));
        }
        let mut prev_end = 0;
        for (&base, l) in &self.live {
            if base < prev_end {
                return Err(format!("block at {base:#x} overlaps the one before"));
            }
            prev_end = l.end;
            let header = self.a.backend().read_u64(header_addr(base));
            if header != Some(l.size) || !placed_right(l.size, l.ptr) {
                return Err(format!("live {l:?}: header {header:?}"));
            }
        }
        for &base in self.freed.iter().rev().take(64) {
            let header = self.a.backend().read_u64(header_addr(base));
            if !self.live.contains_key(&base) && !matches!(header, None | Some(0)) {
                return Err(format!("freed block at {base:#x}: header {header:?}"));
            }
        }
        Ok(())
    }
}

struct Shared {
    world: Mutex<World>,
    /// Blocks handed over by their owner: whichever thread frees one first wins.
    pool: Mutex<Vec<u64>>,
    failed: AtomicBool,
}

impl Shared {
    fn world(&self) -> MutexGuard<'_, World> {
        self.world.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Runs one thread's operations; checks its own view as it goes.
fn worker(sh: &Shared, thread: usize, ops: &[Op]) -> Result<(), String> {
    let mut mine: Vec<Live> = Vec::new();
    let mut gone: Vec<Live> = Vec::new();
    let mut last_id = 0;
    for op in ops {
        if sh.failed.load(Ordering::Relaxed) {
            return Ok(());
        }
        match *op {
            Op::Alloc(size) => {
                let l = sh.world().alloc(thread, size)?;
                if l.id <= last_id {
                    return Err(format!(
                        "thread {thread}: id {} after its id {last_id}",
                        l.id
                    ));
                }
                last_id = l.id;
                mine.push(l);
            }
            Op::Free(i) if !mine.is_empty() => {
                let l = mine.swap_remove(i % mine.len());
                let got = sh.world().free(thread, l.ptr)?;
                if got
                    != (Outcome::Freed {
                        id: l.id,
                        size: l.size,
                    })
                {
                    return Err(format!(
                        "thread {thread}: its own free of {l:?} gave {got:?}"
                    ));
                }
                gone.push(l);
            }
            Op::DoubleFree(i) if !gone.is_empty() => {
                let l = gone[i % gone.len()];
                let got = sh.world().free(thread, l.ptr)?;
                if got != (Outcome::DoubleFree { id: l.id }) {
                    return Err(format!(
                        "thread {thread}: double free of {l:?} gave {got:?}"
                    ));
                }
            }
            Op::Interior(i, off) if !mine.is_empty() => {
                let l = mine[i % mine.len()];
                let p = l.ptr + off % (l.end - l.ptr);
                let want = if p == l.ptr {
                    Outcome::Freed {
                        id: l.id,
                        size: l.size,
                    }
                } else {
                    Outcome::Interior { id: l.id }
                };
                let got = sh.world().free(thread, p)?;
                if got != want {
                    return Err(format!(
                        "thread {thread}: free({p:#x}) in {l:?} gave {got:?}"
                    ));
                }
                if p == l.ptr {
                    mine.retain(|m| m.ptr != p);
                    gone.push(l);
                }
            }
            Op::Stray(p) => {
                let got = sh.world().free(thread, p)?;
                if got != Outcome::NotAllocated {
                    return Err(format!("thread {thread}: stray free({p:#x}) gave {got:?}"));
                }
            }
            Op::Publish(i) if !mine.is_empty() => {
                let l = mine.swap_remove(i % mine.len());
                sh.pool.lock().unwrap().push(l.ptr);
            }
            Op::FreeShared(i) => {
                let p = {
                    let pool = sh.pool.lock().unwrap();
                    (!pool.is_empty()).then(|| pool[i % pool.len()])
                };
                if let Some(p) = p {
                    // World::free already checked the answer against the model.
                    sh.world().free(thread, p)?;
                }
            }
            _ => {}
        }
    }
    // Everything this thread still owns goes back.
    for l in mine {
        sh.world().free(thread, l.ptr)?;
    }
    Ok(())
}

/// Replays the log on a fresh allocator with the same seed, one call after the other.
fn replay(log: &[Entry]) -> Result<(), String> {
    let mut a = Allocator::new(HostBackend::new(), Rng::new(SEED)).expect("windows reserve");
    for (k, e) in log.iter().enumerate() {
        let got = match e.call {
            Call::Alloc(size) => outcome_of_alloc(&a.alloc(size, None, 0)),
            Call::Free(ptr) => outcome_of_free(&a.free(ptr, None)),
        };
        if got != e.outcome {
            return Err(format!(
                "call {k} of thread {} ({:?}): concurrently {:?}, replayed {got:?}",
                e.thread, e.call, e.outcome
            ));
        }
    }
    Ok(())
}

fn run_threads(threads: &[Vec<Op>]) -> Result<(), String> {
    let sh = Shared {
        world: Mutex::new(World::new()),
        pool: Mutex::new(Vec::new()),
        failed: AtomicBool::new(false),
    };
    let done = AtomicBool::new(false);
    let start = Barrier::new(threads.len() + 1);
    let (results, checker) = std::thread::scope(|s| {
        let checker = s.spawn(|| {
            start.wait();
            let mut rounds = 0u64;
            while !done.load(Ordering::Acquire) {
                if let Err(e) = sh.world().check() {
                    sh.failed.store(true, Ordering::Relaxed);
                    return Err(format!("while running (check {rounds}): {e}"));
                }
                rounds += 1;
                std::thread::yield_now();
            }
            Ok(rounds)
        });
        let workers: Vec<_> = threads
            .iter()
            .enumerate()
            .map(|(i, ops)| {
                let (sh, start) = (&sh, &start);
                s.spawn(move || {
                    start.wait();
                    let r = worker(sh, i, ops);
                    if r.is_err() {
                        sh.failed.store(true, Ordering::Relaxed);
                    }
                    r
                })
            })
            .collect();
        let results: Vec<Result<(), String>> = workers
            .into_iter()
            .map(|w| w.join().expect("worker panicked"))
            .collect();
        done.store(true, Ordering::Release);
        (results, checker.join().expect("checker panicked"))
    });
    for r in results {
        r?;
    }
    checker?;
    let mut w = sh.world.into_inner().unwrap();
    // Shared blocks nobody freed: free them now (the ones freed already are refused).
    for p in sh.pool.into_inner().unwrap() {
        w.free(usize::MAX, p)?;
    }
    w.check()?;
    let stats = w.a.stats();
    if !w.live.is_empty() || stats.live_bytes != 0 || stats.allocs != stats.frees {
        return Err(format!(
            "after freeing everything: {stats:?}, model {:?}",
            w.live
        ));
    }
    if !w.a.live_blocks().is_empty() {
        return Err(format!("leak list not empty: {:?}", w.a.live_blocks()));
    }
    // Physical memory left: the tombstone, the header granules of slotted blocks, cached
    // chunks, and in each packed sub-window used the granule that its slab's next block
    // goes to.
    let handles = w.a.backend().live_handles();
    let kept = 1 + stats.header_granules as usize + MAX_CACHED_CHUNKS + w.sub_windows.len();
    if handles > kept {
        return Err(format!(
            "{handles} physical allocations left (at most {kept} expected)"
        ));
    }
    replay(&w.log)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Threads at once against one allocator: see the module comment.
    #[test]
    fn concurrent_threads_keep_the_allocator_consistent(
        threads in prop::collection::vec(prop::collection::vec(op(), 1..200), 2..=8)
    ) {
        if let Err(e) = run_threads(&threads) {
            prop_assert!(false, "{}", e);
        }
    }
}

/// A fixed, larger case: eight threads racing for shared blocks.
#[test]
fn eight_threads_racing_for_shared_blocks() {
    let ops: Vec<Vec<Op>> = (0..8)
        .map(|t| {
            (0..600)
                .map(|k| match (t + k) % 6 {
                    0 | 1 => Op::Alloc([1, 257, 4096, 65280, (2 << 20) - 257, 3 << 20][k % 6]),
                    2 => Op::Publish(k),
                    3 => Op::FreeShared(k * 7 + t),
                    4 => Op::Free(k),
                    _ => Op::DoubleFree(k),
                })
                .collect()
        })
        .collect();
    run_threads(&ops).unwrap();
}

/// `scenario concurrent THREADS OPS SEED`'s summary line.
fn summary(stdout: &str) -> Option<[u64; 5]> {
    let line = stdout.lines().find(|l| l.starts_with("concurrent: "))?;
    let mut v = [0; 5];
    for (i, key) in ["allocs", "frees", "refused", "corrupt", "bad_rc"]
        .iter()
        .enumerate()
    {
        let f = line
            .split_whitespace()
            .find_map(|kv| kv.strip_prefix(&format!("{key}=")))?;
        v[i] = f.parse().ok()?;
    }
    Some(v)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]

    /// Through the hooks: every block freed exactly once, contents intact, each refused
    /// free reported once (JSON), no leak, no device report, no warning.
    #[test]
    fn concurrent_hooks_free_every_block_once(
        threads in 2usize..=16,
        ops in 40usize..300,
        seed in any::<u32>(),
    ) {
        let json = scratch(&format!("concurrent-{seed}.json"));
        let opts = format!(
            "halt_on_error=0:exitcode=7:detect_leaks=1:json_path={}",
            json.display()
        );
        let r = run(
            &["concurrent", &threads.to_string(), &ops.to_string(), &seed.to_string()],
            &opts,
        );
        let s = summary(&r.stdout);
        prop_assert!(s.is_some(), "no summary: {:?}", r);
        let [allocs, frees, refused, corrupt, bad_rc] = s.unwrap();
        prop_assert_eq!((corrupt, bad_rc), (0, 0), "{:?}", r);
        prop_assert_eq!(allocs, frees, "every block freed exactly once: {:?}", r);
        prop_assert_eq!(r.code, if refused > 0 { 7 } else { 0 }, "{:?}", r);
        let lines = std::fs::read_to_string(&json).unwrap_or_default();
        let kinds: Vec<String> = lines
            .lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("one JSON object a line");
                v["kind"].as_str().unwrap_or("").to_string()
            })
            .collect();
        prop_assert_eq!(kinds.len() as u64, refused, "{:?}", kinds);
        prop_assert!(
            kinds.iter().all(|k| k == "double-free" || k == "invalid-free"),
            "{:?}", kinds
        );
        prop_assert_eq!(
            r.stderr.matches("ERROR: cusafe:").count() as u64,
            refused,
            "{}", r.stderr
        );
        prop_assert!(!r.stderr.contains("warning") && !r.stderr.contains("leak"), "{}", r.stderr);
        let _ = std::fs::remove_file(&json);
    }
}

/// A kernel still running while another thread's `cudaFree` waits for the device is not
/// covered by that wait: the launching thread's own `cudaFree` afterwards must wait
/// again. (It did not: the launch was counted before it was made, so the other thread's
/// wait marked it finished, and the later free zeroed the header of a buffer its kernel
/// might still be reading.)
#[test]
fn a_free_waits_for_a_kernel_that_another_threads_wait_did_not_cover() {
    let log = scratch("launch_race.log");
    let r = run_env(
        &["launch_race"],
        "",
        &[("FAKE_CUDA_LOG", log.to_str().unwrap())],
    );
    assert_eq!(
        (r.code, r.stdout.as_str(), r.stderr.as_str()),
        (0, "race done\n", ""),
        "{r:?}"
    );
    let text = std::fs::read_to_string(&log).unwrap();
    let during = text
        .split("A frees\n")
        .nth(1)
        .and_then(|t| t.split("A freed\n").next())
        .expect("both marks in the log");
    assert!(
        during.contains("cuCtxSynchronize"),
        "A's cudaFree did not wait for the device:\n{text}"
    );
}
