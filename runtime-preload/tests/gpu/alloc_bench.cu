// Allocation cost: cudaMalloc(size) + cudaFree, sizes cycling 256 B, 512 B, ..., 1 MiB,
// 2000 timed iterations after a warm-up; prints one line:
//   alloc_bench iterations=2000 sizes=256..1048576 median_us=3.912 p10_us=... p90_us=... max_us=... small_median_us=...
// (small = the 256 B .. 4 KiB iterations). Run it plain and with
// LD_PRELOAD=libcusafe_rt.so on the same GPU and compare median_us. An argument DEPTH
// makes each cudaMalloc/cudaFree pair run DEPTH calls deep (a program's stack, for the
// cost of recording allocation sites); the line then ends with depth=DEPTH.
//
// Host code only: builds with nvcc, with clang++ -x cuda, or as plain C++ against
// cuda_runtime_api.h (e.g. c++ -x c++ alloc_bench.cu -I$CUDA/include -L$CUDA/lib64 -lcudart).
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

static void check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "alloc_bench: %s failed: %d\n", what, static_cast<int>(e));
    std::exit(2);
  }
}

static double at(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * (v.size() - 1))];
}

// One cudaMalloc+cudaFree of `size`, `depth` non-inlined calls below the caller; the
// time it took in microseconds.
__attribute__((noinline)) static double timed_pair(size_t size, int depth) {
  if (depth > 0) {
    double us = timed_pair(size, depth - 1);
    asm volatile("" ::: "memory"); // not a tail call
    return us;
  }
  void *p = nullptr;
  auto t0 = std::chrono::steady_clock::now();
  check(cudaMalloc(&p, size), "cudaMalloc");
  check(cudaFree(p), "cudaFree");
  auto t1 = std::chrono::steady_clock::now();
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

int main(int argc, char **argv) {
  const int iterations = 2000, warmup = 200, classes = 13;
  const int depth = argc > 1 ? std::atoi(argv[1]) : 0;
  check(cudaFree(nullptr), "cudaFree(0)");
  std::vector<double> all, small;
  for (int i = -warmup; i < iterations; ++i) {
    size_t size = size_t(256) << (((i % classes) + classes) % classes);
    double us = timed_pair(size, depth);
    if (i < 0) continue;
    all.push_back(us);
    if (size <= 4096) small.push_back(us);
  }
  std::printf("alloc_bench iterations=%d sizes=256..%zu median_us=%.3f p10_us=%.3f p90_us=%.3f max_us=%.3f "
              "small_median_us=%.3f depth=%d\n",
              iterations, size_t(256) << (classes - 1), at(all, 0.5), at(all, 0.1), at(all, 0.9), at(all, 1.0),
              at(small, 0.5), depth);
  return 0;
}
