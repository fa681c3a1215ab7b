// The smoothing kernel picks its taps from one of two block-scoped local arrays and
// keeps a pointer to the chosen one; the convolution runs after the block that owns
// the array has ended. Bug: stack-use-after-scope, READ.
#include "../../examples/common.h"
#include <vector>

__device__ __noinline__ void make_taps(float *t, int n) {
  float total = 0;
  for (int k = 0; k < n; ++k) total += t[k] = float(1 + min(k, n - 1 - k));
  for (int k = 0; k < n; ++k) t[k] /= total;
}

__global__ void smooth(const float *in, float *out, int n, const int *wide) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float *taps;
  int len;
  if (wide[i % 64]) {
    float t9[9];
    make_taps(t9, 9);
    taps = t9;
    len = 9;
  } else {
    float t5[5];
    make_taps(t5, 5);
    taps = t5;
    len = 5;
  }
  float acc = 0;
  for (int k = 0; k < len; ++k) {
    int j = min(max(i + k - len / 2, 0), n - 1);
    acc += taps[k] * in[j]; // cusafe-expect: stack-use-after-scope
  }
  out[i] = acc;
}

int main() {
  const int n = 4096;
  std::vector<float> x(n);
  std::vector<int> w(64);
  for (int i = 0; i < n; ++i) x[i] = float(i % 6);
  for (int k = 0; k < 64; ++k) w[k] = k % 3 == 0;
  float *in, *out;
  int *wide;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMalloc(&wide, 64 * sizeof(int)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(wide, w.data(), 64 * sizeof(int), cudaMemcpyHostToDevice));
  smooth<<<n / 256, 256>>>(in, out, n, wide);
  CK(cudaDeviceSynchronize());
  std::printf("smoothed %d samples\n", n);
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(wide));
  return 0;
}
