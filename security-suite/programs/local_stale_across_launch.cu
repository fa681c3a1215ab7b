// A histogram kernel keeps a per-thread local bin array and, for a later "merge" launch,
// records where each thread's bins are in a device table — the address of a local
// array. The merge kernel, a separate launch, reads the bins through those pointers:
// the frame that owned them ended with the first launch. Bug: stack-use-after-return,
// READ (a local pointer from a finished launch; the stack epoch's depth was reset at
// the new launch's entry).
#include "../../examples/common.h"
#include <vector>

__device__ __noinline__ void count_bins(const int *keys, int n, int stride, int first, int *bins) {
  for (int b = 0; b < 4; ++b) bins[b] = 0;
  for (int i = first; i < n; i += stride) bins[keys[i] & 3]++;
}

__global__ void local_histograms(const int *keys, int n, int **where) {
  int t = blockIdx.x * blockDim.x + threadIdx.x;
  int bins[4];
  count_bins(keys, n, gridDim.x * blockDim.x, t, bins);
  where[t] = bins; // kept for the merge launch
}

__global__ void merge(int *const *where, int threads, int *total) {
  int b = threadIdx.x;
  if (b >= 4) return;
  int sum = 0;
  for (int t = 0; t < threads; ++t) sum += where[t][b]; // cusafe-expect: stack-use-after-return
  total[b] = sum;
}

int main() {
  const int n = 1 << 14, blocks = 4, threads = 64;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = (i * 7) % 13;
  int *keys, **where, *total;
  CK(cudaMalloc(&keys, n * sizeof(int)));
  CK(cudaMalloc(&where, blocks * threads * sizeof(int *)));
  CK(cudaMalloc(&total, 4 * sizeof(int)));
  CK(cudaMemcpy(keys, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  local_histograms<<<blocks, threads>>>(keys, n, where);
  CK(cudaDeviceSynchronize());
  merge<<<1, 32>>>(where, blocks * threads, total);
  cudaError_t err = cudaDeviceSynchronize();
  int t[4] = {0, 0, 0, 0};
  if (err == cudaSuccess) CK(cudaMemcpy(t, total, sizeof t, cudaMemcpyDeviceToHost));
  std::printf("merge: %s; bins %d %d %d %d\n", cudaGetErrorString(err), t[0], t[1], t[2], t[3]);
  CK(cudaFree(keys));
  CK(cudaFree(where));
  CK(cudaFree(total));
  return 0;
}
