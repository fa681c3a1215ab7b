// Two-level inclusive prefix sum. Each block scans its tile in shared memory and
// stores its total at sums[block + 1], leaving sums[0] = 0 so that the block sums
// become exclusive offsets; but sums was sized for one entry per block, so the last
// block writes one past its end. The final result is still right (the last block's
// total is never needed), which is why such bugs survive testing.
// Bug: heap-buffer-overflow, WRITE (linear, adjacent).
#include "../../examples/common.h"
#include <vector>

constexpr int BS = 256;

__global__ void scan_tiles(const int *in, int *out, int *sums, int n) {
  __shared__ int s[BS];
  int i = blockIdx.x * BS + threadIdx.x;
  s[threadIdx.x] = i < n ? in[i] : 0;
  __syncthreads();
  for (int o = 1; o < BS; o *= 2) {
    int v = threadIdx.x >= o ? s[threadIdx.x - o] : 0;
    __syncthreads();
    s[threadIdx.x] += v;
    __syncthreads();
  }
  if (i < n) out[i] = s[threadIdx.x];
  if (threadIdx.x == BS - 1) sums[blockIdx.x + 1] = s[BS - 1]; // cusafe-expect: heap-buffer-overflow
}

__global__ void add_offsets(int *out, const int *offsets, int n) {
  int i = blockIdx.x * BS + threadIdx.x;
  if (i < n) out[i] += offsets[blockIdx.x];
}

int main() {
  const int n = 8 * BS, tiles = n / BS;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % 5;
  int *in, *out, *sums;
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMalloc(&sums, tiles * sizeof(int))); // needs tiles + 1
  CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(sums, 0, tiles * sizeof(int)));
  scan_tiles<<<tiles, BS>>>(in, out, sums, n);
  CK(cudaDeviceSynchronize());
  std::vector<int> offs(tiles);
  CK(cudaMemcpy(offs.data(), sums, tiles * sizeof(int), cudaMemcpyDeviceToHost));
  for (int t = 1; t < tiles; ++t) offs[t] += offs[t - 1];
  CK(cudaMemcpy(sums, offs.data(), tiles * sizeof(int), cudaMemcpyHostToDevice));
  add_offsets<<<tiles, BS>>>(out, sums, n);
  CK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("scan: out[255]=%d out[1000]=%d out[%d]=%d\n", h[255], h[1000], n - 1, h[n - 1]);
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(sums));
  return 0;
}
