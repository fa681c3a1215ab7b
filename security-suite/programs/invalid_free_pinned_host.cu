// A staging buffer comes from cudaMallocHost (pinned host memory, another allocator)
// but the shutdown code releases every buffer with cudaFree.
// Bug: invalid-free (pointer from another allocator; cudaFreeHost was meant).
#include "../../examples/common.h"

__global__ void iota(int *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] = i;
}

int main() {
  const int n = 1 << 16;
  int *dev, *staging;
  CK(cudaMalloc(&dev, n * sizeof(int)));
  CK(cudaMallocHost(&staging, n * sizeof(int)));
  iota<<<n / 256, 256>>>(dev, n);
  CK(cudaMemcpy(staging, dev, n * sizeof(int), cudaMemcpyDeviceToHost));
  long long sum = 0;
  for (int i = 0; i < n; ++i) sum += staging[i];
  std::printf("sum %lld\n", sum);
  CK(cudaFree(dev));
  cudaError_t e = cudaFree(staging); // cusafe-expect: invalid-free
  std::printf("cudaFree(pinned) returned %d\n", int(e));
  if (e != cudaSuccess) CK(cudaFreeHost(staging)); // what the shutdown code should have called
  return 0;
}
