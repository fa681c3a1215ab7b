// Histogram normalisation whose loop bound is "<= bins": the last thread writes one
// element past the end of the output. Bug: heap-buffer-overflow, WRITE.
#include "common.h"

__global__ void count(const int *data, int n, unsigned *hist, int bins) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) atomicAdd(&hist[data[i] % bins], 1u);
}

__global__ void normalise(const unsigned *hist, float *prob, int bins, int n) {
  int b = blockIdx.x * blockDim.x + threadIdx.x;
  if (b <= bins) prob[b] = b < bins ? float(hist[b]) / n : 0.0f; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 1 << 16, bins = 100;
  int *h = new int[n];
  for (int i = 0; i < n; ++i) h[i] = (i * 7919) % 1000;
  int *data; unsigned *hist; float *prob;
  CK(cudaMalloc(&data, n * sizeof(int)));
  CK(cudaMalloc(&hist, bins * sizeof(unsigned)));
  CK(cudaMalloc(&prob, bins * sizeof(float)));
  CK(cudaMemcpy(data, h, n * sizeof(int), cudaMemcpyHostToDevice));
  CK(cudaMemset(hist, 0, bins * sizeof(unsigned)));
  count<<<n / 256, 256>>>(data, n, hist, bins);
  normalise<<<1, 128>>>(hist, prob, bins, n);
  CK(cudaDeviceSynchronize());
  float hp[bins];
  CK(cudaMemcpy(hp, prob, sizeof hp, cudaMemcpyDeviceToHost));
  std::printf("p[0]=%.5f p[99]=%.5f\n", hp[0], hp[99]);
  CK(cudaFree(data));
  CK(cudaFree(hist));
  CK(cudaFree(prob));
  delete[] h;
  return 0;
}
