// A two-phase per-thread pipeline: `gather` collects a thread's neighbour values into a
// local scratch array and publishes a pointer to it in the caller's context, then
// returns; `smooth` runs next at the same call depth (its frame reuses the stack
// where gather's scratch lived) and copies from the published pointer through a
// helper. The copy reads smooth's own frame, not gather's values: no fault, wrong
// results. Bug: stack-use-after-return, READ (the dead frame was replaced by a later
// call at the same depth: the stack epoch's generation differs).
#include "../../examples/common.h"
#include <vector>

struct Ctx {
  const float *gathered;
  int count;
};

__device__ __noinline__ void load_taps(float *taps, int n, int seed) {
  for (int k = 0; k < n; ++k) taps[k] = 1.0f / float(n + (seed + k) % 3);
}

__device__ __noinline__ void gather(const float *x, int n, int i, Ctx *ctx) {
  float scratch[8];
  for (int k = 0; k < 8; ++k) scratch[k] = x[min(max(i + k - 4, 0), n - 1)];
  load_taps(scratch, 0, i); // scratch escapes into a helper: re-laid-out, tagged
  ctx->gathered = scratch;
  ctx->count = 8;
}

__device__ __noinline__ void copy_into(float *dst, const float *src, int n) {
  for (int k = 0; k < n; ++k) dst[k] = src[k]; // cusafe-expect: stack-use-after-return
}

__device__ __noinline__ float smooth(const Ctx *ctx, int i) {
  float taps[8], vals[8];
  load_taps(taps, 8, i);
  copy_into(vals, ctx->gathered, ctx->count);
  float acc = 0;
  for (int k = 0; k < 8; ++k) acc += taps[k] * vals[k];
  return acc;
}

__global__ void pipeline(const float *x, float *y, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Ctx ctx;
  gather(x, n, i, &ctx);
  y[i] = smooth(&ctx, i);
}

int main() {
  const int n = 2048;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 10);
  float *x, *y;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  pipeline<<<n / 128, 128>>>(x, y, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("y[0]=%g y[100]=%g\n", h[0], h[100]);
  CK(cudaFree(x));
  CK(cudaFree(y));
  return 0;
}
