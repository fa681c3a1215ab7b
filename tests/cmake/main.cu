// Fills a buffer on the device, scales it through the library, prints the sum
// (expected: 3 * (0 + 1 + ... + 999) = 1498500).
#include <cstdio>
#include <vector>

#include "scale.h"

__global__ void iota(float *d, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) d[i] = float(i);
}

int main() {
  const int n = 1000;
  float *d = nullptr;
  if (cudaMalloc(&d, n * sizeof(float)) != cudaSuccess) {
    std::fprintf(stderr, "cudaMalloc failed\n");
    return 1;
  }
  iota<<<(n + 127) / 128, 128>>>(d, n);
  scale_on_device(d, n, 3.0f);
  std::vector<float> h(n);
  cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost);
  cudaFree(d);
  double sum = 0;
  for (float v : h) sum += v;
  std::printf("sum %.0f\n", sum);
  return sum == 1498500.0 ? 0 : 1;
}
