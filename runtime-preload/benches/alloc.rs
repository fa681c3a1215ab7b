//! The allocator frontend's host-side cost per call, over the host backend (no GPU):
//! cudaMalloc+cudaFree pairs of small (slab) and mixed sizes, and the block-table
//! lookup a device report needs. The GPU latency bench is scripts/gpu/alloc-bench.sh.

use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use cusafe_rt::alloc::{Allocator, HostBackend};
use cusafe_rt::rng::Rng;

fn allocator() -> Allocator<HostBackend> {
    Allocator::new(HostBackend::new(), Rng::new(0xbe9c4))
        .expect("the host backend reserves its windows")
}

fn pairs(c: &mut Criterion) {
    let mut g = c.benchmark_group("alloc+free");
    g.throughput(Throughput::Elements(1));
    for (name, sizes) in [
        ("256 B", vec![256u64]),
        ("mixed 256 B..64 KiB", vec![256, 1000, 4096, 20_000, 65_536]),
    ] {
        g.bench_function(name, |b| {
            let mut a = allocator();
            let mut k = 0;
            b.iter(|| {
                let size = sizes[k % sizes.len()];
                k += 1;
                let info = a.alloc(size, None, 0).expect("alloc");
                a.free(info.ptr, None).expect("free");
            })
        });
    }
    g.finish();
}

fn lookup(c: &mut Criterion) {
    let mut a = allocator();
    let live: Vec<u64> = (0..1000)
        .map(|i| a.alloc(64 + (i % 7) * 300, None, 0).expect("alloc").ptr)
        .collect();
    let mut k = 0;
    c.bench_function("table lookup among 1000 live blocks", |b| {
        b.iter_batched(
            || {
                k = (k + 7919) % live.len();
                live[k] + 13
            },
            |addr| a.table().lookup(addr).is_some(),
            BatchSize::SmallInput,
        )
    });
}

criterion_group!(benches, pairs, lookup);
criterion_main!(benches);
