// 1-D three-point stencil that reads one element past the end of its input at the
// last thread (the classic "i + 1 <= n" mistake). Bug: heap-buffer-overflow, READ.
#include "common.h"

__global__ void blur3(const float *in, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float left = i > 0 ? in[i - 1] : in[i];
  float right = in[i + 1]; // cusafe-expect: heap-buffer-overflow
  out[i] = (left + in[i] + right) / 3.0f;
}

int main() {
  const int n = 1000;
  float h[n];
  for (int i = 0; i < n; ++i) h[i] = float(i % 17);
  float *in, *out;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMemcpy(in, h, sizeof h, cudaMemcpyHostToDevice));
  blur3<<<(n + 255) / 256, 256>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n - 1; ++i) sum += h[i];
  std::printf("blur3 checksum (first n-1) %.3f\n", sum);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
