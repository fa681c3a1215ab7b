// Data-parallel all-gather by hand over two GPUs: each device's shard of the
// parameters is padded to a multiple of 256 floats on the sending side, and device
// 0 sends its shard to device 1 with cudaMemcpyPeer of the padded length — but
// device 1's receive buffer holds the real shard length only.
// Bug: api-out-of-bounds (cudaMemcpyPeer destination on device 1): 96 bytes past the
// end of a 4000-byte device-1 buffer.
// Needs 2 GPUs: with fewer it prints "skipped: needs 2 GPUs" and exits 77.
#include "../../examples/common.h"
#include <vector>

static void need_gpus(int want) {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
  if (n < want) {
    std::printf("skipped: needs %d GPUs, found %d\n", want, n);
    std::exit(77);
  }
}

__global__ void scale(float *x, int n, float s) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) x[i] *= s;
}

int main() {
  need_gpus(2);
  const int shard = 1000, padded = (shard + 255) / 256 * 256; // 1024
  std::vector<float> h(padded, 0.0f);
  for (int i = 0; i < shard; ++i) h[i] = float(i % 9);
  float *send, *recv, *other;
  CK(cudaSetDevice(0));
  CK(cudaMalloc(&send, padded * sizeof(float)));
  CK(cudaMemcpy(send, h.data(), padded * sizeof(float), cudaMemcpyHostToDevice));
  scale<<<padded / 256, 256>>>(send, shard, 2.0f);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaSetDevice(1));
  CK(cudaMalloc(&recv, shard * sizeof(float)));
  CK(cudaMalloc(&other, shard * sizeof(float)));
  cudaError_t e = cudaMemcpyPeer(recv, 1, send, 0, padded * sizeof(float)); // cusafe-expect: api-out-of-bounds
  std::printf("all-gather copy returned %d\n", int(e));
  scale<<<padded / 256, 256>>>(recv, shard, 0.5f);
  CK(cudaGetLastError());
  CK(cudaMemcpy(h.data(), recv, shard * sizeof(float), cudaMemcpyDeviceToHost));
  double sum = 0;
  for (int i = 0; i < shard; ++i) sum += h[i];
  std::printf("gathered shard sum %.0f\n", sum);
  CK(cudaFree(recv));
  CK(cudaFree(other));
  CK(cudaSetDevice(0));
  CK(cudaFree(send));
  return 0;
}
