// The host pads its input to a multiple of the 256-thread block for a vectorised
// kernel, then uploads the padded length into a device buffer sized for the real
// length: cudaMemcpy writes past the end of the device buffer.
// Bug: api-out-of-bounds (cudaMemcpy destination).
#include "../../examples/common.h"
#include <vector>

__global__ void square(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= x[i];
}

int main() {
  const int n = 1000, padded = (n + 255) / 256 * 256; // 1024
  std::vector<float> h(padded, 0.0f);
  for (int i = 0; i < n; ++i) h[i] = float(i % 10);
  float *d, *other;
  CK(cudaMalloc(&d, n * sizeof(float)));
  CK(cudaMalloc(&other, n * sizeof(float)));
  cudaError_t e = cudaMemcpy(d, h.data(), padded * sizeof(float), cudaMemcpyHostToDevice); // cusafe-expect: api-out-of-bounds
  std::printf("upload returned %d\n", int(e));
  square<<<padded / 256, 256>>>(d, n);
  CK(cudaMemcpy(h.data(), d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += h[i];
  std::printf("sum of squares %.0f\n", sum);
  CK(cudaFree(d));
  CK(cudaFree(other));
  return 0;
}
