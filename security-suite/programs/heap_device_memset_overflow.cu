// Each block of a partial-histogram kernel first clears its own chunk of a scratch
// array with a device-side memset. The chunk is ceil(n / blocks), so the chunks of
// all blocks cover more than n elements and the last block clears 8 floats past
// the end of the scratch array. Bug: heap-buffer-overflow, WRITE (device memset range).
#include "../../examples/common.h"
#include <vector>

__global__ void smooth_chunks(const float *x, float *scratch, float *y, int n, int chunk) {
  float *mine = scratch + blockIdx.x * chunk;
  if (threadIdx.x == 0) memset(mine, 0, chunk * sizeof(float)); // cusafe-expect: heap-buffer-overflow
  __syncthreads();
  for (int k = threadIdx.x; k < chunk; k += blockDim.x) {
    int i = blockIdx.x * chunk + k;
    if (i < n) mine[k] = 0.5f * x[i] + 0.25f * (x[max(i - 1, 0)] + x[min(i + 1, n - 1)]);
  }
  __syncthreads();
  for (int k = threadIdx.x; k < chunk; k += blockDim.x) {
    int i = blockIdx.x * chunk + k;
    if (i < n) y[i] = mine[k];
  }
}

int main() {
  const int n = 1000, blocks = 16, chunk = (n + blocks - 1) / blocks; // 63 * 16 = 1008
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 4);
  float *x, *scratch, *y;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&scratch, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  smooth_chunks<<<blocks, 64>>>(x, scratch, y, n, chunk);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : h) sum += v;
  std::printf("smoothed sum %.2f\n", sum);
  CK(cudaFree(x));
  CK(cudaFree(scratch));
  CK(cudaFree(y));
  return 0;
}
