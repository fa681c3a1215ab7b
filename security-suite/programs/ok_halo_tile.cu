// Correct: a 2-D forward-difference filter with a shared tile and one halo row and
// column (as srad's coefficient tile), both halos clamped to the image. Each halo load and
// its tile store make the block of their own `if`, which the pass checks at the `if`'s
// branch (lifted checks) and skips where the check fails; the last block row and column
// read the image's last row and column. Nothing may be reported, and the output must
// match the host's.
#include "../../examples/common.h"
#include <algorithm>
#include <vector>

constexpr int BS = 16;

__global__ void grad(const float *img, float *out, int rows, int cols) {
  __shared__ float tile[BS + 1][BS + 1];
  int tx = threadIdx.x, ty = threadIdx.y;
  int r = blockIdx.y * BS + ty, c = blockIdx.x * BS + tx;
  tile[ty][tx] = img[(size_t)r * cols + c];
  if (ty == BS - 1)
    tile[BS][tx] = img[(size_t)min(r + 1, rows - 1) * cols + c];
  if (tx == BS - 1) tile[ty][BS] = img[(size_t)r * cols + min(c + 1, cols - 1)];
  __syncthreads();
  out[(size_t)r * cols + c] = tile[ty + 1][tx] - tile[ty][tx] + tile[ty][tx + 1] - tile[ty][tx];
}

int main() {
  const int rows = 8 * BS, cols = 8 * BS;
  std::vector<float> x((size_t)rows * cols);
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(i % 13);
  float *img, *out;
  CK(cudaMalloc(&img, x.size() * sizeof(float)));
  CK(cudaMalloc(&out, x.size() * sizeof(float)));
  CK(cudaMemcpy(img, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice));
  grad<<<dim3(cols / BS, rows / BS), dim3(BS, BS)>>>(img, out, rows, cols);
  CK(cudaDeviceSynchronize());
  std::vector<float> got(x.size());
  CK(cudaMemcpy(got.data(), out, got.size() * sizeof(float), cudaMemcpyDeviceToHost));
  int bad = 0;
  for (int r = 0; r < rows; ++r)
    for (int c = 0; c < cols; ++c) {
      auto at = [&](int i, int j) {
        return x[(size_t)std::min(i, rows - 1) * cols + std::min(j, cols - 1)];
      };
      float want = at(r + 1, c) - at(r, c) + at(r, c + 1) - at(r, c);
      bad += got[(size_t)r * cols + c] != want;
    }
  std::printf("grad: %d of %d wrong\n", bad, rows * cols);
  CK(cudaFree(img));
  CK(cudaFree(out));
  return bad ? 1 : 0;
}
