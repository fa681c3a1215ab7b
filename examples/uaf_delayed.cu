// A stale pointer kept in a work list is used after its buffer was freed and 2000
// other buffers of the same size were allocated and freed (an allocator that reuses
// addresses hands the same memory out again, and the stale access then silently hits
// a live buffer). Bug: use-after-free, WRITE.
#include "common.h"

__global__ void fill(int *buf, int n, int v) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) buf[i] = v; // cusafe-expect: use-after-free
}

int main() {
  const int n = 1024;
  int *stale;
  CK(cudaMalloc(&stale, n * sizeof(int)));
  CK(cudaFree(stale));
  int *live = nullptr;
  for (int k = 0; k < 2000; ++k) {
    int *p;
    CK(cudaMalloc(&p, n * sizeof(int)));
    if (k == 1999) { live = p; break; }
    CK(cudaFree(p));
  }
  CK(cudaMemset(live, 0, n * sizeof(int)));
  fill<<<n / 256, 256>>>(stale, n, 42);
  CK(cudaDeviceSynchronize());
  int h = 0;
  CK(cudaMemcpy(&h, live, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("live[0]=%d (%s)\n", h, stale == live ? "same address reused" : "different address");
  CK(cudaFree(live));
  return 0;
}
