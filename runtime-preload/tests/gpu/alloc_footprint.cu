// Device memory per allocation: for each size, N live cudaMalloc(size) allocations,
// measured as the drop in cudaMemGetInfo's free bytes while they are live; prints one
// line per size:
//   alloc_footprint size=256 count=4096 bytes_per_alloc=512.0 overhead_per_alloc=256.0
// (overhead = bytes per allocation - size). Run it plain and with
// LD_PRELOAD=libcusafe_rt.so on the same GPU and compare: the difference is what the
// runtime's blocks (256-byte prefix, power-of-two classes, 2 MiB granules) cost.
//
// Host code only: builds with nvcc, with clang++ -x cuda, or as plain C++ against
// cuda_runtime_api.h.
#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>
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

int main() {
  // Sizes: tiny, exactly a 256-byte block's worth, odd, a page, past a class boundary,
  // and one past a 2 MiB granule. Counts keep each size's total near 64 MiB or more so
  // that the driver's 2 MiB granularity washes out.
  const struct {
    size_t size;
    int count;
  } cases[] = {{16, 16384}, {256, 16384}, {1000, 16384}, {4096, 16384},
               {65536 + 1, 2048}, {(size_t(2) << 20) + 1, 64}};
  check(cudaFree(nullptr), "cudaFree(0)");
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
