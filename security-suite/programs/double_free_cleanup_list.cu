// Buffers are registered in a cleanup list as they are created. When the filter
// runs in place, its output is its input, and that pointer is registered twice: the
// cleanup loop frees it a second time. Bug: double-free (host side).
#include "../../examples/common.h"
#include <vector>

__global__ void threshold(const float *in, float *out, int n, float t) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = in[i] > t ? 1.0f : 0.0f;
}

int main() {
  const int n = 4096;
  const bool in_place = true;
  std::vector<float *> cleanup;
  float *in;
  CK(cudaMalloc(&in, n * sizeof(float)));
  cleanup.push_back(in);
  float *out = in;
  if (!in_place) CK(cudaMalloc(&out, n * sizeof(float)));
  cleanup.push_back(out);
  std::vector<float> h(n);
  for (int i = 0; i < n; ++i) h[i] = float(i % 10);
  CK(cudaMemcpy(in, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  threshold<<<n / 256, 256>>>(in, out, n, 4.5f);
  CK(cudaMemcpy(h.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  double ones = 0;
  for (float v : h) ones += v;
  std::printf("%.0f of %d above threshold\n", ones, n);
  for (float *p : cleanup) {
    cudaError_t e = cudaFree(p); // cusafe-expect: double-free
    if (e != cudaSuccess) std::printf("cudaFree returned %d\n", int(e));
  }
  return 0;
}
