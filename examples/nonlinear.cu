// Gather through an index table with one corrupt entry: the index jumps far past the
// end of the source, straight into another live buffer (no byte in between is
// touched, so guard-zone tools see nothing). Bug: heap-buffer-overflow, READ.
#include "common.h"

__global__ void gather(const float *src, const long long *idx, float *dst, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) dst[i] = src[idx[i]]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 4096;
  float *src, *other, *dst; long long *idx;
  CK(cudaMalloc(&src, n * sizeof(float)));
  CK(cudaMalloc(&other, n * sizeof(float)));
  CK(cudaMalloc(&dst, n * sizeof(float)));
  CK(cudaMalloc(&idx, n * sizeof(long long)));
  long long *hi = new long long[n];
  for (int i = 0; i < n; ++i) hi[i] = (i * 31) % n;
  // The corrupt entry points at `other` (same distance as cudaMalloc would place it).
  hi[777] = (other - src) + 5;
  CK(cudaMemcpy(idx, hi, n * sizeof(long long), cudaMemcpyHostToDevice));
  CK(cudaMemset(src, 0, n * sizeof(float)));
  CK(cudaMemset(other, 0, n * sizeof(float)));
  gather<<<n / 256, 256>>>(src, idx, dst, n);
  CK(cudaDeviceSynchronize());
  std::printf("gather done\n");
  CK(cudaFree(src));
  CK(cudaFree(other));
  CK(cudaFree(dst));
  CK(cudaFree(idx));
  delete[] hi;
  return 0;
}
