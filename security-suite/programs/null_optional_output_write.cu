// Shades a 128x96 preview tile; the kernel can also write each pixel's blend weight to
// an optional buffer for a debug view. The host allocates that buffer only when
// dump_weights is set, but passes the kernel the debug_view flag (set) as "weights
// present": every thread writes its weight through the null pointer, at byte offsets
// 0..49151 (all below 64 KiB). Bug: null-dereference, WRITE (null kernel argument).
// The plain build stops the launch with an illegal-address error; the program prints
// a line before it.
#include "../../examples/common.h"
#include <vector>

struct Options {
  bool debug_view;   // draw the debug overlay
  bool dump_weights; // keep the per-pixel blend weights
};

__global__ void shade(const float *albedo, const float *light, float *out, float *weights,
                      int n, int write_weights) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float w = light[i] / (light[i] + 1.0f);
  out[i] = albedo[i] * w;
  if (write_weights) weights[i] = w; // cusafe-expect: null-dereference
}

int main() {
  const int w = 128, h = 96, n = w * h;
  const Options opt{true, false};
  std::vector<float> ha(n), hl(n);
  for (int i = 0; i < n; ++i) {
    ha[i] = float(i % 17) / 16.0f;
    hl[i] = float(i % 5) + 0.5f;
  }
  float *albedo, *light, *out, *weights = nullptr;
  CK(cudaMalloc(&albedo, n * sizeof(float)));
  CK(cudaMalloc(&light, n * sizeof(float)));
  CK(cudaMalloc(&out, n * sizeof(float)));
  if (opt.dump_weights) CK(cudaMalloc(&weights, n * sizeof(float)));
  CK(cudaMemcpy(albedo, ha.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(light, hl.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  std::printf("shading %dx%d, debug view %s\n", w, h, opt.debug_view ? "on" : "off");
  shade<<<(n + 127) / 128, 128>>>(albedo, light, out, weights, n, opt.debug_view); // meant opt.dump_weights
  cudaError_t err = cudaDeviceSynchronize();
  std::printf("shade: %s\n", cudaGetErrorString(err));
  if (err != cudaSuccess) return 0; // the context is lost after a fault
  CK(cudaMemcpy(ha.data(), out, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (float v : ha) sum += v;
  std::printf("checksum %.3f\n", sum);
  CK(cudaFree(albedo));
  CK(cudaFree(light));
  CK(cudaFree(out));
  if (weights) CK(cudaFree(weights));
  return 0;
}
