// Device memory per allocation: for each size, N live cudaMalloc(size) allocations,
// measured as the drop in cudaMemGetInfo's free bytes while they are live; prints one
// line per size:
//   alloc_footprint size=256 count=4096 bytes_per_alloc=512.0 overhead_per_alloc=256.0
// after one line with the device memory in use once CUDA is initialised:
//   alloc_footprint fixed used_after_init=541065216
// (overhead = bytes per allocation - size). Run it plain and with
// LD_PRELOAD=libcusafe_rt.so on the same GPU and compare: the difference is what the
// runtime's blocks (256-byte prefix, power-of-two classes, 2 MiB granules) cost.
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
  // granule. Counts keep each size's total near 64 MiB or more (at least 8
  // allocations) so that the driver's 2 MiB granularity washes out.
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
    size_t n = (size_t(64) << 20) / s;
    cases.push_back({s, static_cast<int>(n < 8 ? 8 : n > 16384 ? 16384 : n)});
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
    std::vector<void *> ptrs(c.count, nullptr);
    size_t before = free_bytes();
    for (auto &p : ptrs) check(cudaMalloc(&p, c.size), "cudaMalloc");
    size_t after = free_bytes();
    for (auto p : ptrs) check(cudaFree(p), "cudaFree");
    double per = before > after ? double(before - after) / c.count : 0.0;
    std::printf("alloc_footprint size=%zu count=%d bytes_per_alloc=%.1f overhead_per_alloc=%.1f\n", c.size,
                c.count, per, per - double(c.size));
  }
  return 0;
}
