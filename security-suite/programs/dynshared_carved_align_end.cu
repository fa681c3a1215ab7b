// One block per matrix row: the dynamic shared pool is carved into a column-index
// array and a float4 feature array, each aligned to 16 bytes. The host sizes the pool
// as cols * (sizeof(int) + sizeof(float4)) and forgets the alignment padding between
// the two (98 ints are 392 bytes, padded to 400), so the last float4 of the second
// array straddles the end of the pool.
// Bug: shared-buffer-overflow, WRITE (dynamic shared, several carved buffers).
#include "../../examples/common.h"
#include <vector>

__device__ char *align16(char *p) {
  return reinterpret_cast<char *>((reinterpret_cast<size_t>(p) + 15) & ~size_t(15));
}

__global__ void row_features(const float *m, float *norms, int cols) {
  extern __shared__ char pool[];
  int *idx = reinterpret_cast<int *>(align16(pool));
  float4 *feat = reinterpret_cast<float4 *>(align16(reinterpret_cast<char *>(idx + cols)));
  const float *row = m + blockIdx.x * cols;
  for (int c = threadIdx.x; c < cols; c += blockDim.x) {
    float v = row[c];
    idx[c] = c;
    feat[c] = make_float4(v, v * v, fabsf(v), v > 0); // cusafe-expect: shared-buffer-overflow
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    float s = 0;
    for (int c = 0; c < cols; ++c) s += feat[idx[c]].y;
    norms[blockIdx.x] = s;
  }
}

int main() {
  const int rows = 64, cols = 98;
  std::vector<float> h(rows * cols);
  for (int i = 0; i < rows * cols; ++i) h[i] = float(i % 7) - 3.0f;
  float *m, *norms;
  CK(cudaMalloc(&m, h.size() * sizeof(float)));
  CK(cudaMalloc(&norms, rows * sizeof(float)));
  CK(cudaMemcpy(m, h.data(), h.size() * sizeof(float), cudaMemcpyHostToDevice));
  size_t smem = cols * (sizeof(int) + sizeof(float4)); // misses the 8 bytes of padding
  std::printf("row features, %zu bytes of shared memory per block\n", smem);
  row_features<<<rows, 128, smem>>>(m, norms, cols);
  CK(cudaDeviceSynchronize());
  std::vector<float> nh(rows);
  CK(cudaMemcpy(nh.data(), norms, rows * sizeof(float), cudaMemcpyDeviceToHost));
  std::printf("norms[0]=%.0f norms[63]=%.0f\n", nh[0], nh[63]);
  CK(cudaFree(m));
  CK(cudaFree(norms));
  return 0;
}
