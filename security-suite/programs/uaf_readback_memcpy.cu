// A cleanup helper releases the device workspace, including the result buffer,
// before the caller copies the result back: cudaMemcpy reads a freed buffer.
// Bug: use-after-free (host API: cudaMemcpy source).
#include "../../examples/common.h"
#include <vector>

struct Workspace {
  float *tmp, *result;
};

__global__ void row_means(const float *m, float *tmp, float *result, int rows, int cols) {
  int r = blockIdx.x * blockDim.x + threadIdx.x;
  if (r >= rows) return;
  float acc = 0;
  for (int c = 0; c < cols; ++c) acc += m[r * cols + c];
  tmp[r] = acc;
  result[r] = acc / cols;
}

static void release(Workspace &ws) {
  CK(cudaFree(ws.tmp));
  CK(cudaFree(ws.result));
}

int main() {
  const int rows = 512, cols = 100;
  std::vector<float> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = float(i % cols);
  float *m;
  Workspace ws;
  CK(cudaMalloc(&m, h.size() * sizeof(float)));
  CK(cudaMalloc(&ws.tmp, rows * sizeof(float)));
  CK(cudaMalloc(&ws.result, rows * sizeof(float)));
  CK(cudaMemcpy(m, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  row_means<<<rows / 128, 128>>>(m, ws.tmp, ws.result, rows, cols);
  CK(cudaDeviceSynchronize());
  release(ws);
  std::vector<float> means(rows);
  cudaError_t e = cudaMemcpy(means.data(), ws.result, rows * sizeof(float), cudaMemcpyDeviceToHost); // cusafe-expect: use-after-free
  std::printf("read-back returned %d\n", int(e));
  CK(cudaFree(m));
  return 0;
}
