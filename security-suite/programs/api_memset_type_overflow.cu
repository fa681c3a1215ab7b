// An accumulator was switched from double to float, but the line that clears it
// still says sizeof(double): cudaMemset clears twice the buffer's size.
// Bug: api-out-of-bounds (cudaMemset).
#include "../../examples/common.h"
#include <vector>

__global__ void accumulate(const float *x, float *acc, int n, int reps) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    for (int r = 0; r < reps; ++r) acc[i] += x[i];
}

int main() {
  const int n = 4096;
  float *x, *acc, *log_buf;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&acc, n * sizeof(float)));
  CK(cudaMalloc(&log_buf, n * sizeof(float)));
  std::vector<float> h(n, 0.5f);
  CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  cudaError_t e = cudaMemset(acc, 0, n * sizeof(double)); // cusafe-expect: api-out-of-bounds
  std::printf("clear returned %d\n", int(e));
  accumulate<<<n / 256, 256>>>(x, acc, n, 4);
  CK(cudaMemcpy(h.data(), acc, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : h) sum += v;
  std::printf("acc sum %.1f\n", sum);
  CK(cudaFree(x));
  CK(cudaFree(acc));
  CK(cudaFree(log_buf));
  return 0;
}
