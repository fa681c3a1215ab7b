// Per-thread piecewise-linear tone curve: 8 segments whose knots and slopes are kept
// in two local arrays of the same frame. The segment index is int(x * 8), which is 8
// for a saturated pixel (x == 1.0): the lookup reads one element past the knot array,
// from the slope array beside it. Bug: stack-buffer-overflow, READ (local, in-frame).
#include "../../examples/common.h"
#include <vector>

constexpr int SEG = 8;

__global__ void tone_map(const float *in, const float *curve, float *out, int n) {
  float knot[SEG], slope[SEG];
  for (int k = 0; k < SEG; ++k) {
    knot[k] = curve[k];
    slope[k] = curve[k + 1] - curve[k];
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
    float x = in[i];
    int seg = int(x * SEG);
    float f = x * SEG - float(seg);
    out[i] = knot[seg] + f * slope[seg]; // cusafe-expect: stack-buffer-overflow
  }
}

int main() {
  const int n = 1 << 14;
  std::vector<float> x(n), c(SEG + 1);
  for (int i = 0; i < n; ++i) x[i] = float(i % 1025) / 1024.0f; // 0 .. 1.0 inclusive
  for (int k = 0; k <= SEG; ++k) c[k] = float(k * k) / (SEG * SEG);
  float *in, *curve, *out;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&curve, c.size() * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(curve, c.data(), c.size() * sizeof(float), cudaMemcpyHostToDevice));
  tone_map<<<16, 256>>>(in, curve, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("tone map: out[512]=%.4f out[1000]=%.4f\n", x[512], x[1000]);
  CK(cudaFree(in));
  CK(cudaFree(curve));
  CK(cudaFree(out));
  return 0;
}
