// Correct: a block-private histogram in shared memory updated with atomics through
// generic pointers (the shared array is passed to a non-inlined helper, so the
// atomics see a generic address), a shared atomicMax/atomicCAS loop, and a merge of
// the private histograms into global memory with global atomics.
#include "../../examples/common.h"
#include <vector>

constexpr int BINS = 64;

__device__ __noinline__ void bump(unsigned *bins, int b) { atomicAdd(bins + b, 1u); }

__device__ __noinline__ void track_max(int *slot, int v) {
  int old = *slot;
  while (old < v) {
    int seen = atomicCAS(slot, old, v);
    if (seen == old) break;
    old = seen;
  }
}

__global__ void histogram(const int *x, int n, unsigned *global_bins, int *global_max) {
  __shared__ unsigned bins[BINS];
  __shared__ int block_max;
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) bins[b] = 0;
  if (threadIdx.x == 0) block_max = 0;
  __syncthreads();
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    bump(bins, x[i] % BINS);
    track_max(&block_max, x[i]);
  }
  __syncthreads();
  for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&global_bins[b], bins[b]);
  if (threadIdx.x == 0) atomicMax(global_max, block_max);
}

int main() {
  const int n = 1 << 18;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 2654435761u) >> 12;
  int *x, *mx;
  unsigned *bins;
  CK(cudaMalloc(&x, n * sizeof(int)));
  CK(cudaMalloc(&bins, BINS * sizeof(unsigned)));
  CK(cudaMalloc(&mx, sizeof(int)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(bins, 0, BINS * sizeof(unsigned)));
  CK(cudaMemset(mx, 0, sizeof(int)));
  histogram<<<64, 256>>>(x, n, bins, mx);
  std::vector<unsigned> hb(BINS);
  int m = 0;
  CK(cudaMemcpy(hb.data(), bins, BINS * sizeof(unsigned), cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&m, mx, sizeof m, cudaMemcpyDeviceToHost));
  unsigned long long total = 0;
  for (unsigned c : hb) total += c;
  std::printf("histogram: %llu values, bin[0]=%u bin[63]=%u, max %d\n", total, hb[0], hb[63], m);
  CK(cudaFree(x));
  CK(cudaFree(bins));
  CK(cudaFree(mx));
  return 0;
}
