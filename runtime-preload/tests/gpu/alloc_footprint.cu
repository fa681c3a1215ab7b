// Device memory per allocation: for each size, the drop in cudaMemGetInfo's free bytes
// while N and then 2N cudaMalloc(size) allocations are live. The *marginal* cost,
// (drop at 2N - drop at N) / N, is what each further allocation takes once the
// allocator is warm; it leaves out what the first allocations pay once (a slab's first
// granule, the driver's pools) and most of the 2 MiB granule rounding (at most
// 2 MiB / N: N makes each step about 1 GiB, at most 32768 allocations). Prints one line
// per size:
//   alloc_footprint size=256 count=32768 bytes_per_alloc=512.0 overhead_per_alloc=256.0 average_bytes_per_alloc=520.3
// (bytes_per_alloc: the marginal cost; overhead = that - size; average: drop at 2N / 2N)
// after one line with the device memory in use once CUDA is initialised:
//   alloc_footprint fixed used_after_init=541065216
// Run it plain and with LD_PRELOAD=libcusafe_rt.so on the same GPU and compare: the
// difference is what the runtime's blocks cost.
//
// Host code only: builds with nvcc, with clang++ -x cuda, or as plain C++ against
// cuda_runtime_api.h.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "alloc_footprint: %s failed: %d\n", what, static_cast<int>(e));
    std::exit(2);
  }
}

static size_t free_bytes() {
  size_t free = 0, total = 0;
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  return free;
}

int main(int argc, char **argv) {
  // Sizes from 16 B to 64 MiB + 1: each power of four, and one byte past it (past a
  // class boundary: the worst case of power-of-two classes), plus sizes around the 2 MiB
  // granule.
  // `alloc_footprint --sizes` prints the list; `alloc_footprint SIZE...` measures only
  // those. Measure one size per process: allocators keep freed memory for reuse, so a
  // size measured after another may find its memory already mapped.
  std::vector<size_t> sizes = {1000, (size_t(2) << 20) - 256};
  for (size_t s = 16; s <= (size_t(64) << 20); s *= 4) {
    sizes.push_back(s);
    sizes.push_back(s + 1);
  }
  sizes.push_back(size_t(2) << 20);
  sizes.push_back((size_t(2) << 20) + 1);
  std::sort(sizes.begin(), sizes.end());
  if (argc == 2 && !std::strcmp(argv[1], "--sizes")) {
    for (size_t s : sizes) std::printf("%zu\n", s);
    return 0;
  }
  if (argc > 1) {
    sizes.clear();
    for (int i = 1; i < argc; i++) {
      char *end = nullptr;
      unsigned long long v = std::strtoull(argv[i], &end, 10);
      if (!*argv[i] || *end || v == 0) {
        std::fprintf(stderr, "alloc_footprint: '%s' is not a size in bytes; give sizes like 4097, or --sizes for the list\n", argv[i]);
        return 2;
      }
      sizes.push_back(v);
    }
  }
  struct Case {
    size_t size;
    int count;
  };
  std::vector<Case> cases;
  for (size_t s : sizes) {
    size_t n = (size_t(1) << 30) / s;
    cases.push_back({s, static_cast<int>(n < 8 ? 8 : n > 32768 ? 32768 : n)});
  }
  check(cudaFree(nullptr), "cudaFree(0)");
  {
    // What the process holds before any allocation (context, and preloaded the
    // runtime's fixed memory: its runtime page and first header granule).
    size_t free = 0, total = 0;
    check(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
    std::printf("alloc_footprint fixed used_after_init=%zu\n", total - free);
  }
  for (const auto &c : cases) {
    std::vector<void *> ptrs(2 * size_t(c.count), nullptr);
    size_t before = free_bytes();
    for (int i = 0; i < c.count; i++) check(cudaMalloc(&ptrs[i], c.size), "cudaMalloc");
    size_t half = free_bytes();
    for (size_t i = c.count; i < ptrs.size(); i++) check(cudaMalloc(&ptrs[i], c.size), "cudaMalloc");
    size_t after = free_bytes();
    for (auto p : ptrs) check(cudaFree(p), "cudaFree");
    double per = half > after ? double(half - after) / c.count : 0.0;
    double avg = before > after ? double(before - after) / ptrs.size() : 0.0;
    std::printf("alloc_footprint size=%zu count=%d bytes_per_alloc=%.1f overhead_per_alloc=%.1f "
                "average_bytes_per_alloc=%.1f\n",
                c.size, c.count, per, per - double(c.size), avg);
  }
  return 0;
}
