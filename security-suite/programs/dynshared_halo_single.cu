// 1-D five-point stencil on a dynamic shared tile (extern __shared__). The kernel
// needs blockDim.x + 2 * R floats but the launch passes blockDim.x * sizeof(float):
// the right-halo store lands past the end of the dynamic shared allocation.
// Bug: shared-buffer-overflow, WRITE (dynamic shared, single buffer).
#include "../../examples/common.h"
#include <vector>

constexpr int R = 2;

__global__ void stencil5(const float *in, float *out, int n) {
  extern __shared__ float tile[]; // blockDim.x + 2 * R floats
  int g = blockIdx.x * blockDim.x + threadIdx.x, b = blockDim.x;
  tile[threadIdx.x + R] = in[min(g, n - 1)];
  if (threadIdx.x < R) {
    tile[threadIdx.x] = in[max(g - R, 0)];
    tile[threadIdx.x + b + R] = in[min(g + b, n - 1)]; // cusafe-expect: shared-buffer-overflow
  }
  __syncthreads();
  float acc = 0;
  for (int k = 0; k <= 2 * R; ++k) acc += tile[threadIdx.x + k];
  if (g < n) out[g] = acc / (2 * R + 1);
}

int main() {
  const int n = 8192, bs = 256;
  std::vector<float> x(n);
  for (int i = 0; i < n; ++i) x[i] = float(i % 10);
  float *in, *out;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("stencil5 over %d points\n", n);
  stencil5<<<n / bs, bs, bs * sizeof(float)>>>(in, out, n); // needs (bs + 2 * R) floats
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("out[3]=%.2f out[4000]=%.2f\n", x[3], x[4000]);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
