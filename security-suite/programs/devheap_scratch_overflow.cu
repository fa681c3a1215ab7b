// Weighted sampling: each thread picks one of its record's n fields with probability
// proportional to the field's weight, through a cumulative table built in scratch
// memory from the device heap. The table has n + 1 entries (cdf[0] = 0, cdf[n] = the
// total) but is allocated for n: the last step of the build loop, k = n - 1, writes
// cdf[n], 4 bytes past the block, in every thread. n = 7 (28 bytes): device malloc
// aligns blocks to 16 bytes, so in the plain build the store lands in the block's
// padding. Bug: heap-buffer-overflow, WRITE (device heap).
#include "../../examples/common.h"
#include <vector>

__global__ void sample_fields(const int *weights, int n, int records, unsigned seed, int *picked) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= records) return;
  const int *w = weights + size_t(r) * n;
  int *cdf = static_cast<int *>(malloc(n * sizeof(int))); // needs n + 1 entries
  if (!cdf) {
    picked[r] = -1;
    return;
  }
  cdf[0] = 0;
  for (int k = 0; k < n; ++k) cdf[k + 1] = cdf[k] + w[k]; // cusafe-expect: heap-buffer-overflow
  unsigned target = (unsigned(r) * 2654435761u + seed) % unsigned(cdf[n]);
  int k = 0;
  while (unsigned(cdf[k + 1]) <= target) ++k;
  picked[r] = k;
  free(cdf);
}

int main() {
  const int n = 7, records = 2048;
  std::vector<int> w(size_t(records) * n);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 1 + int(i * 31 % 9);
  int *dw, *picked;
  CK(cudaMalloc(&dw, w.size() * sizeof(int)));
  CK(cudaMalloc(&picked, records * sizeof(int)));
  CK(cudaMemcpy(dw, w.data(), w.size() * sizeof(int), cudaMemcpyHostToDevice));
  sample_fields<<<records / 128, 128>>>(dw, n, records, 12345u, picked);
  CK(cudaDeviceSynchronize());
  std::vector<int> p(records);
  CK(cudaMemcpy(p.data(), picked, records * sizeof(int), cudaMemcpyDeviceToHost));
  std::vector<int> hist(n + 1, 0);
  for (int k : p) hist[k < 0 ? n : k]++;
  std::printf("picks per field:");
  for (int k = 0; k < n; ++k) std::printf(" %d", hist[k]);
  std::printf(" (failed allocations %d)\n", hist[n]);
  CK(cudaFree(dw));
  CK(cudaFree(picked));
  return 0;
}
