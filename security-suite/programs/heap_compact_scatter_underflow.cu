// Stream compaction (keep the particles inside a slab): flag, scan, scatter. The
// scatter treats the scan's output as 1-based positions ("inclusive"), but the scan
// is exclusive, so the first kept element is written one slot before the output.
// Bug: heap-buffer-overflow, WRITE (underflow).
#include "../../examples/common.h"
#include <numeric>
#include <vector>

__global__ void flag_inside(const float *z, int *flags, int n, float lo, float hi) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) flags[i] = z[i] >= lo && z[i] < hi;
}

__global__ void scatter(const float *z, const int *flags, const int *pos, float *out, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n && flags[i]) out[pos[i] - 1] = z[i]; // cusafe-expect: heap-buffer-overflow
}

int main() {
  const int n = 4096;
  std::vector<float> z(n);
  for (int i = 0; i < n; ++i) z[i] = float((i * 37) % 100) / 10.0f; // z[0] = 0: kept
  float *dz, *out;
  int *flags, *pos;
  CK(cudaMalloc(&dz, n * sizeof(float)));
  CK(cudaMalloc(&flags, n * sizeof(int)));
  CK(cudaMalloc(&pos, n * sizeof(int)));
  CK(cudaMemcpy(dz, z.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  flag_inside<<<n / 256, 256>>>(dz, flags, n, 0.0f, 2.5f);
  std::vector<int> f(n), p(n);
  CK(cudaMemcpy(f.data(), flags, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::exclusive_scan(f.begin(), f.end(), p.begin(), 0);
  int kept = p[n - 1] + f[n - 1];
  CK(cudaMalloc(&out, kept * sizeof(float)));
  CK(cudaMemcpy(pos, p.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  scatter<<<n / 256, 256>>>(dz, flags, pos, out, n);
  CK(cudaDeviceSynchronize());
  std::vector<float> o(kept);
  CK(cudaMemcpy(o.data(), out, kept * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("kept %d of %d; out[0]=%.1f out[1]=%.1f\n", kept, n, o[0], o[1]);
  CK(cudaFree(dz));
  CK(cudaFree(flags));
  CK(cudaFree(pos));
  CK(cudaFree(out));
  return 0;
}
