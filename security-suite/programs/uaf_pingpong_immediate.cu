// Heat diffusion with two buffers swapped after every step. To save memory the
// initial condition is released after the first step; but after the swap the
// "initial" pointer is the buffer the second step writes into.
// Bug: use-after-free, WRITE (immediate: the next kernel uses the freed buffer).
#include "../../examples/common.h"
#include <utility>
#include <vector>

__global__ void diffuse(const float *in, float *out, int n, float k) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= 0 || i >= n - 1) return;
  out[i] = in[i] + k * (in[i - 1] - 2.0f * in[i] + in[i + 1]); // cusafe-expect: use-after-free
}

int main() {
  const int n = 4096, steps = 9;
  std::vector<float> h(n, 0.0f);
  h[n / 2] = 1000.0f;
  float *initial, *work;
  CK(cudaMalloc(&initial, n * sizeof(float)));
  CK(cudaMalloc(&work, n * sizeof(float)));
  CK(cudaMemcpy(initial, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(work, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  float *cur = initial, *next = work;
  for (int s = 0; s < steps; ++s) {
    diffuse<<<n / 256, 256>>>(cur, next, n, 0.25f);
    std::swap(cur, next);
    if (s == 0) CK(cudaFree(initial)); // "no longer needed"; it is `next` now
  }
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), cur, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("centre after %d steps: %.3f\n", steps, h[n / 2]);
  CK(cudaFree(work));
  return 0;
}
