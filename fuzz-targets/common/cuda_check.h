// Shared by the fuzz targets: CUDA errors are printed, never fatal (the persistent
// harness goes on with the next input), and device buffers are freed on every return
// path (many inputs run in one process).
#pragma once
#include <cstdio>
#include <cuda_runtime.h>

static inline bool cuda_ok(cudaError_t e, const char *what, const char *file, int line) {
  if (e == cudaSuccess) return true;
  std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, what, cudaGetErrorString(e));
  return false;
}
#define CK(call) cuda_ok((call), #call, __FILE__, __LINE__)

// A device buffer freed on every return path.
template <class T> struct Dev {
  T *p = nullptr;
  Dev() = default;
  Dev(const Dev &) = delete;
  Dev &operator=(const Dev &) = delete;
  ~Dev() {
    if (p) CK(cudaFree(p));
  }
  bool alloc(size_t n) { return CK(cudaMalloc(&p, n * sizeof(T))); }
};
