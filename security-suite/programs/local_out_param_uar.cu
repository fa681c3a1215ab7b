// A non-inlined helper finds the 4 largest values of a row and reports them through
// an out-parameter struct; it stores a pointer to its own local scratch array there
// instead of copying the values. The caller reads the top values after the helper
// returned. Bug: stack-use-after-return, READ (pointer to a dead local stored in the
// caller's struct).
#include "../../examples/common.h"
#include <vector>

struct Top4 {
  const float *vals;
  int count;
};

__device__ __noinline__ void top4(const float *row, int n, Top4 *res) {
  float best[4] = {-1e30f, -1e30f, -1e30f, -1e30f};
  for (int c = 0; c < n; ++c) {
    float v = row[c];
    int j = 4;
    while (j > 0 && best[j - 1] < v) --j;
    if (j == 4) continue;
    for (int m = 3; m > j; --m) best[m] = best[m - 1];
    best[j] = v;
  }
  res->vals = best;
  res->count = 4;
}

__global__ void row_top_sum(const float *m, float *out, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  Top4 t;
  top4(m + r * cols, cols, &t);
  float acc = 0;
  for (int k = 0; k < t.count; ++k) acc += t.vals[k]; // cusafe-expect: stack-use-after-return
  out[r] = acc;
}

int main() {
  const int rows = 128, cols = 64;
  std::vector<float> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = float((i * 13) % 64);
  float *m, *out;
  CK(cudaMalloc(&m, h.size() * sizeof(float)));
  CK(cudaMalloc(&out, rows * sizeof(float)));
  CK(cudaMemcpy(m, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  row_top_sum<<<1, rows>>>(m, out, rows, cols);
  CK(cudaDeviceSynchronize());
  std::printf("top-4 sums computed for %d rows\n", rows);
  CK(cudaFree(m));
  CK(cudaFree(out));
  return 0;
}
