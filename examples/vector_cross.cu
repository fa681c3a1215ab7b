// Vectorised scale with float4 loads over a length that is not a multiple of 4: the
// last float4 starts inside the buffer and ends past it. Bug: heap-buffer-overflow,
// READ of size 16.
#include "common.h"

__global__ void scale4(const float *in, float *out, int n, float a) {
  int v = blockIdx.x * blockDim.x + threadIdx.x;
  if (4 * v < n) {
    float4 x = reinterpret_cast<const float4 *>(in)[v]; // cusafe-expect: heap-buffer-overflow
    out[4 * v] = a * x.x;
    if (4 * v + 1 < n) out[4 * v + 1] = a * x.y;
    if (4 * v + 2 < n) out[4 * v + 2] = a * x.z;
    if (4 * v + 3 < n) out[4 * v + 3] = a * x.w;
  }
}

int main() {
  const int n = 1022; // 255 full float4s and half of one more
  float *in, *out;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMemset(in, 0, n * sizeof(float)));
  scale4<<<1, 256>>>(in, out, n, 2.0f);
  CK(cudaDeviceSynchronize());
  std::printf("scale4 done\n");
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
