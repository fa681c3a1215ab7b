// A block-wide moving average stages each block's inputs in a __shared__ tile through
// a non-inlined helper that copies "n + 1" values (it also copies the right halo cell,
// but the tile was sized for n). The helper only sees a pointer: the overflow lands in
// the next shared array (the block's partial sums). Bug: shared-buffer-overflow, WRITE
// (a __shared__ array overflowed inside a callee, through an escaping pointer).
#include "../../examples/common.h"
#include <vector>

constexpr int BS = 128;

__device__ __noinline__ void stage(float *dst, const float *src, int n, int total, int first) {
  for (int k = threadIdx.x; k <= n; k += blockDim.x)
    dst[k] = first + k < total ? src[first + k] : 0.0f; // cusafe-expect: shared-buffer-overflow
}

__global__ void moving_average(const float *x, float *y, int total) {
  __shared__ float tile[BS];
  __shared__ float partial[BS];
  int first = blockIdx.x * BS;
  stage(tile, x, BS, total, first);
  __syncthreads();
  int t = threadIdx.x;
  partial[t] = 0.5f * (tile[t] + tile[t < BS - 1 ? t + 1 : t]);
  __syncthreads();
  if (first + t < total) y[first + t] = partial[t];
}

int main() {
  const int total = 4096;
  std::vector<float> h(total);
  for (int i = 0; i < total; ++i) h[i] = float(i % 9);
  float *x, *y;
  CK(cudaMalloc(&x, total * sizeof(float)));
  CK(cudaMalloc(&y, total * sizeof(float)));
  CK(cudaMemcpy(x, h.data(), total * sizeof(float), cudaMemcpyHostToDevice));
  moving_average<<<total / BS, BS>>>(x, y, total);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), y, total * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("y[0]=%g y[127]=%g\n", h[0], h[127]);
  CK(cudaFree(x));
  CK(cudaFree(y));
  return 0;
}
