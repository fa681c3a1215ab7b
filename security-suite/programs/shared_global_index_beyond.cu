// Reverses each 256-element block through a shared tile, but indexes the tile with
// the global thread index instead of threadIdx.x. Block 0 is right; every other
// block writes far beyond the tile, past the end of the block's shared memory.
// Bug: shared-buffer-overflow, WRITE (static shared, beyond the shared window).
#include "../../examples/common.h"
#include <vector>

constexpr int BS = 256;

__global__ void reverse_blocks(const int *in, int *out, int n) {
  __shared__ int tile[BS];
  int g = blockIdx.x * BS + threadIdx.x;
  if (g < n) tile[g] = in[g]; // cusafe-expect: shared-buffer-overflow
  __syncthreads();
  if (g < n) out[g] = tile[BS - 1 - threadIdx.x];
}

int main() {
  const int n = 64 * BS;
  std::vector<int> h(n);
  for (int i = 0; i < n; ++i) h[i] = i;
  int *in, *out;
  CK(cudaMalloc(&in, n * sizeof(int)));
  CK(cudaMalloc(&out, n * sizeof(int)));
  CK(cudaMemcpy(in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
  std::printf("reversing %d blocks\n", n / BS);
  reverse_blocks<<<n / BS, BS>>>(in, out, n);
  CK(cudaDeviceSynchronize());
  CK(cudaMemcpy(h.data(), out, n * sizeof(int), cudaMemcpyDeviceToHost));
  std::printf("out[0]=%d out[255]=%d\n", h[0], h[255]);
  CK(cudaFree(in));
  CK(cudaFree(out));
  return 0;
}
