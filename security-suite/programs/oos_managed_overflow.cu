// Histogram into unified (managed) memory: the bin index is v * bins / max with
// v == max possible, so the last value increments one bin past the array.
// Bug: heap-buffer-overflow in spirit (managed memory), atomic WRITE.
// Out of scope: cudaMallocManaged memory is foreign to cusafe (not tagged, not checked).
#include "../../examples/common.h"

__global__ void bin_values(const int *v, int n, int maxv, unsigned *bins, int nb) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&bins[v[i] * nb / maxv], 1u); // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 10000, maxv = 1000, nb = 10;
  int *v;
  unsigned *bins;
  CK(cudaMallocManaged(&v, n * sizeof(int)));
  CK(cudaMallocManaged(&bins, nb * sizeof(unsigned)));
  for (int i = 0; i < n; ++i) v[i] = (i * 7) % (maxv + 1); // 0 .. maxv inclusive
  for (int b = 0; b < nb; ++b) bins[b] = 0;
  bin_values<<<(n + 255) / 256, 256>>>(v, n, maxv, bins, nb);
  CK(cudaDeviceSynchronize());
  unsigned total = 0;
  for (int b = 0; b < nb; ++b) total += bins[b];
  std::printf("binned %u of %d values\n", total, n);
  CK(cudaFree(v));
  CK(cudaFree(bins));
  return 0;
}
