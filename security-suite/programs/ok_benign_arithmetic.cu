// Correct: pointer arithmetic that leaves a buffer for a moment but never
// dereferences outside it (all within 255 bytes below the start: a packed block's
// tile, docs/formats.md).
// - the Numerical Recipes idiom: a 1-based view `a - 1` passed to a non-inlined
//   function that uses a[1..n];
// - a pointer 32 elements before the start stored in device memory, reloaded by
//   another kernel and moved back in before use;
// - pointer differences and comparisons against `begin - 1` as loop sentinels.
#include "../../examples/common.h"
#include <vector>

__device__ __noinline__ float sum1(const float *a, int n) { // a[1..n]
  float s = 0;
  for (int i = 1; i <= n; ++i) s += a[i];
  return s;
}

__global__ void one_based(const float *x, int n, float *out) {
  if (threadIdx.x == 0 && blockIdx.x == 0) out[0] = sum1(x - 1, n);
}

__global__ void store_biased(const float *x, const float **slot) { *slot = x - 32; }

__global__ void use_biased(const float *const *slot, int n, float *out) {
  const float *biased = *slot;
  const float *x = biased + 32;
  int i = threadIdx.x;
  if (i < n) out[1 + i] = x[i] * 2.0f;
}

__global__ void backwards(const float *x, int n, float *out) {
  if (threadIdx.x != 0) return;
  float s = 0;
  for (const float *p = x + n - 1; p > x - 1; --p) s += *p; // sentinel one before the start
  out[0] += s;
}

int main() {
  const int n = 200;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 5);
  float *x, *out;
  const float **slot;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&out, (n + 1) * sizeof(float)));
  CK(cudaMalloc(&slot, sizeof(float *)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  one_based<<<1, 32>>>(x, n, out);
  store_biased<<<1, 1>>>(x, slot);
  use_biased<<<1, n>>>(slot, n, out);
  backwards<<<1, 32>>>(x, n, out);
  std::vector<float> o(n + 1);
  CK(cudaMemcpy(o.data(), out, (n + 1) * sizeof(float), cudaMemcpyDeviceToHost));
  double s = 0;
  for (int i = 1; i <= n; ++i) s += o[i];
  std::printf("one-based + backwards %.0f, doubled sum %.0f\n", o[0], s);
  CK(cudaFree(x));
  CK(cudaFree(out));
  CK(cudaFree(slot));
  return 0;
}
