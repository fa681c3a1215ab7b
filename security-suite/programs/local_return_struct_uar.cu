// A non-inlined helper builds a Gaussian kernel in a local array and returns a
// {pointer, length} view of it; the caller convolves with the view after the
// helper's frame is gone. Bug: stack-use-after-return, READ.
#include "../../examples/common.h"
#include <vector>

struct Taps {
  const float *w;
  int n;
};

__device__ __noinline__ Taps gaussian(float sigma) {
  float w[7];
  float total = 0;
  for (int k = 0; k < 7; ++k) {
    float d = float(k - 3);
    w[k] = __expf(-d * d / (2 * sigma * sigma));
    total += w[k];
  }
  for (int k = 0; k < 7; ++k) w[k] /= total;
  return Taps{w, 7};
}

__global__ void smooth(const float *in, float *out, int n, const float *sigma) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  Taps t = gaussian(sigma[i % 4]);
  float acc = 0;
  for (int k = 0; k < t.n; ++k) {
    int j = min(max(i + k - t.n / 2, 0), n - 1);
    acc += t.w[k] * in[j]; // cusafe-expect: stack-use-after-return
  }
  out[i] = acc;
}

int main() {
  const int n = 2048;
  std::vector<float> x(n), s = {0.8f, 1.0f, 1.2f, 1.5f};
  for (int i = 0; i < n; ++i) x[i] = float(i % 8);
  float *in, *out, *sigma;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMalloc(&sigma, s.size() * sizeof(float)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(sigma, s.data(), s.size() * sizeof(float), cudaMemcpyHostToDevice));
  smooth<<<n / 256, 256>>>(in, out, n, sigma);
  CK(cudaDeviceSynchronize());
  std::printf("smoothed %d samples\n", n);
  CK(cudaFree(in));
  CK(cudaFree(out));
  CK(cudaFree(sigma));
  return 0;
}
