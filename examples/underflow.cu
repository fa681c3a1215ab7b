// Prefix difference d[i] = x[i] - x[i-1] without guarding i == 0: thread 0 reads the
// element before the buffer. Bug: heap-buffer-overflow (underflow), READ.
#include "common.h"

__global__ void diff(const int *x, int *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = x[i] - x[i - 1]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 512;
  int h[n];
  for (int i = 0; i < n; ++i) h[i] = i * i;
  int *x, *d;
  CK(cudaMalloc(&x, n * sizeof(int)));
  CK(cudaMalloc(&d, n * sizeof(int)));
  CK(cudaMemcpy(x, h, sizeof h, cudaMemcpyHostToDevice));
  diff<<<2, 256>>>(x, d, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h, d, sizeof h, cudaMemcpyDeviceToHost));
  std::printf("d[1]=%d d[511]=%d\n", h[1], h[511]);
  CK(cudaFree(x));
  CK(cudaFree(d));
  return 0;
}
