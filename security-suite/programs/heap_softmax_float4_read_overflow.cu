// Row-wise softmax, one warp per row, float4 loads. The max pass loops with
// "c4 <= cols / 4", one float4 too many: each row's max also sees the first four
// values of the next row (wrong, but inside the buffer), and the last row reads 16
// bytes past the end of the matrix. Bug: heap-buffer-overflow, READ of size 16.
#include "../../examples/common.h"
#include <vector>

__global__ void softmax_rows(const float *x, float *y, int rows, int cols) {
  int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
  if (row >= rows) return;
  const float4 *r4 = reinterpret_cast<const float4 *>(x + (size_t)row * cols);
  float m = -1e30f;
  for (int c4 = lane; c4 <= cols / 4; c4 += 32) {
    float4 v = r4[c4]; // cusafe-expect: heap-buffer-overflow
    m = fmaxf(m, fmaxf(fmaxf(v.x, v.y), fmaxf(v.z, v.w)));
  }
  for (int o = 16; o > 0; o /= 2) m = fmaxf(m, __shfl_xor_sync(0xffffffff, m, o));
  float s = 0;
  for (int c = lane; c < cols; c += 32) s += __expf(x[(size_t)row * cols + c] - m);
  for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffff, s, o);
  for (int c = lane; c < cols; c += 32)
    y[(size_t)row * cols + c] = __expf(x[(size_t)row * cols + c] - m) / s;
}

int main() {
  const int rows = 30, cols = 256, n = rows * cols;
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 29) * 0.1f;
  float *x, *y;
  CK(cudaMalloc(&x, n * sizeof(float)));
  CK(cudaMalloc(&y, n * sizeof(float)));
  CK(cudaMemcpy(x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  softmax_rows<<<(rows + 3) / 4, 128>>>(x, y, rows, cols);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), y, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < (rows - 1) * cols; ++i) sum += h[i]; // the last row saw garbage
  std::printf("softmax: rows 0..%d sum to %.3f\n", rows - 2, sum);
  CK(cudaFree(x));
  CK(cudaFree(y));
  return 0;
}
