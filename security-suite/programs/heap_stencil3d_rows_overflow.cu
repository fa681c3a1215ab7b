// 3-D 27-point smoothing over an NI x NJ x NK volume (conv3d's shape: the nine rows of
// the 3x3x3 neighbourhood at run-time offsets, each row three neighbouring floats). The
// interior test bounds the z plane by NI instead of NI - 1, so the threads of the last
// plane read the plane after the volume. Bug: heap-buffer-overflow, READ (linear,
// whole rows past the end).
#include "../../examples/common.h"
#include <vector>

__global__ void smooth(int ni, int nj, int nk, const float *a, float *b) {
  int k = blockIdx.x * blockDim.x + threadIdx.x;
  int j = blockIdx.y * blockDim.y + threadIdx.y;
  int i = blockIdx.z;
  if (i > 0 && i < ni && j > 0 && j < nj - 1 && k > 0 && k < nk - 1) {
    float acc = 0.0f;
#pragma unroll
    for (int di = -1; di <= 1; di++)
#pragma unroll
      for (int dj = -1; dj <= 1; dj++)
#pragma unroll
        for (int dk = -1; dk <= 1; dk++)
          acc += a[((i + di) * nj + (j + dj)) * nk + (k + dk)]; // cusafe-expect: heap-buffer-overflow
    b[(i * nj + j) * nk + k] = acc / 27.0f;
  }
}

int main() {
  const int ni = 8, nj = 16, nk = 64, n = ni * nj * nk;
  std::vector<float> v(n);
  for (int x = 0; x < n; ++x) v[x] = float(x % 13);
  float *a, *b;
  CK(cudaMalloc(&a, n * sizeof(float)));
  CK(cudaMalloc(&b, n * sizeof(float)));
  CK(cudaMemcpy(a, v.data(), n * sizeof(float), cudaMemcpyHostToDevice));
  CK(cudaMemset(b, 0, n * sizeof(float)));
  dim3 block(32, 4), blocks((nk + 31) / 32, (nj + 3) / 4, ni);
  smooth<<<blocks, block>>>(ni, nj, nk, a, b);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(v.data(), b, n * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int x = 0; x < (ni - 1) * nj * nk; ++x) sum += v[x]; // the last plane is garbage
  std::printf("smooth checksum (planes 0..%d) %.2f\n", ni - 2, sum);
  CK(cudaFree(a));
  CK(cudaFree(b));
  return 0;
}
