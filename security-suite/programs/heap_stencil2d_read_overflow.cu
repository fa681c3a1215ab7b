// 2-D Jacobi sweep (5-point stencil) over an H x W grid with clamped edges. The clamp
// is applied to the up, left and right neighbours, but the down neighbour of the last
// row reads the row after the grid. Bug: heap-buffer-overflow, READ (linear, adjacent).
#include "../../examples/common.h"
#include <vector>

__global__ void jacobi(const float *u, float *v, int h, int w) {
  int x = blockIdx.x * blockDim.x + threadIdx.x;
  int y = blockIdx.y * blockDim.y + threadIdx.y;
  if (x >= w || y >= h) return;
  float c = u[y * w + x];
  float up = y > 0 ? u[(y - 1) * w + x] : c;
  float left = x > 0 ? u[y * w + x - 1] : c;
  float right = x < w - 1 ? u[y * w + x + 1] : c;
  float down = u[(y + 1) * w + x]; // cusafe-expect: heap-buffer-overflow
  v[y * w + x] = 0.2f * (c + up + down + left + right);
}

int main() {
  const int h = 96, w = 128, n = h * w;
  std::vector<float> grid(n);
  for (int y = 0; y < h; ++y)
    for (int x = 0; x < w; ++x) grid[y * w + x] = float((x * 3 + y * 5) % 11);
  float *u, *v;
  CK(cudaMalloc(&u, n * sizeof(float)));
  CK(cudaMalloc(&v, n * sizeof(float)));
  CK(cudaMemcpy(u, grid.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  dim3 block(32, 8), blocks((w + 31) / 32, (h + 7) / 8);
  jacobi<<<blocks, block>>>(u, v, h, w);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(grid.data(), v, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < (h - 1) * w; ++i) sum += grid[i]; // the last row is garbage
  std::printf("jacobi checksum (rows 0..%d) %.2f\n", h - 2, sum);
  CK(cudaFree(u));
  CK(cudaFree(v));
  return 0;
}
