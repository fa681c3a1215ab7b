// A caching allocator in the style of PyTorch's: device memory comes in 2 MiB
// segments (one cudaMalloc each), carved into tensors at 512-byte boundaries. The
// output tensor is the last one of its segment and holds `rows` rows, but the launch
// covers one row more (the input's padding row, counted by mistake), so that row is
// written past the end of the segment. Reading the padding row stays inside the
// segment (it is the output's first row). Bug: heap-buffer-overflow, WRITE (linear,
// past the end of a buffer of exactly 2 MiB).
#include "../../examples/common.h"
#include <vector>

constexpr size_t kSegment = size_t(2) << 20;

struct Segment {
  char *base = nullptr;
  size_t used = 0;
  void *carve(size_t bytes) {
    size_t at = (used + 511) & ~size_t(511);
    used = at + bytes;
    return base + at;
  }
};

__global__ void layer_norm(const float *x, float *y, int rows, int cols) {
  int r = blockIdx.x, c = threadIdx.x;
  if (r >= rows || c >= cols) return;
  const float *xr = x + (size_t)r * cols;
  float mean = 0.f, var = 0.f;
  for (int k = 0; k < cols; ++k) mean += xr[k];
  mean /= cols;
  for (int k = 0; k < cols; ++k) var += (xr[k] - mean) * (xr[k] - mean);
  y[(size_t)r * cols + c] = (xr[c] - mean) * rsqrtf(var / cols + 1e-5f); // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int cols = 256, rows = 1024;
  Segment seg;
  CK(cudaMalloc(&seg.base, kSegment));
  // Input: rows x cols floats (1 MiB); output: the rest of the segment (rows rows).
  float *x = static_cast<float *>(seg.carve(size_t(rows) * cols * sizeof(float)));
  size_t left = kSegment - seg.used;
  float *y = static_cast<float *>(seg.carve(left));
  int out_rows = int(left / (cols * sizeof(float)));
  std::vector<float> h(size_t(rows) * cols);
  for (size_t i = 0; i < h.size(); ++i) h[i] = float(i % 97) * 0.01f;
  CK(cudaMemcpy(x, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  layer_norm<<<rows + 1, cols>>>(x, y, rows + 1, cols); // one row more than y holds
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), y, size_t(out_rows) * cols * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < out_rows * cols; ++i) sum += h[i];
  std::printf("layer_norm rows %d checksum %.3f\n", out_rows, sum);
  CK(cudaFree(seg.base));
  return 0;
}
