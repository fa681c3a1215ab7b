// Copy/compute overlap over two streams in fixed chunks. The pinned staging buffer
// is padded to whole chunks but the device buffer holds exactly n elements, and the
// last chunk is copied whole: cudaMemcpyAsync writes past the device buffer.
// Bug: api-out-of-bounds (cudaMemcpyAsync destination).
#include "../../examples/common.h"

__global__ void scale(float *x, int n, float a) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= a;
}

int main() {
  const int n = 131000, chunk = 32768, chunks = (n + chunk - 1) / chunk;
  float *staging, *d;
  CK(cudaMallocHost(&staging, chunks * chunk * sizeof(float)));
  CK(cudaMalloc(&d, n * sizeof(float)));
  for (int i = 0; i < chunks * chunk; ++i) staging[i] = i < n ? float(i % 100) : 0.0f;
  cudaStream_t s[2];
  CK(cudaStreamCreate(&s[0]));
  CK(cudaStreamCreate(&s[1]));
  for (int c = 0; c < chunks; ++c) {
    float *dst = d + (size_t)c * chunk, *src = staging + (size_t)c * chunk;
    cudaError_t e = cudaMemcpyAsync(dst, src, chunk * sizeof(float), cudaMemcpyHostToDevice, s[c % 2]); // cusafe-expect: api-out-of-bounds
    if (e != cudaSuccess) std::printf("chunk %d copy returned %d\n", c, int(e));
    int len = c == chunks - 1 ? n - c * chunk : chunk;
    scale<<<(len + 255) / 256, 256, 0, s[c % 2]>>>(dst, len, 2.0f);
  }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(staging, d, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += staging[i];
  std::printf("scaled sum %.0f\n", sum);
  CK(cudaStreamDestroy(s[0]));
  CK(cudaStreamDestroy(s[1]));
  CK(cudaFree(d));
  CK(cudaFreeHost(staging));
  return 0;
}
