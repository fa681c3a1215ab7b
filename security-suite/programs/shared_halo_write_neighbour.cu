// 1-D seven-point stencil with a shared tile. The tile was declared BS + R (room for
// the left halo only), so the right-halo load writes R floats past the tile, into
// the neighbouring shared array (the stencil weights' copy, if it lies after it).
// Bug: shared-buffer-overflow, WRITE (static shared, into the neighbouring array).
#include "../../examples/common.h"
#include <vector>

constexpr int BS = 128, R = 3;

__global__ void stencil7(const float *in, const float *wg, float *out, int n) {
  __shared__ float tile[BS + R]; // should be BS + 2 * R
  __shared__ float w[2 * R + 1];
  int g = blockIdx.x * BS + threadIdx.x;
  if (threadIdx.x < 2 * R + 1) w[threadIdx.x] = wg[threadIdx.x];
  tile[threadIdx.x + R] = in[min(g, n - 1)];
  if (threadIdx.x < R) {
    tile[threadIdx.x] = in[max(g - R, 0)];
    tile[threadIdx.x + BS + R] = in[min(g + BS, n - 1)]; // cusafe-expect: shared-buffer-overflow
  }
  __syncthreads();
  float acc = 0;
  for (int k = 0; k <= 2 * R; ++k) acc += w[k] * tile[threadIdx.x + k];
  if (g < n) out[g] = acc;
}

int main() {
  const int n = 16 * BS;
  std::vector<float> x(n), w(2 * R + 1, 1.0f);
  for (int i = 0; i < n; ++i) x[i] = float(i % 9);
  float *in, *dw, *out;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&dw, w.size() * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dw, w.data(), w.size() * sizeof(float), cudaMemcpyHostToDevice));
  stencil7<<<n / BS, BS>>>(in, dw, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("stencil7: out[5]=%.1f out[1000]=%.1f\n", x[5], x[1000]);
  CK(cudaFree(in));
  CK(cudaFree(dw));
  CK(cudaFree(out));
  return 0;
}
