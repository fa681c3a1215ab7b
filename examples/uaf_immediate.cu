// A scratch buffer is freed before the kernel that still reads it is launched.
// Bug: use-after-free, READ.
#include "common.h"

__global__ void accumulate(const float *scratch, float *acc, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) acc[i] += scratch[i]; // cusafe-expect: use-after-free
}

int main() {
  const int n = 2048;
  float *scratch, *acc;
  CK(cudaMalloc(&scratch, n * sizeof(float)));
  CK(cudaMalloc(&acc, n * sizeof(float)));
  CK(cudaMemset(scratch, 0, n * sizeof(float)));
  CK(cudaMemset(acc, 0, n * sizeof(float)));
  CK(cudaFree(scratch)); // freed too early
  accumulate<<<n / 256, 256>>>(scratch, acc, n);
  CK(cudaDeviceSynchronize());
  std::printf("accumulate done\n");
  CK(cudaFree(acc));
  return 0;
}
