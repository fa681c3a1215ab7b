// A 2-D forward-difference filter with a shared tile and one halo row and column (as
// srad's coefficient tile): the right halo is clamped to the last column, but the bottom
// halo reads row r + 1 unclamped, so the threads of the last block row read row `rows`,
// past the end of the image. Each halo load and its tile store make the block of their
// own `if`, which the pass checks at the `if`'s branch (lifted checks); the report must
// name the load's line. Bug: heap-buffer-overflow, READ (linear, one row past the end).
#include "../../examples/common.h"
#include <vector>

constexpr int BS = 16;

__global__ void grad(const float *img, float *out, int rows, int cols) {
  __shared__ float tile[BS + 1][BS + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int r = blockIdx.y * BS + ty, c = blockIdx.x * BS + tx;
  tile[ty][tx] = img[(size_t)r * cols + c];
  if (ty == BS - 1)
    tile[BS][tx] = img[(size_t)(r + 1) * cols + c]; // cusafe-expect: heap-buffer-overflow
  if (tx == BS - 1) tile[ty][BS] = img[(size_t)r * cols + min(c + 1, cols - 1)];
  __syncthreads();
  out[(size_t)r * cols + c] = tile[ty + 1][tx] - tile[ty][tx] + tile[ty][tx + 1] - tile[ty][tx];
}

int main() {
  const int rows = 8 * BS, cols = 8 * BS;
  std::vector<float> x((size_t)rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13);
  float *img, *out;
  CK(cudaMalloc(&img, x.size() * sizeof(float))); // exactly rows x cols
  CK(cudaMalloc(&out, x.size() * sizeof(float)));
  CK(cudaMemcpy(img, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  grad<<<dim3(cols / BS, rows / BS), dim3(BS, BS)>>>(img, out, rows, cols);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), out, x.size() * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : x) sum += v;
  std::printf("grad: checksum %.1f\n", sum);
  CK(cudaFree(img));
  CK(cudaFree(out));
  return 0;
}
