// Gamma encode/decode with two 256-entry lookup tables staged in shared memory. The
// table index is int(v * 256), which is 256 for a fully saturated pixel (v == 1.0):
// the read goes one element past the forward table, into the inverse table.
// Bug: shared-buffer-overflow, READ (static shared, from the neighbouring array).
#include "../../examples/common.h"
#include <cmath>
#include <vector>

__global__ void gamma_roundtrip(const float *in, const float *fwd_g, const float *inv_g,
                                float *enc, float *dec, int n) {
  __shared__ float fwd[256];
  __shared__ float inv[256];
  fwd[threadIdx.x] = fwd_g[threadIdx.x];
  inv[threadIdx.x] = inv_g[threadIdx.x];
  __syncthreads();
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  float e = fwd[int(in[i] * 256.0f)]; // cusafe-expect: shared-buffer-overflow
  enc[i] = e;
  dec[i] = inv[min(int(e * 255.0f), 255)];
}

int main() {
  const int n = 1 << 14;
  std::vector<float> x(n), f(256), g(256);
  for (int i = 0; i < n; ++i) x[i] = float(i % 257) / 256.0f; // includes 1.0
  for (int k = 0; k < 256; ++k) {
    f[k] = std::pow(k / 255.0f, 1.0f / 2.2f);
    g[k] = std::pow(k / 255.0f, 2.2f);
  }
  float *in, *fw, *iv, *enc, *dec;
  CK(cudaMalloc(&in, n * sizeof(float)));
  CK(cudaMalloc(&fw, 256 * sizeof(float)));
  CK(cudaMalloc(&iv, 256 * sizeof(float)));
  CK(cudaMalloc(&enc, n * sizeof(float)));
  CK(cudaMalloc(&dec, n * sizeof(float)));
  CK(cudaMemcpy(in, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(fw, f.data(), 256 * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemcpy(iv, g.data(), 256 * sizeof(float), cudaMemcpyHostToDevice));
  gamma_roundtrip<<<n / 256, 256>>>(in, fw, iv, enc, dec, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(x.data(), dec, n * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("roundtrip: dec[100]=%.4f dec[200]=%.4f\n", x[100], x[200]);
  CK(cudaFree(in));
  CK(cudaFree(fw));
  CK(cudaFree(iv));
  CK(cudaFree(enc));
  CK(cudaFree(dec));
  return 0;
}
