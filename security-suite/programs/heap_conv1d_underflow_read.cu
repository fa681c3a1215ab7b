// 1-D convolution of a signal with a centred filter of radius R. The right edge is
// clamped but the left one is not: the first R outputs read before the signal.
// Bug: heap-buffer-overflow, READ (underflow).
#include "../../examples/common.h"
#include <vector>

__global__ void conv1d(const float *x, const float *f, float *y, int n, int r) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float acc = 0;
  for (int k = -r; k <= r; ++k) {
    int j = min(i + k, n - 1);
    acc += f[k + r] * x[j]; // cusafe-expect: heap-buffer-overflow
  }
  y[i] = acc;
}

int main() {
  const int n = 2000, r = 3;
  std::vector<float> x(n), f(2 * r + 1, 1.0f / (2 * r + 1));
  for (int i = 0; i < n; ++i) x[i] = float(i % 13);
  float *dx, *df, *dy;
  CK(cudaMalloc(&df, f.size() * sizeof(float)));
  CK(cudaMalloc(&dx, n * sizeof(float)));
  CK(cudaMalloc(&dy, n * sizeof(float)));
  CK(cudaMemcpy(dx, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(df, f.data(), f.size() * sizeof(float), cudaMemcpyHostToDevice));
  conv1d<<<(n + 255) / 256, 256>>>(dx, df, dy, n, r);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), dy, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = r; i < n; ++i) sum += x[i]; // the first r outputs are garbage
  std::printf("conv1d checksum (from %d) %.3f\n", r, sum);
  CK(cudaFree(dx));
  CK(cudaFree(df));
  CK(cudaFree(dy));
  return 0;
}
